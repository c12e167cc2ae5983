// The cubin reader (runtime/cuda/cubin.h) on cubins NVRTC builds here for sm_80 and sm_90, no GPU
// needed; checked against what the source says (parameter layout as the C++ ABI lays it out,
// __shared__ bytes, __launch_bounds__) and against ptxas's own report. And the occupancy
// calculator against figures worked out by hand from the architectures' published limits.
#include <gtest/gtest.h>

#include <regex>

#include "jit/cuda/nvrtc.h"
#include "jit/headers.h"
#include "runtime/cuda/cubin.h"

namespace kiln::cuda {
namespace {

const char* kSource = R"(
extern "C" __global__ void stencil(float* a, int n, double s, char c) {
  __shared__ float tile[256];
  float local[64];  // indexed at run time: it lives in local memory
  for (int i = 0; i < 64; ++i) local[i] = a[(threadIdx.x * i) % n];
  tile[threadIdx.x] = local[n % 64] * s + c;
  __syncthreads();
  a[threadIdx.x] = tile[255 - threadIdx.x];
}
extern "C" __global__ void __launch_bounds__(128) bounded(float4 v, float* out) {
  out[threadIdx.x] = v.x + v.w;
}
__device__ int table[100];
)";

// A cubin for arch from NVRTC, with ptxas's verbose log; skips the test without NVRTC.
struct Built {
  Cubin cubin;
  std::string log;
};
std::optional<Built> build(const std::string& arch, std::string* why) {
  static std::shared_ptr<jit::Nvrtc> nvrtc = jit::Nvrtc::load(why);
  if (!nvrtc) return std::nullopt;
  jit::CompileRequest request;
  request.source = kSource;
  request.filename = "cubin_test.cu";
  request.name_expressions = {"stencil", "bounded"};
  request.arch = arch;
  request.options = {"-Xptxas=-v"};
  CompileResult result = nvrtc->compile(request, jit::builtin_headers(KILN_KERNELS_DIR));
  EXPECT_EQ(result.image_kind, "cubin");
  std::string reason;
  std::optional<Cubin> cubin = read_cubin(result.image.data(), result.image.size(), &reason);
  EXPECT_TRUE(cubin) << reason;
  if (!cubin) return std::nullopt;
  add_ptxas_log(*cubin, result.log);
  return Built{*cubin, result.log};
}

#define BUILD(var, arch)                                        \
  std::string why_;                                             \
  std::optional<Built> var = build(arch, &why_);                \
  if (!var && !why_.empty()) GTEST_SKIP() << "no NVRTC: " << why_; \
  ASSERT_TRUE(var)

TEST(CudaCubin, ReadsKernelsParametersAndResourcesForSm80AndSm90) {
  for (const char* arch : {"sm_80", "sm_90"}) {
    BUILD(built, arch);
    const Cubin& c = built->cubin;
    EXPECT_EQ(c.arch, arch == std::string("sm_80") ? 80 : 90);
    ASSERT_TRUE(c.kernels.count("stencil") && c.kernels.count("bounded")) << arch;
    const CubinKernel& k = c.kernels.at("stencil");
    // (float*, int, double, char): offsets 0, 8, 16 (double's alignment), 24; 25 bytes.
    ASSERT_EQ(k.params.size(), 4u);
    const std::uint32_t offsets[] = {0, 8, 16, 24}, sizes[] = {8, 4, 8, 1};
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(k.params[i].ordinal, i);
      EXPECT_EQ(k.params[i].offset, offsets[i]) << "param " << i;
      EXPECT_EQ(k.params[i].size, sizes[i]) << "param " << i;
    }
    EXPECT_EQ(k.param_bytes, 25u);
    EXPECT_EQ(k.shared_bytes, 256u * sizeof(float)) << built->log;
    EXPECT_GE(k.local_bytes, 64u * sizeof(float));
    EXPECT_EQ(k.max_threads_per_block, 0);  // no launch bounds
    const CubinKernel& b = c.kernels.at("bounded");
    EXPECT_EQ(b.max_threads_per_block, 128);
    ASSERT_EQ(b.params.size(), 2u);
    EXPECT_EQ(b.params[0].size, 16u);  // float4 by value
    EXPECT_EQ(b.params[1].offset, 16u);
    EXPECT_EQ(b.shared_bytes, 0u);
    EXPECT_EQ(c.globals.at("table"), 100u * sizeof(int));

    // Registers and stack as ptxas reports them in its log ("Used N registers").
    for (const auto& [name, kernel] : c.kernels) {
      std::smatch m;
      const std::regex used("Compiling entry function '" + name + R"('[\s\S]*?Used (\d+) registers)");
      ASSERT_TRUE(std::regex_search(built->log, m, used)) << built->log;
      EXPECT_EQ(kernel.registers, std::stoi(m[1])) << name << " on " << arch;
      EXPECT_EQ(kernel.spill_stores, 0) << name;
      EXPECT_EQ(kernel.spill_loads, 0) << name;
    }
  }
}

