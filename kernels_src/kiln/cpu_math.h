// Prelude part 2 of 6: CUDA's math, conversions, integer intrinsics, hints and timers, on the host.
// Included by cpu_prelude.h only, after cpu_types.h.
#pragma once

// ---- Math: CUDA's extras beyond <cmath> ------------------------------------------------------
// CUDA's global min/max overloads (integer and floating point, with the mixed forms).
#define KILN_MINMAX(T)                                  \
  inline T min(T a, T b) { return a < b ? a : b; }     \
  inline T max(T a, T b) { return a > b ? a : b; }
KILN_MINMAX(int)
KILN_MINMAX(unsigned)
KILN_MINMAX(long)
KILN_MINMAX(unsigned long)
KILN_MINMAX(long long)
KILN_MINMAX(unsigned long long)
#undef KILN_MINMAX
inline float min(float a, float b) { return fminf(a, b); }
inline float max(float a, float b) { return fmaxf(a, b); }
inline double min(double a, double b) { return fmin(a, b); }
inline double max(double a, double b) { return fmax(a, b); }
inline unsigned min(int a, unsigned b) { return min(unsigned(a), b); }
inline unsigned min(unsigned a, int b) { return min(a, unsigned(b)); }
inline unsigned max(int a, unsigned b) { return max(unsigned(a), b); }
inline unsigned max(unsigned a, int b) { return max(a, unsigned(b)); }
inline double min(float a, double b) { return fmin(double(a), b); }
inline double min(double a, float b) { return fmin(a, double(b)); }
inline double max(float a, double b) { return fmax(double(a), b); }
inline double max(double a, float b) { return fmax(a, double(b)); }

inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline double rsqrt(double x) { return 1.0 / sqrt(x); }
inline float rcbrtf(float x) { return 1.0f / cbrtf(x); }
inline double rcbrt(double x) { return 1.0 / cbrt(x); }
inline float __saturatef(float x) { return x != x ? 0.0f : fminf(fmaxf(x, 0.0f), 1.0f); }
inline float saturate(float x) { return __saturatef(x); }
inline float __expf(float x) { return expf(x); }
inline float __exp10f(float x) { return exp10f(x); }
inline float __logf(float x) { return logf(x); }
inline float __log2f(float x) { return log2f(x); }
inline float __log10f(float x) { return log10f(x); }
inline float __powf(float x, float y) { return powf(x, y); }
inline float __sinf(float x) { return sinf(x); }
inline float __cosf(float x) { return cosf(x); }
inline float __tanf(float x) { return tanf(x); }
inline void __sincosf(float x, float* s, float* c) { sincosf(x, s, c); }
// CUDA's fast division: 0 for 2^126 < |y| < 2^128 (its reciprocal is flushed), NaN there for an
// infinite x.
inline float __fdividef(float x, float y) {
  if (fabsf(y) > 0x1p126f && fabsf(y) <= 0x1.fffffep127f) return isinf(x) ? NAN : 0.0f;
  return x / y;
}
inline float fdividef(float x, float y) { return x / y; }
namespace kiln_cpu {
// sin(pi x) and cos(pi x) exact where they are 0 or +-1, as CUDA's are (sin(M_PI * x) is not:
// sinpi(1) would be 1.2e-16): x = n/2 + r exactly, |r| <= 1/4, then the quadrant n picks sin or
// cos of pi r. IEEE's signs: sinpi(n) is +-0 with x's sign, cospi(n + 1/2) is +0.
inline double pi_quadrant(double x, bool cosine) {
  if (!isfinite(x)) return x - x;  // NaN
  if (fabs(x) >= 0x1p52) return cosine ? (fmod(x, 2.0) == 0 ? 1.0 : -1.0) : copysign(0.0, x);
  const double n = nearbyint(2.0 * x), r = x - 0.5 * n;
  const int quadrant = int((long long)n & 3) + (cosine ? 1 : 0);
  const double s = sin(M_PI * r), c = cos(M_PI * r);
  double v = (quadrant & 1) ? c : s;
  if (quadrant & 2) v = -v;
  if (v == 0) return cosine ? 0.0 : copysign(0.0, x);
  return v;
}
}  // namespace kiln_cpu
inline double sinpi(double x) {
  return kiln_cpu::pi_quadrant(x, false);
}
inline double cospi(double x) {
  return kiln_cpu::pi_quadrant(x, true);
}
inline float sinpif(float x) {
  return float(sinpi(x));
}
inline float cospif(float x) {
  return float(cospi(x));
}
inline void sincospif(float x, float* s, float* c) { *s = sinpif(x); *c = cospif(x); }
inline void sincospi(double x, double* s, double* c) { *s = sinpi(x); *c = cospi(x); }
inline float normcdff(float x) { return 0.5f * erfcf(-x * float(M_SQRT1_2)); }
inline double normcdf(double x) { return 0.5 * erfc(-x * M_SQRT1_2); }
// The scaled complementary error function exp(x^2) erfc(x): directly while erfc(x) is a
// normal double, with x^2 as an exact sum hi + lo (exp(lo) = 1 + lo: x^2's rounding would cost
// up to x^2 / 2 ulp), then its asymptotic series, 1/(x sqrt(pi)) sum (-1)^n (2n-1)!! / (2x^2)^n,
// to the term of n = 8 (the next is below 1e-21 of the sum from x = 26).
inline double erfcx(double x) {
  if (x < 26.0) {
    const double hi = x * x, lo = fma(x, x, -hi);
    return exp(hi) * erfc(x) * (1.0 + lo);
  }
  const double r = 1.0 / (x * x);
  const double series =
      1.0 -
      r * (0.5 - r * (0.75 -
                      r * (1.875 - r * (6.5625 - r * (29.53125 - r * (162.421875 -
                                                                      r * (1055.7421875 -
                                                                           r * 7918.06640625)))))));
  return series / (x * 1.7724538509055160273);
}
inline float erfcxf(float x) {
  return float(erfcx(x));
}
// The modified Bessel functions of the first kind, orders 0 and 1 (I0 even, I1 odd), from the
// standard library's special functions (libstdc++ has them; libc++ does not).
#ifdef __cpp_lib_math_special_functions
inline double cyl_bessel_i0(double x) {
  return std::cyl_bessel_i(0.0, fabs(x));
}
inline double cyl_bessel_i1(double x) {
  return copysign(std::cyl_bessel_i(1.0, fabs(x)), x);
}
inline float cyl_bessel_i0f(float x) {
  return float(cyl_bessel_i0(x));
}
inline float cyl_bessel_i1f(float x) {
  return float(cyl_bessel_i1(x));
}
#endif
inline float rhypotf(float x, float y) { return 1.0f / hypotf(x, y); }
inline double rhypot(double x, double y) { return 1.0 / hypot(x, y); }
namespace kiln_cpu {
// The Euclidean norm of v[0..n), as CUDA's norm* functions: +inf where any element is infinite,
// even beside a NaN; floats summed in double, doubles through hypot (no overflow).
inline float norm_of(int n, const float* v) {
  double sum = 0;
  for (int i = 0; i < n; ++i) {
    if (isinf(v[i])) return INFINITY;
    sum += double(v[i]) * v[i];
  }
  return float(sqrt(sum));
}
inline double norm_of(int n, const double* v) {
  double norm = 0;
  for (int i = 0; i < n; ++i) norm = hypot(norm, v[i]);  // (hypot(inf, NaN) is inf)
  return norm;
}
}  // namespace kiln_cpu
inline float normf(int dim, const float* p) {
  return kiln_cpu::norm_of(dim, p);
}
inline float rnormf(int dim, const float* p) {
  return 1.0f / normf(dim, p);
}
inline double norm(int dim, const double* p) {
  return kiln_cpu::norm_of(dim, p);
}
inline double rnorm(int dim, const double* p) {
  return 1.0 / norm(dim, p);
}
inline float norm3df(float a, float b, float c) {
  const float v[] = {a, b, c};
  return normf(3, v);
}
inline float rnorm3df(float a, float b, float c) { return 1.0f / norm3df(a, b, c); }
inline float norm4df(float a, float b, float c, float d) {
  const float v[] = {a, b, c, d};
  return normf(4, v);
}
inline float rnorm4df(float a, float b, float c, float d) {
  return 1.0f / norm4df(a, b, c, d);
}
inline double norm3d(double a, double b, double c) {
  const double v[] = {a, b, c};
  return norm(3, v);
}
inline double rnorm3d(double a, double b, double c) { return 1.0 / norm3d(a, b, c); }
inline double norm4d(double a, double b, double c, double d) {
  const double v[] = {a, b, c, d};
  return norm(4, v);
}
inline double rnorm4d(double a, double b, double c, double d) {
  return 1.0 / norm4d(a, b, c, d);
}
// Correctly rounded arithmetic with an explicit rounding mode: round-to-nearest is the host's.
// CUDA promises these are never merged into a multiply-add, which the host compiler's
// -ffp-contract=fast would do once they are inlined (`__fmul_rn(a, b) - c`, TwoProduct): a
// product leaves, and a sum's operands enter, through kiln_cpu::unfused.
namespace kiln_cpu {
// x as computed, opaque to contraction: an empty asm the value passes through in its register.
template <class T>
inline T unfused(T x) {
#if defined(__x86_64__)
  __asm__("" : "+x"(x));
#elif defined(__aarch64__)
  __asm__("" : "+w"(x));
#else
  volatile T v = x;
  x = v;
#endif
  return x;
}
}  // namespace kiln_cpu
inline float __fadd_rn(float a, float b) {
  return kiln_cpu::unfused(a) + kiln_cpu::unfused(b);
}
inline float __fsub_rn(float a, float b) {
  return kiln_cpu::unfused(a) - kiln_cpu::unfused(b);
}
inline float __fmul_rn(float a, float b) {
  return kiln_cpu::unfused(a * b);
}
inline float __fdiv_rn(float a, float b) { return a / b; }
inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
inline float __fsqrt_rn(float a) { return sqrtf(a); }
inline float __frcp_rn(float a) { return 1.0f / a; }
// (in double: then correctly rounded)
inline float __frsqrt_rn(float a) {
  return float(1.0 / sqrt(double(a)));
}
inline double __dadd_rn(double a, double b) {
  return kiln_cpu::unfused(a) + kiln_cpu::unfused(b);
}
inline double __dsub_rn(double a, double b) {
  return kiln_cpu::unfused(a) - kiln_cpu::unfused(b);
}
inline double __dmul_rn(double a, double b) {
  return kiln_cpu::unfused(a * b);
}
inline double __ddiv_rn(double a, double b) { return a / b; }
inline double __fma_rn(double a, double b, double c) { return fma(a, b, c); }
inline float __fmaf_ieee_rn(float a, float b, float c) { return fmaf(a, b, c); }
// Inverse error functions: an initial guess (Giles, "Approximating the erfinv function") from
// w = -log((1 - y)(1 + y)), then Newton steps on erf, or on erfc in the tails, where 1 - y
// would lose the digits; in double, so float results are correctly rounded.
namespace kiln_cpu {
inline double erfinv_guess(double y, double w) {
  double x;
  if (w < 5.0) {
    w -= 2.5;
    x = 2.81022636e-08;
    for (double c : {3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
                     -0.00417768164, 0.246640727, 1.50140941})
      x = c + x * w;
  } else {
    w = sqrt(w) - 3.0;
    x = -0.000200214257;
    for (double c : {0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
                     0.00943887047, 1.00167406, 2.83297682})
      x = c + x * w;
  }
  return x * y;
}
}  // namespace kiln_cpu
inline double erfinv(double y) {
  if (!(y > -1.0 && y < 1.0)) return y == 1.0 ? HUGE_VAL : y == -1.0 ? -HUGE_VAL : NAN;
  double x = kiln_cpu::erfinv_guess(y, -log((1.0 - y) * (1.0 + y)));
  for (int i = 0; i < 3; ++i) x -= (erf(x) - y) / (M_2_SQRTPI * exp(-x * x));
  return x;
}
inline float erfinvf(float y) { return float(erfinv(y)); }
// erfcinv(y) = erfinv(1 - y), computed without forming 1 - y: Newton steps on log erfc, which
// stay well scaled however deep in the tail y is.
inline double erfcinv(double y) {
  if (!(y > 0.0 && y < 2.0)) return y == 0.0 ? HUGE_VAL : y == 2.0 ? -HUGE_VAL : NAN;
  if (y > 1.0) return -erfcinv(2.0 - y);
  const double w = -log(y * (2.0 - y));
  double x = w < 36.0 ? kiln_cpu::erfinv_guess(1.0 - y, w) : sqrt(-log(y));
  for (int i = 0; i < 6; ++i) {
    const double e = erfc(x), d = M_2_SQRTPI * exp(-x * x);
    if (!(e > 0.0 && d > 0.0)) break;
    x += (log(e) - log(y)) * e / d;
  }
  return x;
}
inline float erfcinvf(float y) { return float(erfcinv(y)); }
inline double normcdfinv(double p) { return -M_SQRT2 * erfcinv(2.0 * p); }
inline float normcdfinvf(float p) { return float(normcdfinv(p)); }
inline double __dsqrt_rn(double a) { return sqrt(a); }
inline double __drcp_rn(double a) { return 1.0 / a; }
// Arithmetic rounded toward zero (_rz), up (_ru) or down (_rd): the host's round-to-nearest
// result, moved one step where the operation's exact error (from an error-free transformation:
// TwoSum, fma residuals) says the exact value lies the other way. No rounding mode is changed.
namespace kiln_cpu {
enum Direction { toward_zero, upward, downward };
// -1, 0 or 1: the sign of x (0 for NaN).
template <class T>
inline int sign(T x) {
  return x > 0 ? 1 : x < 0 ? -1 : 0;
}
// An exact value rounded in direction d, told by nearest (it rounded to nearest) and side (the
// sign of exact - nearest). An overflow (nearest infinite, the exact value finite) stays
// infinite only in its own direction; NaN and infinite results stay as they are.
template <class T>
inline T directed(T nearest, int side, Direction d, bool exact_finite) {
  const T inf = std::numeric_limits<T>::infinity();
  if (std::isinf(nearest) && exact_finite) {
    const bool away = d == upward ? nearest > 0 : d == downward ? nearest < 0 : false;
    return away ? nearest : std::copysign(std::numeric_limits<T>::max(), nearest);
  }
  if (side == 0 || !std::isfinite(nearest)) return nearest;
  if (d == upward) return side > 0 ? std::nextafter(nearest, inf) : nearest;
  if (d == downward) return side < 0 ? std::nextafter(nearest, -inf) : nearest;
  return (nearest > 0) != (side > 0) ? std::nextafter(nearest, T(0)) : nearest;
}
// A float result from its double rounding wide (to nearest, with side the sign of exact -
// wide): the float nearest to wide, and which side of it the exact value lies. (A float
// between the exact value and wide would be nearer to the exact value than wide: none is, so
// where wide is not that float, wide's own side tells.)
inline float narrowed(double wide, int side, Direction d, bool exact_finite) {
  const float f = float(wide);
  return directed(f, double(f) != wide ? sign(wide - double(f)) : side, d, exact_finite);
}
// x + y == 0 exactly: -0 downward (but +0 + +0 is +0 and -0 + -0 is -0 in every direction).
template <class T>
inline T exact_zero_sum(T x, T y, Direction d) {
  if (std::signbit(x) == std::signbit(y)) return x;
  return d == downward ? T(-0.0) : T(0);
}
// Each operation's nearest result and the sign of its exact error, from error-free
// transformations: TwoSum for sums; for floats the double product, and the double quotient's
// and root's fma residuals, all exact in double's range; for doubles the same residuals in
// binary128 (__float128 on x86-64, long double where that is it), which holds a * b exactly
// and cannot underflow, where double's fma residuals can.
#if defined(__x86_64__)
using quad = __float128;
#else
using quad = long double;
static_assert(std::numeric_limits<long double>::digits >= 106, "long double is no binary128");
#endif
inline float add(float a, float b, Direction d) {
  const double s = double(a) + b, bb = s - a, e = (a - (s - bb)) + (b - bb);  // TwoSum
  if (s == 0 && e == 0) return exact_zero_sum(a, b, d);
  return narrowed(s, sign(e), d, std::isfinite(a) && std::isfinite(b));
}
inline double add(double a, double b, Direction d) {
  const double s = a + b, bb = s - a, e = (a - (s - bb)) + (b - bb);  // TwoSum
  if (s == 0 && e == 0) return exact_zero_sum(a, b, d);
  return directed(s, sign(e), d, std::isfinite(a) && std::isfinite(b));
}
inline float mul(float a, float b, Direction d) {
  return narrowed(double(a) * b, 0, d, std::isfinite(a) && std::isfinite(b));  // (exact)
}
inline double mul(double a, double b, Direction d) {
  const double p = a * b;
  return directed(p, sign(quad(a) * b - p), d, std::isfinite(a) && std::isfinite(b));
}
inline float div(float a, float b, Direction d) {
  const double q = double(a) / b, remainder = std::fma(-q, double(b), double(a));
  return narrowed(q, sign(remainder) * sign(b), d, std::isfinite(a) && b != 0);
}
inline double div(double a, double b, Direction d) {
  const double q = a / b;
  return directed(q, sign(quad(a) - quad(q) * b) * sign(b), d, std::isfinite(a) && b != 0);
}
inline float root(float a, Direction d) {
  const double r = std::sqrt(double(a));
  return narrowed(r, sign(std::fma(-r, r, double(a))), d, std::isfinite(a));
}
inline double root(double a, Direction d) {
  const double r = std::sqrt(a);
  return directed(r, sign(quad(a) - quad(r) * r), d, std::isfinite(a));
}
// fma: a * b is exact in the wider type; its sum with c rounds there, the error by TwoSum.
inline float fmaf_directed(float a, float b, float c, Direction d) {
  const double p = double(a) * b, s = p + c, bb = s - p, e = (p - (s - bb)) + (c - bb);
  if (s == 0 && e == 0) return exact_zero_sum(float(p), c, d);
  return narrowed(s, sign(e), d, std::isfinite(a) && std::isfinite(b) && std::isfinite(c));
}
inline double fma_directed(double a, double b, double c, Direction d) {
  const quad p = quad(a) * b, s = p + c, bb = s - p, e = (p - (s - bb)) + (c - bb);
  const double f = double(s);
  if (s == 0 && e == 0) return exact_zero_sum(double(p), c, d);
  return directed(f, quad(f) != s ? sign(s - quad(f)) : sign(e), d,
                  std::isfinite(a) && std::isfinite(b) && std::isfinite(c));
}
}  // namespace kiln_cpu
#define KILN_DIRECTED(suffix, d)                                 \
  inline float __fadd_##suffix(float a, float b) {               \
    return ::kiln_cpu::add(a, b, ::kiln_cpu::d);                 \
  }                                                              \
  inline float __fsub_##suffix(float a, float b) {               \
    return ::kiln_cpu::add(a, -b, ::kiln_cpu::d);                \
  }                                                              \
  inline float __fmul_##suffix(float a, float b) {               \
    return ::kiln_cpu::mul(a, b, ::kiln_cpu::d);                 \
  }                                                              \
  inline float __fdiv_##suffix(float a, float b) {               \
    return ::kiln_cpu::div(a, b, ::kiln_cpu::d);                 \
  }                                                              \
  inline float __frcp_##suffix(float a) {                        \
    return ::kiln_cpu::div(1.0f, a, ::kiln_cpu::d);              \
  }                                                              \
  inline float __fsqrt_##suffix(float a) {                       \
    return ::kiln_cpu::root(a, ::kiln_cpu::d);                   \
  }                                                              \
  inline float __fmaf_##suffix(float a, float b, float c) {      \
    return ::kiln_cpu::fmaf_directed(a, b, c, ::kiln_cpu::d);    \
  }                                                              \
  inline float __fmaf_ieee_##suffix(float a, float b, float c) { \
    return ::kiln_cpu::fmaf_directed(a, b, c, ::kiln_cpu::d);    \
  }                                                              \
  inline double __dadd_##suffix(double a, double b) {            \
    return ::kiln_cpu::add(a, b, ::kiln_cpu::d);                 \
  }                                                              \
  inline double __dsub_##suffix(double a, double b) {            \
    return ::kiln_cpu::add(a, -b, ::kiln_cpu::d);                \
  }                                                              \
  inline double __dmul_##suffix(double a, double b) {            \
    return ::kiln_cpu::mul(a, b, ::kiln_cpu::d);                 \
  }                                                              \
  inline double __ddiv_##suffix(double a, double b) {            \
    return ::kiln_cpu::div(a, b, ::kiln_cpu::d);                 \
  }                                                              \
  inline double __drcp_##suffix(double a) {                      \
    return ::kiln_cpu::div(1.0, a, ::kiln_cpu::d);               \
  }                                                              \
  inline double __dsqrt_##suffix(double a) {                     \
    return ::kiln_cpu::root(a, ::kiln_cpu::d);                   \
  }                                                              \
  inline double __fma_##suffix(double a, double b, double c) {   \
    return ::kiln_cpu::fma_directed(a, b, c, ::kiln_cpu::d);     \
  }
