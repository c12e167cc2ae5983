// __half (cuda_fp16.h) and __nv_bfloat16 (cuda_bf16.h) for the cpu backend: storage types of 16
// bits whose arithmetic is done in float and rounded back to nearest-even, which for + - * / and
// sqrt gives exactly the GPU's correctly rounded results (float carries more than twice their
// precision, plus two bits). Both are one template over the format; conversions are in software
// so that any host compiler builds them. Reached through the shims <cuda_fp16.h>, <cuda_bf16.h>.
#pragma once
#include <string.h>

#include <cmath>

namespace kiln_cpu {

// IEEE binary16: 5 exponent bits, 10 fraction bits.
struct binary16 {
  static float to_float(unsigned short h) {
    const unsigned sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, frac = h & 0x3ffu;
    unsigned bits;
    if (exp == 0x1f) {
      bits = sign | 0x7f800000u | (frac << 13);  // inf, nan
    } else if (exp != 0) {
      bits = sign | ((exp + 112) << 23) | (frac << 13);
    } else if (frac == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      int e = -1;
      unsigned f = frac;
      do { f <<= 1, ++e; } while (!(f & 0x400u));
      bits = sign | (unsigned(112 - e) << 23) | ((f & 0x3ffu) << 13);
    }
    float out;
    memcpy(&out, &bits, 4);
    return out;
  }
  static unsigned short from_float(float f) {
    unsigned bits;
    memcpy(&bits, &f, 4);
    const unsigned short sign = (bits >> 16) & 0x8000u;
    const unsigned abs = bits & 0x7fffffffu;
    if (abs >= 0x7f800000u) return sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u);
    if (abs >= 0x477ff000u) return sign | 0x7c00u;  // rounds beyond 65504: infinity
    if (abs < 0x38800000u) {                        // below the smallest normal: subnormal or 0
      const unsigned shift = 113 - (abs >> 23);
      if (shift > 12) return sign;  // below half the smallest subnormal (and shifts stay < 32)
      const unsigned mant = (abs & 0x7fffffu) | 0x800000u;
      unsigned short r = static_cast<unsigned short>(mant >> (shift + 13));
      const unsigned rest = mant & ((1u << (shift + 13)) - 1), half = 1u << (shift + 12);
      if (rest > half || (rest == half && (r & 1))) ++r;
      return sign | r;
    }
    const unsigned rounded = abs + 0xfffu + ((abs >> 13) & 1u);  // to nearest, ties to even
    return sign | static_cast<unsigned short>((rounded - 0x38000000u) >> 13);
  }
};

// bfloat16: float's 8 exponent bits, 7 fraction bits.
struct bfloat16 {
  static float to_float(unsigned short b) {
    const unsigned bits = unsigned(b) << 16;
    float out;
    memcpy(&out, &bits, 4);
    return out;
  }
  static unsigned short from_float(float f) {
    unsigned bits;
    memcpy(&bits, &f, 4);
    if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<unsigned short>((bits >> 16) | 0x40u);
    return static_cast<unsigned short>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
  }
};

// d as a float rounded to odd: the float toward zero from d, with its last bit set when inexact.
// Rounding that once more to a 16-bit format (at most 11 bits, fewer than float's 24 - 2) gives
// d correctly rounded, where rounding to nearest twice could land on a false tie (an __hfma).
inline float round_to_odd(double d) {
  float f = float(d);
  if (double(f) == d || d != d) return f;
  unsigned bits;
  memcpy(&bits, &f, 4);
  if (!(bits & 1u)) f = std::nextafter(f, d > double(f) ? INFINITY : -INFINITY);
  return f;
}

