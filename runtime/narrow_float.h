// 16-bit floats on the host: float16 (IEEE binary16, CUDA's __half) and bfloat16 (CUDA's
// __nv_bfloat16) as arrays store them. Storage only: a value widens exactly to double, and a
// double (or any number) narrows with one rounding to nearest, ties to even, as numpy and CUDA's
// __double2half round. Arithmetic on them is done in double by whoever reads them.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace kiln {

// A binary float of 16 bits: sign, the exponent, `Fraction` fraction bits; normal exponents run
// from MinExp to MaxExp, with subnormals below.
template <int Fraction, int MinExp, int MaxExp>
class NarrowFloat {
 public:
  NarrowFloat() = default;
  // The nearest value to v (ties to even); beyond the largest finite value, infinity.
  template <typename A>
  requires std::is_arithmetic_v<A>
  explicit NarrowFloat(A v) : bits_(narrow(static_cast<double>(v))) {}

  // The exact value.
  operator double() const { return widen(bits_); }

  std::uint16_t bits() const { return bits_; }
  static NarrowFloat from_bits(std::uint16_t b) {
    NarrowFloat f;
    f.bits_ = b;
    return f;
  }

 private:
  static constexpr int kBias = 1 - MinExp;
  static constexpr std::uint16_t kSign = 0x8000, kExpMask = 0x7fff ^ ((1u << Fraction) - 1);

  static std::uint16_t narrow(double v) {
    const std::uint16_t sign = std::signbit(v) ? kSign : 0;
    if (std::isnan(v)) return sign | kExpMask | (1u << (Fraction - 1));  // a quiet NaN
    const double a = std::fabs(v);
    // Halfway between the largest finite value and the next power of two rounds up: infinity.
    if (a >= std::ldexp(2.0 - std::ldexp(1.0, -Fraction - 1), MaxExp)) return sign | kExpMask;
    if (a == 0) return sign;
    const int exp = std::max(std::ilogb(a), MinExp);
    // a / ulp is exact (a power-of-two scale); nearbyint rounds ties to even.
    auto units = static_cast<std::uint32_t>(std::nearbyint(std::ldexp(a, Fraction - exp)));
    // units < 2^Fraction: a subnormal (exp == MinExp); == 2^(Fraction + 1): carried up.
    int biased = units < (1u << Fraction) ? 0 : exp + kBias;
    if (units == (2u << Fraction)) units >>= 1, ++biased;
    return sign |
           static_cast<std::uint16_t>((biased << Fraction) | (units & ((1u << Fraction) - 1)));
  }

  static double widen(std::uint16_t b) {
    const double sign = b & kSign ? -1.0 : 1.0;
    const int biased = (b & kExpMask) >> Fraction;
    const std::uint32_t fraction = b & ((1u << Fraction) - 1);
    if (biased == (kExpMask >> Fraction))
      return fraction ? std::numeric_limits<double>::quiet_NaN()
                      : sign * std::numeric_limits<double>::infinity();
    if (biased == 0) return sign * std::ldexp(fraction, MinExp - Fraction);
    return sign * std::ldexp(fraction | (1u << Fraction), biased - kBias - Fraction);
  }

  std::uint16_t bits_ = 0;
};

using Float16 = NarrowFloat<10, -14, 15>;
using BFloat16 = NarrowFloat<7, -126, 127>;
static_assert(sizeof(Float16) == 2 && sizeof(BFloat16) == 2);

// Whether T is a floating-point element type: float, double, or one of the 16-bit floats.
template <typename T>
inline constexpr bool is_float_v =
    std::is_floating_point_v<T> || std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>;

}  // namespace kiln
