// Barriers, shared memory and warp operations on the cpu backend: patterns real kernels use,
// checked against references computed on the host.
#include <numeric>

#include "cpu_test_util.h"
#include "jit/cpu/regions.h"
#include "runtime/error.h"

namespace kiln::cpu_test {
namespace {

// Kernels whose only synchronisation is __syncthreads run as regions (or, with regions off or
// where the rewrite declines, as coroutines); the same source with a warp operation in a
// function every kernel may reach (a macro names it) runs as fibers. Each barrier test runs
// all three ways.
class CpuBarrier : public ::testing::TestWithParam<std::string> {
 protected:
  Built build_in_mode(std::string source, const std::string& name,
                      std::vector<std::string> options = {}) {
    if (GetParam() == "fibers")
      source +=
          "\n__device__ inline void use_fibers() { __syncwarp(); }\n"
          "#define KILN_TEST_WARP_STEP use_fibers()\n";
    Built b = build(source, name, std::move(options),
                    GetParam() == "coroutines" ? without_regions() : cpu());
    // What the rewrite into regions declines (__syncthreads_count, ...) runs
    // as coroutines.
    const bool declined = !cpu::form_regions(source);
    EXPECT_EQ(b.kernel->attributes().threads,
              GetParam() == "regions" && declined ? "coroutines" : GetParam());
    return b;
  }
};
INSTANTIATE_TEST_SUITE_P(Modes, CpuBarrier, ::testing::Values("regions", "coroutines", "fibers"),
                         [](const auto& info) { return info.param; });

TEST_P(CpuBarrier, TiledTranspose) {
  Built b = build_in_mode(R"(
#define TILE 16
__global__ void transpose(float* out, const float* in, int w, int h) {
  __shared__ float tile[TILE][TILE + 1];
  int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
  if (x < w && y < h) tile[threadIdx.y][threadIdx.x] = in[y * w + x];
  __syncthreads();
  x = blockIdx.y * TILE + threadIdx.x; y = blockIdx.x * TILE + threadIdx.y;
  if (x < h && y < w) out[y * h + x] = tile[threadIdx.x][threadIdx.y];
})",
                          "transpose");
  const int w = 70, h = 45;
  std::vector<float> in(w * h);
  std::iota(in.begin(), in.end(), 0.0f);
  Buffer<float> din(in), dout(w * h, -1);
  launch(*b.kernel, {(w + 15) / 16, (h + 15) / 16}, {16, 16}, 0, dout.p, din.p, w, h);
  auto out = dout.host();
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) ASSERT_EQ(out[x * h + y], in[y * w + x]) << x << "," << y;
}

// Every thread of a 3-D grid of 3-D blocks knows who it is on both sides of a barrier: its
// blockIdx, threadIdx, blockDim and gridDim, checked against the host's own enumeration.
TEST_P(CpuBarrier, IdentityIn3DGridsAcrossABarrier) {
  Built b = build_in_mode(R"(
__global__ void identity(unsigned* out) {
  __shared__ unsigned seen[4 * 3 * 2];
  unsigned t = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
  seen[t] = t;
  unsigned b = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
  unsigned before = b * 1000 + t;
  __syncthreads();
  unsigned n = blockDim.x * blockDim.y * blockDim.z;
  unsigned* o = out + 4 * (b * n + t);
  o[0] = before;
  o[1] = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;  // after the barrier
  o[2] = seen[n - 1 - t];  // another thread's write, seen after the barrier
  o[3] = (gridDim.x * 100 + gridDim.y) * 100 + gridDim.z + blockDim.x * 1000000u;
})",
                          "identity");
  const unsigned gx = 3, gy = 2, gz = 4, bx = 4, by = 3, bz = 2, n = bx * by * bz;
  const unsigned blocks = gx * gy * gz;
  Buffer<unsigned> dout(4 * blocks * n, 0xffffffffu);
  launch(*b.kernel, {gx, gy, gz}, {bx, by, bz}, 0, dout.p);
  auto out = dout.host();
  for (unsigned z = 0; z < gz; ++z)
    for (unsigned y = 0; y < gy; ++y)
      for (unsigned x = 0; x < gx; ++x) {
        const unsigned block = (z * gy + y) * gx + x;
        for (unsigned t = 0; t < n; ++t) {
          const unsigned* o = &out[4 * (block * n + t)];
          ASSERT_EQ(o[0], block * 1000 + t) << "block " << block << " thread " << t;
          ASSERT_EQ(o[1], block) << "block " << block << " thread " << t;
          ASSERT_EQ(o[2], n - 1 - t) << "block " << block << " thread " << t;
          ASSERT_EQ(o[3], (gx * 100 + gy) * 100 + gz + bx * 1000000u);
        }
      }
}

