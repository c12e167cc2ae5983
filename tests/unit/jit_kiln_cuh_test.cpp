// kiln.cuh under a host compiler, as the cpu backend uses it: a minimal CUDA prelude (the
// execution-space keywords and the thread-position variables), then the header itself.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace {
struct Uint3 {
  unsigned x = 0, y = 0, z = 0;
};
Uint3 threadIdx, blockIdx, blockDim{1, 1, 1}, gridDim{1, 1, 1};
}  // namespace

#define __host__
#define __device__
#include "kiln.cuh"

namespace {

TEST(JitKilnCuh, ArrayLayoutMatchesArgPack) {
  static_assert(sizeof(kiln::Array<float, 1>) == 16);
  static_assert(sizeof(kiln::Array<unsigned char, 3>) == 32);
  static_assert(alignof(kiln::Array<double, 2>) == 8);
  static_assert(std::is_trivially_copyable_v<kiln::Array<float, 2>>);
  // The bytes ArgPack writes (pointer, then the extents as long long) read back as an Array.
  float data[6] = {0, 1, 2, 3, 4, 5};
  unsigned char bytes[24];
  float* p = data;
  long long shape[2] = {2, 3};
  std::memcpy(bytes, &p, 8);
  std::memcpy(bytes + 8, shape, 16);
  kiln::Array<const float, 2> a;
  std::memcpy(&a, bytes, sizeof a);
  EXPECT_EQ(a.shape[0], 2);
  EXPECT_EQ(a.shape[1], 3);
  EXPECT_EQ(a.size(), 6);
  EXPECT_EQ(a(1, 2), 5.0f);
}

TEST(JitKilnCuh, RowMajorIndexing) {
  std::vector<int> v(2 * 3 * 4 * 5);
  kiln::Array<int, 4> t{v.data(), {2, 3, 4, 5}};
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k)
        for (int l = 0; l < 5; ++l) t(i, j, k, l) = ((i * 10 + j) * 10 + k) * 10 + l;
  EXPECT_EQ(v[0], 0);
  EXPECT_EQ(v[1], 1);      // last index fastest
  EXPECT_EQ(v[5], 10);     // (0, 0, 1, 0)
  EXPECT_EQ(v[20], 100);   // (0, 1, 0, 0)
  EXPECT_EQ(v[60], 1000);  // (1, 0, 0, 0)
  EXPECT_EQ(v.back(), 1234);
  EXPECT_EQ(t.offset(1, 2, 3, 4), 119);
  EXPECT_EQ(t.size(), 120);
  kiln::Array<int, 1> flat{v.data(), {120}};
  EXPECT_EQ(flat[119], 1234);
  flat[0] = 42;
  EXPECT_EQ(t(0, 0, 0, 0), 42);
}

TEST(JitKilnCuh, GridAndGridsizeFollowNumba) {
  blockDim = {16, 8, 2};
  gridDim = {5, 3, 7};
  blockIdx = {4, 2, 6};
  threadIdx = {15, 7, 1};
  long long i = kiln::grid<1>();
  EXPECT_EQ(i, 4 * 16 + 15);
  auto [x, y] = kiln::grid<2>();
  EXPECT_EQ(x, 79);
  EXPECT_EQ(y, 2 * 8 + 7);
  auto p = kiln::grid<3>();
  EXPECT_EQ(p.x, 79);
  EXPECT_EQ(p.y, 23);
  EXPECT_EQ(p.z, 6 * 2 + 1);
  EXPECT_EQ(kiln::gridsize<1>(), 80);
  auto [sx, sy] = kiln::gridsize<2>();
  EXPECT_EQ(sx, 80);
  EXPECT_EQ(sy, 24);
  EXPECT_EQ(kiln::gridsize<3>().z, 14);
  // 64-bit arithmetic: no overflow past 2^31 threads.
  blockDim = {1024, 1, 1};
  blockIdx = {3000000, 0, 0};
  threadIdx = {0, 0, 0};
  EXPECT_EQ(kiln::grid<1>(), 3072000000LL);
}

}  // namespace