KILN_DIRECTED(rz, toward_zero)
KILN_DIRECTED(ru, upward)
KILN_DIRECTED(rd, downward)
#undef KILN_DIRECTED

// ---- Type conversion and bit casts -----------------------------------------------------------
namespace kiln_cpu {
template <class To, class From>
inline To bit_cast(From v) {
  static_assert(sizeof(To) == sizeof(From));
  To t;
  memcpy(&t, &v, sizeof t);
  return t;
}
// What a GPU's conversion of a NaN of type F to the integer type I gives (measured on an H200,
// 2026-11-27): 0 from a float to 32 bits or fewer; else, for 32 and 64 bits, the integer whose
// sign bit alone is set ((int)NaN is INT_MIN from a double, (unsigned long long)NaN 2^63).
template <class I, class F>
constexpr I nan_to_int() {
  if constexpr ((sizeof(F) <= 4 && sizeof(I) <= 4) || sizeof(I) < 4)
    return I(0);
  else
    return I(std::make_unsigned_t<I>(1) << (8 * sizeof(I) - 1));
}
// A float of type F, already rounded to an integer value v, converted with CUDA's saturation:
// out of range -> the nearest bound, NaN as nan_to_int.
template <class I, class F>
inline I f2i(double v) {
  if (v != v) return nan_to_int<I, F>();
  if (v <= double(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
  if (v >= double(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
  return I(v);
}
// A cast to an integer type as a GPU converts (jit/cpu/gpu_casts.h rewrites a source's explicit
// casts into it): a float or double truncated to 32 or 64 bits with cvt.rzi's saturation (out of
// range -> the nearest bound, NaN as nan_to_int), then, for a narrower type, that value's low bits,
// as NVRTC converts to s32 or u32 and keeps the low bits; any other value as C's cast converts.
// Numbers and pointers go by value (a bit-field too), objects by reference (a cuda::std::atomic
// cannot be copied).
template <class To, class From, std::enable_if_t<!std::is_class_v<From>, int> = 0>
constexpr To gpu_cast(From v) {
  if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To> &&
                !std::is_same_v<To, bool>) {
    using Wide =
        std::conditional_t<(sizeof(To) > 4),
                           std::conditional_t<std::is_signed_v<To>, long long, unsigned long long>,
                           std::conditional_t<std::is_signed_v<To>, int, unsigned>>;
    constexpr From bound = From(std::numeric_limits<Wide>::max() / 2 + 1) * From(2);  // 2^31, ...
    if (!(v == v)) return To(nan_to_int<Wide, From>());
    if (v >= bound) return To(std::numeric_limits<Wide>::max());
    if constexpr (std::is_signed_v<Wide>) {
      if (v < -bound) return To(std::numeric_limits<Wide>::min());
    } else if (v <= From(-1)) {
      return To(0);
    }
    return To(Wide(v));
  } else {
    return (To)v;
  }
}
template <class To, class From, std::enable_if_t<std::is_class_v<From>, int> = 0>
constexpr To gpu_cast(const From& v) {
  return (To)v;
}
// A shift's count as a GPU's shl and shr read it (jit/cpu/gpu_casts.h rewrites `x << n` into
// `x << kiln_cpu::shift_count(n)`): a count of the shifted type's width or more, or a negative
// one, shifts every bit out (0, or a negative value's sign for >>), where x86 takes the count
// modulo the width. Any other operand (a class's operator<<) gets the count back.
struct ShiftCount {
  unsigned long long n;
  constexpr operator unsigned long long() const { return n; }
};
template <class C>
constexpr auto shift_count(C n) {
  if constexpr (std::is_integral_v<C> || std::is_enum_v<C>)
    return ShiftCount{static_cast<unsigned long long>(static_cast<long long>(n))};
  else
    return n;
}
template <class T, std::enable_if_t<std::is_integral_v<T>, int> = 0>
constexpr auto operator<<(T x, ShiftCount s) {
  using P = decltype(+x);  // (the promoted type, as the built-in shift's)
  return s.n >= 8 * sizeof(P) ? P(0) : P(std::make_unsigned_t<P>(x) << s.n);
}
template <class T, std::enable_if_t<std::is_integral_v<T>, int> = 0>
constexpr auto operator>>(T x, ShiftCount s) {
  using P = decltype(+x);
  if (s.n >= 8 * sizeof(P)) return P(std::is_signed_v<P> && P(x) < 0 ? -1 : 0);
  return P(P(x) >> s.n);
}
template <class T, std::enable_if_t<std::is_integral_v<T>, int> = 0>
constexpr T& operator<<=(T& x, ShiftCount s) {
  return x = T(x << s);
}
template <class T, std::enable_if_t<std::is_integral_v<T>, int> = 0>
constexpr T& operator>>=(T& x, ShiftCount s) {
  return x = T(x >> s);
}
}  // namespace kiln_cpu
inline int __float_as_int(float x) { return kiln_cpu::bit_cast<int>(x); }
inline unsigned __float_as_uint(float x) { return kiln_cpu::bit_cast<unsigned>(x); }
inline float __int_as_float(int x) { return kiln_cpu::bit_cast<float>(x); }
inline float __uint_as_float(unsigned x) { return kiln_cpu::bit_cast<float>(x); }
inline long long __double_as_longlong(double x) { return kiln_cpu::bit_cast<long long>(x); }
inline double __longlong_as_double(long long x) { return kiln_cpu::bit_cast<double>(x); }
inline int __double2hiint(double x) { return int(__double_as_longlong(x) >> 32); }
inline int __double2loint(double x) { return int(__double_as_longlong(x)); }
inline double __hiloint2double(int hi, int lo) {
  return __longlong_as_double((long long)(((unsigned long long)(unsigned)hi << 32) | (unsigned)lo));
}
#define KILN_F2I(SUF, F, T, FN)                \
  inline T __##F##2##SUF(F x) {                \
    return kiln_cpu::f2i<T, F>(FN(double(x))); \
  }
#define KILN_F2I_ALL(F)                                          \
  KILN_F2I(int_rn, F, int, nearbyint) KILN_F2I(int_rz, F, int, trunc) \
  KILN_F2I(int_ru, F, int, ceil) KILN_F2I(int_rd, F, int, floor)       \
  KILN_F2I(uint_rn, F, unsigned, nearbyint) KILN_F2I(uint_rz, F, unsigned, trunc) \
  KILN_F2I(uint_ru, F, unsigned, ceil) KILN_F2I(uint_rd, F, unsigned, floor) \
  KILN_F2I(ll_rn, F, long long, nearbyint) KILN_F2I(ll_rz, F, long long, trunc) \
  KILN_F2I(ll_ru, F, long long, ceil) KILN_F2I(ll_rd, F, long long, floor) \
  KILN_F2I(ull_rn, F, unsigned long long, nearbyint) KILN_F2I(ull_rz, F, unsigned long long, trunc) \
  KILN_F2I(ull_ru, F, unsigned long long, ceil) KILN_F2I(ull_rd, F, unsigned long long, floor)
KILN_F2I_ALL(float)
KILN_F2I_ALL(double)
#undef KILN_F2I_ALL
#undef KILN_F2I
namespace kiln_cpu {
enum Rounding { round_nearest, round_zero, round_up, round_down };
// x converted to To with CUDA's rounding mode r: the nearest value, moved one step where it
// lies on the wrong side of x (every source here is exact in long double).
template <class To, class From>
inline To convert_rounded(From x, Rounding r) {
  static_assert(std::numeric_limits<long double>::digits >= 64, "64-bit integers held exactly");
  To got = To(x);
  const long double exact = (long double)x, near = (long double)got;
  if ((r == round_up && near < exact) || (r == round_zero && exact < 0 && near < exact))
    got = std::nextafter(got, std::numeric_limits<To>::infinity());
  else if ((r == round_down && near > exact) || (r == round_zero && exact > 0 && near > exact))
    got = std::nextafter(got, -std::numeric_limits<To>::infinity());
  return got;
}
}  // namespace kiln_cpu
#define KILN_CONVERT(F, T, FROM, TO)                                  \
  inline TO __##F##2##T##_rn(FROM x) {                                \
    return kiln_cpu::convert_rounded<TO>(x, kiln_cpu::round_nearest); \
  }                                                                   \
  inline TO __##F##2##T##_rz(FROM x) {                                \
    return kiln_cpu::convert_rounded<TO>(x, kiln_cpu::round_zero);    \
  }                                                                   \
  inline TO __##F##2##T##_ru(FROM x) {                                \
    return kiln_cpu::convert_rounded<TO>(x, kiln_cpu::round_up);      \
  }                                                                   \
  inline TO __##F##2##T##_rd(FROM x) {                                \
    return kiln_cpu::convert_rounded<TO>(x, kiln_cpu::round_down);    \
  }