TEST_P(CpuBarrier, SharedMemoryBlurMatchesReference) {
  Built b = build_in_mode(R"(
__global__ void blur(const float* in, float* out, int n) {
  __shared__ float s[128 + 2 * R];
  int g = blockIdx.x * blockDim.x + threadIdx.x;
  int l = threadIdx.x + R;
  s[l] = g < n ? in[g] : 0.0f;
  if (threadIdx.x < R) {
    int left = g - R, right = g + blockDim.x;
    s[l - R] = left >= 0 ? in[left] : 0.0f;
    s[l + blockDim.x] = right < n ? in[right] : 0.0f;
  }
  __syncthreads();
  if (g >= n) return;
  float acc = 0;
  for (int k = -R; k <= R; ++k) acc += s[l + k];
  out[g] = acc;
})",
                          "blur", {"-DR=3"});
  const int n = 1000;
  std::vector<float> in(n);
  for (int i = 0; i < n; ++i) in[i] = float((i * 37) % 11);
  Buffer<float> din(in), dout(n);
  launch(*b.kernel, {(n + 127) / 128}, {128}, 0, din.p, dout.p, n);
  auto out = dout.host();
  for (int i = 0; i < n; ++i) {
    float ref = 0;
    for (int k = -3; k <= 3; ++k) ref += (i + k >= 0 && i + k < n) ? in[i + k] : 0.0f;
    ASSERT_EQ(out[i], ref) << i;
  }
}

const char* kReduce = R"(
__global__ void reduce(const int* in, int* out, int n) {
  extern __shared__ int buf[];
  unsigned t = threadIdx.x;
  int i = blockIdx.x * blockDim.x + t;
  buf[t] = i < n ? in[i] : 0;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (t < s) buf[t] += buf[t + s];
    __syncthreads();
  }
  if (t == 0) atomicAdd(out, buf[0]);
})";

TEST_P(CpuBarrier, TreeReductionWithDynamicSharedMemory) {
  Built b = build_in_mode(kReduce, "reduce");
  const int n = 100000;
  std::vector<int> in(n);
  for (int i = 0; i < n; ++i) in[i] = i % 1000 - 300;
  Buffer<int> din(in), out(1, 0);
  launch(*b.kernel, {(n + 255) / 256}, {256}, 256 * sizeof(int), din.p, out.p, n);
  EXPECT_EQ(out.host()[0], std::accumulate(in.begin(), in.end(), 0));
}

TEST_P(CpuBarrier, EarlyExitCountsAsArrived) {
  Built b = build_in_mode(R"(
__global__ void k(int* out, int n) {
  __shared__ int s[64];
  int i = threadIdx.x;
  if (i >= n) return;
  s[i] = i * 2;
  __syncthreads();
  out[i] = s[n - 1 - i] + __syncthreads_count(i % 2);
})",
                          "k");
  Buffer<int> out(64, -1);
  launch(*b.kernel, {1}, {64}, 0, out.p, 37);
  auto o = out.host();
  for (int i = 0; i < 64; ++i) ASSERT_EQ(o[i], i < 37 ? 2 * (36 - i) + 18 : -1) << i;
}

