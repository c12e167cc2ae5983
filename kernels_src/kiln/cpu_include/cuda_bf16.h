// cpu backend: <cuda_bf16.h>, __nv_bfloat16 and __nv_bfloat162 (kiln/cpu_narrow.h).
#pragma once
#include "kiln/cpu_narrow.h"

using __nv_bfloat16 = kiln_cpu::narrow<kiln_cpu::bfloat16>;
using __nv_bfloat162 = kiln_cpu::narrow2<kiln_cpu::bfloat16>;
using nv_bfloat16 = __nv_bfloat16;
using nv_bfloat162 = __nv_bfloat162;
KILN_NARROW_API(kiln_cpu::bfloat16)

inline __nv_bfloat16 __float2bfloat16(float f) { return f; }
inline __nv_bfloat16 __float2bfloat16_rn(float f) { return f; }
inline __nv_bfloat16 __double2bfloat16(double d) { return d; }
inline float __bfloat162float(__nv_bfloat16 b) { return b; }
inline __nv_bfloat162 __float2bfloat162_rn(float f) { return {f, f}; }
inline __nv_bfloat162 __floats2bfloat162_rn(float a, float b) { return {a, b}; }
inline __nv_bfloat162 __float22bfloat162_rn(float2 f) { return {f.x, f.y}; }
inline float2 __bfloat1622float2(__nv_bfloat162 b) { return {float(b.x), float(b.y)}; }
inline __nv_bfloat16 __low2bfloat16(__nv_bfloat162 b) { return b.x; }
inline __nv_bfloat16 __high2bfloat16(__nv_bfloat162 b) { return b.y; }
inline __nv_bfloat162 __halves2bfloat162(__nv_bfloat16 a, __nv_bfloat16 b) { return {a, b}; }
inline __nv_bfloat16 __int2bfloat16_rn(int i) {
  return i;
}
inline short __bfloat16_as_short(__nv_bfloat16 b) { return short(b.bits); }
inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 b) { return b.bits; }
inline __nv_bfloat16 __ushort_as_bfloat16(unsigned short s) { return __nv_bfloat16::from_bits(s); }