KILN_CONVERT(int, float, int, float)
KILN_CONVERT(uint, float, unsigned, float)
KILN_CONVERT(ll, float, long long, float)
KILN_CONVERT(ull, float, unsigned long long, float)
KILN_CONVERT(ll, double, long long, double)
KILN_CONVERT(ull, double, unsigned long long, double)
KILN_CONVERT(double, float, double, float)
#undef KILN_CONVERT
inline double __int2double_rn(int x) { return double(x); }
inline double __uint2double_rn(unsigned x) {
  return double(x);
}

// ---- Integer intrinsics ----------------------------------------------------------------------
// CUDA's typed min and max (templates: a source that defines its own umin, as NVRTC lets it,
// calls its own).
#define KILN_TYPED_MIN_MAX(MIN, MAX, T) \
  template <class = void>               \
  T MIN(T a, T b) {                     \
    return a < b ? a : b;               \
  }                                     \
  template <class = void>               \
  T MAX(T a, T b) {                     \
    return a > b ? a : b;               \
  }
KILN_TYPED_MIN_MAX(umin, umax, unsigned)
KILN_TYPED_MIN_MAX(llmin, llmax, long long)
KILN_TYPED_MIN_MAX(ullmin, ullmax, unsigned long long)
#undef KILN_TYPED_MIN_MAX
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz(unsigned(x)); }
inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline unsigned __brev(unsigned x) {
  x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
  x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
  x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
  return __builtin_bswap32(x);
}
inline unsigned long long __brevll(unsigned long long x) {
  return ((unsigned long long)__brev(unsigned(x)) << 32) | __brev(unsigned(x >> 32));
}
inline int __mul24(int a, int b) { return ((a << 8) >> 8) * ((b << 8) >> 8); }
inline unsigned __umul24(unsigned a, unsigned b) { return (a & 0xffffffu) * (b & 0xffffffu); }
inline int __mulhi(int a, int b) { return int(((long long)a * b) >> 32); }
inline unsigned __umulhi(unsigned a, unsigned b) { return unsigned(((unsigned long long)a * b) >> 32); }
inline long long __mul64hi(long long a, long long b) { return (long long)(((__int128)a * b) >> 64); }
inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
  return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}
