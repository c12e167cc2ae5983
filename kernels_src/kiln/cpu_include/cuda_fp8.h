// cpu backend: <cuda_fp8.h>, the 8-bit floats E4M3 (4 exponent bits, 3 fraction bits, bias 7,
// no infinity: 448 at most, S.1111.111 NaN) and E5M2 (IEEE-like: bias 15, infinities, 57344
// at most). As CUDA's, they are storage types with conversions only: a value rounds to nearest
// even; out of range it saturates to the largest finite value (__NV_SATFINITE, what the
// classes' constructors use) or becomes NaN in E4M3 and infinity in E5M2 (__NV_NOSAT); NaN
// becomes 0x7F (E4M3) or a quiet NaN (E5M2), with its sign; below half the smallest subnormal,
// zero.
#pragma once
#include <cmath>

#include "cuda_bf16.h"
#include "cuda_fp16.h"

typedef unsigned char __nv_fp8_storage_t;
typedef unsigned short __nv_fp8x2_storage_t;
typedef unsigned int __nv_fp8x4_storage_t;
enum __nv_saturation_t { __NV_NOSAT, __NV_SATFINITE };
enum __nv_fp8_interpretation_t { __NV_E4M3, __NV_E5M2 };

namespace kiln_cpu {
// One 8-bit format: fraction bits, exponent bias, largest finite value's bits.
struct Fp8Format {
  int fraction_bits, bias;
  unsigned char max_bits;
  double max_value;
};
inline Fp8Format fp8_format(__nv_fp8_interpretation_t f) {
  return f == __NV_E4M3 ? Fp8Format{3, 7, 0x7e, 448.0} : Fp8Format{2, 15, 0x7b, 57344.0};
}

// x rounded to nearest even in format f (sign kept).
inline __nv_fp8_storage_t to_fp8(double x, __nv_saturation_t saturate,
                                 __nv_fp8_interpretation_t interpretation) {
  const Fp8Format f = fp8_format(interpretation);
  const unsigned char sign = std::signbit(x) ? 0x80 : 0;
  const double a = std::fabs(x);
  if (a != a) {  // E4M3's one NaN; E5M2's quiet NaN keeps the payload's top fraction bit
    unsigned long long bits;
    memcpy(&bits, &x, sizeof bits);
    return sign | (interpretation == __NV_E4M3 ? 0x7f : 0x7e | ((bits >> 50) & 3));
  }
  const int min_exponent = 1 - f.bias;  // of the smallest normal
  int exponent = std::isinf(a) || a == 0 ? min_exponent : std::ilogb(a);
  if (exponent < min_exponent) exponent = min_exponent;  // subnormals share its quantum
  const double quantum = std::ldexp(1.0, exponent - f.fraction_bits);
  const double rounded = std::isinf(a) ? a : std::nearbyint(a / quantum) * quantum;
  if (rounded > f.max_value) {
    if (saturate == __NV_SATFINITE) return sign | f.max_bits;
    return interpretation == __NV_E4M3 ? (sign | 0x7f) : (sign | 0x7c);
  }
  if (rounded == 0) return sign;
  const int e = std::ilogb(rounded);
  if (e < min_exponent)  // subnormal: the fraction alone, in units of the smallest one
    return sign | (unsigned char)(rounded / std::ldexp(1.0, min_exponent - f.fraction_bits));
  const unsigned fraction =
      (unsigned)(rounded / std::ldexp(1.0, e - f.fraction_bits)) - (1u << f.fraction_bits);
  return sign | (unsigned char)(((e + f.bias) << f.fraction_bits) | fraction);
}

// The value of v in format f (exact in float, and in half).
inline float from_fp8(__nv_fp8_storage_t v, __nv_fp8_interpretation_t interpretation) {
  const Fp8Format f = fp8_format(interpretation);
  const float sign = v & 0x80 ? -1.0f : 1.0f;
  const int exponent_field = (v & 0x7f) >> f.fraction_bits;
  const unsigned fraction = v & ((1u << f.fraction_bits) - 1);
  const int top = (1 << (7 - f.fraction_bits)) - 1;
  if (interpretation == __NV_E4M3 && (v & 0x7f) == 0x7f) return NAN;
  if (interpretation == __NV_E5M2 && exponent_field == top) return fraction ? NAN : sign * INFINITY;
  if (exponent_field == 0) return sign * std::ldexp(float(fraction), 1 - f.bias - f.fraction_bits);
  return sign * std::ldexp(float(fraction + (1u << f.fraction_bits)),
                           exponent_field - f.bias - f.fraction_bits);
}
}  // namespace kiln_cpu