TEST_P(CpuBarrier, SyncthreadsAndOr) {
  Built b = build_in_mode(R"(
__global__ void k(int* out) {
  int t = threadIdx.x;
  int a = __syncthreads_and(t < 1000);
  int o = __syncthreads_or(t == 77);
  int z = __syncthreads_and(t != 5);
  out[t] = a * 100 + o * 10 + z;
})",
                          "k");
  Buffer<int> out(96);
  launch(*b.kernel, {1}, {96}, 0, out.p);
  for (int v : out.host()) ASSERT_EQ(v, 110);
}

TEST_P(CpuBarrier, ThreadsLeaveInWavesBetweenBarriers) {
  Built b = build_in_mode(R"(
__global__ void waves(int* out) {
  __shared__ int s[128];
  const int t = threadIdx.x;
  int acc = 0;
  for (int r = 0; r < 8; ++r) {
    const int live = 128 - 16 * r;
    if (t >= live) { out[t] = acc; return; }
    s[t] = t * (r + 1);
    __syncthreads();
    int v = s[(t + 1) % live];
    int c = __syncthreads_count(t % 3 == 0);
    acc += v + c;
  }
  out[t] = acc;
})",
                          "waves");
  Buffer<int> out(128, -1);
  launch(*b.kernel, {3}, {128}, 0, out.p);
  auto o = out.host();
  for (int t = 0; t < 128; ++t) {
    int acc = 0;
    for (int r = 0; r < 8 && t < 128 - 16 * r; ++r) {
      const int live = 128 - 16 * r;
      acc += (t + 1) % live * (r + 1) + (live + 2) / 3;
    }
    ASSERT_EQ(o[t], acc) << t;
  }
}

// A `return` the scan cannot see (from a macro defined outside the kernel) does not compile in a
// coroutine: the module is built again with fibers and gives the same answer.
TEST(CpuFibers, ReturnFromAMacroFallsBackToFibers) {
  Built b = build(R"(
#define GUARD(i, n) if ((i) >= (n)) return
__global__ void k(int* out, int n) {
  __shared__ int s[64];
  int t = threadIdx.x;
  GUARD(t, n);
  s[t] = t;
  __syncthreads();
  out[t] = s[n - 1 - t];
})",
                  "k");
  EXPECT_EQ(b.kernel->attributes().threads, "fibers");
  Buffer<int> out(64, -1);
  launch(*b.kernel, {1}, {64}, 0, out.p, 40);
  auto o = out.host();
  for (int t = 0; t < 64; ++t) ASSERT_EQ(o[t], t < 40 ? 39 - t : -1) << t;
}

TEST(CpuWarp, ShuffleReductions) {
  Built b = build(R"(
__global__ void k(const float* in, float* down, float* bfly, int* bcast, int* up) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  float v = in[t];
  float d = v;
  for (int o = 16; o > 0; o /= 2) d += __shfl_down_sync(0xffffffff, d, o);
  float x = v;
  for (int o = 16; o > 0; o /= 2) x += __shfl_xor_sync(0xffffffff, x, o);
  if ((threadIdx.x & 31) == 0) down[t / 32] = d;
  bfly[t] = x;
  bcast[t] = __shfl_sync(0xffffffff, t, 3);
  up[t] = __shfl_up_sync(0xffffffff, t, 1, 8);
})",
                  "k");
  const int n = 128;
  std::vector<float> in(n);
  for (int i = 0; i < n; ++i) in[i] = float(i % 13);
  Buffer<float> din(in), down(n / 32), bfly(n);
  Buffer<int> bcast(n), up(n);
  launch(*b.kernel, {2}, {64}, 0, din.p, down.p, bfly.p, bcast.p, up.p);
  auto d = down.host(), x = bfly.host();
  auto bc = bcast.host(), u = up.host();
  for (int w = 0; w < n / 32; ++w) {
    float ref = 0;
    for (int l = 0; l < 32; ++l) ref += in[w * 32 + l];
    EXPECT_EQ(d[w], ref);
    for (int l = 0; l < 32; ++l) ASSERT_EQ(x[w * 32 + l], ref);
    for (int l = 0; l < 32; ++l) ASSERT_EQ(bc[w * 32 + l], w * 32 + 3);
    for (int l = 0; l < 32; ++l) ASSERT_EQ(u[w * 32 + l], l % 8 == 0 ? w * 32 + l : w * 32 + l - 1);
  }
}

