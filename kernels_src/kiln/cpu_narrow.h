// __half (cuda_fp16.h) and __nv_bfloat16 (cuda_bf16.h) for the cpu backend: storage types of 16
// bits whose arithmetic is done in float and rounded back to nearest-even, which for + - * / and
// sqrt gives exactly the GPU's correctly rounded results (float carries more than twice their
// precision, plus two bits). Both are one template over the format; conversions are in software
// so that any host compiler builds them. Reached through the shims <cuda_fp16.h>, <cuda_bf16.h>.
#pragma once
#include <string.h>

#include <cmath>
#include <type_traits>

namespace kiln_cpu {

// IEEE binary16: 5 exponent bits, 10 fraction bits.
struct binary16 {
  static constexpr unsigned short inf_bits = 0x7c00;
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
  static constexpr unsigned short inf_bits = 0x7f80;
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
// (A long double holds every 64-bit integer exactly, for the integer conversions.)
template <class D>
inline float round_to_odd(D d) {
  float f = float(d);
  if (D(f) == d || d != d) return f;
  unsigned bits;
  memcpy(&bits, &f, 4);
  if (!(bits & 1u)) f = std::nextafter(f, d > D(f) ? INFINITY : -INFINITY);
  return f;
}

// A 16-bit float of Format; arithmetic in float, rounded once.
template <class Format>
struct narrow {
  unsigned short bits;
  narrow() = default;
  narrow(float f) : bits(Format::from_float(f)) {}
  narrow(double d) : bits(Format::from_float(round_to_odd(d))) {}
  narrow(long double d) : bits(Format::from_float(round_to_odd(d))) {}
  narrow(int i) : narrow(double(i)) {}
  narrow(unsigned i) : narrow(double(i)) {}
  narrow(long long i) : narrow((long double)i) {}
  narrow(unsigned long long i) : narrow((long double)i) {}
  narrow(long i) : narrow((long double)i) {}
  narrow(unsigned long i) : narrow((long double)i) {}
  operator float() const { return Format::to_float(bits); }
  // From and to the raw structs (__half_raw, __nv_bfloat16_raw: one unsigned short x).
  template <class Raw,
            std::enable_if_t<sizeof(Raw) == 2 && std::is_same_v<decltype(Raw::x), unsigned short>,
                             int> = 0>
  narrow(const Raw& raw) : bits(raw.x) {}
  template <class Raw,
            std::enable_if_t<sizeof(Raw) == 2 && std::is_same_v<decltype(Raw::x), unsigned short>,
                             int> = 0>
  operator Raw() const {
    return Raw{bits};
  }
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
  narrow2() = default;
  narrow2(narrow<Format> a, narrow<Format> b) : x(a), y(b) {}  // `half2 v(0.f, 0.f);`
  friend narrow2 operator+(narrow2 a, narrow2 b) { return {a.x + b.x, a.y + b.y}; }
  friend narrow2 operator-(narrow2 a, narrow2 b) { return {a.x - b.x, a.y - b.y}; }
  friend narrow2 operator*(narrow2 a, narrow2 b) { return {a.x * b.x, a.y * b.y}; }
  friend narrow2 operator/(narrow2 a, narrow2 b) { return {a.x / b.x, a.y / b.y}; }
  narrow2& operator+=(narrow2 b) { return *this = *this + b; }
  narrow2& operator*=(narrow2 b) { return *this = *this * b; }
};

// CUDA's rounding modes of conversions: _rn, _rz, _rd, _ru.
enum class Round { rn, rz, rd, ru };

// The bits of the 16-bit float next above the one of bits b (NaN and +infinity stay), and below.
template <class F>
inline unsigned short next_up(unsigned short b) {
  if ((b & 0x7fffu) > F::inf_bits || b == F::inf_bits) return b;
  if ((b & 0x7fffu) == 0) return 1;  // either zero: the smallest subnormal
  return (unsigned short)(b & 0x8000u ? b - 1 : b + 1);
}
template <class F>
inline unsigned short next_down(unsigned short b) {
  return next_up<F>(b ^ 0x8000u) ^ 0x8000u;
}

// v (a float, double, or an integer as an exact long double) rounded to F in mode r: to nearest
// once, then a step to the neighbour on the side r asks for where that went past v.
template <class F, class V>
inline narrow<F> convert(V v, Round r) {
  narrow<F> n(v);
  const V back = V(float(n));
  if (r == Round::rn || back == v || v != v) return n;
  if (r == Round::rd || (r == Round::rz && v > 0)) {
    if (back > v) n.bits = next_down<F>(n.bits);
  } else if (back < v) {  // ru, or rz below zero
    n.bits = next_up<F>(n.bits);
  }
  return n;
}

// h rounded to an integer of type I in mode r, saturated to I's range; NaN as a float's NaN
// converts on a GPU (cpu_math.h nan_to_int: 0 to 32 bits or fewer, the sign bit alone to 64;
// the half forms not yet measured).
template <class I, class F>
inline I to_integer(narrow<F> h, Round r) {
  const float v = float(h);
  if (v != v) return sizeof(I) == 8 ? I(1ull << 63) : I(0);
  const float w = r == Round::rn   ? rintf(v)
                  : r == Round::rz ? truncf(v)
                  : r == Round::rd ? floorf(v)
                                   : ceilf(v);
  constexpr I lo = I(0) < I(-1) ? I(0) : I(1ull << (sizeof(I) * 8 - 1));  // (unsigned: 0)
  constexpr I hi = I(~lo);
  if (w <= float(lo)) return lo;
  if (w >= float(hi)) return hi;  // (float(hi) rounds up to a power of two: none reach it)
  return I(w);
}

// A result clamped to [0, 1] (the _sat forms); NaN gives +0.
inline float saturate(float v) {
  return v >= 1.0f ? 1.0f : v > 0.0f ? v : 0.0f;
}
// A result below zero made +0 (the _relu forms); NaN stays NaN.
inline float relu(float v) {
  return v < 0.0f ? 0.0f : v;
}
// CUDA's canonical NaN bits for both formats (CUDART_NAN_FP16, CUDART_NAN_BF16).
constexpr unsigned short kNaNBits = 0x7fff;

}  // namespace kiln_cpu

// The functions of the CUDA Math API that both formats share (cuda_fp16.h and cuda_bf16.h each
// declare the same names for their type): F is the format, N the scalar type, N2 the pair.
// Each is computed in float (fma in double) and rounded once, so + - * / fma and sqrt are the
// GPU's correctly rounded results; the transcendental ones are within the GPU's error. Pairs
// apply the scalar form to each lane.
#define KILN_NARROW_API(F, N, N2)                                                          \
  inline bool __hisnan(N a) {                                                              \
    return std::isnan(float(a));                                                           \
  }                                                                                        \
  inline int __hisinf(N a) {                                                               \
    return std::isinf(float(a)) ? (float(a) < 0 ? -1 : 1) : 0;                             \
  }                                                                                        \
  inline N __hadd(N a, N b) {                                                              \
    return a + b;                                                                          \
  }                                                                                        \
  inline N __hsub(N a, N b) {                                                              \
    return a - b;                                                                          \
  }                                                                                        \
  inline N __hmul(N a, N b) {                                                              \
    return a * b;                                                                          \
  }                                                                                        \
  inline N __hdiv(N a, N b) {                                                              \
    return a / b;                                                                          \
  }                                                                                        \
  inline N __hadd_rn(N a, N b) {                                                           \
    return a + b;                                                                          \
  }                                                                                        \
  inline N __hadd_sat(N a, N b) {                                                          \
    return kiln_cpu::saturate(float(a + b));                                               \
  }                                                                                        \
  inline N __hsub_rn(N a, N b) {                                                           \
    return a - b;                                                                          \
  }                                                                                        \
  inline N __hsub_sat(N a, N b) {                                                          \
    return kiln_cpu::saturate(float(a - b));                                               \
  }                                                                                        \
  inline N __hmul_rn(N a, N b) {                                                           \
    return a * b;                                                                          \
  }                                                                                        \
  inline N __hmul_sat(N a, N b) {                                                          \
    return kiln_cpu::saturate(float(a * b));                                               \
  }                                                                                        \
  inline N __hneg(N a) {                                                                   \
    return -a;                                                                             \
  }                                                                                        \
  inline N __habs(N a) {                                                                   \
    return N::from_bits(a.bits & 0x7fffu);                                                 \
  }                                                                                        \
  inline N __hfma(N a, N b, N c) {                                                         \
    return N(std::fma(double(float(a)), double(float(b)), double(float(c))));              \
  }                                                                                        \
  inline N __hfma_sat(N a, N b, N c) {                                                     \
    return kiln_cpu::saturate(float(__hfma(a, b, c)));                                     \
  }                                                                                        \
  inline N __hfma_relu(N a, N b, N c) {                                                    \
    return kiln_cpu::relu(float(__hfma(a, b, c)));                                         \
  }                                                                                        \
  inline N __hmax(N a, N b) {                                                              \
    return float(a) < float(b) || std::isnan(float(a)) ? b : a;                            \
  }                                                                                        \
  inline N __hmin(N a, N b) {                                                              \
    return float(b) < float(a) || std::isnan(float(a)) ? b : a;                            \
  }                                                                                        \
  inline N __hmax_nan(N a, N b) {                                                          \
    return __hisnan(a) || __hisnan(b) ? N::from_bits(kiln_cpu::kNaNBits) : __hmax(a, b);   \
  }                                                                                        \
  inline N __hmin_nan(N a, N b) {                                                          \
    return __hisnan(a) || __hisnan(b) ? N::from_bits(kiln_cpu::kNaNBits) : __hmin(a, b);   \
  }                                                                                        \
  inline bool __heq(N a, N b) {                                                            \
    return float(a) == float(b);                                                           \
  }                                                                                        \
  inline bool __hequ(N a, N b) {                                                           \
    return __hisnan(a) || __hisnan(b) || float(a) == float(b);                             \
  }                                                                                        \
  inline bool __hne(N a, N b) {                                                            \
    return !__hisnan(a) && !__hisnan(b) && float(a) != float(b);                           \
  }                                                                                        \
  inline bool __hneu(N a, N b) {                                                           \
    return __hisnan(a) || __hisnan(b) || float(a) != float(b);                             \
  }                                                                                        \
  inline bool __hlt(N a, N b) {                                                            \
    return float(a) < float(b);                                                            \
  }                                                                                        \
  inline bool __hltu(N a, N b) {                                                           \
    return __hisnan(a) || __hisnan(b) || float(a) < float(b);                              \
  }                                                                                        \
  inline bool __hle(N a, N b) {                                                            \
    return float(a) <= float(b);                                                           \
  }                                                                                        \
  inline bool __hleu(N a, N b) {                                                           \
    return __hisnan(a) || __hisnan(b) || float(a) <= float(b);                             \
  }                                                                                        \
  inline bool __hgt(N a, N b) {                                                            \
    return float(a) > float(b);                                                            \
  }                                                                                        \
  inline bool __hgtu(N a, N b) {                                                           \
    return __hisnan(a) || __hisnan(b) || float(a) > float(b);                              \
  }                                                                                        \
  inline bool __hge(N a, N b) {                                                            \
    return float(a) >= float(b);                                                           \
  }                                                                                        \
  inline bool __hgeu(N a, N b) {                                                           \
    return __hisnan(a) || __hisnan(b) || float(a) >= float(b);                             \
  }                                                                                        \
  inline N hsqrt(N a) {                                                                    \
    return std::sqrt(float(a));                                                            \
  }                                                                                        \
  inline N2 h2sqrt(N2 a) {                                                                 \
    return {hsqrt(a.x), hsqrt(a.y)};                                                       \
  }                                                                                        \
  inline N hrsqrt(N a) {                                                                   \
    return 1.0f / std::sqrt(float(a));                                                     \
  }                                                                                        \
  inline N2 h2rsqrt(N2 a) {                                                                \
    return {hrsqrt(a.x), hrsqrt(a.y)};                                                     \
  }                                                                                        \
  inline N hrcp(N a) {                                                                     \
    return 1.0f / float(a);                                                                \
  }                                                                                        \
  inline N2 h2rcp(N2 a) {                                                                  \
    return {hrcp(a.x), hrcp(a.y)};                                                         \
  }                                                                                        \
  inline N hexp(N a) {                                                                     \
    return std::exp(float(a));                                                             \
  }                                                                                        \
  inline N2 h2exp(N2 a) {                                                                  \
    return {hexp(a.x), hexp(a.y)};                                                         \
  }                                                                                        \
  inline N hexp2(N a) {                                                                    \
    return std::exp2(float(a));                                                            \
  }                                                                                        \
  inline N2 h2exp2(N2 a) {                                                                 \
    return {hexp2(a.x), hexp2(a.y)};                                                       \
  }                                                                                        \
  inline N hexp10(N a) {                                                                   \
    return std::pow(10.0f, float(a));                                                      \
  }                                                                                        \
  inline N2 h2exp10(N2 a) {                                                                \
    return {hexp10(a.x), hexp10(a.y)};                                                     \
  }                                                                                        \
  inline N hlog(N a) {                                                                     \
    return std::log(float(a));                                                             \
  }                                                                                        \
  inline N2 h2log(N2 a) {                                                                  \
    return {hlog(a.x), hlog(a.y)};                                                         \
  }                                                                                        \
  inline N hlog2(N a) {                                                                    \
    return std::log2(float(a));                                                            \
  }                                                                                        \
  inline N2 h2log2(N2 a) {                                                                 \
    return {hlog2(a.x), hlog2(a.y)};                                                       \
  }                                                                                        \
  inline N hlog10(N a) {                                                                   \
    return std::log10(float(a));                                                           \
  }                                                                                        \
  inline N2 h2log10(N2 a) {                                                                \
    return {hlog10(a.x), hlog10(a.y)};                                                     \
  }                                                                                        \
  inline N hsin(N a) {                                                                     \
    return std::sin(float(a));                                                             \
  }                                                                                        \
  inline N2 h2sin(N2 a) {                                                                  \
    return {hsin(a.x), hsin(a.y)};                                                         \
  }                                                                                        \
  inline N hcos(N a) {                                                                     \
    return std::cos(float(a));                                                             \
  }                                                                                        \
  inline N2 h2cos(N2 a) {                                                                  \
    return {hcos(a.x), hcos(a.y)};                                                         \
  }                                                                                        \
  inline N htanh(N a) {                                                                    \
    return std::tanh(float(a));                                                            \
  }                                                                                        \
  inline N2 h2tanh(N2 a) {                                                                 \
    return {htanh(a.x), htanh(a.y)};                                                       \
  }                                                                                        \
  inline N htanh_approx(N a) {                                                             \
    return std::tanh(float(a));                                                            \
  }                                                                                        \
  inline N2 h2tanh_approx(N2 a) {                                                          \
    return {htanh_approx(a.x), htanh_approx(a.y)};                                         \
  }                                                                                        \
  inline N hfloor(N a) {                                                                   \
    return std::floor(float(a));                                                           \
  }                                                                                        \
  inline N2 h2floor(N2 a) {                                                                \
    return {hfloor(a.x), hfloor(a.y)};                                                     \
  }                                                                                        \
  inline N hceil(N a) {                                                                    \
    return std::ceil(float(a));                                                            \
  }                                                                                        \
  inline N2 h2ceil(N2 a) {                                                                 \
    return {hceil(a.x), hceil(a.y)};                                                       \
  }                                                                                        \
  inline N htrunc(N a) {                                                                   \
    return std::trunc(float(a));                                                           \
  }                                                                                        \
  inline N2 h2trunc(N2 a) {                                                                \
    return {htrunc(a.x), htrunc(a.y)};                                                     \
  }                                                                                        \
  inline N hrint(N a) {                                                                    \
    return std::rint(float(a));                                                            \
  }                                                                                        \
  inline N2 h2rint(N2 a) {                                                                 \
    return {hrint(a.x), hrint(a.y)};                                                       \
  }                                                                                        \
  inline N2 __hadd2(N2 a, N2 b) {                                                          \
    return {__hadd(a.x, b.x), __hadd(a.y, b.y)};                                           \
  }                                                                                        \
  inline N2 __hadd2_rn(N2 a, N2 b) {                                                       \
    return {__hadd_rn(a.x, b.x), __hadd_rn(a.y, b.y)};                                     \
  }                                                                                        \
  inline N2 __hadd2_sat(N2 a, N2 b) {                                                      \
    return {__hadd_sat(a.x, b.x), __hadd_sat(a.y, b.y)};                                   \
  }                                                                                        \
  inline N2 __hsub2(N2 a, N2 b) {                                                          \
    return {__hsub(a.x, b.x), __hsub(a.y, b.y)};                                           \
  }                                                                                        \
  inline N2 __hsub2_rn(N2 a, N2 b) {                                                       \
    return {__hsub_rn(a.x, b.x), __hsub_rn(a.y, b.y)};                                     \
  }                                                                                        \
  inline N2 __hsub2_sat(N2 a, N2 b) {                                                      \
    return {__hsub_sat(a.x, b.x), __hsub_sat(a.y, b.y)};                                   \
  }                                                                                        \
  inline N2 __hmul2(N2 a, N2 b) {                                                          \
    return {__hmul(a.x, b.x), __hmul(a.y, b.y)};                                           \
  }                                                                                        \
  inline N2 __hmul2_rn(N2 a, N2 b) {                                                       \
    return {__hmul_rn(a.x, b.x), __hmul_rn(a.y, b.y)};                                     \
  }                                                                                        \
  inline N2 __hmul2_sat(N2 a, N2 b) {                                                      \
    return {__hmul_sat(a.x, b.x), __hmul_sat(a.y, b.y)};                                   \
  }                                                                                        \
  inline N2 __h2div(N2 a, N2 b) {                                                          \
    return {__hdiv(a.x, b.x), __hdiv(a.y, b.y)};                                           \
  }                                                                                        \
  inline N2 __hfma2(N2 a, N2 b, N2 c) {                                                    \
    return {__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y)};                                 \
  }                                                                                        \
  inline N2 __hfma2_sat(N2 a, N2 b, N2 c) {                                                \
    return {__hfma_sat(a.x, b.x, c.x), __hfma_sat(a.y, b.y, c.y)};                         \
  }                                                                                        \
  inline N2 __hfma2_relu(N2 a, N2 b, N2 c) {                                               \
    return {__hfma_relu(a.x, b.x, c.x), __hfma_relu(a.y, b.y, c.y)};                       \
  }                                                                                        \
  inline N2 __hneg2(N2 a) {                                                                \
    return {__hneg(a.x), __hneg(a.y)};                                                     \
  }                                                                                        \
  inline N2 __habs2(N2 a) {                                                                \
    return {__habs(a.x), __habs(a.y)};                                                     \
  }                                                                                        \
  inline N2 __hmax2(N2 a, N2 b) {                                                          \
    return {__hmax(a.x, b.x), __hmax(a.y, b.y)};                                           \
  }                                                                                        \
  inline N2 __hmin2(N2 a, N2 b) {                                                          \
    return {__hmin(a.x, b.x), __hmin(a.y, b.y)};                                           \
  }                                                                                        \
  inline N2 __hmax2_nan(N2 a, N2 b) {                                                      \
    return {__hmax_nan(a.x, b.x), __hmax_nan(a.y, b.y)};                                   \
  }                                                                                        \
  inline N2 __hmin2_nan(N2 a, N2 b) {                                                      \
    return {__hmin_nan(a.x, b.x), __hmin_nan(a.y, b.y)};                                   \
  }                                                                                        \
  inline N2 __hisnan2(N2 a) {                                                              \
    return {N(__hisnan(a.x) ? 1.0f : 0.0f), N(__hisnan(a.y) ? 1.0f : 0.0f)};               \
  }                                                                                        \
  inline N2 __heq2(N2 a, N2 b) {                                                           \
    return {N(__heq(a.x, b.x) ? 1.0f : 0.0f), N(__heq(a.y, b.y) ? 1.0f : 0.0f)};           \
  }                                                                                        \
  inline unsigned __heq2_mask(N2 a, N2 b) {                                                \
    return (__heq(a.x, b.x) ? 0xffffu : 0u) | (__heq(a.y, b.y) ? 0xffff0000u : 0u);        \
  }                                                                                        \
  inline bool __hbeq2(N2 a, N2 b) {                                                        \
    return __heq(a.x, b.x) && __heq(a.y, b.y);                                             \
  }                                                                                        \
  inline N2 __hequ2(N2 a, N2 b) {                                                          \
    return {N(__hequ(a.x, b.x) ? 1.0f : 0.0f), N(__hequ(a.y, b.y) ? 1.0f : 0.0f)};         \
  }                                                                                        \
  inline unsigned __hequ2_mask(N2 a, N2 b) {                                               \
    return (__hequ(a.x, b.x) ? 0xffffu : 0u) | (__hequ(a.y, b.y) ? 0xffff0000u : 0u);      \
  }                                                                                        \
  inline bool __hbequ2(N2 a, N2 b) {                                                       \
    return __hequ(a.x, b.x) && __hequ(a.y, b.y);                                           \
  }                                                                                        \
  inline N2 __hne2(N2 a, N2 b) {                                                           \
    return {N(__hne(a.x, b.x) ? 1.0f : 0.0f), N(__hne(a.y, b.y) ? 1.0f : 0.0f)};           \
  }                                                                                        \
  inline unsigned __hne2_mask(N2 a, N2 b) {                                                \
    return (__hne(a.x, b.x) ? 0xffffu : 0u) | (__hne(a.y, b.y) ? 0xffff0000u : 0u);        \
  }                                                                                        \
  inline bool __hbne2(N2 a, N2 b) {                                                        \
    return __hne(a.x, b.x) && __hne(a.y, b.y);                                             \
  }                                                                                        \
  inline N2 __hneu2(N2 a, N2 b) {                                                          \
    return {N(__hneu(a.x, b.x) ? 1.0f : 0.0f), N(__hneu(a.y, b.y) ? 1.0f : 0.0f)};         \
  }                                                                                        \
  inline unsigned __hneu2_mask(N2 a, N2 b) {                                               \
    return (__hneu(a.x, b.x) ? 0xffffu : 0u) | (__hneu(a.y, b.y) ? 0xffff0000u : 0u);      \
  }                                                                                        \
  inline bool __hbneu2(N2 a, N2 b) {                                                       \
    return __hneu(a.x, b.x) && __hneu(a.y, b.y);                                           \
  }                                                                                        \
  inline N2 __hlt2(N2 a, N2 b) {                                                           \
    return {N(__hlt(a.x, b.x) ? 1.0f : 0.0f), N(__hlt(a.y, b.y) ? 1.0f : 0.0f)};           \
  }                                                                                        \
  inline unsigned __hlt2_mask(N2 a, N2 b) {                                                \
    return (__hlt(a.x, b.x) ? 0xffffu : 0u) | (__hlt(a.y, b.y) ? 0xffff0000u : 0u);        \
  }                                                                                        \
  inline bool __hblt2(N2 a, N2 b) {                                                        \
    return __hlt(a.x, b.x) && __hlt(a.y, b.y);                                             \
  }                                                                                        \
  inline N2 __hltu2(N2 a, N2 b) {                                                          \
    return {N(__hltu(a.x, b.x) ? 1.0f : 0.0f), N(__hltu(a.y, b.y) ? 1.0f : 0.0f)};         \
  }                                                                                        \
  inline unsigned __hltu2_mask(N2 a, N2 b) {                                               \
    return (__hltu(a.x, b.x) ? 0xffffu : 0u) | (__hltu(a.y, b.y) ? 0xffff0000u : 0u);      \
  }                                                                                        \
  inline bool __hbltu2(N2 a, N2 b) {                                                       \
    return __hltu(a.x, b.x) && __hltu(a.y, b.y);                                           \
  }                                                                                        \
  inline N2 __hle2(N2 a, N2 b) {                                                           \
    return {N(__hle(a.x, b.x) ? 1.0f : 0.0f), N(__hle(a.y, b.y) ? 1.0f : 0.0f)};           \
  }                                                                                        \
  inline unsigned __hle2_mask(N2 a, N2 b) {                                                \
    return (__hle(a.x, b.x) ? 0xffffu : 0u) | (__hle(a.y, b.y) ? 0xffff0000u : 0u);        \
  }                                                                                        \
  inline bool __hble2(N2 a, N2 b) {                                                        \
    return __hle(a.x, b.x) && __hle(a.y, b.y);                                             \
  }                                                                                        \
  inline N2 __hleu2(N2 a, N2 b) {                                                          \
    return {N(__hleu(a.x, b.x) ? 1.0f : 0.0f), N(__hleu(a.y, b.y) ? 1.0f : 0.0f)};         \
  }                                                                                        \
  inline unsigned __hleu2_mask(N2 a, N2 b) {                                               \
    return (__hleu(a.x, b.x) ? 0xffffu : 0u) | (__hleu(a.y, b.y) ? 0xffff0000u : 0u);      \
  }                                                                                        \
  inline bool __hbleu2(N2 a, N2 b) {                                                       \
    return __hleu(a.x, b.x) && __hleu(a.y, b.y);                                           \
  }                                                                                        \
  inline N2 __hgt2(N2 a, N2 b) {                                                           \
    return {N(__hgt(a.x, b.x) ? 1.0f : 0.0f), N(__hgt(a.y, b.y) ? 1.0f : 0.0f)};           \
  }                                                                                        \
  inline unsigned __hgt2_mask(N2 a, N2 b) {                                                \
    return (__hgt(a.x, b.x) ? 0xffffu : 0u) | (__hgt(a.y, b.y) ? 0xffff0000u : 0u);        \
  }                                                                                        \
  inline bool __hbgt2(N2 a, N2 b) {                                                        \
    return __hgt(a.x, b.x) && __hgt(a.y, b.y);                                             \
  }                                                                                        \
  inline N2 __hgtu2(N2 a, N2 b) {                                                          \
    return {N(__hgtu(a.x, b.x) ? 1.0f : 0.0f), N(__hgtu(a.y, b.y) ? 1.0f : 0.0f)};         \
  }                                                                                        \
  inline unsigned __hgtu2_mask(N2 a, N2 b) {                                               \
    return (__hgtu(a.x, b.x) ? 0xffffu : 0u) | (__hgtu(a.y, b.y) ? 0xffff0000u : 0u);      \
  }                                                                                        \
  inline bool __hbgtu2(N2 a, N2 b) {                                                       \
    return __hgtu(a.x, b.x) && __hgtu(a.y, b.y);                                           \
  }                                                                                        \
  inline N2 __hge2(N2 a, N2 b) {                                                           \
    return {N(__hge(a.x, b.x) ? 1.0f : 0.0f), N(__hge(a.y, b.y) ? 1.0f : 0.0f)};           \
  }                                                                                        \
  inline unsigned __hge2_mask(N2 a, N2 b) {                                                \
    return (__hge(a.x, b.x) ? 0xffffu : 0u) | (__hge(a.y, b.y) ? 0xffff0000u : 0u);        \
  }                                                                                        \
  inline bool __hbge2(N2 a, N2 b) {                                                        \
    return __hge(a.x, b.x) && __hge(a.y, b.y);                                             \
  }                                                                                        \
  inline N2 __hgeu2(N2 a, N2 b) {                                                          \
    return {N(__hgeu(a.x, b.x) ? 1.0f : 0.0f), N(__hgeu(a.y, b.y) ? 1.0f : 0.0f)};         \
  }                                                                                        \
  inline unsigned __hgeu2_mask(N2 a, N2 b) {                                               \
    return (__hgeu(a.x, b.x) ? 0xffffu : 0u) | (__hgeu(a.y, b.y) ? 0xffff0000u : 0u);      \
  }                                                                                        \
  inline bool __hbgeu2(N2 a, N2 b) {                                                       \
    return __hgeu(a.x, b.x) && __hgeu(a.y, b.y);                                           \
  }                                                                                        \
  inline N2 __lowhigh2highlow(N2 a) {                                                      \
    return {a.y, a.x};                                                                     \
  }                                                                                        \
  inline float __low2float(N2 a) {                                                         \
    return a.x;                                                                            \
  }                                                                                        \
  inline float __high2float(N2 a) {                                                        \
    return a.y;                                                                            \
  }                                                                                        \
  inline N2 __hcmadd(N2 a, N2 b, N2 c) {                                                   \
    return __hfma2(N2{a.y, a.y}, N2{-b.y, b.x}, __hfma2(N2{a.x, a.x}, b, c));              \
  }                                                                                        \
  inline N atomicAdd(N* p, N v) {                                                          \
    return kiln_cpu::atomic_update_bits<N, unsigned short>(p, [v](N o) { return o + v; }); \
  }                                                                                        \
  inline N2 atomicAdd(N2* p, N2 v) {                                                       \
    return kiln_cpu::atomic_update_bits<N2, unsigned>(p, [v](N2 o) { return o + v; });     \
  }