inline int __hadd(int a, int b) { return int(((long long)a + b) >> 1); }
inline int __rhadd(int a, int b) { return int(((long long)a + b + 1) >> 1); }
inline unsigned __uhadd(unsigned a, unsigned b) { return unsigned(((unsigned long long)a + b) >> 1); }
inline unsigned __urhadd(unsigned a, unsigned b) { return unsigned(((unsigned long long)a + b + 1) >> 1); }
inline unsigned __sad(int a, int b, unsigned c) { return c + unsigned(a > b ? (long long)a - b : (long long)b - a); }
inline unsigned __usad(unsigned a, unsigned b, unsigned c) { return c + (a > b ? a - b : b - a); }
inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
  unsigned long long v = ((unsigned long long)y << 32) | x;
  unsigned r = 0;
  for (int i = 0; i < 4; ++i) r |= unsigned((v >> (8 * ((s >> (4 * i)) & 7))) & 0xff) << (8 * i);
  return r;
}
// Four- and two-way byte and halfword dot products, accumulated into c.
inline int __dp4a(int a, int b, int c) {
  for (int i = 0; i < 4; ++i) c += int((signed char)(a >> (8 * i))) * int((signed char)(b >> (8 * i)));
  return c;
}
inline unsigned __dp4a(unsigned a, unsigned b, unsigned c) {
  for (int i = 0; i < 4; ++i) c += ((a >> (8 * i)) & 0xffu) * ((b >> (8 * i)) & 0xffu);
  return c;
}
inline int __dp4a(char4 a, char4 b, int c) {
  return c + a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w;
}
inline unsigned __dp4a(uchar4 a, uchar4 b, unsigned c) {
  return c + unsigned(a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w);
}
inline int __dp2a_lo(int a, int b, int c) {
  return c + int(short(a)) * int((signed char)(b)) + int(short(a >> 16)) * int((signed char)(b >> 8));
}
inline int __dp2a_hi(int a, int b, int c) {
  return c + int(short(a)) * int((signed char)(b >> 16)) + int(short(a >> 16)) * int((signed char)(b >> 24));
}
inline unsigned __dp2a_lo(unsigned a, unsigned b, unsigned c) {
  return c + (a & 0xffffu) * (b & 0xffu) + (a >> 16) * ((b >> 8) & 0xffu);
}
inline unsigned __dp2a_hi(unsigned a, unsigned b, unsigned c) {
  return c + (a & 0xffffu) * ((b >> 16) & 0xffu) + (a >> 16) * (b >> 24);
}
// The SIMD video intrinsics (__vadd4, __vcmpgtu2, ...): f(x, y) on each lane of W bits (8: four
// bytes, 16: two halfwords), the lanes read as signed (S) or unsigned, each result's low W bits
// kept.
namespace kiln_cpu {
template <int W, bool S, class F>
inline unsigned simd(unsigned a, unsigned b, F f) {
  constexpr unsigned m = (1u << W) - 1;
  unsigned r = 0;
  for (int i = 0; i < 32; i += W) {
    long long x = (a >> i) & m, y = (b >> i) & m;
    if (S) {
      x = x > (m >> 1) ? x - (1ll << W) : x;
      y = y > (m >> 1) ? y - (1ll << W) : y;
    }
    r |= (unsigned(f(x, y)) & m) << i;
  }
  return r;
}
// v clamped to a lane of W bits, signed (S) or unsigned.
template <int W, bool S>
inline long long saturate(long long v) {
  const long long lo = S ? -(1ll << (W - 1)) : 0, hi = S ? (1ll << (W - 1)) - 1 : (1ll << W) - 1;
  return v < lo ? lo : v > hi ? hi : v;
}
// The sum of |x - y| over the lanes.
template <int W, bool S>
inline unsigned simd_sad(unsigned a, unsigned b) {
  unsigned sum = 0;
  simd<W, S>(a, b,
             [&](long long x, long long y) { return sum += unsigned(x > y ? x - y : y - x), 0; });
  return sum;
}
}  // namespace kiln_cpu
// (in value: x and y, the lanes; sat(v), v saturated to a lane)
#define KILN_SIMD(name, W, S, value)                                                         \
  inline unsigned name(unsigned a, unsigned b) {                                             \
    return ::kiln_cpu::simd<W, S>(a, b, [](long long x, long long y) {                       \
      [[maybe_unused]] auto sat = [](long long v) { return ::kiln_cpu::saturate<W, S>(v); }; \
      return value;                                                                          \
    });                                                                                      \
  }