// __reduce_*_sync over a partial warp (a block of 48) takes the lanes that exist, as the
// hardware's redux did on an H200, also as fibers, where it is built from shuffles (which give
// 0 from a missing lane).
TEST(CpuFibers, ReduceOverAPartialWarp) {
  Built b = build(R"(
__device__ inline void use_fibers() { __syncwarp(); }
#define STEP use_fibers()
__global__ void k(int* mins, unsigned* ands, int* sums) {
  STEP;
  const int v = 100 - int(threadIdx.x);
  mins[threadIdx.x] = __reduce_min_sync(0xffffffffu, v);
  ands[threadIdx.x] = __reduce_and_sync(0xffffffffu, ~(1u << (threadIdx.x % 32)));
  sums[threadIdx.x] = __reduce_add_sync(0xffffffffu, v);
})",
                  "k");
  ASSERT_EQ(b.kernel->attributes().threads, "fibers");
  Buffer<int> mins(48), sums(48);
  Buffer<unsigned> ands(48);
  launch(*b.kernel, {1}, {48}, 0, mins.p, ands.p, sums.p);
  auto m = mins.host(), s = sums.host();
  auto a = ands.host();
  for (int t = 0; t < 48; ++t) {
    const bool full = t < 32;
    ASSERT_EQ(m[t], full ? 100 - 31 : 100 - 47) << t;
    ASSERT_EQ(a[t], full ? 0u : 0xffff0000u) << t;
    ASSERT_EQ(s[t], full ? 3200 - 31 * 32 / 2 : 1600 - (32 + 47) * 16 / 2) << t;
  }
}

TEST(CpuWarp, BallotAnyAllAndActivemaskAfterEarlyExit) {
  Built b = build(R"(
__global__ void k(unsigned* out, int n) {
  int t = threadIdx.x;
  if (t >= n) return;
  unsigned active = __activemask();
  unsigned ballot = __ballot_sync(active, t % 3 == 0);
  int any = __any_sync(active, t == 4);
  int all = __all_sync(active, t < 100);
  if (t == 0) { out[0] = active; out[1] = ballot; out[2] = any; out[3] = all; }
})",
                  "k");
  Buffer<unsigned> out(4, 7);
  launch(*b.kernel, {1}, {32}, 0, out.p, 20);
  unsigned ballot = 0;
  for (int t = 0; t < 20; t += 3) ballot |= 1u << t;
  EXPECT_EQ(out.host(), (std::vector<unsigned>{(1u << 20) - 1, ballot, 1, 1}));
}