// Conversions between integers I (named `name` in the function names: int, ll, uint, ...) and
// N, in each rounding mode; integers saturate and NaN gives 0.
#define KILN_NARROW_INTEGER(F, N, stem, I, name)                      \
  inline I __##stem##2##name##_rn(N h) {                              \
    return kiln_cpu::to_integer<I>(h, kiln_cpu::Round::rn);           \
  }                                                                   \
  inline N __##name##2##stem##_rn(I i) {                              \
    return kiln_cpu::convert<F>((long double)i, kiln_cpu::Round::rn); \
  }                                                                   \
  inline I __##stem##2##name##_rz(N h) {                              \
    return kiln_cpu::to_integer<I>(h, kiln_cpu::Round::rz);           \
  }                                                                   \
  inline N __##name##2##stem##_rz(I i) {                              \
    return kiln_cpu::convert<F>((long double)i, kiln_cpu::Round::rz); \
  }                                                                   \
  inline I __##stem##2##name##_rd(N h) {                              \
    return kiln_cpu::to_integer<I>(h, kiln_cpu::Round::rd);           \
  }                                                                   \
  inline N __##name##2##stem##_rd(I i) {                              \
    return kiln_cpu::convert<F>((long double)i, kiln_cpu::Round::rd); \
  }                                                                   \
  inline I __##stem##2##name##_ru(N h) {                              \
    return kiln_cpu::to_integer<I>(h, kiln_cpu::Round::ru);           \
  }                                                                   \
  inline N __##name##2##stem##_ru(I i) {                              \
    return kiln_cpu::convert<F>((long double)i, kiln_cpu::Round::ru); \
  }