// A 16-bit float of Format; arithmetic in float, rounded once.
template <class Format>
struct narrow {
  unsigned short bits;
  narrow() = default;
  narrow(float f) : bits(Format::from_float(f)) {}
  narrow(double d) : bits(Format::from_float(round_to_odd(d))) {}
  narrow(int i) : narrow(double(i)) {}
  narrow(unsigned i) : narrow(double(i)) {}
  narrow(long long i) : narrow(double(i)) {}
  operator float() const { return Format::to_float(bits); }
  static narrow from_bits(unsigned short b) {
    narrow n;
    n.bits = b;
    return n;
  }
  friend narrow operator+(narrow a, narrow b) { return float(a) + float(b); }
  friend narrow operator-(narrow a, narrow b) { return float(a) - float(b); }
  friend narrow operator*(narrow a, narrow b) { return float(a) * float(b); }
  friend narrow operator/(narrow a, narrow b) { return float(a) / float(b); }
  friend narrow operator-(narrow a) { return from_bits(a.bits ^ 0x8000u); }
  friend narrow operator+(narrow a) { return a; }
  narrow& operator+=(narrow b) { return *this = *this + b; }
  narrow& operator-=(narrow b) { return *this = *this - b; }
  narrow& operator*=(narrow b) { return *this = *this * b; }
  narrow& operator/=(narrow b) { return *this = *this / b; }
  narrow& operator++() { return *this = *this + narrow(1.0f); }
  narrow& operator--() { return *this = *this - narrow(1.0f); }
  friend bool operator==(narrow a, narrow b) { return float(a) == float(b); }
  friend bool operator!=(narrow a, narrow b) { return float(a) != float(b); }
  friend bool operator<(narrow a, narrow b) { return float(a) < float(b); }
  friend bool operator<=(narrow a, narrow b) { return float(a) <= float(b); }
  friend bool operator>(narrow a, narrow b) { return float(a) > float(b); }
  friend bool operator>=(narrow a, narrow b) { return float(a) >= float(b); }
};

// Two of them, as __half2 / __nv_bfloat162; lane-wise arithmetic.
template <class Format>
struct __attribute__((aligned(4))) narrow2 {
  narrow<Format> x, y;
  friend narrow2 operator+(narrow2 a, narrow2 b) { return {a.x + b.x, a.y + b.y}; }
  friend narrow2 operator-(narrow2 a, narrow2 b) { return {a.x - b.x, a.y - b.y}; }
  friend narrow2 operator*(narrow2 a, narrow2 b) { return {a.x * b.x, a.y * b.y}; }
  friend narrow2 operator/(narrow2 a, narrow2 b) { return {a.x / b.x, a.y / b.y}; }
  narrow2& operator+=(narrow2 b) { return *this = *this + b; }
  narrow2& operator*=(narrow2 b) { return *this = *this * b; }
};

}  // namespace kiln_cpu

