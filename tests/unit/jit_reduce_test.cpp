// jit::Reduction on the cpu backend: sums, extremes and custom expressions over every size class
// (empty, one block, many blocks), checked against std::accumulate on the same data.
#include "jit/reduce.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "cpu_test_util.h"
#include "runtime/error.h"

namespace kiln::jit {
namespace {
using cpu_test::Buffer;

// A dispatcher on the shared cpu backend with no disk cache.
std::shared_ptr<Jit> cpu_jit() {
  static auto jit = std::make_shared<Jit>(cpu_test::backend(), cpu_test::compiler(),
                                          DiskCache("", 0, false, nullptr), KILN_KERNELS_DIR);
  return jit;
}

// Device memory from the cpu backend, as the Lua bindings hand it to reduce().
std::shared_ptr<DeviceBuffer> allocate(std::size_t bytes) {
  return std::make_shared<DeviceBuffer>(cpu_test::backend(), bytes);
}

// Reduces the host values with r, copying them to the device first.
template <class T>
HostArray run(Reduction& r, const std::vector<T>& values, DType dtype,
              std::optional<ArgValue> init = std::nullopt) {
  Buffer<T> in(values);
  return r.reduce(in.p, std::int64_t(values.size()), dtype, init, allocate);
}

ArgValue number(double v) {
  ArgValue a;
  a.kind = ArgValue::Kind::number;
  a.number = v;
  return a;
}

TEST(JitReduce, SumMatchesAccumulateAcrossSizes) {
  Reduction sum(cpu_jit(), "a + b");
  std::mt19937 gen(1);
  for (std::size_t n : {1u, 7u, 256u, 257u, 100000u}) {
    std::vector<std::int32_t> v(n);
    for (auto& x : v) x = std::int32_t(gen() % 2001) - 1000;
    std::int64_t want = std::accumulate(v.begin(), v.end(), std::int64_t{0});
    EXPECT_EQ(run(sum, v, DType::int32).get_integer(0), want) << "n = " << n;
  }
}

TEST(JitReduce, MaxAndInitAndFloat) {
  Reduction biggest(cpu_jit(), "max(a, b)");
  std::vector<double> v(5000);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = double((i * 7919) % 5003) - 2500.5;
  double want = *std::max_element(v.begin(), v.end());
  EXPECT_EQ(run(biggest, v, DType::float64).get_number(0), want);
  // init takes part in the fold: larger than every element, it wins.
  EXPECT_EQ(run(biggest, v, DType::float64, number(1e9)).get_number(0), 1e9);
}

TEST(JitReduce, EmptyNeedsInitAndReturnsIt) {
  Reduction sum(cpu_jit(), "a + b");
  EXPECT_EQ(run(sum, std::vector<float>{}, DType::float32, number(2.5)).get_number(0), 2.5);
  try {
    run(sum, std::vector<float>{}, DType::float32);
    FAIL() << "an empty reduction without init succeeded";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("needs an initial value"));
  }
}

TEST(JitReduce, BadExpressionsAreErrors) {
  EXPECT_THROW(Reduction(cpu_jit(), "a +\nb"), Error);
  Reduction broken(cpu_jit(), "a +* b");
  try {
    run(broken, std::vector<float>{1, 2}, DType::float32);
    FAIL() << "a broken expression compiled";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("did not compile"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("KILN_REDUCE_EXPR=a +* b"));
  }
}

}  // namespace
}  // namespace kiln::jit