// The functions whose names carry the type (`stem`: half or bfloat16): __float2half_rz,
// __half2int_rd, __low2half2, make_half2, ... for N, N2 of format F.
#define KILN_NARROW_NAMES(F, N, N2, stem)                               \
  inline N __float2##stem(float f) {                                    \
    return f;                                                           \
  }                                                                     \
  inline N __float2##stem##_rn(float f) {                               \
    return kiln_cpu::convert<F>(f, kiln_cpu::Round::rn);                \
  }                                                                     \
  inline N __float2##stem##_rz(float f) {                               \
    return kiln_cpu::convert<F>(f, kiln_cpu::Round::rz);                \
  }                                                                     \
  inline N __float2##stem##_rd(float f) {                               \
    return kiln_cpu::convert<F>(f, kiln_cpu::Round::rd);                \
  }                                                                     \
  inline N __float2##stem##_ru(float f) {                               \
    return kiln_cpu::convert<F>(f, kiln_cpu::Round::ru);                \
  }                                                                     \
  inline N __double2##stem(double d) {                                  \
    return d;                                                           \
  }                                                                     \
  inline float __##stem##2float(N h) {                                  \
    return h;                                                           \
  }                                                                     \
  inline N2 __float2##stem##2_rn(float f) {                             \
    return {f, f};                                                      \
  }                                                                     \
  inline N2 __floats2##stem##2_rn(float a, float b) {                   \
    return {a, b};                                                      \
  }                                                                     \
  inline N2 __float22##stem##2_rn(float2 f) {                           \
    return {f.x, f.y};                                                  \
  }                                                                     \
  inline float2 __##stem##22float2(N2 h) {                              \
    return {float(h.x), float(h.y)};                                    \
  }                                                                     \
  inline N __low2##stem(N2 h) {                                         \
    return h.x;                                                         \
  }                                                                     \
  inline N __high2##stem(N2 h) {                                        \
    return h.y;                                                         \
  }                                                                     \
  inline N2 __halves2##stem##2(N a, N b) {                              \
    return {a, b};                                                      \
  }                                                                     \
  inline N2 __##stem##2##stem##2(N a) {                                 \
    return {a, a};                                                      \
  }                                                                     \
  inline N2 __low2##stem##2(N2 a) {                                     \
    return {a.x, a.x};                                                  \
  }                                                                     \
  inline N2 __high2##stem##2(N2 a) {                                    \
    return {a.y, a.y};                                                  \
  }                                                                     \
  inline N2 __lows2##stem##2(N2 a, N2 b) {                              \
    return {a.x, b.x};                                                  \
  }                                                                     \
  inline N2 __highs2##stem##2(N2 a, N2 b) {                             \
    return {a.y, b.y};                                                  \
  }                                                                     \
  inline N2 make_##stem##2(N x, N y) {                                  \
    return {x, y};                                                      \
  }                                                                     \
  inline short __##stem##_as_short(N h) {                               \
    return short(h.bits);                                               \
  }                                                                     \
  inline unsigned short __##stem##_as_ushort(N h) {                     \
    return h.bits;                                                      \
  }                                                                     \
  inline N __short_as_##stem(short s) {                                 \
    return N::from_bits((unsigned short)s);                             \
  }                                                                     \
  inline N __ushort_as_##stem(unsigned short s) {                       \
    return N::from_bits(s);                                             \
  }                                                                     \
  inline signed char __##stem##2char_rz(N h) {                          \
    return kiln_cpu::to_integer<signed char>(h, kiln_cpu::Round::rz);   \
  }                                                                     \
  inline unsigned char __##stem##2uchar_rz(N h) {                       \
    return kiln_cpu::to_integer<unsigned char>(h, kiln_cpu::Round::rz); \
  }                                                                     \
  KILN_NARROW_INTEGER(F, N, stem, int, int)                             \
  KILN_NARROW_INTEGER(F, N, stem, short, short)                         \
  KILN_NARROW_INTEGER(F, N, stem, long long, ll)                        \
  KILN_NARROW_INTEGER(F, N, stem, unsigned, uint)                       \
  KILN_NARROW_INTEGER(F, N, stem, unsigned short, ushort)               \
  KILN_NARROW_INTEGER(F, N, stem, unsigned long long, ull)
