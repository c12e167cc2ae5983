// cpu backend: <cuda_fp16.h>, __half and __half2 (kiln/cpu_narrow.h).
#pragma once
#include "kiln/cpu_narrow.h"

using __half = kiln_cpu::narrow<kiln_cpu::binary16>;
using __half2 = kiln_cpu::narrow2<kiln_cpu::binary16>;
using half = __half;
using half2 = __half2;
struct __half_raw {
  unsigned short x;
};
struct __half2_raw {
  unsigned short x, y;
};
KILN_NARROW_API(kiln_cpu::binary16, __half, __half2)
KILN_NARROW_NAMES(kiln_cpu::binary16, __half, __half2, half)

#define CUDART_INF_FP16 __ushort_as_half((unsigned short)0x7C00U)
#define CUDART_NAN_FP16 __ushort_as_half((unsigned short)0x7FFFU)
#define CUDART_MIN_DENORM_FP16 __ushort_as_half((unsigned short)0x0001U)
#define CUDART_MAX_NORMAL_FP16 __ushort_as_half((unsigned short)0x7BFFU)
#define CUDART_NEG_ZERO_FP16 __ushort_as_half((unsigned short)0x8000U)
#define CUDART_ZERO_FP16 __ushort_as_half((unsigned short)0x0000U)
#define CUDART_ONE_FP16 __ushort_as_half((unsigned short)0x3C00U)