#define KILN_SIMD_PAIR(name, S, value) \
  KILN_SIMD(name##2, 16, S, value) KILN_SIMD(name##4, 8, S, value)
KILN_SIMD_PAIR(__vadd, false, x + y)
KILN_SIMD_PAIR(__vsub, false, x - y)
KILN_SIMD_PAIR(__vaddss, true, sat(x + y))
KILN_SIMD_PAIR(__vaddus, false, sat(x + y))
KILN_SIMD_PAIR(__vsubss, true, sat(x - y))
KILN_SIMD_PAIR(__vsubus, false, sat(x - y))
KILN_SIMD_PAIR(__vabsdiffs, true, x > y ? x - y : y - x)
KILN_SIMD_PAIR(__vabsdiffu, false, x > y ? x - y : y - x)
KILN_SIMD_PAIR(__vavgs, true, (x + y + (x + y >= 0)) >> 1)  // (halves away from zero)
KILN_SIMD_PAIR(__vavgu, false, (x + y + 1) >> 1)
KILN_SIMD_PAIR(__vhaddu, false, (x + y) >> 1)
KILN_SIMD_PAIR(__vmaxs, true, x > y ? x : y)
KILN_SIMD_PAIR(__vmaxu, false, x > y ? x : y)
KILN_SIMD_PAIR(__vmins, true, x < y ? x : y)
KILN_SIMD_PAIR(__vminu, false, x < y ? x : y)
// Comparisons: __vcmp* give a lane of ones where true, __vset* a lane holding 1.
#define KILN_SIMD_COMPARE(op, S, test) \
  KILN_SIMD_PAIR(__vcmp##op, S, (test) ? -1 : 0) KILN_SIMD_PAIR(__vset##op, S, (test) ? 1 : 0)
KILN_SIMD_COMPARE(eq, false, x == y)
KILN_SIMD_COMPARE(ne, false, x != y)
KILN_SIMD_COMPARE(ges, true, x >= y)
KILN_SIMD_COMPARE(geu, false, x >= y)
KILN_SIMD_COMPARE(gts, true, x > y)
KILN_SIMD_COMPARE(gtu, false, x > y)
KILN_SIMD_COMPARE(les, true, x <= y)
KILN_SIMD_COMPARE(leu, false, x <= y)
KILN_SIMD_COMPARE(lts, true, x < y)
KILN_SIMD_COMPARE(ltu, false, x < y)
// One operand: the lane's absolute value or negation, wrapping or saturated (-128 -> 127).
#define KILN_SIMD_UNARY(name, W, value)                                                         \
  inline unsigned name(unsigned a) {                                                            \
    return ::kiln_cpu::simd<W, true>(a, 0u, [](long long x, long long) {                        \
      [[maybe_unused]] auto sat = [](long long v) { return ::kiln_cpu::saturate<W, true>(v); }; \
      return value;                                                                             \
    });                                                                                         \
  }
#define KILN_SIMD_UNARY_PAIR(name, value) \
  KILN_SIMD_UNARY(name##2, 16, value) KILN_SIMD_UNARY(name##4, 8, value)
KILN_SIMD_UNARY_PAIR(__vabs, x < 0 ? -x : x)
KILN_SIMD_UNARY_PAIR(__vabsss, sat(x < 0 ? -x : x))
KILN_SIMD_UNARY_PAIR(__vneg, -x)
KILN_SIMD_UNARY_PAIR(__vnegss, sat(-x))
// The sum of the lanes' absolute differences.
#define KILN_SIMD_SAD(name, S)                      \
  inline unsigned name##2(unsigned a, unsigned b) { \
    return ::kiln_cpu::simd_sad<16, S>(a, b);       \
  }                                                 \
  inline unsigned name##4(unsigned a, unsigned b) { \
    return ::kiln_cpu::simd_sad<8, S>(a, b);        \
  }
KILN_SIMD_SAD(__vsads, true)
KILN_SIMD_SAD(__vsadu, false)
#undef KILN_SIMD_SAD
#undef KILN_SIMD_UNARY_PAIR
#undef KILN_SIMD_UNARY
#undef KILN_SIMD_COMPARE
#undef KILN_SIMD_PAIR
#undef KILN_SIMD
// The DPX intrinsics (sm_90: __vimax3_s32, __viaddmin_u16x2, __vibmax_s32, ...): a three-way
// max or min, a sum (wrapping) then a max or min, each also with a floor of 0 (_relu), on one
// 32-bit word or on each 16-bit half; __vib* also say which operand won (a on ties).
namespace kiln_cpu::dpx {
template <class L>
L sum(L a, L b) {
  return L(std::make_unsigned_t<L>(a) + std::make_unsigned_t<L>(b));
}
template <class L>
L max3(L a, L b, L c) {
  return std::max(std::max(a, b), c);
}
template <class L>
L min3(L a, L b, L c) {
  return std::min(std::min(a, b), c);
}
template <class L>
L max3_relu(L a, L b, L c) {
  return std::max(max3(a, b, c), L(0));
}
template <class L>
L min3_relu(L a, L b, L c) {
  return std::max(min3(a, b, c), L(0));
}
template <class L>
L max_relu(L a, L b, L) {
  return std::max(std::max(a, b), L(0));
}
template <class L>
L min_relu(L a, L b, L) {
  return std::max(std::min(a, b), L(0));
}
template <class L>
L addmax(L a, L b, L c) {
  return std::max(sum(a, b), c);
}
template <class L>
L addmin(L a, L b, L c) {
  return std::min(sum(a, b), c);
}
template <class L>
L addmax_relu(L a, L b, L c) {
  return std::max(addmax(a, b, c), L(0));
}
template <class L>
L addmin_relu(L a, L b, L c) {
  return std::max(addmin(a, b, c), L(0));
}
// f on each 16-bit half of a, b and c, read as L (short or unsigned short).
template <class L>
unsigned halves(unsigned a, unsigned b, unsigned c, L (*f)(L, L, L)) {
  return (unsigned short)f(L(a), L(b), L(c)) |
         unsigned((unsigned short)f(L(a >> 16), L(b >> 16), L(c >> 16))) << 16;
}
}  // namespace kiln_cpu::dpx
#define KILN_DPX_S(name, op)                                                    \
  inline int __##name##_s32(int a, int b, int c) {                              \
    return ::kiln_cpu::dpx::op<int>(a, b, c);                                   \
  }                                                                             \
  inline unsigned __##name##_s16x2(unsigned a, unsigned b, unsigned c) {        \
    return ::kiln_cpu::dpx::halves<short>(a, b, c, ::kiln_cpu::dpx::op<short>); \
  }