inline __nv_fp8_storage_t __nv_cvt_double_to_fp8(double x, __nv_saturation_t saturate,
                                                 __nv_fp8_interpretation_t interpretation) {
  return kiln_cpu::to_fp8(x, saturate, interpretation);
}
inline __nv_fp8_storage_t __nv_cvt_float_to_fp8(float x, __nv_saturation_t saturate,
                                                __nv_fp8_interpretation_t interpretation) {
  return kiln_cpu::to_fp8(x, saturate, interpretation);
}
inline __nv_fp8x2_storage_t __nv_cvt_double2_to_fp8x2(double2 x, __nv_saturation_t saturate,
                                                      __nv_fp8_interpretation_t interpretation) {
  return (__nv_fp8x2_storage_t)(kiln_cpu::to_fp8(x.x, saturate, interpretation) |
                                kiln_cpu::to_fp8(x.y, saturate, interpretation) << 8);
}
inline __nv_fp8x2_storage_t __nv_cvt_float2_to_fp8x2(float2 x, __nv_saturation_t saturate,
                                                     __nv_fp8_interpretation_t interpretation) {
  return __nv_cvt_double2_to_fp8x2(make_double2(x.x, x.y), saturate, interpretation);
}
inline __nv_fp8_storage_t __nv_cvt_halfraw_to_fp8(__half_raw x, __nv_saturation_t saturate,
                                                  __nv_fp8_interpretation_t interpretation) {
  return kiln_cpu::to_fp8(float(__half::from_bits(x.x)), saturate, interpretation);
}
inline __nv_fp8x2_storage_t __nv_cvt_halfraw2_to_fp8x2(__half2_raw x, __nv_saturation_t saturate,
                                                       __nv_fp8_interpretation_t interpretation) {
  return __nv_cvt_float2_to_fp8x2(
      make_float2(float(__half::from_bits(x.x)), float(__half::from_bits(x.y))), saturate,
      interpretation);
}
inline __nv_fp8_storage_t __nv_cvt_bfloat16raw_to_fp8(__nv_bfloat16_raw x,
                                                      __nv_saturation_t saturate,
                                                      __nv_fp8_interpretation_t interpretation) {
  return kiln_cpu::to_fp8(float(__nv_bfloat16::from_bits(x.x)), saturate, interpretation);
}
inline __nv_fp8x2_storage_t __nv_cvt_bfloat16raw2_to_fp8x2(
    __nv_bfloat162_raw x, __nv_saturation_t saturate, __nv_fp8_interpretation_t interpretation) {
  return __nv_cvt_float2_to_fp8x2(
      make_float2(float(__nv_bfloat16::from_bits(x.x)), float(__nv_bfloat16::from_bits(x.y))),
      saturate, interpretation);
}
// (exact; a NaN as half's canonical 0x7FFF, its sign dropped, as CUDA's)
inline __half_raw __nv_cvt_fp8_to_halfraw(__nv_fp8_storage_t x,
                                          __nv_fp8_interpretation_t interpretation) {
  const float f = kiln_cpu::from_fp8(x, interpretation);
  return {f != f ? (unsigned short)0x7fff : __half(f).bits};
}
inline __half2_raw __nv_cvt_fp8x2_to_halfraw2(__nv_fp8x2_storage_t x,
                                              __nv_fp8_interpretation_t interpretation) {
  return {__nv_cvt_fp8_to_halfraw((__nv_fp8_storage_t)(x & 0xff), interpretation).x,
          __nv_cvt_fp8_to_halfraw((__nv_fp8_storage_t)(x >> 8), interpretation).x};
}