TEST(CpuWarp, CooperativeGroupsTileReduce) {
  Built b = build(R"(
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
__global__ void k(const int* in, int* sums32, int* sums16, int* maxes16, int* ranks) {
  cg::thread_block block = cg::this_thread_block();
  auto t32 = cg::tiled_partition<32>(block);
  auto t16 = cg::tiled_partition<16>(block);
  int v = in[block.thread_rank()];
  int s32 = cg::reduce(t32, v, cg::plus<int>());
  int s16 = cg::reduce(t16, v, cg::plus<int>());
  int m16 = cg::reduce(t16, v, cg::greater<int>());
  block.sync();
  if (t32.thread_rank() == 0) sums32[t32.meta_group_rank()] = s32;
  if (t16.thread_rank() == 0) { sums16[t16.meta_group_rank()] = s16; maxes16[t16.meta_group_rank()] = m16; }
  ranks[block.thread_rank()] = t16.thread_rank() + 100 * (int)t16.size();
})",
                  "k");
  const int n = 64;
  std::vector<int> in(n);
  for (int i = 0; i < n; ++i) in[i] = (i * 7919) % 101;
  Buffer<int> din(in), s32(2), s16(4), m16(4), ranks(n);
  launch(*b.kernel, {1}, {n}, 0, din.p, s32.p, s16.p, m16.p, ranks.p);
  for (int g = 0; g < 2; ++g)
    EXPECT_EQ(s32.host()[g], std::accumulate(in.begin() + 32 * g, in.begin() + 32 * g + 32, 0));
  for (int g = 0; g < 4; ++g) {
    EXPECT_EQ(s16.host()[g], std::accumulate(in.begin() + 16 * g, in.begin() + 16 * g + 16, 0));
    EXPECT_EQ(m16.host()[g], *std::max_element(in.begin() + 16 * g, in.begin() + 16 * g + 16));
  }
  for (int i = 0; i < n; ++i) ASSERT_EQ(ranks.host()[i], i % 16 + 1600);
}

// Tiles wider than a warp (CUDA 12's block_tile_memory): cg::reduce and the scans across their
// warps, called twice in a row (the warps' totals are reused), against the host.
TEST(CpuWarp, CooperativeGroupsWideTileReduceAndScan) {
  Built b = build(R"(
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cooperative_groups/scan.h>
namespace cg = cooperative_groups;
__global__ void k(const int* in, int* sums, int* maxes, int* inc, int* exc) {
  __shared__ cg::block_tile_memory<256> scratch;
  cg::thread_block block = cg::this_thread_block(scratch);
  auto t128 = cg::tiled_partition<128>(block);
  auto t64 = cg::tiled_partition<64>(block);
  int v = in[block.thread_rank()];
  int s = cg::reduce(t128, v, cg::plus<int>());
  int m = cg::reduce(t64, v, cg::greater<int>());
  inc[block.thread_rank()] = cg::inclusive_scan(t128, v);
  exc[block.thread_rank()] = cg::exclusive_scan(t64, v, cg::plus<int>());
  if (t128.thread_rank() == 0) sums[t128.meta_group_rank()] = s;
  if (t64.thread_rank() == 0) maxes[t64.meta_group_rank()] = m;
})",
                  "k");
  const int n = 256;
  std::vector<int> in(n);
  for (int i = 0; i < n; ++i) in[i] = (i * 7919) % 101;
  Buffer<int> din(in), sums(2), maxes(4), inc(n), exc(n);
  launch(*b.kernel, {1}, {n}, 0, din.p, sums.p, maxes.p, inc.p, exc.p);
  for (int g = 0; g < 2; ++g)
    EXPECT_EQ(sums.host()[g], std::accumulate(in.begin() + 128 * g, in.begin() + 128 * g + 128, 0));
  for (int g = 0; g < 4; ++g)
    EXPECT_EQ(maxes.host()[g], *std::max_element(in.begin() + 64 * g, in.begin() + 64 * g + 64));
  for (int i = 0, run128 = 0, run64 = 0; i < n; ++i) {
    if (i % 128 == 0) run128 = 0;
    if (i % 64 == 0) run64 = 0;
    ASSERT_EQ(exc.host()[i], run64) << i;
    run128 += in[i];
    run64 += in[i];
    ASSERT_EQ(inc.host()[i], run128) << i;
  }
}

