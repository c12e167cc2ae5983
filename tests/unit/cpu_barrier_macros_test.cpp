// Barrier macros (jit/cpu/barrier_macros.h): expanded where they are used, so that the plan sees
// the kernels' barriers as their own.
#include <gtest/gtest.h>

#include <algorithm>

#include "cpu_test_util.h"
#include "jit/cpu/barrier_macros.h"

namespace kiln::cpu_test {
namespace {

std::size_t lines(const std::string& s) {
  return std::size_t(std::count(s.begin(), s.end(), '\n'));
}

// Object-like and function-like macros, one through another, arguments with commas in
// parentheses and across lines: each use becomes the replacement on its own line, and the
// definitions are blanked (lines kept).
TEST(CpuBarrierMacros, UsesAreExpandedAndDefinitionsBlanked) {
  const std::string src = R"(#define SYNC() __syncthreads()
#define BOTH SYNC(); \
  SYNC()
#define ADD(a, b) { a += b; SYNC(); }
#define WIDTH 32
__global__ void k(int* s) {
  int t = threadIdx.x;
  SYNC();
  BOTH;
  ADD(s[t], (1, 2));
  ADD(s[t],
      WIDTH);
}
)";
  const std::string out = cpu::expand_barrier_macros(src);
  EXPECT_EQ(lines(out), lines(src));
  EXPECT_EQ(out.find("#define SYNC"), std::string::npos) << out;
  EXPECT_EQ(out.find("SYNC"), std::string::npos) << out;
  EXPECT_NE(out.find("#define WIDTH 32"), std::string::npos) << out;  // (not a barrier's)
  EXPECT_NE(out.find("  __syncthreads();\n  __syncthreads(); __syncthreads();\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("{ s[t] += (1, 2); __syncthreads(); };"), std::string::npos) << out;
  EXPECT_NE(out.find("{ s[t] += WIDTH; __syncthreads(); }\n;"), std::string::npos) << out;
}

// What the preprocessor would not expand as written, or might define otherwise, stays: `#` and
// `##`, a definition inside a conditional group, one that is #undef'd or defined twice, one a
// quoted #include after it may use, a function-like name without arguments.
TEST(CpuBarrierMacros, LeavesWhatItCannotExpandExactly) {
  for (const char* src : {
           "#define S(x) __syncthreads(); printf(#x)\n__global__ void k() { S(a); }\n",
           "#define P(a, b) a##b()\n__global__ void k() { P(__sync, threads); }\n",
           "#ifdef EMU\n#define E __syncthreads()\n#endif\n__global__ void k() { E; }\n",
           "#define E __syncthreads()\n#undef E\n#define E\n__global__ void k() { E; }\n",
           "#define E __syncthreads()\n#include \"more.cuh\"\n__global__ void k() { E; }\n",
       })
    EXPECT_EQ(cpu::expand_barrier_macros(src), src);
  const std::string bare = "#define F() __syncthreads()\nint F;\n";  // (F is no call there)
  EXPECT_EQ(cpu::expand_barrier_macros(bare), bare);
}

// The kernels of a source that defines a barrier macro run as regions, the one using it and one
// beside it that does not (both ran as fibers: the #define was a barrier outside every kernel),
// and give the host's results: a block-wide inclusive scan, its steps behind the macro.
TEST(CpuBarrierMacros, KernelsBesideABarrierMacroRunAsRegions) {
  const std::string src = R"(#define SYNC() __syncthreads()
#define STEP(k) v = (t >= k) ? s[t - k] : 0; SYNC(); s[t] += v; SYNC()
__global__ void scan_macro(const int* in, int* out) {
  __shared__ int s[64];
  int t = threadIdx.x, v;
  s[t] = in[t];
  SYNC();
  for (int k = 1; k < 64; k <<= 1) { STEP(k); }
  out[t] = s[t];
}
__global__ void scan_plain(const int* in, int* out) {
  __shared__ int s[64];
  int t = threadIdx.x;
  s[t] = in[t];
  __syncthreads();
  for (int k = 1; k < 64; k <<= 1) {
    int v = (t >= k) ? s[t - k] : 0;
    __syncthreads();
    s[t] += v;
    __syncthreads();
  }
  out[t] = s[t];
}
)";
  std::vector<int> in(64);
  for (int i = 0; i < 64; ++i) in[i] = (i * 5 + 3) % 17;
  for (const char* name : {"scan_macro", "scan_plain"}) {
    Built b = build(src, name);
    EXPECT_EQ(b.kernel->attributes().threads, "regions") << b.kernel->attributes().why;
    Buffer<int> input(in), out(64, -1);
    launch(*b.kernel, {1}, {64}, 0, input.p, out.p);
    const std::vector<int> o = out.host();
    int sum = 0;
    for (int i = 0; i < 64; ++i) ASSERT_EQ(o[i], sum += in[i]) << name << " " << i;
  }
}

}  // namespace
}  // namespace kiln::cpu_test
