// The cpu backend end to end: compile, load, launch; signatures, errors, validation.
#include <chrono>

#include "cpu_test_util.h"
#include "runtime/error.h"

namespace kiln::cpu_test {
namespace {

TEST(CpuBackend, VecAddAndSignature) {
  auto t0 = std::chrono::steady_clock::now();
  Built b = build(R"(
__global__ void vec_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
})", "vec_add");
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf("cold compile of vec_add: %.0f ms\n", ms);
  EXPECT_EQ(b.result.image_kind, "so");
  EXPECT_EQ(b.result.lowered_names[0], "kiln_entry_0");
  EXPECT_EQ(b.result.signatures[0], "void (*)(float const*, float const*, float*, int)");
  const int n = 1000;
  std::vector<float> a(n), c(n);
  for (int i = 0; i < n; ++i) a[i] = float(i), c[i] = float(2 * i + 1);
  Buffer<float> da(a), db(c), dc(n, -1.0f);
  launch(*b.kernel, {4}, {256}, 0, da.p, db.p, dc.p, n);
  auto out = dc.host();
  for (int i = 0; i < n; ++i) ASSERT_EQ(out[i], float(3 * i + 1)) << i;
}

}  // namespace
}  // namespace kiln::cpu_test