// Every group converts to CUDA's generic thread_group (a device function's parameter), which
// keeps the group's rank, size and sync: the block, warp and narrower tiles, a tile wider than
// a warp, a coalesced group. (thread_group was coalesced_group, and a block did not convert.)
TEST(CpuWarp, GroupsConvertToThreadGroup) {
  Built b = build(R"(
#include <cooperative_groups.h>
using namespace cooperative_groups;
__device__ int describe(thread_group g) { g.sync(); return (int)g.thread_rank() + 1000 * (int)g.size(); }
__global__ void k(int* out) {
  __shared__ block_tile_memory<128> scratch;
  thread_block block = this_thread_block(scratch);
  int n = blockDim.x, t = threadIdx.x;
  out[t] = describe(block);
  out[n + t] = describe(tiled_partition<32>(block));
  out[2 * n + t] = describe(tiled_partition<8>(block));
  out[3 * n + t] = describe(tiled_partition<64>(block));
  out[4 * n + t] = describe(coalesced_threads());
  out[5 * n + t] = describe(tiled_partition(block, 4));
})",
                  "k");
  const int n = 128;
  Buffer<int> out(6 * n, -1);
  launch(*b.kernel, {1}, {n}, 0, out.p);
  auto o = out.host();
  for (int t = 0; t < n; ++t) {
    ASSERT_EQ(o[t], t + 1000 * n) << t;
    ASSERT_EQ(o[n + t], t % 32 + 32000) << t;
    ASSERT_EQ(o[2 * n + t], t % 8 + 8000) << t;
    ASSERT_EQ(o[3 * n + t], t % 64 + 64000) << t;
    ASSERT_EQ(o[4 * n + t], t % 32 + 32000) << t;
    ASSERT_EQ(o[5 * n + t], t % 4 + 4000) << t;
  }
}

// __activemask and coalesced_threads() in divergent code, as fibers (regions off): once no
// fiber can go on, the lanes waiting at __activemask get their own mask (they deadlocked before,
// waiting for the warp's other lanes, which waited at the barrier after the branch). As regions
// (the group lowered to its mask, block_groups.h), the same.
TEST(CpuWarp, ActivemaskInDivergentCode) {
  const std::string src = R"(
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void k(unsigned* masks, int* ranks) {
  int t = threadIdx.x;
  if (t % 2 == 0) {
    masks[t] = __activemask();
    cg::coalesced_group g = cg::coalesced_threads();
    ranks[t] = (int)g.thread_rank() + 100 * (int)g.size();
    g.sync();
  } else {
    masks[t] = 1;
    ranks[t] = -1;
  }
  __syncthreads();
})";
  for (const bool regions : {false, true}) {
    Built b = build(src, "k", {}, regions ? cpu() : without_regions());
    ASSERT_EQ(b.kernel->attributes().threads, regions ? "regions" : "fibers");
    Buffer<unsigned> masks(64, 0);
    Buffer<int> ranks(64, 0);
    launch(*b.kernel, {1}, {64}, 0, masks.p, ranks.p);
    for (int t = 0; t < 64; ++t) {
      ASSERT_EQ(masks.host()[t], t % 2 == 0 ? 0x55555555u : 1u) << t;
      ASSERT_EQ(ranks.host()[t], t % 2 == 0 ? t % 32 / 2 + 1600 : -1) << t;
    }
  }
}

