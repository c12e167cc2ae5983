// Inline PTX on the cpu backend: the operations jit/cpu/inline_ptx.cpp translates a kernel's
// `asm("...")` statements into. A PTX register is bits; get<T> reads an operand (whatever C++
// type the user bound to it) as the instruction's type T, and set writes T's value back into
// the operand's variable, as a PTX register's bits move. Semantics follow the PTX ISA manual:
// shifts clamp, bfe/bfi/bfind/prmt/lop3 as specified there, carries in a per-statement flag.
#pragma once

namespace kiln_ptx {

// Operand s read as type T: its bits when the sizes agree, else (a narrower or wider integer
// register) converted as PTX zero- or sign-extends and truncates.
template <class T, class S>
inline T get(S s) {
  if constexpr (sizeof(T) == sizeof(S) && !std::is_same_v<T, S>)
    return kiln_cpu::bit_cast<T>(s);
  else
    return static_cast<T>(s);
}
// Writes value v (of the instruction's type) into operand d.
template <class D, class T>
inline void set(D& d, T v) {
  if constexpr (sizeof(D) == sizeof(T) && !std::is_same_v<D, T>)
    d = kiln_cpu::bit_cast<D>(v);
  else
    d = static_cast<D>(v);
}
// A predicate operand read as a bool, and a bool written to one.
template <class S>
inline bool pred(S s) {
  return s != 0;
}

// ---- Integer arithmetic: two's complement, without C++'s signed overflow ----
template <class T>
using bits = std::make_unsigned_t<T>;
template <class T>
inline T add(T a, T b) {
  if constexpr (std::is_floating_point_v<T>)
    return a + b;
  else
    return T(bits<T>(a) + bits<T>(b));
}
template <class T>
inline T sub(T a, T b) {
  if constexpr (std::is_floating_point_v<T>)
    return a - b;
  else
    return T(bits<T>(a) - bits<T>(b));
}
template <class T>
inline T mul_lo(T a, T b) {
  if constexpr (std::is_floating_point_v<T>)
    return a * b;
  else
    return T(bits<T>(a) * bits<T>(b));
}
// The high half of a * b, and the whole product in twice the width.
template <class T>
inline T mul_hi(T a, T b) {
  using W = std::conditional_t<std::is_signed_v<T>, __int128, unsigned __int128>;
  return T((W(a) * W(b)) >> (8 * sizeof(T)));
}
template <class T>
inline auto mul_wide(T a, T b) {
  using W =
      std::conditional_t<sizeof(T) == 2, std::conditional_t<std::is_signed_v<T>, int32_t, uint32_t>,
                         std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>;
  return W(W(a) * W(b));
}
// Saturating signed 32-bit add and subtract (add.sat.s32).
inline int32_t add_sat(int32_t a, int32_t b) {
  const int64_t s = int64_t(a) + b;
  return s > INT32_MAX ? INT32_MAX : s < INT32_MIN ? INT32_MIN : int32_t(s);
}
inline int32_t sub_sat(int32_t a, int32_t b) {
  const int64_t s = int64_t(a) - b;
  return s > INT32_MAX ? INT32_MAX : s < INT32_MIN ? INT32_MIN : int32_t(s);
}
// a + b + carry-in, and the carry out (add.cc, addc, addc.cc): cc is the statement's CC.CF.
template <class T>
inline T add_carry(T a, T b, unsigned& cc, bool carry_in, bool carry_out) {
  const bits<T> x = bits<T>(a), y = bits<T>(b), c = carry_in ? cc : 0;
  const bits<T> s = bits<T>(x + y + c);
  if (carry_out) cc = (s < x || (c && s == x)) ? 1 : 0;
  return T(s);
}
// a - b - borrow-in, and the borrow out (sub.cc, subc, subc.cc): PTX keeps the borrow in CC.CF.
template <class T>
inline T sub_borrow(T a, T b, unsigned& cc, bool borrow_in, bool borrow_out) {
  const bits<T> x = bits<T>(a), y = bits<T>(b), c = borrow_in ? cc : 0;
  const bits<T> d = bits<T>(x - y - c);
  if (borrow_out) cc = (x < y || (c && x == y)) ? 1 : 0;
  return T(d);
}
// Absolute value and negation in two's complement (abs of the most negative is itself).
template <class T>
inline T abs(T a) {
  if constexpr (std::is_floating_point_v<T>)
    return std::fabs(a);
  else
    return a < 0 ? T(bits<T>(0) - bits<T>(a)) : a;
}
template <class T>
inline T neg(T a) {
  if constexpr (std::is_floating_point_v<T>)
    return -a;
  else
    return T(bits<T>(0) - bits<T>(a));
}
// Integer division as a GPU gives it: x / 0 is all ones (unsigned) or -1 / 1 by sign (signed),
// never the host's trap; the most negative / -1 wraps.
template <class T>
inline T div(T a, T b) {
  if constexpr (std::is_floating_point_v<T>)
    return a / b;
  else if (b == 0)
    return std::is_signed_v<T> ? (a < 0 ? T(1) : T(-1)) : T(~bits<T>(0));
  else if (std::is_signed_v<T> && b == T(-1))
    return neg(a);
  else
    return a / b;
}
template <class T>
inline T rem(T a, T b) {
  if (b == 0) return a;
  if (std::is_signed_v<T> && b == T(-1)) return 0;
  return a % b;
}

// PTX's carry flag (CC.CF). Bignum code writes one asm helper per add.cc / addc and chains
// them, as nvcc keeps the flag between asm statements: one flag per OS thread, which runs a GPU
// thread's statements in order between its barriers (where no chain is cut).
inline unsigned& carry_flag() {
  static thread_local unsigned cc = 0;
  return cc;
}
// x with a subnormal flushed to zero of its sign (.ftz on f32).
inline float ftz(float x) {
  return std::fpclassify(x) == FP_SUBNORMAL ? std::copysign(0.0f, x) : x;
}

// mul24's product of a's and b's low 24 bits (sign-extended for a signed type): its low 32
// bits, or (hi) bits 16 to 47.
template <class T>
inline T mul24(T a, T b, bool hi) {
  int64_t x, y;
  if constexpr (std::is_signed_v<T>) {
    x = int32_t(uint32_t(a) << 8) >> 8, y = int32_t(uint32_t(b) << 8) >> 8;
  } else {
    x = uint32_t(a) & 0xffffff, y = uint32_t(b) & 0xffffff;
  }
  const uint64_t p = uint64_t(x * y);
  return T(uint32_t(hi ? p >> 16 : p));
}
// c + |a - b| (sad).
template <class T>
inline T sad(T a, T b, T c) {
  const bits<T> d = a > b ? bits<T>(bits<T>(a) - bits<T>(b)) : bits<T>(bits<T>(b) - bits<T>(a));
  return T(bits<T>(bits<T>(c) + d));
}
// bmsk: len bits set from bit pos (wrap: both read mod 32; clamp: at most 32).
inline uint32_t bmsk(uint32_t pos, uint32_t len, bool clamp) {
  const uint32_t a = clamp ? (pos < 32 ? pos : 32) : pos & 31;
  const uint32_t b = clamp ? (len < 32 ? len : 32) : len & 31;
  const uint32_t from = a >= 32 ? 0 : ~0u << a, past = a + b >= 32 ? 0 : ~0u << (a + b);
  return from & ~past;
}
// szext: a's low b bits, sign- (signed) or zero-extended (b: at most 32 with clamp, else mod 32).
inline uint32_t szext(uint32_t a, uint32_t b, bool clamp, bool is_signed) {
  const uint32_t n = clamp ? (b < 32 ? b : 32) : b & 31;
  if (n == 0) return 0;
  if (n >= 32) return a;
  const uint32_t low = a & ((1u << n) - 1);
  return is_signed && (low >> (n - 1)) ? low | ~((1u << n) - 1) : low;
}
// The scalar video instructions (op: 0 vadd, 1 vsub, 2 vabsdiff, 3 vmin, 4 vmax, 5 vshl, 6 vshr)
// on a and b extended by their types (sa, sb: signed), then the secondary operation with c of
// d's type (sd) (1 add, 2 min, 3 max), in 64 bits; the low 32 bits (CUB's IADD3 is
// `vadd.u32.u32.u32.add`).
inline uint32_t video(int op, int second, uint32_t a, uint32_t b, uint32_t c, bool sa, bool sb,
                      bool sd, bool clamp) {
  const int64_t x = sa ? int64_t(int32_t(a)) : int64_t(a);
  const int64_t y = sb ? int64_t(int32_t(b)) : int64_t(b);
  const uint32_t n = clamp ? (b < 32 ? b : 32) : b & 31;
  int64_t t;
  switch (op) {
    case 0:
      t = x + y;
      break;
    case 1:
      t = x - y;
      break;
    case 2:
      t = x > y ? x - y : y - x;
      break;
    case 3:
      t = x < y ? x : y;
      break;
    case 4:
      t = x > y ? x : y;
      break;
    case 5:
      t = n >= 32 ? 0 : int64_t(uint64_t(uint32_t(a)) << n);
      break;
    default:
      t = n >= 32 ? (sa && int32_t(a) < 0 ? -1 : 0) : x >> n;
      break;
  }
  const int64_t z = sd ? int64_t(int32_t(c)) : int64_t(c);  // (c has d's type)
  if (second == 1) t += z;
  if (second == 2) t = t < z ? t : z;
  if (second == 3) t = t > z ? t : z;
  return uint32_t(t);
}
// dp4a: c plus the products of a's and b's four bytes; dp2a: of a's two halves and two of b's
// bytes (its low pair, or hi its high pair). SA, SB: whether a's and b's parts are signed.
template <bool SA, bool SB>
inline uint32_t dp4a(uint32_t a, uint32_t b, uint32_t c) {
  int64_t s = SA || SB ? int64_t(int32_t(c)) : int64_t(c);
  for (int i = 0; i < 4; ++i)
    s += (SA ? int64_t(int8_t(a >> 8 * i)) : int64_t(uint8_t(a >> 8 * i))) *
         (SB ? int64_t(int8_t(b >> 8 * i)) : int64_t(uint8_t(b >> 8 * i)));
  return uint32_t(s);
}
template <bool SA, bool SB>
inline uint32_t dp2a(uint32_t a, uint32_t b, uint32_t c, bool hi) {
  int64_t s = SA || SB ? int64_t(int32_t(c)) : int64_t(c);
  for (int i = 0; i < 2; ++i) {
    const int shift = 8 * i + (hi ? 16 : 0);
    s += (SA ? int64_t(int16_t(a >> 16 * i)) : int64_t(uint16_t(a >> 16 * i))) *
         (SB ? int64_t(int8_t(b >> shift)) : int64_t(uint8_t(b >> shift)));
  }
  return uint32_t(s);
}

// ---- Bits ----
// Shifts as PTX clamps them: an amount of the width or more gives 0, or the sign for shr.s.
template <class T>
inline T shl(T a, uint32_t n) {
  return n >= 8 * sizeof(T) ? T(0) : T(bits<T>(a) << n);
}
template <class T>
inline T shr(T a, uint32_t n) {
  if (n >= 8 * sizeof(T)) return std::is_signed_v<T> && a < 0 ? T(-1) : T(0);
  return T(a >> n);
}
// Any three-input logic function given by its truth table lut (a: 0xF0, b: 0xCC, c: 0xAA).
inline uint32_t lop3(uint32_t a, uint32_t b, uint32_t c, uint32_t lut) {
  uint32_t r = 0;
  for (int i = 0; i < 8; ++i)
    if (lut >> i & 1) r |= (i & 4 ? a : ~a) & (i & 2 ? b : ~b) & (i & 1 ? c : ~c);
  return r;
}
// Bit field extract: len bits of a from pos, zero- or sign-extended (pos, len read mod 256).
template <class T>
inline T bfe(T a, uint32_t pos, uint32_t len) {
  constexpr uint32_t w = 8 * sizeof(T);
  pos &= 0xff, len &= 0xff;
  const bool negative = std::is_signed_v<T> && len != 0 &&
                        ((bits<T>(a) >> (pos + len - 1 < w - 1 ? pos + len - 1 : w - 1)) & 1);
  bits<T> r = 0;
  for (uint32_t i = 0; i < w; ++i) {
    const bool bit =
        i < len ? (pos + i < w ? (bits<T>(a) >> (pos + i)) & 1 : std::is_signed_v<T> && a < 0)
                : negative;
    r |= bits<T>(bit) << i;
  }
  return T(r);
}
// Bit field insert: len bits of f into b at pos.
template <class T>
inline T bfi(T f, T b, uint32_t pos, uint32_t len) {
  constexpr uint32_t w = 8 * sizeof(T);
  pos &= 0xff, len &= 0xff;
  bits<T> r = bits<T>(b);
  for (uint32_t i = 0; i < len && pos + i < w; ++i)
    r = (r & ~(bits<T>(1) << (pos + i))) | (((bits<T>(f) >> i) & 1) << (pos + i));
  return T(r);
}
// The position of the most significant non-sign bit, or 0xffffffff; shiftamt: as a left shift.
template <class T>
inline uint32_t bfind(T a, bool shiftamt) {
  constexpr uint32_t w = 8 * sizeof(T);
  bits<T> x = bits<T>(a);
  if (std::is_signed_v<T> && a < 0) x = ~x;
  if (x == 0) return 0xffffffffu;
  uint32_t top = w - 1;
  while (!((x >> top) & 1)) --top;
  return shiftamt ? w - 1 - top : top;
}
// prmt: bytes of b:a picked by c. The default mode (0) takes each result byte's selector from
// a nibble of c, whose bit 3 replicates the picked byte's sign; the others (1 f4e, 2 b4e, 3
// rc8, 4 ecl, 5 ecr, 6 rc16) take all four from c's low two bits, by the manual's tables.
inline uint32_t prmt(uint32_t a, uint32_t b, uint32_t c, int mode) {
  const uint64_t x = (uint64_t(b) << 32) | a;
  auto byte = [&](unsigned i) { return uint32_t((x >> (8 * (i & 7))) & 0xff); };
  const unsigned n = c & 3;
  uint32_t r = 0;
  for (unsigned i = 0; i < 4; ++i) {
    unsigned sel;
    switch (mode) {
      case 0:
        sel = (c >> (4 * i)) & 0xf;
        break;
      case 1:
        sel = n + i;
        break;
      case 2:
        sel = n - i;
        break;
      case 3:
        sel = n;
        break;
      case 4:
        sel = i > n ? i : n;
        break;
      case 5:
        sel = i < n ? i : n;
        break;
      default:
        sel = 2 * (n & 1) + (i & 1);
        break;
    }
    const uint32_t v = mode == 0 && (sel & 8) ? (byte(sel) & 0x80 ? 0xffu : 0u) : byte(sel);
    r |= v << (8 * i);
  }
  return r;
}

// ---- Floating point ----
// A value rounded to T in direction d (0 nearest, else kiln_cpu's Direction + 1): integers and
// doubles narrowed to float, as cvt.rz/.rm/.rp give them.
template <class T, class S>
inline T round_to(S v, int d) {
  const T nearest = static_cast<T>(v);
  if (d == 0 || v != v) return nearest;
  const long double exact = static_cast<long double>(v), got = static_cast<long double>(nearest);
  return kiln_cpu::directed(nearest,
                            exact > got   ? 1
                            : exact < got ? -1
                                          : 0,
                            kiln_cpu::Direction(d - 1), std::isfinite(exact));
}
// A float to an integer type as cvt.rni/.rzi/.rmi/.rpi converts (saturating; NaN as
// kiln_cpu::nan_to_int).
template <class I, class F>
inline I float_to_int(F v, int d) {
  const double x = double(v);
  const double r = d == 0   ? std::nearbyint(x)
                   : d == 1 ? std::trunc(x)
                   : d == 2 ? std::ceil(x)
                            : std::floor(x);
  return kiln_cpu::f2i<I, F>(r);  // (clamped to I's own range, 8 and 16 bits too)
}
// An integer to a narrower or wider one, saturating for cvt.sat.
template <class D, class S>
inline D int_saturate(S v) {
  if (std::is_signed_v<S> && !std::is_signed_v<D> && v < 0) return 0;
  if ((long double)v > (long double)std::numeric_limits<D>::max())
    return std::numeric_limits<D>::max();
  if ((long double)v < (long double)std::numeric_limits<D>::min())
    return std::numeric_limits<D>::min();
  return D(v);
}
// A float clamped to [0, 1] (.sat), NaN to 0.
template <class T>
inline T saturate(T x) {
  return x != x ? T(0) : x < 0 ? T(0) : x > 1 ? T(1) : x;
}
// testp's classes.
template <class T>
inline bool testp(T x, int what) {
  switch (what) {
    case 0:
      return std::isfinite(x);
    case 1:
      return std::isinf(x);
    case 2:
      return !std::isnan(x);
    case 3:
      return std::isnan(x);
    case 4:
      return std::isnormal(x);
    default:
      return std::fpclassify(x) == FP_SUBNORMAL;
  }
}

// ---- Half and bfloat16 bits ----
// v rounded to a format of m mantissa bits whose smallest normal exponent is emin and largest
// finite value max, in direction d (as round_to's); beyond max, infinity where the direction
// goes that way, else max.
inline double round_format(double v, int m, int emin, double max, int d) {
  if (v == 0 || v != v || std::isinf(v)) return v;
  const double q = std::ldexp(1.0, (std::ilogb(v) > emin ? std::ilogb(v) : emin) - m);
  double r = v / q;  // (exact: a power of two)
  r = (d == 0   ? std::nearbyint(r)
       : d == 1 ? std::trunc(r)
       : d == 2 ? std::ceil(r)
                : std::floor(r)) *
      q;
  if (std::fabs(r) > max) {
    const bool away = d == 0 || (d == 2 && r > 0) || (d == 3 && r < 0);
    r = std::copysign(away ? std::numeric_limits<double>::infinity() : max, r);
  }
  return r;
}
// IEEE half's bits of v (NaN: 0x7fff, as CUDA's conversions give it).
inline uint16_t f16_bits(double v, int d) {
  if (v != v) return 0x7fff;
  const double r = round_format(v, 10, -14, 65504.0, d), a = std::fabs(r);
  const uint16_t sign = std::signbit(r) ? 0x8000 : 0;
  if (std::isinf(a)) return sign | 0x7c00;
  if (a < 0x1p-14) return uint16_t(sign | uint16_t(a * 0x1p24));
  const int e = std::ilogb(a);
  return uint16_t(sign | (e + 15) << 10 | (uint16_t(std::ldexp(a, 10 - e)) - 1024));
}
// bfloat16's bits of v: a float's upper half, once v is rounded to 8 bits of precision.
inline uint16_t bf16_bits(double v, int d) {
  if (v != v) return 0x7fff;
  const double r = round_format(v, 7, -126, 0x1.fep127, d);
  return uint16_t(kiln_cpu::bit_cast<uint32_t>(float(r)) >> 16);
}
inline float f16_value(uint16_t h) {
  const int e = (h >> 10) & 31, m = h & 1023;
  const float a = e == 31  ? (m ? std::numeric_limits<float>::quiet_NaN()
                                : std::numeric_limits<float>::infinity())
                  : e == 0 ? std::ldexp(float(m), -24)
                           : std::ldexp(float(m + 1024), e - 25);
  return h & 0x8000 ? -a : a;
}
inline float bf16_value(uint16_t b) {
  return kiln_cpu::bit_cast<float>(uint32_t(b) << 16);
}

// ---- Warps ----
// The lane shfl.sync reads (mode 0 up, 1 down, 2 bfly, 3 idx) and whether it is in range, as
// the PTX ISA manual computes them from b and c (c's bits 8-12: the segment mask; 0-4: the
// clamp); a lane out of range reads its own value.
inline int shfl_lane(int mode, uint32_t lane, uint32_t b, uint32_t c, bool& in_range) {
  b &= 31;  // (bval[4:0])
  const int seg = int((c >> 8) & 31), min_lane = int(lane) & seg;
  const int max_lane = min_lane | (int(c & 31) & ~seg);
  int j;
  switch (mode) {
    case 0:
      j = int(lane) - int(b);
      in_range = j >= max_lane;
      break;
    case 1:
      j = int(lane + b);
      in_range = j >= 0 && j <= max_lane;
      break;
    case 2:
      j = int(lane ^ b);
      in_range = j >= 0 && j <= max_lane;
      break;
    default:
      j = min_lane | (int(b & 31) & ~seg);
      in_range = j <= max_lane;
      break;
  }
  return in_range ? j : int(lane);
}

// ---- Memory ----
// The element of type T at byte address a plus offset (a generic or global address: a pointer).
template <class T, class A>
inline T& at(A a, long long offset, int index = 0) {
  return reinterpret_cast<T*>(reinterpret_cast<char*>(uintptr_t(a)) + offset)[index];
}
// A plain load and store of T there, as bytes (memory of another type, `unsigned long long`
// read as uint64_t, may alias it).
template <class T, class A>
inline T load(A a, long long offset, int index) {
  T v;
  memcpy(&v, &at<T>(a, offset, index), sizeof v);
  return v;
}
template <class T, class A>
inline void store(A a, long long offset, int index, T v) {
  memcpy(&at<T>(a, offset, index), &v, sizeof v);
}
// Loads and stores with PTX's acquire and release (relaxed, volatile: as GPU-coherent atomics).
// (the generic builtins, which take floats as well as integers)
template <class T>
inline T load_acquire(T& p) {
  T v;
  __atomic_load(&p, &v, __ATOMIC_ACQUIRE);
  return v;
}
template <class T>
inline T load_relaxed(T& p) {
  T v;
  __atomic_load(&p, &v, __ATOMIC_RELAXED);
  return v;
}
template <class T>
inline void store_release(T& p, T v) {
  __atomic_store(&p, &v, __ATOMIC_RELEASE);
}
template <class T>
inline void store_relaxed(T& p, T v) {
  __atomic_store(&p, &v, __ATOMIC_RELAXED);
}

}  // namespace kiln_ptx