namespace kiln_cpu {
// __nv_fp8_e4m3 / __nv_fp8_e5m2: one value, made from any number with __NV_SATFINITE, read as
// any number (integers truncated toward zero).
template <__nv_fp8_interpretation_t F>
struct fp8 {
  __nv_fp8_storage_t __x;
  fp8() = default;
  fp8(double v) : __x(to_fp8(v, __NV_SATFINITE, F)) {}
  fp8(float v) : fp8(double(v)) {}
  fp8(__half v) : fp8(double(float(v))) {}
  fp8(__nv_bfloat16 v) : fp8(double(float(v))) {}
  fp8(int v) : fp8(double(v)) {}
  fp8(unsigned v) : fp8(double(v)) {}
  fp8(long long v) : fp8(double(v)) {}
  fp8(unsigned long long v) : fp8(double(v)) {}
  fp8(short v) : fp8(double(v)) {}
  fp8(unsigned short v) : fp8(double(v)) {}
  fp8(long v) : fp8(double(v)) {}
  fp8(unsigned long v) : fp8(double(v)) {}
  explicit operator float() const { return from_fp8(__x, F); }
  explicit operator double() const { return from_fp8(__x, F); }
  explicit operator __half() const { return __half(from_fp8(__x, F)); }
  explicit operator __nv_bfloat16() const { return __nv_bfloat16(from_fp8(__x, F)); }
  explicit operator bool() const { return (__x & 0x7f) != 0; }
  // (each integer type's own range: NaN to 0, beyond the range its bound, as CUDA's operators)
  explicit operator signed char() const { return to_integer<signed char>(); }
  explicit operator char() const { return to_integer<char>(); }
  explicit operator unsigned char() const { return to_integer<unsigned char>(); }
  explicit operator short() const { return to_integer<short>(); }
  explicit operator unsigned short() const { return to_integer<unsigned short>(); }
  explicit operator int() const { return to_integer<int>(); }
  explicit operator unsigned() const { return to_integer<unsigned>(); }
  explicit operator long() const { return to_integer<long>(); }
  explicit operator unsigned long() const { return to_integer<unsigned long>(); }
  explicit operator long long() const { return to_integer<long long>(); }
  explicit operator unsigned long long() const { return to_integer<unsigned long long>(); }

 private:
  template <class I>
  I to_integer() const {
    return f2i<I, float>(std::trunc(double(from_fp8(__x, F))));
  }
};
// Two and four of them, from float2 / float4 (and double2, __half2, __nv_bfloat162), read as
// float2 / float4.
template <__nv_fp8_interpretation_t F>
struct fp8x2 {
  __nv_fp8x2_storage_t __x;
  fp8x2() = default;
  fp8x2(float2 v) : __x(__nv_cvt_float2_to_fp8x2(v, __NV_SATFINITE, F)) {}
  fp8x2(double2 v) : __x(__nv_cvt_double2_to_fp8x2(v, __NV_SATFINITE, F)) {}
  fp8x2(__half2 v) : fp8x2(make_float2(float(v.x), float(v.y))) {}
  fp8x2(__nv_bfloat162 v) : fp8x2(make_float2(float(v.x), float(v.y))) {}
  explicit operator float2() const {
    return make_float2(from_fp8((__nv_fp8_storage_t)(__x & 0xff), F),
                       from_fp8((__nv_fp8_storage_t)(__x >> 8), F));
  }
  explicit operator __half2() const {
    const float2 f = float2(*this);
    return __half2(__half(f.x), __half(f.y));
  }
};
template <__nv_fp8_interpretation_t F>
struct fp8x4 {
  __nv_fp8x4_storage_t __x;
  fp8x4() = default;
  fp8x4(float4 v)
      : __x(__nv_cvt_float2_to_fp8x2(make_float2(v.x, v.y), __NV_SATFINITE, F) |
            (__nv_fp8x4_storage_t)__nv_cvt_float2_to_fp8x2(make_float2(v.z, v.w), __NV_SATFINITE, F)
                << 16) {}
  explicit operator float4() const {
    float c[4];
    for (int i = 0; i < 4; ++i) c[i] = from_fp8((__nv_fp8_storage_t)(__x >> (8 * i)), F);
    return make_float4(c[0], c[1], c[2], c[3]);
  }
};
}  // namespace kiln_cpu

using __nv_fp8_e4m3 = kiln_cpu::fp8<__NV_E4M3>;
using __nv_fp8_e5m2 = kiln_cpu::fp8<__NV_E5M2>;
using __nv_fp8x2_e4m3 = kiln_cpu::fp8x2<__NV_E4M3>;
using __nv_fp8x2_e5m2 = kiln_cpu::fp8x2<__NV_E5M2>;
using __nv_fp8x4_e4m3 = kiln_cpu::fp8x4<__NV_E4M3>;
using __nv_fp8x4_e5m2 = kiln_cpu::fp8x4<__NV_E5M2>;