// A lockstep pointer read by some lanes alone (a look-back's `s = lane == 0 ? status[j] : 2u;`)
// while the others wait at a vote of the whole warp: as fibers, the read completes first and
// its lanes join the vote (the vote ran without them, and they then waited alone: a deadlock
// reported, a wrong ballot, and --check's "not taking part"). Regions: the same.
TEST(CpuWarp, LockstepReadBeforeAWarpVote) {
  const std::string src = R"(
__global__ void k(volatile unsigned* status, unsigned* out) {
  const int lane = threadIdx.x % 32;
  if (threadIdx.x == 0) status[2 + blockIdx.x] = 5u;
  const unsigned s = lane == 0 ? status[blockIdx.x + lane] : 1u;
  out[blockIdx.x * blockDim.x + threadIdx.x] = __ballot_sync(0xffffffffu, s == 0u);
})";
  for (const bool regions : {false, true}) {
    Built b = build(src, "k", {}, regions ? cpu() : without_regions());
    ASSERT_EQ(b.kernel->attributes().threads, regions ? "regions" : "fibers")
        << b.kernel->attributes().why;
    Buffer<unsigned> status(std::vector<unsigned>{0u, 3u, 0u, 0u}), out(128, 7u);
    launch(*b.kernel, {2}, {64}, 0, status.p, out.p);
    for (int i = 0; i < 128; ++i) ASSERT_EQ(out.host()[i], i < 64 ? 1u : 0u) << regions << " " << i;
    EXPECT_EQ(status.host(), (std::vector<unsigned>{0u, 3u, 5u, 5u}));
  }
}

TEST(CpuFibers, DeadlockIsReported) {
  Built b = build(R"(
__global__ void k(int* out) {
  if (threadIdx.x < 16) { __syncthreads(); out[0] = 1; }
  else { __syncwarp(); __syncthreads(); }
  while (threadIdx.x == 40) { __syncthreads(); }
})",
                  "k");
  Buffer<int> out(1);
  try {
    launch(*b.kernel, {1}, {64}, 0, out.p);
    FAIL() << "no deadlock reported";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("deadlock"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("kernel 'k'"), std::string::npos) << e.what();
  }
}

// A thread's local array of 96 KB (a solver's work array; CUDA allows 512 KB of local memory)
// fits in every mode: it overflowed the fibers' 64 KiB stacks.
TEST_P(CpuBarrier, LargeLocalArraysFit) {
  Built b = build_in_mode(R"(
__global__ void k(const double* in, double* out) {
  __shared__ double s[32];
  double work[12000];
  for (int i = 0; i < 12000; ++i) work[i] = in[(threadIdx.x + i) % 64];
  s[threadIdx.x] = 0;
  __syncthreads();
  double acc = 0;
  for (int i = 0; i < 12000; ++i) acc += work[(i * 7) % 12000];
  s[threadIdx.x] = acc;
  __syncthreads();
  out[threadIdx.x] = s[31 - threadIdx.x];
})",
                          "k");
  std::vector<double> in(64);
  for (int i = 0; i < 64; ++i) in[i] = i % 5;
  Buffer<double> din(in), out(32, -1.0);
  launch(*b.kernel, {1}, {32}, 0, din.p, out.p);
  for (int t = 0; t < 32; ++t) {
    double acc = 0;
    for (int i = 0; i < 12000; ++i) acc += in[(31 - t + (i * 7) % 12000) % 64];
    ASSERT_EQ(out.host()[t], acc) << t;
  }
}

TEST_P(CpuBarrier, FiberStackOverflowIsReported) {
  Built b = build_in_mode(std::string(kDeepRecursion) + R"(
__global__ void k(int* out, int depth) {
  __syncthreads();
  if (threadIdx.x == 5) out[0] = deep(out, depth);
})",
                          "k", {"-O0"});
  Buffer<int> out(1, 0);
  launch(*b.kernel, {1}, {32}, 0, out.p, 10);  // shallow: fine
  try {
    launch(*b.kernel, {1}, {32}, 0, out.p, 1000000);
    FAIL() << "no overflow reported";
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find(GetParam() == "regions" ? "overflowed its block's 8 MiB stack"
                                             : "overflowed its 512 KiB fiber stack"),
              std::string::npos)
        << m;
    EXPECT_NE(m.find("thread (5,0,0) of block (0,0,0)"), std::string::npos) << m;
  }
  launch(*b.kernel, {1}, {32}, 0, out.p, 10);  // the worker still runs kernels afterwards
}