// The functions of the CUDA Math API that both formats share (cuda_fp16.h and cuda_bf16.h each
// declare the same names for their type). F is the format; N the scalar, N2 the pair.
#define KILN_NARROW_API(F)                                                                      \
  inline kiln_cpu::narrow<F> __hadd(kiln_cpu::narrow<F> a, kiln_cpu::narrow<F> b) { return a + b; } \
  inline kiln_cpu::narrow<F> __hsub(kiln_cpu::narrow<F> a, kiln_cpu::narrow<F> b) { return a - b; } \
  inline kiln_cpu::narrow<F> __hmul(kiln_cpu::narrow<F> a, kiln_cpu::narrow<F> b) { return a * b; } \
  inline kiln_cpu::narrow<F> __hdiv(kiln_cpu::narrow<F> a, kiln_cpu::narrow<F> b) { return a / b; } \
  inline kiln_cpu::narrow<F> __hneg(kiln_cpu::narrow<F> a) { return -a; }                       \
  inline kiln_cpu::narrow<F> __habs(kiln_cpu::narrow<F> a) {                                    \
    return kiln_cpu::narrow<F>::from_bits(a.bits & 0x7fffu);                                    \
  }                                                                                             \
  inline kiln_cpu::narrow<F> __hfma(kiln_cpu::narrow<F> a, kiln_cpu::narrow<F> b,              \
                                    kiln_cpu::narrow<F> c) {                                    \
    return kiln_cpu::narrow<F>(std::fma(double(float(a)), double(float(b)), double(float(c)))); \
  }                                                                                             \
  inline kiln_cpu::narrow<F> __hmax(kiln_cpu::narrow<F> a, kiln_cpu::narrow<F> b) {             \
    return float(a) < float(b) || std::isnan(float(a)) ? b : a;                                 \
  }                                                                                             \
  inline kiln_cpu::narrow<F> __hmin(kiln_cpu::narrow<F> a, kiln_cpu::narrow<F> b) {             \
    return float(b) < float(a) || std::isnan(float(a)) ? b : a;                                 \
  }                                                                                             \
  inline bool __heq(kiln_cpu::narrow<F> a, kiln_cpu::narrow<F> b) { return a == b; }            \
  inline bool __hne(kiln_cpu::narrow<F> a, kiln_cpu::narrow<F> b) { return a != b; }            \
  inline bool __hlt(kiln_cpu::narrow<F> a, kiln_cpu::narrow<F> b) { return a < b; }             \
  inline bool __hle(kiln_cpu::narrow<F> a, kiln_cpu::narrow<F> b) { return a <= b; }            \
  inline bool __hgt(kiln_cpu::narrow<F> a, kiln_cpu::narrow<F> b) { return a > b; }             \
  inline bool __hge(kiln_cpu::narrow<F> a, kiln_cpu::narrow<F> b) { return a >= b; }            \
  inline bool __hisnan(kiln_cpu::narrow<F> a) { return std::isnan(float(a)); }                 \
  inline int __hisinf(kiln_cpu::narrow<F> a) {                                                  \
    return std::isinf(float(a)) ? (float(a) < 0 ? -1 : 1) : 0;                                  \
  }                                                                                             \
  inline kiln_cpu::narrow<F> hsqrt(kiln_cpu::narrow<F> a) { return std::sqrt(float(a)); }      \
  inline kiln_cpu::narrow<F> hrsqrt(kiln_cpu::narrow<F> a) { return 1.0f / std::sqrt(float(a)); } \
  inline kiln_cpu::narrow<F> hrcp(kiln_cpu::narrow<F> a) { return 1.0f / float(a); }           \
  inline kiln_cpu::narrow<F> hexp(kiln_cpu::narrow<F> a) { return std::exp(float(a)); }        \
  inline kiln_cpu::narrow<F> hlog(kiln_cpu::narrow<F> a) { return std::log(float(a)); }        \
  inline kiln_cpu::narrow<F> hsin(kiln_cpu::narrow<F> a) { return std::sin(float(a)); }        \
  inline kiln_cpu::narrow<F> hcos(kiln_cpu::narrow<F> a) { return std::cos(float(a)); }        \
  inline kiln_cpu::narrow<F> hfloor(kiln_cpu::narrow<F> a) { return std::floor(float(a)); }    \
  inline kiln_cpu::narrow<F> hceil(kiln_cpu::narrow<F> a) { return std::ceil(float(a)); }      \
  inline kiln_cpu::narrow<F> htrunc(kiln_cpu::narrow<F> a) { return std::trunc(float(a)); }    \
  inline kiln_cpu::narrow2<F> __hadd2(kiln_cpu::narrow2<F> a, kiln_cpu::narrow2<F> b) { return a + b; } \
  inline kiln_cpu::narrow2<F> __hsub2(kiln_cpu::narrow2<F> a, kiln_cpu::narrow2<F> b) { return a - b; } \
  inline kiln_cpu::narrow2<F> __hmul2(kiln_cpu::narrow2<F> a, kiln_cpu::narrow2<F> b) { return a * b; } \
  inline kiln_cpu::narrow2<F> __h2div(kiln_cpu::narrow2<F> a, kiln_cpu::narrow2<F> b) { return a / b; } \
  inline kiln_cpu::narrow2<F> __hfma2(kiln_cpu::narrow2<F> a, kiln_cpu::narrow2<F> b,          \
                                      kiln_cpu::narrow2<F> c) {                                 \
    return {__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y)};                                      \
  }
