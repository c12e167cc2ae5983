// A template kernel's non-type arguments written into its body (jit/cpu/template_args.h), so
// that a tile width given as a template parameter is lowered as a literal one.
#include <gtest/gtest.h>

#include "cpu_test_util.h"
#include "jit/cpu/template_args.h"

namespace kiln::cpu_test {
namespace {

constexpr const char* kTileSum = R"(#include <cooperative_groups.h>
namespace cg = cooperative_groups;
template <class T, int TILE, bool HALVE = false>
__global__ void tile_sum(const T* in, T* out, int n) {
  auto tile = cg::tiled_partition<TILE>(cg::this_thread_block());
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  T v = i < n ? in[i] : T(0);
  for (int o = TILE / 2; o > 0; o /= 2) v += tile.shfl_down(v, o);
  if (HALVE) v /= 2;
  if (tile.thread_rank() == 0 && i < n) out[i / TILE] = v;
}
)";

// Each token of a non-type parameter in the body becomes its argument (or its default); a type
// parameter, a directive and the text outside the body are left as written.
TEST(CpuTemplateArgs, NonTypeArgumentsAreWrittenIntoTheBody) {
  const std::string out = cpu::bind_template_arguments(kTileSum, {"tile_sum<float, 8>"});
  EXPECT_NE(out.find("template <class T, int TILE, bool HALVE = false>"), std::string::npos);
  EXPECT_NE(out.find("cg::tiled_partition<8>(cg::this_thread_block())"), std::string::npos) << out;
  EXPECT_NE(out.find("for (int o = 8 / 2;"), std::string::npos) << out;
  EXPECT_NE(out.find("if (false) v /= 2;"), std::string::npos) << out;
  EXPECT_NE(out.find("out[i / 8] = v;"), std::string::npos) << out;
  const std::string negative =
      cpu::bind_template_arguments(kTileSum, {"tile_sum<float, -4, true>"});
  EXPECT_NE(negative.find("out[i / (-4)] = v;"), std::string::npos) << negative;
  EXPECT_NE(negative.find("if (true) v /= 2;"), std::string::npos) << negative;
  // (the preprocessor does not know the parameter: a directive keeps its name)
  const std::string directive =
      "template <int N> __global__ void k(int* p) {\n#if N\n  p[0] = N;\n#endif\n}\n";
  EXPECT_EQ(cpu::bind_template_arguments(directive, {"k<3>"}),
            "template <int N> __global__ void k(int* p) {\n#if N\n  p[0] = 3;\n#endif\n}\n");
}

// Each value as a literal of its parameter's type, named as the definition names it (a
// declaration before it may name them otherwise).
TEST(CpuTemplateArgs, ValuesKeepTheirParametersTypes) {
  const std::string src = R"(template <int M, int N> __global__ void k(int* p);
template <int N, int M> __global__ void k(int* p) { p[0] = N * 10 + M; }
template <unsigned U, long long S, int I, short H> __global__ void t(long long* p) {
  p[0] = (U - 1) > 5; p[1] = 65536 * S; p[2] = (I - 9) / 2; p[3] = H;
})";
  EXPECT_NE(cpu::bind_template_arguments(src, {"k<1, 2>"}).find("p[0] = 1 * 10 + 2;"),
            std::string::npos);
  const std::string out = cpu::bind_template_arguments(src, {"t<0, 65536, 8u, -3>"});
  EXPECT_NE(out.find("p[0] = (0u - 1) > 5; p[1] = 65536 * 65536ll; p[2] = (8 - 9) / 2; "
                     "p[3] = (static_cast<short>(-3ll));"),
            std::string::npos)
      << out;
}

// A pack, or a body whose bound values would stop being dependent: as written.
TEST(CpuTemplateArgs, PacksAndConstexprBodiesAreLeft) {
  for (const std::string src :
       {"template <int... Ns> __global__ void k(int* p) { int a[] = {Ns...}; p[0] = a[0]; }",
        "template <int N> __global__ void k(int* p) { if constexpr (N == 1) p[0] = 1; else "
        "static_assert(N != 1); }",
        "template <int N> __global__ void k(int* p) { static_assert(N > 0); p[0] = N; }"})
    EXPECT_EQ(cpu::bind_template_arguments(src, {"k<3>"}), src) << src;
}

// Two instances in one compile, a value that is no literal (that parameter), or a plain kernel:
// as written.
TEST(CpuTemplateArgs, OtherExpressionsLeaveTheSource) {
  EXPECT_EQ(cpu::bind_template_arguments(kTileSum, {"tile_sum<float, 8>", "tile_sum<float, 4>"}),
            kTileSum);
  const std::string macro = cpu::bind_template_arguments(kTileSum, {"tile_sum<float, WIDTH>"});
  EXPECT_NE(macro.find("tiled_partition<TILE>"), std::string::npos) << macro;  // (HALVE: false)
  EXPECT_EQ(cpu::bind_template_arguments(kTileSum, {"tile_sum"}), kTileSum);
}

// The instance runs as regions, its tile's shuffles warp steps (it ran as fibers), and sums
// each tile of 8 (against the host).
TEST(CpuTemplateArgs, ATileWidthFromATemplateParameterRunsAsRegions) {
  Built b = build(kTileSum, "tile_sum<int, 8>");
  EXPECT_EQ(b.kernel->attributes().threads, "regions") << b.kernel->attributes().why;
  std::vector<int> in(256);
  for (int i = 0; i < 256; ++i) in[i] = (i * 7) % 13 - 6;
  Buffer<int> din(in), out(32, 0);
  launch(*b.kernel, {2}, {128}, 0, din.p, out.p, 256);
  const auto o = out.host();
  for (int t = 0; t < 32; ++t) {
    int want = 0;
    for (int j = t * 8; j < t * 8 + 8; ++j) want += in[j];
    ASSERT_EQ(o[t], want) << t;
  }
}

}  // namespace
}  // namespace kiln::cpu_test
