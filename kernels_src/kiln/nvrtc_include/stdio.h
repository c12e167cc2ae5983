// <stdio.h> for NVRTC: device code has printf, an NVRTC built-in, and nothing else of stdio.
#pragma once
#include <stddef.h>
#ifndef EOF
#define EOF (-1)
#endif
