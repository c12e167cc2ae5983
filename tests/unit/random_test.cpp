// runtime/random: the generator against its reference outputs, and the distributions' ranges,
// moments and errors.
#include "runtime/random.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "runtime/error.h"

namespace kiln {
namespace {

using ::testing::HasSubstr;

// The message of the kiln::Error f throws, or "" when it throws none.
template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Xoshiro256, MatchesTheReferenceImplementation) {
  // Outputs of Vigna's xoshiro256starstar.c from the state {1, 2, 3, 4}.
  Xoshiro256 g = Xoshiro256::from_state(1, 2, 3, 4);
  EXPECT_EQ(g.next(), 11520u);
  EXPECT_EQ(g.next(), 0u);
  EXPECT_EQ(g.next(), 1509978240u);
  EXPECT_EQ(g.next(), 1215971899390074240u);
}

TEST(Xoshiro256, SeedsThroughSplitmix64) {
  std::uint64_t state = 0;  // splitmix64's published outputs from 0
  EXPECT_EQ(splitmix64(state), 0xe220a8397b1dcdafu);
  EXPECT_EQ(splitmix64(state), 0x6e789e6aa1b965f4u);
  EXPECT_EQ(splitmix64(state), 0x06c45d188009454fu);
  EXPECT_EQ(splitmix64(state), 0xf88bb8a8724c81ecu);
  Xoshiro256 seeded(0);
  Xoshiro256 by_hand = Xoshiro256::from_state(0xe220a8397b1dcdafu, 0x6e789e6aa1b965f4u,
                                              0x06c45d188009454fu, 0xf88bb8a8724c81ecu);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(seeded.next(), by_hand.next());
}

TEST(Xoshiro256, BoundedIsInRangeAndUniform) {
  Xoshiro256 g(7);
  int counts[6] = {};
  for (int i = 0; i < 60000; ++i) {
    std::uint64_t v = g.bounded(6);
    ASSERT_LT(v, 6u);
    ++counts[v];
  }
  for (int c : counts) EXPECT_NEAR(c, 10000, 400);
  // A range just above 2^63 rejects about half the raw draws; results stay below it.
  std::uint64_t range = (std::uint64_t{1} << 63) + 12345;
  for (int i = 0; i < 1000; ++i) ASSERT_LT(g.bounded(range), range);
  EXPECT_EQ(g.bounded(1), 0u);
  for (int i = 0; i < 1000; ++i) {
    double u = g.uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
  }
}

TEST(RandomFill, UniformStaysInRangeWithTheRightMean) {
  Xoshiro256 g(11);
  HostArray a({100000}, DType::float32);
  fill_uniform(a, -2.0, 6.0, g);
  double sum = 0;
  for (std::int64_t i = 0; i < a.size(); ++i) {
    float v = a.as<float>()[i];
    ASSERT_GE(v, -2.0f);
    ASSERT_LT(v, 6.0f);
    sum += v;
  }
  EXPECT_NEAR(sum / a.size(), 2.0, 0.03);  // mean 2, sd 8/sqrt(12)/sqrt(1e5) ~ 0.007
  // float32 rounding can land on high: a range one ulp wide still never returns high.
  HostArray tight({1000}, DType::float32);
  fill_uniform(tight, 1.0, std::nextafter(1.0f, 2.0f), g);
  for (std::int64_t i = 0; i < tight.size(); ++i) ASSERT_EQ(tight.as<float>()[i], 1.0f);
}

TEST(RandomFill, NormalHasTheRequestedMoments) {
  Xoshiro256 g(3);
  HostArray a({200001}, DType::float64);  // odd: the last pair is cut in half
  fill_normal(a, 5.0, 2.0, g);
  double sum = 0, sq = 0;
  for (std::int64_t i = 0; i < a.size(); ++i) sum += a.as<double>()[i];
  double mean = sum / a.size();
  for (std::int64_t i = 0; i < a.size(); ++i) sq += std::pow(a.as<double>()[i] - mean, 2);
  EXPECT_NEAR(mean, 5.0, 0.02);
  EXPECT_NEAR(std::sqrt(sq / a.size()), 2.0, 0.02);
}

TEST(RandomFill, SameSeedSameNumbers) {
  Xoshiro256 g1(42), g2(42);
  HostArray a({64}, DType::float64), b({64}, DType::float64);
  fill_normal(a, 0, 1, g1);
  fill_normal(b, 0, 1, g2);
  for (std::int64_t i = 0; i < 64; ++i) EXPECT_EQ(a.as<double>()[i], b.as<double>()[i]);
}

TEST(RandomFill, IntegersCoverTheHalfOpenRange) {
  Xoshiro256 g(5);
  HostArray a({60000}, DType::int8);
  fill_integers(a, -3, 3, g);
  int counts[6] = {};
  for (std::int64_t i = 0; i < a.size(); ++i) {
    int v = a.as<std::int8_t>()[i];
    ASSERT_GE(v, -3);
    ASSERT_LT(v, 3);
    ++counts[v + 3];
  }
  for (int c : counts) EXPECT_NEAR(c, 10000, 400);
}

TEST(RandomFill, BadParametersAreErrors) {
  Xoshiro256 g(1);
  HostArray f({4}, DType::float32), i({4}, DType::uint8);
  EXPECT_THAT(error_of([&] { fill_uniform(f, 1, 0, g); }), HasSubstr("need finite low < high"));
  EXPECT_THAT(error_of([&] { fill_uniform(f, 0, INFINITY, g); }),
              HasSubstr("need finite low < high"));
  EXPECT_THAT(error_of([&] { fill_uniform(i, 0, 1, g); }),
              HasSubstr("dtype must be float32, float64, float16 or bfloat16, got uint8"));
  EXPECT_THAT(error_of([&] { fill_normal(f, 0, -1, g); }), HasSubstr("scale >= 0"));
  EXPECT_THAT(error_of([&] { fill_integers(i, 5, 5, g); }), HasSubstr("need low < high"));
  EXPECT_THAT(error_of([&] { fill_integers(i, 0, 300, g); }), HasSubstr("does not fit in uint8"));
  EXPECT_THAT(error_of([&] { fill_integers(f, 0, 3, g); }), HasSubstr("must be an integer dtype"));
}

}  // namespace
}  // namespace kiln
