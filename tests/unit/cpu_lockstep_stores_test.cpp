// Legacy warp-synchronous stores split around __syncwarp() (jit/cpu/lockstep_stores.h): every
// store through a lockstep pointer, or none of them, lines kept.
#include <gtest/gtest.h>

#include <algorithm>

#include "jit/cpu/lockstep_stores.h"

namespace kiln::cpu_test {
namespace {

std::size_t lines(const std::string& s) {
  return std::size_t(std::count(s.begin(), s.end(), '\n'));
}

// Harris's last warp: each `s[t] += s[t + d];` becomes the read, a __syncwarp(), the store and
// another, with the element's type; a plain store keeps its value as written.
TEST(CpuLockstepStores, StoresAreSplitAroundSyncwarp) {
  const std::string src = R"(__global__ void k(const int* in, int* out) {
  __shared__ volatile unsigned int s[64];
  unsigned t = threadIdx.x;
  s[t] = in[t] >> 1;
  if (t < 32) {
    s[t] += s[t + 32];  // the upper half
    s[t] <<= s[t + 16] & 1;
  }
  out[t] = s[0];
}
)";
  const std::string out = cpu::split_lockstep_stores(src);
  EXPECT_EQ(lines(out), lines(src));
  EXPECT_NE(out.find("  { unsigned int kiln_ls0_0_ = in[t] >> 1; __syncwarp(/*kiln: split "
                     "store*/); s[t] = kiln_ls0_0_; "
                     "__syncwarp(/*kiln: split store*/); }\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("    { unsigned int kiln_ls0_1_ = s[t] + (s[t + 32]); __syncwarp(/*kiln: "
                     "split store*/); s[t] = "
                     "kiln_ls0_1_; __syncwarp(/*kiln: split store*/); }  // the upper half\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("kiln_ls0_2_ = s[t] << (s[t + 16] & 1);"), std::string::npos) << out;
  EXPECT_NE(out.find("  out[t] = s[0];\n"), std::string::npos) << out;
}

// A device function's parameter, a local pointer, a shared array of two extents, a chained value
// (`s[i] = sum = sum + s[i - 1]`), a statement over two lines (its lines kept after it), and a
// `for` whose header is the same in every lane (its own variable, a macro, blockDim): all split.
TEST(CpuLockstepStores, ParametersLocalsArraysAndUniformLoops) {
  const std::string src = R"(#define HALF 16
template <class T>
__device__ void warp_reduce(volatile T* s, unsigned t) {
  for (int d = HALF; d > 0; d >>= 1) s[t] += s[t + d];
}
__global__ void k(float* out) {
  __shared__ float pad[64];
  __shared__ volatile int rows[2][32];
  unsigned lane = threadIdx.x % 32, w = threadIdx.x / 32;
  volatile float* v = pad;
  float sum = 1;
  if (lane >= 1) v[lane] = sum = sum + v[lane - 1];
  rows[w][lane] = rows[w][lane ^ 1] +
                  1;
  for (unsigned d = blockDim.x / 2; d > 0; d /= 2) if (lane < d) v[lane] += v[lane + d];
  warp_reduce(pad, lane);
  out[lane] = v[lane] + rows[w][0];
}
)";
  const std::string out = cpu::split_lockstep_stores(src);
  EXPECT_EQ(lines(out), lines(src));
  EXPECT_NE(out.find("for (int d = HALF; d > 0; d >>= 1) { T kiln_ls0_0_ = s[t] + (s[t + d]);"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("{ float kiln_ls2_0_ = sum = sum + v[lane - 1]; __syncwarp(/*kiln: split "
                     "store*/); v[lane] = "),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("{ int kiln_ls1_0_ = rows[w][lane ^ 1] + 1; __syncwarp(/*kiln: split "
                     "store*/); rows[w][lane] = "
                     "kiln_ls1_0_; __syncwarp(/*kiln: split store*/); }\n\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("if (lane < d) { float kiln_ls2_1_ = v[lane] + (v[lane + d]);"),
            std::string::npos)
      << out;
}

// A store the split cannot keep in lockstep leaves its pointer as written: in a `while`, a
// `for` over the lane's own elements, an expression, an increment, with a subscript that steps,
// calls or reads the pointer, beside a comma; or one the split cannot see: through `*(P + i)`,
// a callee given P, a macro naming P.
TEST(CpuLockstepStores, OtherStoresLeaveTheirPointerAsWritten) {
  for (const char* store :
       {"int d = 16; while (d > 0) { s[t] += s[t + d]; d >>= 1; }",
        "for (unsigned i = t; i < 64; i += 32) s[i] += s[i + 1];", "int x = (s[t] += s[t + 16]);",
        "s[t]++;", "s[t++] += s[t + 16];",
        "for (int d = 16; d > 0; d >>= 1) { s[t] += s[t + d]; d -= 0; }", "s[s[t]] = t;",
        "s[atomicAdd(&out[0], 1)] += 10;", "s[t] = s[t + 1], t = 7;", "*(s + t) += s[t + 16];",
        "bump(s, t);", "BUMP(t);"}) {
    const bool macro = std::string(store) == "BUMP(t);";
    const std::string src = std::string(macro ? "#define BUMP(i) s[i] += s[i + 1]\n" : "") +
                            "__device__ void bump(volatile int* p, unsigned i) { p[i] = 0; }\n"
                            "__global__ void k(int* out) {\n"
                            "  __shared__ volatile int s[64];\n"
                            "  unsigned t = threadIdx.x;\n"
                            "  s[t] = t;\n  " +
                            store + "\n  out[t] = s[t ^ 1];\n}\n";
    EXPECT_EQ(cpu::split_lockstep_stores(src), src) << store;
    // (the same kernel with a store the split takes instead, and no macro, is split)
    std::string plain = macro ? src.substr(src.find('\n') + 1) : src;
    plain.replace(plain.find(store), std::string(store).size(), "s[t] += s[t + 16];");
    EXPECT_NE(cpu::split_lockstep_stores(plain), plain) << store;
  }
}

// A function's pointers go together: one left as written (a store in a loop over the lane's
// elements, CUSP's CSR-vector SpMV) keeps the other too, whose kernel then runs as lockstep
// pointers; another function's are split. keeps_split_stores finds the split barriers.
TEST(CpuLockstepStores, AFunctionsPointersAreSplitTogether) {
  const std::string src = R"(__global__ void spmv(const int* ptr, const double* a, double* y) {
  __shared__ volatile double vals[128];
  __shared__ volatile int ptrs[4][2];
  int lane = threadIdx.x & 31, w = threadIdx.x / 32;
  if (lane < 2) ptrs[w][lane] = ptr[w + lane];
  vals[threadIdx.x] = 0;
  for (int j = ptrs[w][0] + lane; j < ptrs[w][1]; j += 32) vals[threadIdx.x] += a[j];
  if (lane < 16) vals[threadIdx.x] += vals[threadIdx.x + 16];
  if (lane == 0) y[w] = vals[threadIdx.x];
}
__global__ void other(int* out) {
  __shared__ volatile int s[64];
  s[threadIdx.x] = s[threadIdx.x + 1];
  out[threadIdx.x] = s[threadIdx.x + 2];
}
)";
  const std::string out = cpu::split_lockstep_stores(src);
  EXPECT_EQ(out.substr(0, out.find("__global__ void other")),
            src.substr(0, src.find("__global__ void other")));
  EXPECT_NE(out.find("{ int kiln_ls2_0_ = s[threadIdx.x + 1];"), std::string::npos) << out;
  EXPECT_TRUE(cpu::keeps_split_stores(out));
  EXPECT_FALSE(cpu::keeps_split_stores(src));
}

// Code with no warp-synchronous pointer (a flag between blocks, a tree reduction with barriers)
// is returned as it is.
TEST(CpuLockstepStores, OtherCodeIsUnchanged) {
  const std::string src = R"(__global__ void k(volatile int* flags, float* out) {
  __shared__ volatile float s[256];
  unsigned t = threadIdx.x;
  if (t == 0) flags[blockIdx.x] = 1;
  s[t] = out[t];
  __syncthreads();
  for (unsigned d = 128; d > 0; d >>= 1) { if (t < d) s[t] += s[t + d]; __syncthreads(); }
  out[t] = s[0];
}
)";
  EXPECT_EQ(cpu::split_lockstep_stores(src), src);
}

}  // namespace
}  // namespace kiln::cpu_test
