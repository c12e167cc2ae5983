// cpu backend shim for CUDA's math_constants.h (the commonly used constants).
#pragma once
#define CUDART_PI_F 3.141592654f
#define CUDART_PI 3.1415926535897931e+0
#define CUDART_INF_F __builtin_huff()
#define CUDART_INF __builtin_huge_val()
#define CUDART_NAN_F __builtin_nanf("")
#define CUDART_NAN __builtin_nan("")
#define CUDART_SQRT_HALF_F 0.707106781f
#define CUDART_SQRT_2PI 2.5066282746310002e+0
#define CUDART_TWO_PI_F 6.283185307f
