// <stdlib.h> for NVRTC: malloc, free and abs are NVRTC built-ins (the device heap).
#pragma once
#include <stddef.h>
#ifndef EXIT_SUCCESS
#define EXIT_SUCCESS 0
#define EXIT_FAILURE 1
#endif
