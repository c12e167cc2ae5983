// libcu++'s block barrier lowered to __syncthreads() (jit/cpu/block_barriers.h): the
// Programming Guide's forms run as regions; anything else is left to fibers.
#include <gtest/gtest.h>

#include <algorithm>

#include "cpu_test_util.h"
#include "jit/cpu/block_barriers.h"
#include "runtime/error.h"

namespace kiln::cpu_test {
namespace {

std::size_t lines(const std::string& s) {
  return std::size_t(std::count(s.begin(), s.end(), '\n'));
}

// The guide's split arrive/wait and arrive_and_wait through an alias, a barrier named by its
// full type, an arrival token of that type: each wait a braced __syncthreads().
constexpr const char* kReverse = R"(#include <cuda/barrier>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void reverse(const int* in, int* out, int rounds) {
  using barrier = cuda::barrier<cuda::thread_scope_block>;
  __shared__ barrier bar;
  __shared__ cuda::barrier<cuda::thread_scope_block> other;
  __shared__ int s[2][128];
  auto block = cg::this_thread_block();
  if (block.thread_rank() == 0) { init(&bar, block.size()); init(&other, block.size()); }
  block.sync();
  const unsigned t = threadIdx.x, n = blockDim.x;
  int v = in[blockIdx.x * n + t];
  for (int r = 0; r < rounds; ++r) {
    s[r % 2][t] = v;
    barrier::arrival_token token = bar.arrive();
    v += 1;
    bar.wait(std::move(token));
    v = s[r % 2][n - 1 - t] + (v - 1);
    if (r % 2) other.arrive_and_wait();
    else bar.arrive_and_wait();
  }
  cuda::barrier<cuda::thread_scope_block>::arrival_token last = other.arrive();
  other.wait(std::move(last));
  out[blockIdx.x * n + t] = v;
}
)";

TEST(CpuBlockBarriers, WaitsBecomeSyncthreads) {
  const std::string out = cpu::lower_block_barriers(kReverse);
  EXPECT_EQ(lines(out), lines(kReverse));
  EXPECT_NE(out.find("using barrier = ::kiln_cpu::block_barrier;"), std::string::npos) << out;
  EXPECT_NE(out.find("__shared__ ::kiln_cpu::block_barrier other;"), std::string::npos) << out;
  EXPECT_NE(out.find("{ bar.kiln_whole_block(); __syncthreads(); }\n"), std::string::npos) << out;
  EXPECT_NE(out.find("if (r % 2) { other.kiln_whole_block(); __syncthreads(); }"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("::kiln_cpu::block_barrier::arrival_token last = other.arrive();"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("arrive_and_wait"), std::string::npos) << out;
  EXPECT_EQ(out.find("cuda::barrier"), std::string::npos) << out;
}

// A barrier passed on, one of device scope, or a member not among the forms: as written.
TEST(CpuBlockBarriers, OtherUsesLeaveTheSource) {
  for (const std::string use : {"helper(bar);", "(void)bar.arrive();", "bar.arrive_and_drop();",
                                "auto t = bar.arrive(2); bar.wait(std::move(t));"}) {
    const std::string src =
        "#include <cuda/barrier>\n__device__ void helper(cuda::barrier<cuda::thread_scope_block>& "
        "b) { b.arrive_and_wait(); }\n__global__ void k() {\n  __shared__ "
        "cuda::barrier<cuda::thread_scope_block> bar;\n  init(&bar, blockDim.x);\n  " +
        use + "\n}\n";
    EXPECT_EQ(cpu::lower_block_barriers(src), src) << use;
  }
  const std::string device =
      "__global__ void k(cuda::barrier<cuda::thread_scope_device>* b) { b->arrive_and_wait(); }";
  EXPECT_EQ(cpu::lower_block_barriers(device), device);
}

// The kernel runs as regions (it ran as fibers) and gives the host's answer; an init for fewer
// threads than the block stops it with an error that says so.
TEST(CpuBlockBarriers, RunsAsRegionsAndChecksTheCount) {
  Built b = build(kReverse, "reverse");
  EXPECT_EQ(b.kernel->attributes().threads, "regions") << b.kernel->attributes().why;
  std::vector<int> in(256);
  for (int i = 0; i < 256; ++i) in[i] = (i * 31) % 97;
  Buffer<int> din(in), out(256, 0);
  const int rounds = 3;
  launch(*b.kernel, {2}, {128}, 0, din.p, out.p, rounds);
  for (int blk = 0; blk < 2; ++blk)
    for (int t = 0; t < 128; ++t) {
      // each round: v = (mirror's v) + own v, the mirror's as stored before the round
      std::vector<int> v(in.begin() + blk * 128, in.begin() + blk * 128 + 128);
      for (int r = 0; r < rounds; ++r) {
        std::vector<int> next(128);
        for (int u = 0; u < 128; ++u) next[u] = v[127 - u] + v[u];
        v = next;
      }
      ASSERT_EQ(out.host()[blk * 128 + t], v[t]) << blk << "," << t;
    }
  std::string src = kReverse;
  src.replace(src.find("init(&bar, block.size())"), 24, "init(&bar, 64)");
  Built part = build(src, "reverse");
  try {
    launch(*part.kernel, {1}, {128}, 0, din.p, out.p, rounds);
    ADD_FAILURE() << "a barrier for part of the block ran";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cuda::barrier: the cpu backend supports a barrier for "
                                         "every thread of the block"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace kiln::cpu_test
