// cpu backend: <cuda_bf16.h>, __nv_bfloat16 and __nv_bfloat162 (kiln/cpu_narrow.h).
#pragma once
#include "kiln/cpu_narrow.h"

using __nv_bfloat16 = kiln_cpu::narrow<kiln_cpu::bfloat16>;
using __nv_bfloat162 = kiln_cpu::narrow2<kiln_cpu::bfloat16>;
using nv_bfloat16 = __nv_bfloat16;
using nv_bfloat162 = __nv_bfloat162;
struct __nv_bfloat16_raw {
  unsigned short x;
};
struct __nv_bfloat162_raw {
  unsigned short x, y;
};
KILN_NARROW_API(kiln_cpu::bfloat16, __nv_bfloat16, __nv_bfloat162)
KILN_NARROW_NAMES(kiln_cpu::bfloat16, __nv_bfloat16, __nv_bfloat162, bfloat16)

#define CUDART_INF_BF16 __ushort_as_bfloat16((unsigned short)0x7F80U)
#define CUDART_NAN_BF16 __ushort_as_bfloat16((unsigned short)0x7FFFU)
#define CUDART_MIN_DENORM_BF16 __ushort_as_bfloat16((unsigned short)0x0001U)
#define CUDART_MAX_NORMAL_BF16 __ushort_as_bfloat16((unsigned short)0x7F7FU)
#define CUDART_NEG_ZERO_BF16 __ushort_as_bfloat16((unsigned short)0x8000U)
#define CUDART_ZERO_BF16 __ushort_as_bfloat16((unsigned short)0x0000U)
#define CUDART_ONE_BF16 __ushort_as_bfloat16((unsigned short)0x3F80U)
