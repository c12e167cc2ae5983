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
KILN_NARROW_API(kiln_cpu::binary16)

inline __half __float2half(float f) { return f; }
inline __half __float2half_rn(float f) { return f; }
inline __half __double2half(double d) { return d; }
inline float __half2float(__half h) { return h; }
inline __half2 __float2half2_rn(float f) { return {f, f}; }
inline __half2 __floats2half2_rn(float a, float b) { return {a, b}; }
inline __half2 __float22half2_rn(float2 f) { return {f.x, f.y}; }
inline float2 __half22float2(__half2 h) { return {float(h.x), float(h.y)}; }
inline float __low2float(__half2 h) { return h.x; }
inline float __high2float(__half2 h) { return h.y; }
inline __half __low2half(__half2 h) { return h.x; }
inline __half __high2half(__half2 h) { return h.y; }
inline __half2 __halves2half2(__half a, __half b) { return {a, b}; }
inline __half2 __half2half2(__half a) { return {a, a}; }
inline __half __int2half_rn(int i) {
  return i;
}
inline int __half2int_rz(__half h) { return int(float(h)); }
inline int __half2int_rn(__half h) { return int(rintf(float(h))); }
inline short __half_as_short(__half h) { return short(h.bits); }
inline unsigned short __half_as_ushort(__half h) { return h.bits; }
inline __half __short_as_half(short s) { return __half::from_bits((unsigned short)s); }
inline __half __ushort_as_half(unsigned short s) { return __half::from_bits(s); }
