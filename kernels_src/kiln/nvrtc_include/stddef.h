// <stddef.h> for device code compiled by NVRTC, which ships no C library headers (as jitify2
// does, kiln hands NVRTC its own). size_t and ptrdiff_t are NVRTC built-ins.
#pragma once
#ifndef NULL
#define NULL 0
#endif
#ifndef offsetof  // as libcu++ defines it for NVRTC: a constant NVRTC folds
#define offsetof(type, member) ((size_t)((char*)&(((type*)0)->member) - (char*)0))
#endif
typedef decltype(nullptr) nullptr_t;