TEST(CudaCubin, RefusesWhatIsNotACubin) {
  std::string why;
  EXPECT_FALSE(read_cubin("hello", 5, &why));
  EXPECT_NE(why.find("ELF"), std::string::npos);
  std::vector<unsigned char> bad(64, 0);
  bad[0] = 0x7f, bad[1] = 'E', bad[2] = 'L', bad[3] = 'F', bad[4] = 2;
  bad[40] = 0xff, bad[58] = 64, bad[60] = 3;  // section headers past the end
  EXPECT_FALSE(read_cubin(bad.data(), bad.size(), &why));
  EXPECT_NE(why.find("truncated"), std::string::npos) << why;
}

TEST(CudaCubin, SpillsComeFromPtxasLog) {
  Cubin c;
  c.kernels["_Z1kPf"].name = "_Z1kPf";
  add_ptxas_log(c,
                "ptxas info    : Function properties for _Z1kPf\n"
                "ptxas         .     48 bytes stack frame, 40 bytes spill stores, 36 bytes spill loads\n");
  EXPECT_EQ(c.kernels["_Z1kPf"].spill_stores, 40);
  EXPECT_EQ(c.kernels["_Z1kPf"].spill_loads, 36);
}

// Worked by hand from the published limits: sm_80 has 64 warps, 32 blocks, 64 K registers
// (allotted per warp in units of 256) and 164 KiB of shared memory per SM, 1 KiB reserved per
// block; sm_86 has 48 warps and 16 blocks.
TEST(CudaOccupancy, MatchesTheCalculatorsFormula) {
  const ArchLimits sm80 = *arch_limits(80), sm86 = *arch_limits(86);
  CubinKernel k;
  k.registers = 32;  // 1024 registers a warp: 64 warps fit, so warps bind
  Occupancy o = occupancy(sm80, k, 256);
  EXPECT_EQ(o.blocks_per_sm, 8);
  EXPECT_DOUBLE_EQ(o.occupancy, 1.0);
  k.registers = 128;  // 4096 a warp: 16 warps, two blocks of 8
  o = occupancy(sm80, k, 256);
  EXPECT_EQ(o.blocks_per_sm, 2);
  EXPECT_DOUBLE_EQ(o.occupancy, 0.25);
  EXPECT_EQ(o.limit, "registers");
  k.registers = 33;  // rounds up to 1280 a warp: 51 warps, six blocks of 8
  EXPECT_EQ(occupancy(sm80, k, 256).blocks_per_sm, 6);
  k.registers = 16;
  k.shared_bytes = 48 * 1024;  // 49 KiB a block with the reserve: three fit in 164 KiB
  o = occupancy(sm80, k, 128);
  EXPECT_EQ(o.blocks_per_sm, 3);
  EXPECT_EQ(o.limit, "shared memory");
  EXPECT_DOUBLE_EQ(o.occupancy, 12.0 / 64);
  k.shared_bytes = 0;
  o = occupancy(sm80, k, 32);  // one warp a block: the 32-block limit binds
  EXPECT_EQ(o.blocks_per_sm, 32);
  EXPECT_EQ(o.limit, "blocks");
  EXPECT_DOUBLE_EQ(o.occupancy, 0.5);
  EXPECT_EQ(occupancy(sm86, k, 32).blocks_per_sm, 16);  // sm_86: 16 blocks, 48 warps
  EXPECT_DOUBLE_EQ(occupancy(sm86, k, 32).occupancy, 16.0 / 48);
  EXPECT_EQ(occupancy(sm80, k, 2048).blocks_per_sm, 0);  // too large a block
  k.max_threads_per_block = 128;
  EXPECT_EQ(occupancy(sm80, k, 256).limit, "block size");  // past __launch_bounds__
  EXPECT_FALSE(arch_limits(61));
}

}  // namespace
}  // namespace kiln::cuda
