// Host 16-bit floats (runtime/narrow_float.h): known encodings, every value's round trip, and
// agreement with the kernel side's independent float-to-half code (kernels_src/kiln/cpu_narrow.h)
// on a sweep of floats.
#include "runtime/narrow_float.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "kernels_src/kiln/cpu_narrow.h"
#include "runtime/error.h"
#include "runtime/random.h"

namespace kiln {
namespace {

TEST(NarrowFloat, KnownFloat16Encodings) {
  // IEEE 754 binary16 by hand: 0x3c00 is 1, 0x7bff the largest finite, 0x0001 2^-24.
  EXPECT_EQ(Float16(1.0).bits(), 0x3c00);
  EXPECT_EQ(Float16(-2.0).bits(), 0xc000);
  EXPECT_EQ(Float16(0.1).bits(), 0x2e66);
  EXPECT_EQ(Float16(65504.0).bits(), 0x7bff);
  EXPECT_EQ(Float16(65519.99).bits(), 0x7bff);  // below the midpoint to 2^16
  EXPECT_EQ(Float16(65520.0).bits(), 0x7c00);   // the midpoint rounds to even: infinity
  EXPECT_EQ(Float16(-1e6).bits(), 0xfc00);
  EXPECT_EQ(Float16(std::ldexp(1.0, -24)).bits(), 0x0001);
  EXPECT_EQ(Float16(std::ldexp(1.0, -25)).bits(), 0x0000);     // a tie: to even (0)
  EXPECT_EQ(Float16(std::ldexp(3.0, -25)).bits(), 0x0002);     // a tie: to even (2)
  EXPECT_EQ(Float16(std::ldexp(1023.5, -24)).bits(), 0x0400);  // carries into the normals
  EXPECT_EQ(Float16(2049.0).bits(), 0x6800);                   // 2048: a tie to even
  EXPECT_EQ(Float16(2051.0).bits(), 0x6802);                   // 2052
  EXPECT_EQ(Float16(-0.0).bits(), 0x8000);
  EXPECT_EQ(Float16(std::numeric_limits<double>::quiet_NaN()).bits() & 0x7e00, 0x7e00);
  EXPECT_EQ(Float16(7).bits(), 0x4700);  // from an integer
  EXPECT_EQ(static_cast<double>(Float16::from_bits(0x3555)), 0.333251953125);
  EXPECT_TRUE(std::isinf(static_cast<double>(Float16::from_bits(0xfc00))));
  EXPECT_TRUE(std::isnan(static_cast<double>(Float16::from_bits(0x7c01))));
}

TEST(NarrowFloat, KnownBFloat16Encodings) {
  EXPECT_EQ(BFloat16(1.0).bits(), 0x3f80);
  EXPECT_EQ(BFloat16(0.1).bits(), 0x3dcd);
  EXPECT_EQ(BFloat16(3.0e38).bits(), 0x7f62);
  EXPECT_EQ(BFloat16(3.4e38).bits(), 0x7f80);  // past the largest finite (about 3.39e38)
  EXPECT_EQ(BFloat16(std::ldexp(1.0, -133)).bits(), 0x0001);
  EXPECT_EQ(BFloat16(257.0).bits(), 0x4380);  // 256: a tie to even
  EXPECT_EQ(BFloat16(259.0).bits(), 0x4382);  // 260
  EXPECT_EQ(static_cast<double>(BFloat16::from_bits(0xc040)), -3.0);
}

// Every bit pattern that is a number widens exactly and narrows back to itself.
template <typename Narrow>
void expect_round_trips() {
  for (unsigned b = 0; b < 0x10000; ++b) {
    const double v = static_cast<double>(Narrow::from_bits(static_cast<std::uint16_t>(b)));
    if (std::isnan(v)) continue;
    ASSERT_EQ(Narrow(v).bits(), b) << std::hex << b;
  }
}

TEST(NarrowFloat, EveryValueRoundTrips) {
  expect_round_trips<Float16>();
  expect_round_trips<BFloat16>();
}

TEST(NarrowFloat, AgreesWithTheKernelSideOnFloats) {
  // Floats of every magnitude the formats have, and beyond: the kernel side rounds from float with
  // integer tricks, this side from double with ldexp; both must be correctly rounded.
  Xoshiro256 g(7);
  for (int i = 0; i < 200000; ++i) {
    const float f =
        static_cast<float>(std::ldexp(2 * g.uniform() - 1, int(g.uniform() * 300) - 150));
    ASSERT_EQ(Float16(f).bits(), kiln_cpu::binary16::from_float(f)) << f;
    ASSERT_EQ(BFloat16(f).bits(), kiln_cpu::bfloat16::from_float(f)) << f;
  }
}

// The kernel side's conversion from double (__double2half, __hfma's result) rounds once: a value
// just past a midpoint between two 16-bit floats, which rounding to float first would turn into
// an exact tie, still rounds away from it.
template <typename Narrow, typename Format>
void expect_doubles_round_once(Xoshiro256& g) {
  for (int i = 0; i < 100000; ++i) {
    const auto low = static_cast<std::uint16_t>(g.bounded(0x7c00 - 1));  // below infinity
    const double a = static_cast<double>(Narrow::from_bits(low));
    const double b = static_cast<double>(Narrow::from_bits(static_cast<std::uint16_t>(low + 1)));
    if (std::isinf(b) || std::isnan(b)) continue;
    const double mid = (a + b) / 2, tiny = (b - a) * std::ldexp(1.0, -35);
    for (double d : {mid, mid + tiny, mid - tiny, -(mid + tiny), a + (b - a) * g.uniform()})
      ASSERT_EQ(kiln_cpu::narrow<Format>(d).bits, Narrow(d).bits()) << d;
  }
}

TEST(NarrowFloat, KernelSideRoundsDoublesOnce) {
  Xoshiro256 g(11);
  expect_doubles_round_once<Float16, kiln_cpu::binary16>(g);
  expect_doubles_round_once<BFloat16, kiln_cpu::bfloat16>(g);
}

TEST(NarrowFloat, ArraysHoldThem) {
  HostArray a(Shape{3}, DType::float16);
  a.set_number(0, 0.1);
  a.set_integer(1, 70000);  // beyond float16: infinity, as numpy gives
  a.set_number(2, -1.5);
  EXPECT_EQ(a.get_number(0), 0.0999755859375);
  EXPECT_TRUE(std::isinf(a.get_number(1)));
  const HostArray wide = astype(a, DType::float64);
  EXPECT_EQ(wide.get_number(0), 0.0999755859375);
  const HostArray b = astype(wide, DType::bfloat16);
  EXPECT_EQ(b.get_number(0), 0.10009765625);
  EXPECT_EQ(astype(b, DType::float16).get_number(2), -1.5);
  EXPECT_EQ(argmin(a), 2);
  EXPECT_EQ(argmax(a), 1);
  EXPECT_THROW(astype(a, DType::int32), Error);  // infinity has no integer
  EXPECT_EQ(sum_float(astype(wide.sliced(0, 1, Shape{1}), DType::float16)), 0.0999755859375);
}

}  // namespace
}  // namespace kiln
