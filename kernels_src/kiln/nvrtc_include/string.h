// <string.h> for NVRTC: memcpy and memset are NVRTC built-ins.
#pragma once
#include <stddef.h>