#define KILN_DPX_U(name, op)                                                                      \
  inline unsigned __##name##_u32(unsigned a, unsigned b, unsigned c) {                            \
    return ::kiln_cpu::dpx::op<unsigned>(a, b, c);                                                \
  }                                                                                               \
  inline unsigned __##name##_u16x2(unsigned a, unsigned b, unsigned c) {                          \
    return ::kiln_cpu::dpx::halves<unsigned short>(a, b, c, ::kiln_cpu::dpx::op<unsigned short>); \
  }
KILN_DPX_S(vimax3, max3)
KILN_DPX_U(vimax3, max3) KILN_DPX_S(vimin3, min3) KILN_DPX_U(vimin3, min3)
    KILN_DPX_S(viaddmax, addmax) KILN_DPX_U(viaddmax, addmax) KILN_DPX_S(viaddmin, addmin)
        KILN_DPX_U(viaddmin, addmin)
#undef KILN_DPX_U
#undef KILN_DPX_S
#define KILN_DPX_RELU(name, op)                                                 \
  inline int __##name##_s32_relu(int a, int b, int c) {                         \
    return ::kiln_cpu::dpx::op<int>(a, b, c);                                   \
  }                                                                             \
  inline unsigned __##name##_s16x2_relu(unsigned a, unsigned b, unsigned c) {   \
    return ::kiln_cpu::dpx::halves<short>(a, b, c, ::kiln_cpu::dpx::op<short>); \
  }
            KILN_DPX_RELU(vimax3, max3_relu) KILN_DPX_RELU(vimin3, min3_relu)
                KILN_DPX_RELU(viaddmax, addmax_relu) KILN_DPX_RELU(viaddmin, addmin_relu)