TEST_P(CpuBarrier, TrapAndAssertBecomeErrors) {
  Built b = build_in_mode(R"(
#include <cassert>
__global__ void k(int bad) {
  __syncthreads();
  assert(threadIdx.x != bad);
})",
                          "k");
  launch(*b.kernel, {2}, {8}, 0, -1);
  try {
    launch(*b.kernel, {2}, {8}, 0, 3);
    FAIL() << "no assertion reported";
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("assertion 'threadIdx.x != bad' failed"), std::string::npos) << m;
    EXPECT_NE(m.find("test_kernel.cu:5: k: assertion"), std::string::npos)
        << m;  // (not operator())
    EXPECT_NE(m.find("thread (3,0,0)"), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace kiln::cpu_test

namespace kiln::cpu_test {
namespace {

TEST(CpuFibers, ThreeDimensionalBlockOf1024Threads) {
  Built b = build(R"(
__global__ void k(int* out) {
  __shared__ int ids[1024];
  int t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  ids[t] = t;
  __syncthreads();
  int mirrored = ids[1023 - t];
  int lane0 = __shfl_sync(0xffffffff, t, 0);
  out[blockIdx.z * 1024 + t] = mirrored * 10000 + lane0 + (int)blockIdx.z;
})",
                  "k");
  Buffer<int> out(2 * 1024, -1);
  launch(*b.kernel, {1, 1, 2}, {8, 8, 16}, 0, out.p);
  auto o = out.host();
  for (int z = 0; z < 2; ++z)
    for (int t = 0; t < 1024; ++t) ASSERT_EQ(o[z * 1024 + t], (1023 - t) * 10000 + t / 32 * 32 + z);
}

TEST(CpuWarp, PartialLastWarpAndShuffleWidth) {
  Built b = build(R"(
__global__ void k(int* sum, int* seg) {
  int t = threadIdx.x;
  int v = t;
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffff, v, o);
  sum[t] = v;
  seg[t] = __shfl_sync(0xffffffff, t, 2, 4);  // lane 2 of each group of 4
})",
                  "k");
  Buffer<int> sum(48), seg(48);
  launch(*b.kernel, {1}, {48}, 0, sum.p, seg.p);
  auto s = sum.host(), g = seg.host();
  for (int t = 0; t < 32; ++t) ASSERT_EQ(s[t], 31 * 32 / 2);
  for (int t = 0; t < 48; ++t) ASSERT_EQ(g[t], t / 4 * 4 + 2) << t;
  // Lanes 32..47 exist alone in the second warp: partners beyond lane 47 are inactive, and a
  // shuffle from an inactive lane returns 0 (what an H200 gave; undefined in CUDA's words).
  int ref[48];
  for (int t = 32; t < 48; ++t) ref[t] = t;
  for (int o = 16; o > 0; o /= 2) {
    int next[48];
    for (int t = 32; t < 48; ++t) {
      int src = t ^ o;
      next[t] = ref[t] + (src < 48 ? ref[src] : 0);
    }
    for (int t = 32; t < 48; ++t) ref[t] = next[t];
  }
  for (int t = 32; t < 48; ++t) ASSERT_EQ(s[t], ref[t]) << t;
}

TEST(CpuLoop, DynamicSharedMemoryInLoopMode) {
  Built b = build(R"(
__global__ void k(float* out) {
  extern __shared__ float scratch[];
  scratch[threadIdx.x] = 2.0f * threadIdx.x;
  out[blockIdx.x * blockDim.x + threadIdx.x] = scratch[threadIdx.x] + 1.0f;
})",
                  "k");
  Buffer<float> out(64);
  launch(*b.kernel, {2}, {32}, 32 * sizeof(float), out.p);
  auto o = out.host();
  for (int i = 0; i < 64; ++i) ASSERT_EQ(o[i], 2.0f * float(i % 32) + 1.0f);
}

}  // namespace
}  // namespace kiln::cpu_test