#undef KILN_DPX_RELU
                    inline int __vimax_s32_relu(int a, int b) {
  return kiln_cpu::dpx::max_relu<int>(a, b, 0);
}
inline int __vimin_s32_relu(int a, int b) {
  return kiln_cpu::dpx::min_relu<int>(a, b, 0);
}
inline unsigned __vimax_s16x2_relu(unsigned a, unsigned b) {
  return kiln_cpu::dpx::halves<short>(a, b, 0, kiln_cpu::dpx::max_relu<short>);
}
inline unsigned __vimin_s16x2_relu(unsigned a, unsigned b) {
  return kiln_cpu::dpx::halves<short>(a, b, 0, kiln_cpu::dpx::min_relu<short>);
}
#define KILN_DPX_B(name, T, keep)                    \
  inline T __vib##name(T a, T b, bool* const pred) { \
    *pred = a keep b;                                \
    return *pred ? a : b;                            \
  }
KILN_DPX_B(max_s32, int, >=)
KILN_DPX_B(max_u32, unsigned, >=) KILN_DPX_B(min_s32, int, <=) KILN_DPX_B(min_u32, unsigned, <=)
#undef KILN_DPX_B
#define KILN_DPX_B16(name, L, keep)                                                               \
  inline unsigned __vib##name(unsigned a, unsigned b, bool* const pred_hi, bool* const pred_lo) { \
    const L ah = static_cast<L>(a >> 16), bh = static_cast<L>(b >> 16);                           \
    const L al = static_cast<L>(a), bl = static_cast<L>(b);                                       \
    *pred_hi = ah keep bh;                                                                        \
    *pred_lo = al keep bl;                                                                        \
    return unsigned((unsigned short)(*pred_hi ? ah : bh)) << 16 |                                 \
           (unsigned short)(*pred_lo ? al : bl);                                                  \
  }
    KILN_DPX_B16(max_s16x2, short, >=) KILN_DPX_B16(max_u16x2, unsigned short, >=)
        KILN_DPX_B16(min_s16x2, short, <=) KILN_DPX_B16(min_u16x2, unsigned short, <=)
#undef KILN_DPX_B16
    // The position of the offset-th set bit of mask from bit base, forward (offset > 0) or back
    // (offset < 0); offset 0: base itself if set. 0xffffffff when there is none (PTX fns).
    inline unsigned __fns(unsigned mask, unsigned base, int offset) {
  if (offset == 0) return base < 32 && (mask >> base & 1) ? base : 0xffffffffu;
  const int step = offset > 0 ? 1 : -1;
  int count = (offset > 0 ? offset : -offset) - 1;
  for (int pos = int(base); pos >= 0 && pos < 32; pos += step)
    if ((mask >> pos & 1) && count-- == 0) return unsigned(pos);
  return 0xffffffffu;
}
inline unsigned __funnelshift_l(unsigned lo, unsigned hi, unsigned s) {
  return unsigned(((((unsigned long long)hi << 32) | lo) << (s & 31)) >> 32);
}
inline unsigned __funnelshift_lc(unsigned lo, unsigned hi, unsigned s) {
  return unsigned(((((unsigned long long)hi << 32) | lo) << (s > 32 ? 32 : s)) >> 32);
}
inline unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned s) {
  return unsigned((((unsigned long long)hi << 32) | lo) >> (s & 31));
}
inline unsigned __funnelshift_rc(unsigned lo, unsigned hi, unsigned s) {
  return unsigned((((unsigned long long)hi << 32) | lo) >> (s > 32 ? 32 : s));
}

// ---- Memory access hints, timing, misc -------------------------------------------------------
template <class T> inline T __ldg(const T* p) { return *p; }
template <class T> inline T __ldcg(const T* p) { return *p; }
template <class T> inline T __ldca(const T* p) { return *p; }
template <class T> inline T __ldcs(const T* p) { return *p; }
template <class T> inline T __ldlu(const T* p) { return *p; }
template <class T> inline T __ldcv(const T* p) { return *p; }
template <class T> inline void __stwb(T* p, T v) { *p = v; }
template <class T> inline void __stcg(T* p, T v) { *p = v; }
template <class T> inline void __stcs(T* p, T v) { *p = v; }
template <class T> inline void __stwt(T* p, T v) { *p = v; }
inline long long clock64() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}
inline unsigned long long __globaltimer() { return (unsigned long long)clock64(); }
inline void __nanosleep(unsigned ns) {
  timespec ts{0, long(ns)};
  nanosleep(&ts, nullptr);
}
[[noreturn]] inline void __trap() { kiln_cpu::trap("__trap() called"); }
[[noreturn]] inline void __brkpt() { kiln_cpu::trap("__brkpt() called"); }
template <class T> inline bool __isGlobal(const T*) { return true; }
inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_block() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_system() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
// Address-space conversions: one address space here, so a window address is the pointer's value
// (as size_t, CUDA's type), and back.
inline size_t __cvta_generic_to_shared(const void* p) {
  return size_t(p);
}
inline size_t __cvta_generic_to_global(const void* p) {
  return size_t(p);
}
inline size_t __cvta_generic_to_constant(const void* p) {
  return size_t(p);
}
inline size_t __cvta_generic_to_local(const void* p) {
  return size_t(p);
}
inline void* __cvta_shared_to_generic(size_t a) {
  return (void*)a;
}
inline void* __cvta_global_to_generic(size_t a) {
  return (void*)a;
}
inline void* __cvta_constant_to_generic(size_t a) {
  return (void*)a;
}
inline void* __cvta_local_to_generic(size_t a) {
  return (void*)a;
}
