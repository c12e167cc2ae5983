// Warp operations in region mode (jit/cpu/regions.h: a step between regions) and the inlining
// of synchronising device functions that brings them there (jit/cpu/inline_sync.h), and the
// rest of what region mode takes since (lambdas, break and continue, plain shared atomics,
// decltype declarations, calls that need no threadIdx): what is taken and declined, and
// kernels written as CUDA code does, checked against host references and against the same
// source run as fibers (regions off).
#include <fstream>
#include <numeric>

#include "cpu_test_util.h"
#include "jit/cpu/inline_sync.h"
#include "jit/cpu/regions.h"
#include "runtime/error.h"
#include "temp_dir.h"

namespace kiln::cpu_test {
namespace {

std::size_t lines(const std::string& s) {
  return std::count(s.begin(), s.end(), '\n');
}

TEST(CpuInlineSync, InlinesCallStatementsKeepingLines) {
  const std::string src = R"(#define FULL 0xffffffffu
template <typename T>
__device__ T warp_sum(T v) {
  for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(FULL, v, o);
  return v;
}
__device__ __forceinline__ void bump(int* p, const int& by) { __syncwarp(); *p += by; }
__global__ void k(float* x, int* c) {
  float s = x[threadIdx.x];
  s = warp_sum(s);
  const float t = warp_sum<float>(x[threadIdx.x]
                                  * 2);
  x[threadIdx.x] += warp_sum(t);
  bump(c, 1);
})";
  const std::string out = cpu::inline_sync_functions(src);
  EXPECT_EQ(lines(out), lines(src));
  // Every call is a block now, and the functions nothing names any more are gone.
  EXPECT_EQ(out.find("warp_sum"), std::string::npos) << out;
  EXPECT_EQ(out.find("bump"), std::string::npos) << out;
  EXPECT_NE(out.find("float t; {"), std::string::npos) << out;  // `const` dropped: assigned
  EXPECT_NE(out.find("x[threadIdx.x] += ("), std::string::npos) << out;
  EXPECT_NE(out.find("for (int kiln_i1_o = 16;"), std::string::npos) << out;  // locals renamed
  EXPECT_NE(out.find("#define FULL"), std::string::npos);
  // What cannot be inlined is left as written: an overloaded function, an output parameter, a
  // recursive function; a call inside an expression where moving
  // it before the statement could change what runs (a condition, &&, a comma between
  // declarators, an unevaluated operand). (The body of an unbraced if: below.)
  for (const std::string body : {
           "x[0] = x[1] > 0 ? warp_sum(x[0]) : 0;",
           "x[0] = x[1] > 0 && warp_sum(x[0]) > 0;",
           "if (warp_sum(x[0]) > 0) x[0] = 1;",
           "float a = x[1], b = warp_sum(a); x[0] = b;",
           "x[0] = sizeof(warp_sum(x[0]));",
           "x[0] = over(x[0]);",
           "float r; out(x[0], r); x[0] = r;",
           "x[0] = rec(x[0]);",
       }) {
    const std::string s = R"(
__device__ float warp_sum(float v) { return __shfl_xor_sync(~0u, v, 1) + v; }
__device__ float over(float v) { return __shfl_xor_sync(~0u, v, 1); }
__device__ int over(int v) { return __shfl_xor_sync(~0u, v, 1); }
__device__ void out(float v, float& r) { r = __shfl_xor_sync(~0u, v, 1); }
__device__ float rec(float v) { if (v > 1) v = rec(v / 2); return __shfl_xor_sync(~0u, v, 1); }
__global__ void k(float* x) { )" +
                          body + " }";
    EXPECT_EQ(cpu::inline_sync_functions(s), s) << body;
  }
}

// Runs kernel k of src over in (blocks of block threads) with out as large, as regions (checked
// to be regions) and as fibers (regions off); returns both outputs.
std::pair<std::vector<int>, std::vector<int>> both_ways(const std::string& src,
                                                        const std::vector<int>& in,
                                                        unsigned block) {
  std::vector<int> result[2];
  for (int fibers = 0; fibers < 2; ++fibers) {
    Built b = build(src, "k", {}, fibers ? without_regions() : cpu());
    EXPECT_EQ(b.kernel->attributes().threads, fibers ? "fibers" : "regions")
        << b.kernel->attributes().why;
    Buffer<int> din(in), out(in.size(), -7);
    launch(*b.kernel, {unsigned(in.size()) / block}, {block}, 0, din.p, out.p);
    result[fibers] = out.host();
  }
  return {result[0], result[1]};
}

// A function whose returns end its body or the branches of an if/else that does (simpleCooperative-
// Groups' sumReduction: `if (rank == 0) return val; else return -1;`) is inlined too, each
// return an assignment; one returning inside a loop is not. Against the host and fibers.
TEST(CpuInlineSync, ReturnsInTrailingBranchesAreInlined) {
  const std::string src = R"(
__device__ int neighbour(int v, int* s) {
  const int t = threadIdx.x;
  s[t] = v;
  __syncthreads();
  if (t == 0)
    return s[1] * 100;
  else if (t < 8) {
    return s[t - 1];
  } else
    return -1;
}
__global__ void k(const int* in, int* out) {
  __shared__ int s[64];
  const int r = neighbour(in[blockIdx.x * 64 + threadIdx.x], s);
  out[blockIdx.x * 64 + threadIdx.x] = r;
})";
  const std::string out = cpu::inline_sync_functions(src);
  EXPECT_EQ(lines(out), lines(src));
  EXPECT_EQ(out.find("neighbour"), std::string::npos) << out;
  std::vector<int> in(128);
  for (int i = 0; i < 128; ++i) in[i] = i * 3 - 50;
  auto [regions, fibers] = both_ways(src, in, 64);
  for (int i = 0; i < 128; ++i) {
    const int t = i % 64;
    ASSERT_EQ(regions[i], t == 0 ? in[i + 1] * 100 : t < 8 ? in[i - 1] : -1) << i;
  }
  EXPECT_EQ(regions, fibers);
  // Not: a return in a loop (one followed by more code: EarlyReturnsBecomeBranches).
  for (const std::string body :
       {"for (int i = 0; i < v; ++i) { __syncthreads(); return i; } return 0;"}) {
    const std::string s2 =
        "__device__ int f(int v) { " + body + " }\n__global__ void k(int* x) { x[0] = f(x[1]); }";
    EXPECT_EQ(cpu::inline_sync_functions(s2), s2) << body;
  }
}

// A synchronising call inside an expression (`x = 1 + f(v);`, or a function's `return g(v) -
// v;` inlined into one) moves to a statement of its own before it, into a variable of the
// function's return type, and is inlined there: cuda-samples' scan, whose helpers call one
// another so, runs as regions (it ran as fibers).
TEST(CpuInlineSync, CallsInsideExpressionsAreInlined) {
  const std::string src = R"(
__device__ int scan_inclusive(int v, volatile int* s, int size) {
  int pos = 2 * threadIdx.x - (threadIdx.x & (size - 1));
  s[pos] = 0;
  pos += size;
  s[pos] = v;
  for (int offset = 1; offset < size; offset <<= 1) {
    __syncthreads();
    int t = s[pos] + s[pos - offset];
    __syncthreads();
    s[pos] = t;
  }
  return s[pos];
}
__device__ int scan_exclusive(int v, volatile int* s, int size) { return scan_inclusive(v, s, size) - v; }
__global__ void k(const int* in, int* out) {
  __shared__ int s[2 * 256];
  const int v = in[blockIdx.x * blockDim.x + threadIdx.x];
  out[blockIdx.x * blockDim.x + threadIdx.x] = 10 * scan_exclusive(v, s, 256) + 1;
})";
  const std::string out = cpu::inline_sync_functions(src);
  EXPECT_EQ(lines(out), lines(src));
  EXPECT_EQ(out.find("scan_"), std::string::npos) << out;
  EXPECT_NE(out.find("int kiln_h1_; {"), std::string::npos) << out;
  EXPECT_NE(out.find("= 10 * kiln_h1_ + 1;"), std::string::npos) << out;
  std::vector<int> in(512);
  for (int i = 0; i < 512; ++i) in[i] = (i * 53) % 17 - 5;
  auto [regions, fibers] = both_ways(src, in, 256);
  for (int b = 0; b < 2; ++b)
    for (int t = 0, sum = 0; t < 256; sum += in[b * 256 + t], ++t)
      ASSERT_EQ(regions[b * 256 + t], 10 * sum + 1) << b << "," << t;
  EXPECT_EQ(regions, fibers);
}

// A template's call inside an expression moves out too where its return type names none of its
// parameters (a Householder QR's `sqrt(block_sum<128>(red, x * x))`: it ran as fibers, 40x
// slower); one returning its T stays a call (the variable's type would be T's).
TEST(CpuInlineSync, TemplateCallsInsideExpressionsAreInlined) {
  const std::string src = R"(
template <int N> __device__ int block_sum(int* red, int v) {
  red[threadIdx.x] = v;
  __syncthreads();
  for (int off = N / 2; off > 0; off >>= 1) {
    if (threadIdx.x < off) red[threadIdx.x] += red[threadIdx.x + off];
    __syncthreads();
  }
  int r = red[0];
  __syncthreads();
  return r;
}
__global__ void k(const int* in, int* out) {
  __shared__ int red[128];
  const int v = in[blockIdx.x * blockDim.x + threadIdx.x];
  out[blockIdx.x * blockDim.x + threadIdx.x] = 3 * block_sum<128>(red, v) + v;
})";
  const std::string out = cpu::inline_sync_functions(src);
  EXPECT_EQ(lines(out), lines(src));
  EXPECT_EQ(out.find("block_sum"), std::string::npos) << out;
  EXPECT_NE(out.find("int kiln_h1_; {"), std::string::npos) << out;
  std::vector<int> in(256);
  for (int i = 0; i < 256; ++i) in[i] = (i * 29) % 31 - 12;
  auto [regions, fibers] = both_ways(src, in, 128);
  for (int b = 0; b < 2; ++b) {
    const int sum = std::accumulate(in.begin() + b * 128, in.begin() + b * 128 + 128, 0);
    for (int t = 0; t < 128; ++t) ASSERT_EQ(regions[b * 128 + t], 3 * sum + in[b * 128 + t]);
  }
  EXPECT_EQ(regions, fibers);
  const std::string dependent =
      "template <typename T> __device__ T warp_sum(T v) { return __shfl_xor_sync(~0u, v, 1) + v; "
      "}\n"
      "__global__ void k(float* x) { x[0] = 1 + warp_sum<float>(x[0]); }";
  EXPECT_EQ(cpu::inline_sync_functions(dependent), dependent);
}

// Early returns at a function body's top level (a block sum whose warps but the first leave
// before the shuffle tail) become if/else branches, and the function is inlined: the kernel ran
// as fibers, 11x slower. A return inside a loop still keeps the function a call.
TEST(CpuInlineSync, EarlyReturnsBecomeBranches) {
  const std::string src = R"(
__device__ int block_sum(int* s, int v) {
  const int t = threadIdx.x;
  s[t] = v;
  __syncthreads();
  for (int st = blockDim.x / 2; st > 32; st >>= 1) {
    if (t < st) s[t] += s[t + st];
    __syncthreads();
  }
  if (t >= 32) return -1;
  int r = s[t] + s[t + 32];
  if (r == 12345) { return 0; }
  for (int off = 16; off > 0; off >>= 1) r += __shfl_down_sync(0xffffffffu, r, off);
  return r;
}
__global__ void k(const int* in, int* out) {
  __shared__ int s[128];
  const int v = in[blockIdx.x * blockDim.x + threadIdx.x];
  out[blockIdx.x * blockDim.x + threadIdx.x] = block_sum(s, v);
})";
  const std::string out = cpu::inline_sync_functions(src);
  EXPECT_EQ(lines(out), lines(src));
  EXPECT_EQ(out.find("block_sum"), std::string::npos) << out;
  std::vector<int> in(256);
  for (int i = 0; i < 256; ++i) in[i] = (i * 13) % 29 - 7;
  auto [regions, fibers] = both_ways(src, in, 128);
  for (int b = 0; b < 2; ++b) {
    const int sum = std::accumulate(in.begin() + b * 128, in.begin() + b * 128 + 128, 0);
    ASSERT_EQ(regions[b * 128], sum) << b;
    for (int t = 32; t < 128; ++t) ASSERT_EQ(regions[b * 128 + t], -1) << b << "," << t;
  }
  EXPECT_EQ(regions, fibers);
  const std::string in_loop =
      "__device__ int f(int v) { for (int i = 0; i < 3; ++i) { if (v > i) return v; } "
      "return __shfl_xor_sync(~0u, v, 1); }\n"
      "__global__ void k(int* x) { x[threadIdx.x] = f(x[threadIdx.x]); }";
  EXPECT_EQ(cpu::inline_sync_functions(in_loop), in_loop);
}

// A synchronising call inside the body of an unbraced if, else or loop (NVIDIA's warp-aggregated
// filter: `if (keep) dst[agg_inc(n)] = v;`) moves into braces with its statement, and the kernel
// runs as regions (it ran as fibers); so does `if (x[1] > 0) x[0] = 1 + warp_sum(x[0]);`. Every
// kept value lands once, at the slots its counter gave.
TEST(CpuInlineSync, CallsInUnbracedBodiesAreInlined) {
  const std::string src = R"(
__device__ int agg_inc(int* ctr) {
  const unsigned active = __activemask();
  const int leader = __ffs(active) - 1;
  const unsigned rank = __popc(active & ((1u << (threadIdx.x % 32)) - 1));
  int base = 0;
  if (rank == 0) base = atomicAdd(ctr, __popc(active));
  base = __shfl_sync(active, base, leader);
  return base + rank;
}
__global__ void k(const int* in, int* out) {
  __shared__ int kept, dropped;
  if (threadIdx.x == 0) kept = dropped = 0;
  __syncthreads();
  const int v = in[blockIdx.x * blockDim.x + threadIdx.x];
  int* dst = out + blockIdx.x * blockDim.x;
  if (v > 0) dst[agg_inc(&kept)] = v;
  else if (v < -3) dst[blockDim.x - 1 - agg_inc(&dropped)] = v;
  __syncthreads();
  for (int i = kept + threadIdx.x; i < blockDim.x - dropped; i += blockDim.x) dst[i] = 0;
})";
  const std::string out = cpu::inline_sync_functions(src);
  EXPECT_EQ(lines(out), lines(src));
  EXPECT_EQ(out.find("agg_inc"), std::string::npos) << out;
  EXPECT_NE(out.find("if (v > 0) { int kiln_h"), std::string::npos) << out;
  EXPECT_NE(out.find("else if (v < -3) { int kiln_h"), std::string::npos) << out;
  const std::string sum = cpu::inline_sync_functions(
      "__device__ float warp_sum(float v) { return __shfl_xor_sync(~0u, v, 1) + v; }\n"
      "__global__ void k(float* x) { if (x[1] > 0) x[0] = 1 + warp_sum(x[0]); }");
  EXPECT_NE(sum.find("if (x[1] > 0) { float kiln_h1_; {"), std::string::npos) << sum;
  EXPECT_NE(sum.find("x[0] = 1 + kiln_h1_; }"), std::string::npos) << sum;
  std::vector<int> in(256);
  for (int i = 0; i < 256; ++i) in[i] = (i * 37) % 23 - 11;
  auto [regions, fibers] = both_ways(src, in, 128);
  for (int b = 0; b < 2; ++b) {
    std::vector<int> got(regions.begin() + b * 128, regions.begin() + b * 128 + 128);
    std::vector<int> want;
    for (int t = 0; t < 128; ++t)
      if (in[b * 128 + t] > 0 || in[b * 128 + t] < -3) want.push_back(in[b * 128 + t]);
    want.resize(128, 0);
    std::sort(got.begin(), got.end());
    std::sort(want.begin(), want.end());
    ASSERT_EQ(got, want) << b;
  }
}

// threadFenceReduction's shape: a template helper calling another with template arguments
// (`tile_sum<N>(...)`, which synchronises: it is inlined), whose warp-synchronous loop reads a
// constant of the helper (`const int VEC = 32;`, the same in every thread) in its header.
TEST(CpuWarpRegions, TemplateHelpersAndUniformConstantsInWarpLoops) {
  const std::string src = R"(
template <int N> __device__ void tile_sum(volatile int* s, int v, unsigned tid) {
  s[tid] = v;
  __syncwarp();
  const int VEC = 32;
  const int vid = tid & (VEC - 1);
  int beta = v;
  for (int i = VEC / 2; i > 0; i >>= 1) {
    if (vid < i) {
      beta += s[tid + i];
      s[tid] = beta;
    }
    __syncwarp();
  }
  __syncthreads();
}
template <int N, bool P> __device__ void sums(const int* in, int* out, volatile int* s) {
  unsigned tid = threadIdx.x;
  tile_sum<N>(s, in[blockIdx.x * N + tid], tid);
  if (tid % 32 == 0) out[blockIdx.x * N + tid] = s[tid];
}
__global__ void k(const int* in, int* out) {
  __shared__ int s[256 + 32];
  sums<256, true>(in, out, s);
})";
  std::vector<int> in(512);
  for (int i = 0; i < 512; ++i) in[i] = (i * 41) % 97 - 30;
  auto [regions, fibers] = both_ways(src, in, 256);
  for (int w = 0; w < 16; ++w)
    EXPECT_EQ(regions[w * 32], std::accumulate(in.begin() + 32 * w, in.begin() + 32 * w + 32, 0))
        << w;
  EXPECT_EQ(regions, fibers);
}

// The reduction of NVIDIA's samples and of every tutorial: a device function of shuffles, a
// warp's partial sums in shared memory, then the first warp alone (`if (warp == 0)`) reduces
// them. Lanes that do not take a branch must not run it, nor take part in its shuffles.
TEST(CpuWarpRegions, TwoLevelReductionWithADeviceFunction) {
  const std::string src = R"(
template <typename T>
__device__ T warp_sum(T v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}
__global__ void k(const int* in, int* out) {
  __shared__ int sums[32];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  int s = in[blockIdx.x * blockDim.x + threadIdx.x];
  s = warp_sum(s);
  if (lane == 0) sums[warp] = s;
  __syncthreads();
  if (warp == 0) {
    s = lane < blockDim.x / 32 ? sums[lane] : 0;
    s = warp_sum(s);
    if (lane == 0) out[blockIdx.x] = s;
  } else {
    out[blockIdx.x * blockDim.x + threadIdx.x] = __shfl_sync(0xffffffffu, warp, 0) * 1000 + lane;
  }
})";
  std::vector<int> in(512);
  for (int i = 0; i < 512; ++i) in[i] = (i * 37) % 101 - 50;
  auto [regions, fibers] = both_ways(src, in, 256);
  for (int b = 0; b < 2; ++b) {
    EXPECT_EQ(regions[b], std::accumulate(in.begin() + 256 * b, in.begin() + 256 * b + 256, 0));
    for (int t = 32; t < 256; ++t) ASSERT_EQ(regions[b * 256 + t], t / 32 * 1000 + t % 32) << t;
  }
  EXPECT_EQ(regions, fibers);
}

// Votes in a divergent branch count only the lanes that took it, and __activemask names the
// running lanes (not those that returned or took the other branch); __syncwarp and
// __match_any_sync after the branches meet again.
TEST(CpuWarpRegions, DivergentBranchesVotesAndReturnedLanes) {
  const std::string src = R"(
__global__ void k(const int* in, int* out) {
  const int t = threadIdx.x;
  if (t % 7 == 3) return;
  int v = in[t];
  int r = -1;
  if (v % 2 == 0) {
    unsigned m = __activemask();
    unsigned big = __ballot_sync(m, v > 10);
    r = __popc(big) * 100 + __any_sync(m, v == 4) * 10 + __all_sync(m, v < 30);
  } else {
    r = 1000 + __popc(__activemask());
  }
  __syncwarp();
  out[t] = r + 100000 * __popc(__match_any_sync(0xffffffffu, v % 3));
})";
  std::vector<int> in(64);
  for (int i = 0; i < 64; ++i) in[i] = (i * 11 + 4) % 32;
  Built b = build(src, "k");
  ASSERT_EQ(b.kernel->attributes().threads, "regions") << b.kernel->attributes().why;
  Buffer<int> din(in), out(64, -7);
  launch(*b.kernel, {1}, {64}, 0, din.p, out.p);
  const std::vector<int> got = out.host();
  for (int t = 0; t < 64; ++t) {
    const int w = t / 32;
    auto live = [&](int u) { return u % 7 != 3; };
    if (!live(t)) {
      ASSERT_EQ(got[t], -7) << t;
      continue;
    }
    int big = 0, four = 0, small = 1, odd = 0, same = 0;
    for (int u = 32 * w; u < 32 * w + 32; ++u) {
      if (!live(u)) continue;
      same += in[u] % 3 == in[t] % 3;
      if (in[u] % 2) {
        ++odd;
        continue;
      }
      big += in[u] > 10;
      four |= in[u] == 4;
      small &= in[u] < 30;
    }
    const int r = in[t] % 2 == 0 ? big * 100 + four * 10 + small : 1000 + odd;
    ASSERT_EQ(got[t], r + 100000 * same) << t;
  }
}

// A warp operation in an if's condition (`if (__any_sync(m, p))`, a coalesced group's
// `g.any(p)`): its step runs before the condition's region, for the lanes that reach the if,
// in a divergent branch too and with an else. Against the host.
TEST(CpuWarpRegions, VotesInIfHeaders) {
  const std::string src = R"(
__global__ void k(const int* in, int* out) {
  const int t = threadIdx.x;
  const int v = in[t];
  int r = 0;
  if (v % 3 == 0) {
    if (__any_sync(__activemask(), v > 20)) r = 1;
    else r = 2;
    if (__all_sync(__activemask(), v < 28) && v > 3) r += 10;
  } else if (__popc(__ballot_sync(__activemask(), v % 2 == 0)) > 5) {
    const unsigned m = __activemask();
    r = 100 + __shfl_sync(m, v, __ffs(m) - 1);  // (the branch's first lane)
  }
  out[t] = r;
})";
  std::vector<int> in(64);
  for (int i = 0; i < 64; ++i) in[i] = (i * 13 + 5) % 31;
  Built b = build(src, "k");
  ASSERT_EQ(b.kernel->attributes().threads, "regions") << b.kernel->attributes().why;
  Buffer<int> din(in), out(64, -1);
  launch(*b.kernel, {1}, {64}, 0, din.p, out.p);
  const std::vector<int> got = out.host();
  for (int t = 0; t < 64; ++t) {
    const int w = t / 32;
    bool any = false, all = true;
    int even = 0, first = -1;
    for (int u = 32 * w; u < 32 * w + 32; ++u) {
      if (in[u] % 3 == 0) {
        any |= in[u] > 20;
        all &= in[u] < 28;
      } else {
        even += in[u] % 2 == 0;
        if (first < 0) first = u;
      }
    }
    int r = 0;
    if (in[t] % 3 == 0)
      r = (any ? 1 : 2) + (all && in[t] > 3 ? 10 : 0);
    else if (even > 5)
      r = 100 + in[first];
    ASSERT_EQ(got[t], r) << t;
  }
}

// A loop of shuffles whose header holds a warp operation is declined (it runs as fibers), as is
// a shuffle inside another's operands; an if's header is taken (VotesInIfHeaders).
TEST(CpuWarpRegions, DeclinesWhatLockstepCannotTake) {
  auto why = [](const std::string& body) {
    std::string w;
    return cpu::form_regions("__global__ void k(int* x, int n) {\n" + body + "\n}", &w) ? "" : w;
  };
  EXPECT_NE(why("int m = x[threadIdx.x]; for (int i = 0; i < __shfl_sync(~0u, m, 0); ++i) m += "
                "__shfl_xor_sync(~0u, m, 1);")
                .find("a warp operation in the header of a loop"),
            std::string::npos);
  EXPECT_NE(why("x[0] = __shfl_sync(~0u, __shfl_sync(~0u, n, 1), 2);").find("inside another"),
            std::string::npos);
  EXPECT_EQ(why("if (__any_sync(~0u, n > 0)) x[0] = 1;"), "");  // (VotesInIfHeaders)
  // (after && or ||, or inside ?:, only some lanes would vote: the step before the header would
  // take them all, a wrong answer; review 8)
  EXPECT_NE(why("if (n > 5 && __any_sync(__activemask(), n > 9)) x[0] = 1;").find("after &&"),
            std::string::npos);
  EXPECT_NE(why("if (n > 5 || __all_sync(__activemask(), n > 9)) x[0] = 1;").find("after ||"),
            std::string::npos);
  EXPECT_NE(why("if (n > 5 ? __any_sync(~0u, n > 9) : 0) x[0] = 1;").find("after ?"),
            std::string::npos);
  EXPECT_EQ(
      why("int v = n; for (int o = 1; o < 32; o *= 2) v += __shfl_up_sync(~0u, v, o); x[0] = v;"),
      "");
}

// A warp (or a group of V lanes) per row, rows taken in a grid-stride loop whose header reads
// the thread's own values (CSR-vector SpMV, llm.c's softmax): each thread stays in the loop
// until its own condition fails, and a width-V shuffle joins the lanes still in it. With V = 4
// the groups of a warp leave the loop at different rows. Against the host and fibers.
TEST(CpuWarpRegions, LoopsWhoseHeadersDifferBetweenThreads) {
  for (const int V : {4, 32}) {
    const std::string src = "#define V " + std::to_string(V) + R"(
__global__ void k(const int* in, int* out) {
  const int lane = threadIdx.x & (V - 1);
  const int vec = (blockIdx.x * blockDim.x + threadIdx.x) / V;
  const int vecs = gridDim.x * blockDim.x / V;
  for (int row = vec; row < 100; row += vecs) {
    const int len = row * 7 % 41;
    int sum = 0;
    for (int j = lane; j < len; j += V) sum += in[(row * 5 + j) % 256];
    for (int o = V / 2; o > 0; o /= 2) sum += __shfl_down_sync(0xffffffffu, sum, o, V);
    if (lane == 0) out[row] = sum;
  }
})";
    std::vector<int> in(256);
    for (int i = 0; i < 256; ++i) in[i] = (i * 29) % 83 - 40;
    auto [regions, fibers] = both_ways(src, in, 64);
    for (int row = 0; row < 256; ++row) {
      int sum = row < 100 ? 0 : -7;
      for (int j = 0; row < 100 && j < row * 7 % 41; ++j) sum += in[(row * 5 + j) % 256];
      ASSERT_EQ(regions[row], sum) << "V " << V << " row " << row;
    }
    EXPECT_EQ(regions, fibers);
  }
  // Each lane its own trip count (a header that calls a function, in the for loop): a vote
  // counts the lanes still in the loop (its mask names them, as CUDA requires); lanes that
  // return inside the loop leave it. Before the loops, a ballot over __activemask().
  const std::string votes = R"(
__device__ int trips(const int* in, int t) { return in[t] % 6; }
__global__ void k(const int* in, int* out) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x % 32;
  const int* warp = in + (t - lane);
  int acc = __popc(__ballot_sync(__activemask(), in[t] > 5)), i = 0;
  while (i < in[t]) {
    unsigned in_loop = 0;
    for (int u = 0; u < 32; ++u) in_loop |= unsigned(i < warp[u]) << u;
    acc += 10 * __popc(__ballot_sync(in_loop, 1));
    ++i;
  }
  for (int j = 0; j < trips(in, t); ++j) {
    unsigned in_loop = 0;
    for (int u = 0; u < 32; ++u) in_loop |= unsigned(j < warp[u] % 6) << u;
    acc += 1000 * __popc(__ballot_sync(in_loop, lane & 1));
    if (j + 1 == trips(in, t) && lane % 4 == 0) return;
  }
  out[t] = acc;
})";
  std::vector<int> in(128);
  for (int i = 0; i < 128; ++i) in[i] = (i * 13) % 11;
  auto [regions, fibers] = both_ways(votes, in, 64);
  for (int t = 0; t < 128; ++t) {
    const int* warp = &in[t - t % 32];
    int acc = int(std::count_if(warp, warp + 32, [](int m) { return m > 5; }));
    for (int i = 0; i < in[t]; ++i)  // lanes with warp[u] > i are in the while loop
      acc += 10 * int(std::count_if(warp, warp + 32, [&](int m) { return i < m; }));
    for (int j = 0; j < in[t] % 6; ++j)
      for (int u = 1; u < 32; u += 2) acc += 1000 * (j < warp[u] % 6);
    const bool returned = in[t] % 6 > 0 && t % 4 == 0;
    ASSERT_EQ(regions[t], returned ? -7 : acc) << "thread " << t;
  }
  EXPECT_EQ(regions, fibers);
}

// A loop with warp operations and no __syncthreads that each warp leaves (`break`) or skips the
// rest of (`continue`) on its own: valid CUDA (only a warp's lanes must agree), which the
// block's loop flag cannot run (the whole block left the loop at the first warp's break). It is
// predicated: a thread that leaves drops out of the loop's live set (and of the branches' it is
// in), for the rest of the iteration (continue) or the loop (break); a break of a loop or switch
// inside a region stays that loop's. Against the host, with fibers' trip counts.
TEST(CpuWarpRegions, LoopsLeftWarpByWarp) {
  const std::string brk = R"(
__global__ void k(const int* in, int* out) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  int iters = 0;
  while (true) {
    const int v = __shfl_sync(0xffffffffu, lane, 0);
    if (iters >= in[warp]) break;
    iters += 1 + v;
  }
  out[threadIdx.x] = iters;
})";
  const std::string cont = R"(
__global__ void k(const int* in, int* out) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  int acc = 0;
  for (int i = 0; i < 4; ++i) {
    if (i == in[warp]) continue;
    acc += __shfl_sync(0xffffffffu, lane, 0) + 1;
  }
  out[threadIdx.x] = acc;
})";
  EXPECT_TRUE(cpu::form_regions(brk));
  EXPECT_TRUE(cpu::form_regions(cont));
  EXPECT_TRUE(cpu::form_regions(
      "__global__ void k(int* x, int n) {\n int s = n; for (int i = 0; i < n; ++i) { s += "
      "__shfl_xor_sync(~0u, s, 1); for (int j = 0; j < 4; ++j) if (j == 2) break; switch (s) "
      "{ case 1: break; default: break; } }\n x[threadIdx.x] = s;\n}"));
  for (int order = 0; order < 3; ++order) {
    const bool is_break = order < 2;
    std::vector<int> in(256, 0), expected(256);
    for (int w = 0; w < 8; ++w) {
      in[w] = order == 0 ? w + 1 : order == 1 ? 8 - w : w % 5;
      for (int l = 0; l < 32; ++l) expected[w * 32 + l] = is_break ? in[w] : in[w] < 4 ? 3 : 4;
    }
    Built b = build(is_break ? brk : cont, "k");
    EXPECT_EQ(b.kernel->attributes().threads, "regions") << b.kernel->attributes().why;
    Buffer<int> din(in), out(256, -1);
    launch(*b.kernel, {1}, {256}, 0, din.p, out.p);
    EXPECT_EQ(out.host(), expected) << order;
  }
}

// Lanes leaving a warp loop one by one, inside branches: a persistent warp pulling rows from a
// queue until it is empty (`if (row >= rows) break;`), and lanes that `continue` or `break` in a
// nested if, after which __activemask and a ballot leave them out. Against the host.
TEST(CpuWarpRegions, LanesLeaveWarpLoopsInBranches) {
  const std::string queue = R"(
__global__ void k(const int* in, int* out, int* next, int rows) {
  const int lane = threadIdx.x % 32;
  while (true) {
    int row = 0;
    if (lane == 0) row = atomicAdd(next, 1);
    row = __shfl_sync(0xffffffffu, row, 0);
    if (row >= rows) break;
    int v = in[row * 32 + lane];
    for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
    if (lane == 0) out[row] = v;
  }
})";
  Built q = build(queue, "k");
  ASSERT_EQ(q.kernel->attributes().threads, "regions") << q.kernel->attributes().why;
  const int rows = 45;
  std::vector<int> in(rows * 32);
  for (int i = 0; i < rows * 32; ++i) in[i] = (i * 7) % 23 - 11;
  Buffer<int> din(in), out(rows, -1), next(1, 0);
  launch(*q.kernel, {3}, {64}, 0, din.p, out.p, next.p, rows);
  for (int r = 0; r < rows; ++r)
    ASSERT_EQ(out.host()[r], std::accumulate(in.begin() + r * 32, in.begin() + r * 32 + 32, 0))
        << r;

  const std::string lanes = R"(
__global__ void k(const int* in, int* out) {
  const int t = threadIdx.x;
  int acc = 0;
  for (int i = 0; i < 6; ++i) {
    const int v = in[i * 64 + t];
    if (v % 3 == 0) {
      if (v % 2 == 0) continue;
      acc += 1000 * __popc(__activemask());  // (the lanes that did not continue)
    } else if (v > 90) {
      acc += 100000;
      break;
    }
    acc += __popc(__activemask()) + 10 * __popc(__ballot_sync(__activemask(), v > 50));
  }
  out[t] = acc;
})";
  Built b = build(lanes, "k");
  ASSERT_EQ(b.kernel->attributes().threads, "regions") << b.kernel->attributes().why;
  std::vector<int> x(6 * 64);
  for (int i = 0; i < 6 * 64; ++i) x[i] = (i * 37 + 11) % 97;
  Buffer<int> dx(x), dout(64, -1);
  launch(*b.kernel, {1}, {64}, 0, dx.p, dout.p);
  std::vector<bool> left(64, false);
  std::vector<int> acc(64, 0);
  for (int i = 0; i < 6; ++i) {
    std::vector<bool> reach(64, false), odd(64, false);
    for (int t = 0; t < 64; ++t)
      odd[t] = !left[t] && x[i * 64 + t] % 3 == 0 && x[i * 64 + t] % 2 == 1;
    for (int t = 0; t < 64; ++t) {
      if (left[t]) continue;
      const int v = x[i * 64 + t];
      if (v % 3 == 0) {
        if (v % 2 == 0) continue;
        acc[t] +=
            1000 * int(std::count(odd.begin() + t / 32 * 32, odd.begin() + t / 32 * 32 + 32, true));
      } else if (v > 90) {
        acc[t] += 100000;
        left[t] = true;
        continue;
      }
      reach[t] = true;
    }
    for (int t = 0; t < 64; ++t) {
      if (!reach[t]) continue;
      int active = 0, big = 0;
      for (int u = t / 32 * 32; u < t / 32 * 32 + 32; ++u)
        if (reach[u]) ++active, big += x[i * 64 + u] > 50;
      acc[t] += active + 10 * big;
    }
  }
  for (int t = 0; t < 64; ++t) ASSERT_EQ(dout.host()[t], acc[t]) << t;
}

// Lambdas in a kernel with barriers: their own `return`s stay theirs, one declared at barrier
// level and called after a barrier is left between the regions (it names no variable of the
// kernel's but its shared arrays), one that reads a variable of each thread by reference is
// declared again in each later region, and one that copies it cannot be: that kernel runs as
// fibers. All against the host.
TEST(CpuRegions, LambdasBesideBarriers) {
  const std::string src = R"(
__global__ void k(const int* in, int* out, int n) {
  __shared__ int tile[66];
  auto at = [&](int i) { if (i < 0 || i >= n) return 0; return in[i]; };
  const auto clamp = [](int v, int hi) { return v > hi ? hi : v; };
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x + 1] = at(i);
  if (threadIdx.x == 0) tile[0] = at(i - 1);
  if (threadIdx.x == blockDim.x - 1) tile[blockDim.x + 1] = at(i + 1);
  __syncthreads();
  if (i >= n) return;
  auto sum = [&](int j) { int s = 0; for (int d = 0; d < 3; ++d) s += tile[j + d]; return s; };
  out[i] = clamp(sum(threadIdx.x), 40);
})";
  const int n = 200;
  std::vector<int> in(n);
  for (int i = 0; i < n; ++i) in[i] = (i * 37) % 23;
  std::vector<int> want(n);
  for (int i = 0; i < n; ++i) {
    const int s = (i > 0 ? in[i - 1] : 0) + in[i] + (i + 1 < n ? in[i + 1] : 0);
    want[i] = s > 40 ? 40 : s;
  }
  for (const std::string captures : {"", "&", "&i", "=", "i"}) {
    // A lambda that reads i, a variable of each thread, declared before the barrier and called
    // after it (it adds 0 when it reads the running thread's i).
    std::string source = src;
    if (!captures.empty()) {
      source.insert(source.find("  __syncthreads();"),
                    "  auto mine = [" + captures + "]() { return i; };\n");
      source.insert(source.rfind('}'), "  out[i] += mine() - i;\n");
    }
    const bool copies = captures == "=" || captures == "i";
    Built b = build(source, "k");
    EXPECT_EQ(b.kernel->attributes().threads, copies ? "fibers" : "regions")
        << captures << ": " << b.kernel->attributes().why;
    Buffer<int> din(in), out(n, -1);
    launch(*b.kernel, {(n + 63) / 64}, {64}, 0, din.p, out.p, n);
    EXPECT_EQ(out.host(), want);
  }
}

// cuda-samples' shfl_intimage shape: a lambda capturing a thread's values by reference,
// declared before a barrier and called after it, and a 16-byte struct shuffled through a tile
// (its value waits in the thread's kiln_cpu::Wide). Against the host and against fibers.
TEST(CpuWarpRegions, LambdasAcrossBarriersAndWideShuffles) {
  const std::string src = R"(
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
struct quad { int a, b, c, d; };
__global__ void k(const int* in, int* out) {
  __shared__ int s[64];
  auto tile = cg::tiled_partition<32>(cg::this_thread_block());
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  quad q = {in[i], 2 * in[i], 3 * in[i], int(threadIdx.x)};
  int w = in[i] % 5;
  auto field = [&](int f) { return f == 0 ? q.a : f == 1 ? q.b : f == 2 ? q.c : q.d + w; };
  s[threadIdx.x] = field(0);
  __syncthreads();
  w = s[(threadIdx.x + 3) % blockDim.x];
  q = tile.shfl_xor(q, 5);
  out[i] = field(threadIdx.x % 4);
})";
  std::vector<int> in(256);
  for (int i = 0; i < 256; ++i) in[i] = (i * 29) % 41 - 7;
  auto [regions, fibers] = both_ways(src, in, 64);
  for (int i = 0; i < 256; ++i) {
    const int t = i % 64, b = i - t, src_t = t ^ 5, v = in[b + src_t];
    const int want[] = {v, 2 * v, 3 * v, src_t + in[b + (t + 3) % 64]};
    ASSERT_EQ(regions[i], want[t % 4]) << i;
  }
  EXPECT_EQ(regions, fibers);
}

// Legacy warp-synchronous code (`volatile` shared memory, no __syncwarp: Harris's warpReduce, the
// old warp scans) relies on a warp's lanes running each statement together. Its stores split
// around __syncwarp() (lockstep_stores.h), the kernels run as regions; without regions, its
// volatile pointers become kiln_cpu::lockstep_ptr, whose stores wait for the warp's other lanes,
// and the kernels run as fibers. Run thread by thread, the reduction summed a fraction and the
// scan read its neighbours' new values. Against the host, both ways.
TEST(CpuWarpRegions, LegacyWarpSynchronousVolatileCodeRunsInLockstep) {
  const std::string src = R"(
__device__ void warp_reduce(volatile int* s, unsigned t) {
  s[t] += s[t + 32];
  s[t] += s[t + 16];
  s[t] += s[t + 8];
  int sum = s[t];
  s[t] = sum = sum + s[t + 4];
  s[t] = sum = sum + s[t + 2];
  s[t] = sum = sum + s[t + 1];
}
__global__ void k(const int* in, int* out) {
  __shared__ int s[128];
  const unsigned t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  s[t] = in[i];
  __syncthreads();
  if (t < 64) s[t] += s[t + 64];
  __syncthreads();
  if (t < 32) warp_reduce(s, t);
  __syncthreads();
  // then each warp's inclusive scan, which reads lower lanes
  volatile int* w = s + (t / 32) * 32;
  const unsigned lane = t % 32;
  int total = s[0];
  __syncthreads();
  w[lane] = in[i];
  for (unsigned d = 1; d < 32; d *= 2)
    if (lane >= d) w[lane] += w[lane - d];
  out[i] = w[lane] + 1000 * total;
})";
  // A volatile shared array, the same way (`__shared__ volatile int s[128]`).
  const std::string array = R"(
__global__ void k(const int* in, int* out) {
  __shared__ volatile int s[128];
  const unsigned t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  s[t] = in[i];
  __syncthreads();
  if (t < 64) s[t] += s[t + 64];
  __syncthreads();
  if (t < 32) {
    s[t] += s[t + 32]; s[t] += s[t + 16]; s[t] += s[t + 8];
    s[t] += s[t + 4]; s[t] += s[t + 2]; s[t] += s[t + 1];
  }
  __syncthreads();
  out[i] = 1000 * ((int*)s)[0];
})";
  {
    std::vector<int> in(256);
    for (int i = 0; i < 256; ++i) in[i] = (i * 7) % 19 - 4;
    auto [regions, fibers] = both_ways(array, in, 128);
    for (int i = 0; i < 256; ++i) {
      int total = 0;
      for (int j = i / 128 * 128; j < i / 128 * 128 + 128; ++j) total += in[j];
      ASSERT_EQ(regions[i], 1000 * total) << i;
    }
    EXPECT_EQ(regions, fibers);
  }
  // Volatile memory read across a barrier is no warp-synchronous code: the kernel runs as
  // regions, its array as declared (the finder runs before the region rewrite, whose thread
  // loops drop the barrier: run after it, it took the array for one).
  {
    Built r = build(
        "__global__ void k(const int* in, int* out) {\n  static __shared__ volatile int "
        "s[64];\n  s[threadIdx.x] = in[threadIdx.x];\n  __syncthreads();\n  "
        "out[threadIdx.x] = s[63 - threadIdx.x];\n}",
        "k");
    EXPECT_EQ(r.kernel->attributes().threads, "regions") << r.kernel->attributes().why;
    std::vector<int> in(64);
    for (int i = 0; i < 64; ++i) in[i] = i * i;
    Buffer<int> din(in), out(64, -1);
    launch(*r.kernel, {1}, {64}, 0, din.p, out.p);
    for (int t = 0; t < 64; ++t) ASSERT_EQ(out.host()[t], in[63 - t]) << t;
  }
  // A use a lockstep pointer lacks (`p++`): the source as written, and the reason says so.
  {
    Built c = build(
        "__global__ void k(int* x) {\n  __shared__ int s[64];\n  volatile int* p = s;\n"
        "  p[threadIdx.x] = 1;\n  x[threadIdx.x] = p[threadIdx.x ^ 1];\n  p++;\n}",
        "k");
    EXPECT_EQ(c.kernel->attributes().threads, "fibers");
    EXPECT_EQ(c.kernel->attributes().why.find("the lockstep-pointer rewrite did not compile: "), 0u)
        << c.kernel->attributes().why;
  }
  {  // (the fibers' reason names the pointer)
    Built b = build(src, "k", {}, without_regions());
    EXPECT_NE(b.kernel->attributes().why.find("warp-synchronous code through volatile 's'"),
              std::string::npos)
        << b.kernel->attributes().why;
  }
  std::vector<int> in(256);
  for (int i = 0; i < 256; ++i) in[i] = (i * 13) % 29 - 9;
  auto [regions, fibers] = both_ways(src, in, 128);
  for (int i = 0; i < 256; ++i) {
    const int block = i / 128 * 128;
    int total = 0, scan = 0;
    for (int j = block; j < block + 128; ++j) total += in[j];
    for (int j = i - i % 32; j <= i; ++j) scan += in[j];
    ASSERT_EQ(regions[i], scan + 1000 * total) << i;
  }
  EXPECT_EQ(regions, fibers);
}

// __reduce_*_sync (sm_80) as warp steps: int values compare signed, unsigned ones not; the sum
// wraps; in a branch, over __activemask() (the lanes that took it). Against the host and fibers.
TEST(CpuWarpRegions, ReduceSyncOperations) {
  const std::string src = R"(
__global__ void k(const int* in, int* out) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  const int v = in[t];
  const unsigned u = unsigned(v);
  int r = __reduce_add_sync(0xffffffffu, v) + 3 * __reduce_min_sync(0xffffffffu, v);
  r += 5 * __reduce_max_sync(0xffffffffu, v);
  r += 7 * int(__reduce_max_sync(0xffffffffu, u) & 0xff);
  r += 11 * int(__reduce_xor_sync(0xffffffffu, u) & 0xff);
  r += 17 * (__reduce_or_sync(0xffffffffu, v) > 0);  // (unsigned: no sign to compare)
  if (v > 0) r += 13 * __reduce_add_sync(__activemask(), v);
  out[t] = r;
})";
  std::vector<int> in(128);
  for (int i = 0; i < 128; ++i) in[i] = (i * 37) % 41 - 20;
  auto [regions, fibers] = both_ways(src, in, 64);
  for (int t = 0; t < 128; ++t) {
    const int* w = &in[t - t % 32];
    int sum = 0, mn = w[0], mx = w[0], positive = 0;
    unsigned umax = 0, x = 0;
    for (int l = 0; l < 32; ++l) {
      sum += w[l], mn = std::min(mn, w[l]), mx = std::max(mx, w[l]);
      umax = std::max(umax, unsigned(w[l])), x ^= unsigned(w[l]);
      positive += w[l] > 0 ? w[l] : 0;
    }
    unsigned any_bits = 0;
    for (int l = 0; l < 32; ++l) any_bits |= unsigned(w[l]);
    int r = sum + 3 * mn + 5 * mx + 7 * int(umax & 0xff) + 11 * int(x & 0xff) + 17 * (any_bits > 0);
    if (in[t] > 0) r += 13 * positive;
    ASSERT_EQ(regions[t], r) << t;
  }
  EXPECT_EQ(regions, fibers);
}

// llm.c's style: a warp per row through cooperative groups, `cg::reduce(warp, s,
// cg::plus<float>{})` with the op made by braces: lowered to shuffles, run as regions.
TEST(CpuWarpRegions, GroupReduceWithABracedOp) {
  const std::string src = R"(
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
__global__ void k(const int* in, int* out) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  const int row = blockIdx.x * warp.meta_group_size() + warp.meta_group_rank();
  int s = in[row * 32 + warp.thread_rank()];
  s = cg::reduce(warp, s, cg::plus<int>{});
  const int m = cg::reduce(warp, s + int(warp.thread_rank()), cg::greater<int>{});
  out[row * 32 + warp.thread_rank()] = s * 100 + m;
})";
  std::vector<int> in(256);
  for (int i = 0; i < 256; ++i) in[i] = (i * 17) % 23 - 11;
  auto [regions, fibers] = both_ways(src, in, 64);
  for (int r = 0; r < 8; ++r) {
    const int sum = std::accumulate(in.begin() + 32 * r, in.begin() + 32 * r + 32, 0);
    for (int l = 0; l < 32; ++l) ASSERT_EQ(regions[32 * r + l], sum * 100 + sum + 31) << r;
  }
  EXPECT_EQ(regions, fibers);
}

// A warp reduction through volatile shared memory with `__syncwarp()` after each step (the
// samples' warpReduce as CUDA 9 fixed it): each step reads a higher lane's element in the
// statement that lanes store it. A GPU's warp in step reads before it stores; as regions the
// lanes run in lane order, and as fibers the last lane to reach a __syncwarp lets the lower ones
// go first, so both give the warp's sum. Against the host.
TEST(CpuWarpRegions, SyncwarpAfterEachVolatileStepGivesTheSum) {
  // (twice: as fibers, the second time a lane other than 31 reaches the first __syncwarp last)
  std::string src = R"(
__global__ void k(const int* in, int* out) {
  __shared__ volatile int s[64];
  const unsigned t = threadIdx.x, i = blockIdx.x * 64 + t;
  int sum = in[i];
  STEPS
  if (t == 0) out[2 * blockIdx.x] = s[0];
  __syncthreads();
  sum = t < 40 ? in[i] * 2 : 0;
  STEPS
  if (t == 0) out[2 * blockIdx.x + 1] = s[0];
})";
  const std::string steps = R"(s[t] = sum;
  __syncthreads();
  if (t < 32) {
    s[t] = sum = sum + s[t + 32]; __syncwarp();
    s[t] = sum = sum + s[t + 16]; __syncwarp();
    s[t] = sum = sum + s[t + 8]; __syncwarp();
    s[t] = sum = sum + s[t + 4]; __syncwarp();
    s[t] = sum = sum + s[t + 2]; __syncwarp();
    s[t] = sum = sum + s[t + 1]; __syncwarp();
  })";
  for (std::size_t at; (at = src.find("STEPS")) != std::string::npos;) src.replace(at, 5, steps);
  std::vector<int> in(256);
  for (int i = 0; i < 256; ++i) in[i] = (i * 29) % 31 - 12;
  auto [regions, fibers] = both_ways(src, in, 64);
  for (int b = 0; b < 4; ++b) {
    const int sum = std::accumulate(in.begin() + 64 * b, in.begin() + 64 * b + 64, 0);
    const int first40 = std::accumulate(in.begin() + 64 * b, in.begin() + 64 * b + 40, 0);
    EXPECT_EQ(regions[2 * b], sum) << b;
    EXPECT_EQ(fibers[2 * b], sum) << b;
    EXPECT_EQ(regions[2 * b + 1], 2 * first40) << b;
    EXPECT_EQ(fibers[2 * b + 1], 2 * first40) << b;
  }
  // The steps in a device function called twice (fibers, where that device function is not
  // inlined): the second time lane 28 reaches the first __syncwarp last, and the lanes above it
  // must not run on first (the Threadfence Reduction sample's reduceBlock, in check mode).
  const std::string called = R"(
__device__ void steps(volatile float* s, float sum, unsigned t) {
  s[t] = sum;
  __syncthreads();
  if (t < 64) s[t] = sum = sum + s[t + 64]; __syncthreads();
  if (t < 32) {
    s[t] = sum = sum + s[t + 32]; __syncwarp();
    s[t] = sum = sum + s[t + 16]; __syncwarp();
    s[t] = sum = sum + s[t + 8]; __syncwarp();
    s[t] = sum = sum + s[t + 4]; __syncwarp();
    s[t] = sum = sum + s[t + 2]; __syncwarp();
    s[t] = sum = sum + s[t + 1]; __syncwarp();
  }
}
__global__ void k(float* out) {
  __shared__ float s[128];
  steps(s, 1.0f, threadIdx.x);
  if (threadIdx.x == 0) out[0] = s[0];
  __syncthreads();
  steps(s, threadIdx.x < 64 ? 1.0f : 0.0f, threadIdx.x);
  if (threadIdx.x == 0) out[1] = s[0];
})";
  Built f = build(called, "k", {}, without_regions());
  EXPECT_EQ(f.kernel->attributes().threads, "fibers");
  Buffer<float> sums(2, -1.0f);
  launch(*f.kernel, {1}, {128}, 0, sums.p);
  EXPECT_EQ(sums.host(), (std::vector<float>{128.0f, 64.0f}));
}

// Volatile pointers that carry flags between blocks (a chained scan's look-back: thread 0 of
// each tile publishes its sum and spins on its predecessor's flag), their subscripts the same in
// every thread of the block, are no warp-synchronous code: the kernel runs as regions. Tiles
// are taken in launch order by an atomic ticket, so a predecessor always runs or has run.
TEST(CpuWarpRegions, VolatileFlagsBetweenBlocksRunAsRegions) {
  const std::string src = R"(
__global__ void k(const int* in, int* out, unsigned* ticket, int* flags_p, int* sums_p) {
  volatile int* flags = flags_p;
  volatile int* sums = sums_p;
  __shared__ int s[64];
  __shared__ int tile_s;
  if (threadIdx.x == 0) tile_s = atomicAdd(ticket, 1u);
  __syncthreads();
  const int tile = tile_s;
  s[threadIdx.x] = in[tile * 64 + threadIdx.x];
  __syncthreads();
  for (int half = 32; half > 0; half /= 2) {
    if (threadIdx.x < half) s[threadIdx.x] += s[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    int before = 0;
    if (tile > 0) {
      while (flags[tile - 1] == 0) {}
      __threadfence();
      before = sums[tile - 1];
    }
    sums[tile] = before + s[0];
    __threadfence();
    flags[tile] = 1;
    out[tile] = before + s[0];
  }
})";
  const int tiles = 96;
  std::vector<int> in(64 * tiles);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = int(i * 7 % 23) - 9;
  Built b = build(src, "k");
  EXPECT_EQ(b.kernel->attributes().threads, "regions") << b.kernel->attributes().why;
  Buffer<int> din(in), out(tiles, -1), flags(tiles, 0), sums(tiles, 0);
  Buffer<unsigned> ticket(1, 0u);
  launch(*b.kernel, {unsigned(tiles)}, {64}, 0, din.p, out.p, ticket.p, flags.p, sums.p);
  const std::vector<int> got = out.host();
  int prefix = 0;
  for (int t = 0; t < tiles; ++t) {
    prefix = std::accumulate(in.begin() + 64 * t, in.begin() + 64 * t + 64, prefix);
    ASSERT_EQ(got[t], prefix) << t;
  }
}

// `peers &= bits;` at barrier level (a radix sort's peers by ballot, one bit at a time) is an
// assignment: the rewrite took `peers &` for a reference's declaration and declined the kernel
// (fibers). Against the host: each lane counts the lanes whose low 4 bits equal its own.
TEST(CpuWarpRegions, AndAssignIsNoReference) {
  const std::string src = R"(
__global__ void k(const unsigned* in, unsigned* out) {
  const unsigned digit = in[threadIdx.x];
  unsigned peers = 0xffffffffu;
  for (int b = 0; b < 4; ++b) {
    const unsigned bit = (digit >> b) & 1u;
    unsigned bal = __ballot_sync(0xffffffffu, bit);
    peers &= bit ? bal : ~bal;
  }
  out[threadIdx.x] = __popc(peers);
})";
  Built b = build(src, "k");
  EXPECT_EQ(b.kernel->attributes().threads, "regions") << b.kernel->attributes().why;
  std::vector<unsigned> in(64);
  for (unsigned i = 0; i < 64; ++i) in[i] = (i * 7 + i / 5) % 23;
  Buffer<unsigned> din(in), out(64, 0u);
  launch(*b.kernel, {1}, {64}, 0, din.p, out.p);
  for (unsigned t = 0; t < 64; ++t) {
    unsigned same = 0;
    for (unsigned l = t / 32 * 32; l < t / 32 * 32 + 32; ++l)
      same += (in[l] & 15u) == (in[t] & 15u);
    ASSERT_EQ(out.host()[t], same) << t;
  }
}

// A warp-synchronous kernel beside one the region rewrite takes, built together (a cuda.module's
// kernels share a build): the rewrite leaves the fibers kernel as written. It rewrote every
// body, so the fibers kernel's threads each ran the block's thread loops over a private copy of
// its shared array (the scan of ones gave 1 2 4 ... and garbage).
TEST(CpuWarpRegions, FibersKernelBesideRegionsKernelKeepsItsBody) {
  const std::string src = R"(
__device__ int warp_scan(volatile int* s, int idx) {
  const int lane = idx & 31;
  int d = 1;
  while (d < 32) {  // (a while loop: not split, fibers)
    if (lane >= d) s[idx] = s[idx - d] + s[idx];
    d *= 2;
  }
  return s[idx];
}
__global__ void scan(const int* in, int* out) {
  __shared__ int sh[64];
  sh[threadIdx.x] = in[threadIdx.x];
  int v = warp_scan(sh, threadIdx.x);
  __syncthreads();
  out[threadIdx.x] = v;
}
__global__ void reverse(int* p) {
  __shared__ int t[64];
  t[threadIdx.x] = p[threadIdx.x];
  __syncthreads();
  p[threadIdx.x] = t[63 - threadIdx.x];
})";
  CompileRequest req;
  req.source = src;
  req.filename = "test_kernel.cu";
  req.name_expressions = {"scan", "reverse"};
  const CompileResult result = cpu().compiler->compile(req);
  std::unique_ptr<Module> module = cpu().backend->load(result);
  std::unique_ptr<Program> scan = module->kernel(result.lowered_names[0]);
  std::unique_ptr<Program> reverse = module->kernel(result.lowered_names[1]);
  EXPECT_EQ(scan->attributes().threads, "fibers") << scan->attributes().why;
  EXPECT_EQ(reverse->attributes().threads, "regions") << reverse->attributes().why;
  std::vector<int> in(64);
  for (int i = 0; i < 64; ++i) in[i] = i % 5 + 1;
  Buffer<int> din(in), out(64, 0), rev(in);
  launch(*scan, {1}, {64}, 0, din.p, out.p);
  launch(*reverse, {1}, {64}, 0, rev.p);
  for (int i = 0; i < 64; ++i) {
    int sum = 0;
    for (int j = i - i % 32; j <= i; ++j) sum += in[j];
    ASSERT_EQ(out.host()[i], sum) << i;
    ASSERT_EQ(rev.host()[i], in[63 - i]) << i;
  }
}

// A kernel file whose block reduction lives in a quoted header (as CUDA samples keep theirs):
// the header is spliced in, so the kernel runs as regions, not fibers; the compiler's errors
// still name the kernel file's own lines.
TEST(CpuRegions, SynchronisingHelpersInAQuotedHeader) {
  test::TempDir tmp;
  const auto write = [&](const char* name, const std::string& text) {
    std::ofstream(tmp.path() / name) << text;
  };
  write("reduce.cuh", R"(#pragma once
__device__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  return v;
}
__device__ float block_sum(float v) {
  __shared__ float partial[32];
  v = warp_sum(v);
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = v;
  __syncthreads();
  v = threadIdx.x < blockDim.x / 32 ? partial[threadIdx.x % 32] : 0.0f;
  if (threadIdx.x < 32) v = warp_sum(v);
  return v;
}
)");
  const std::string kernel = R"(#include "reduce.cuh"
#include "reduce.cuh"
__global__ void total(const float* x, float* out) {
  float v = block_sum(x[blockIdx.x * blockDim.x + threadIdx.x]);
  if (threadIdx.x == 0) out[blockIdx.x] = v;
}
)";
  CompileRequest req;
  req.source = kernel;
  req.filename = (tmp.path() / "total.cu").string();
  req.name_expressions = {"total"};
  const CompileResult result = cpu().compiler->compile(req);
  std::unique_ptr<Module> module = cpu().backend->load(result);
  std::unique_ptr<Program> total = module->kernel(result.lowered_names[0]);
  EXPECT_EQ(total->attributes().threads, "regions") << total->attributes().why;
  std::vector<float> in(3 * 256);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = float(i % 7);
  Buffer<float> din(in), out(3, 0.0f);
  launch(*total, {3}, {256}, 0, din.p, out.p);
  for (int b = 0; b < 3; ++b) {
    float want = 0;
    for (int i = 0; i < 256; ++i) want += in[b * 256 + i];
    EXPECT_EQ(out.host()[b], want) << b;
  }
  // A header whose splice does not compile (it asks to be included) goes as written; one that
  // #defines a barrier macro is not spliced (its uses would hide their barriers from the plan):
  // both right, as fibers.
  for (const char* odd : {"#if __INCLUDE_LEVEL__ == 0\n#error include me\n#endif\n",
                          "#define SYNC() __syncthreads()\n"}) {
    write("odd.cuh", std::string(odd) +
                         "__device__ float twice_sum(float v, float* s) {\n  s[threadIdx.x] = v;\n"
                         "  __syncthreads();\n  return s[0] + s[1];\n}\n");
    CompileRequest odd_req = req;
    odd_req.source =
        "#include \"odd.cuh\"\n__global__ void pair(float* out) {\n"
        "  __shared__ float s[2];\n  out[threadIdx.x] = twice_sum(threadIdx.x + 1, s);\n}\n";
    odd_req.name_expressions = {"pair"};
    const CompileResult r = cpu().compiler->compile(odd_req);
    std::unique_ptr<Module> m = cpu().backend->load(r);
    std::unique_ptr<Program> pair = m->kernel(r.lowered_names[0]);
    EXPECT_EQ(pair->attributes().threads, "fibers") << odd;
    Buffer<float> two(2, 0.0f);
    launch(*pair, {1}, {2}, 0, two.p);
    EXPECT_EQ(two.host()[0], 3.0f) << odd;
    EXPECT_EQ(two.host()[1], 3.0f) << odd;
  }
  req.source = kernel + "__global__ void broken(float* x) {\n  x[0] = undefined_thing;\n}\n";
  try {
    cpu().compiler->compile(req);
    ADD_FAILURE() << "compiled";
  } catch (const CompileError& e) {
    EXPECT_NE(e.log().find("total.cu:8:"), std::string::npos) << e.log();
  }
}

// An atomic on an element of the kernel's own __shared__ array is a plain update in region mode
// (one OS thread runs the block); where another declaration in the kernel shares the array's
// name (a global array in an inner block), none of them is. Many blocks, so that the pool's
// workers race on the global bins.
TEST(CpuRegions, SharedAtomicsArePlainOthersStayAtomic) {
  const std::string src = R"(
__global__ void k(const int* in, int n, unsigned* out, unsigned* global) {
  __shared__ unsigned bins[8];
  if (threadIdx.x < 8) bins[threadIdx.x] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    atomicAdd(&bins[in[i] % 8], 1u);
    { unsigned* NAME = global; atomicAdd(&NAME[in[i] % 4], 1u); }
  }
  __syncthreads();
  if (threadIdx.x < 8) atomicAdd(out + threadIdx.x, bins[threadIdx.x]);
})";
  const int n = 200000;
  std::vector<int> in(n);
  for (int i = 0; i < n; ++i) in[i] = (i * 7919) % 1009;
  std::vector<unsigned> eight(8), four(4);
  for (int v : in) ++eight[v % 8], ++four[v % 4];
  for (const std::string name : {"other", "bins"}) {
    std::string source = src;
    for (std::size_t at; (at = source.find("NAME")) != std::string::npos;)
      source.replace(at, 4, name);
    const std::string rewritten = *cpu::form_regions(source);
    EXPECT_EQ(rewritten.find("kiln_shared_atomicAdd(&bins[in[i] % 8]") != std::string::npos,
              name == "other")
        << rewritten;
    EXPECT_EQ(rewritten.find("kiln_shared_atomicAdd(&" + name + "[in[i] % 4]"), std::string::npos);
    Built b = build(source, "k");
    ASSERT_EQ(b.kernel->attributes().threads, "regions");
    Buffer<int> din(in);
    Buffer<unsigned> out(8, 0), global(4, 0);
    launch(*b.kernel, {64}, {128}, 0, din.p, n, out.p, global.p);
    EXPECT_EQ(out.host(), eight) << name;
    EXPECT_EQ(global.host(), four) << name;
  }
}

// `break` and `continue` of a loop with barriers (every thread takes the same way, as CUDA
// requires): the block leaves the loop or goes on to the next step; those of loops and
// switches inside a region stay theirs. Against the host.
TEST(CpuRegions, BreakAndContinueInLoopsWithBarriers) {
  const std::string src = R"(
__global__ void k(const int* in, int* out, int steps) {
  __shared__ int s[64];
  s[threadIdx.x] = in[threadIdx.x];
  __syncthreads();
  int acc = 0;
  for (int step = 0; step < steps; ++step) {
    if (step % 3 == 1) continue;
    int v = s[(threadIdx.x + step) % 64];
    for (int j = 0; j < 4; ++j) { if (j == 2) break; v += j; }
    switch (v % 3) { case 0: v += 1; break; default: break; }
    __syncthreads();
    s[threadIdx.x] = v;
    acc += v;
    if (step == 9 && s[0] >= 0) break;
    __syncthreads();
  }
  out[threadIdx.x] = acc;
})";
  auto r = cpu::form_regions(src);
  ASSERT_TRUE(r);
  EXPECT_NE(r->find("::kiln_cpu::flagged(kiln_j"), std::string::npos) << *r;
  Built b = build(src, "k");
  ASSERT_EQ(b.kernel->attributes().threads, "regions");
  std::vector<int> in(64);
  for (int i = 0; i < 64; ++i) in[i] = (i * 29) % 61;
  for (int steps : {5, 40}) {
    // The host: the block in lockstep (the break's condition is the same in every thread).
    std::vector<int> s = in, acc(64, 0);
    for (int step = 0; step < steps; ++step) {
      if (step % 3 == 1) continue;
      std::vector<int> v(64);
      for (int t = 0; t < 64; ++t) {
        v[t] = s[(t + step) % 64] + 0 + 1;
        if (v[t] % 3 == 0) v[t] += 1;
      }
      bool leave = false;
      for (int t = 0; t < 64; ++t) {
        s[t] = v[t];
        acc[t] += v[t];
        leave = leave || (step == 9 && s[0] >= 0);
      }
      if (leave) {
        EXPECT_LT(step, steps - 1);  // (the break is taken)
        break;
      }
    }
    Buffer<int> din(in), out(64, -1);
    launch(*b.kernel, {1}, {64}, 0, din.p, out.p, steps);
    EXPECT_EQ(out.host(), acc) << steps;
  }
}

// `decltype(v) w = ...;` at barrier level: its copies' type reads a copy of v when v has them;
// the type of a variable of one region cannot be named between the regions (declined).
TEST(CpuRegions, DecltypeDeclarations) {
  const std::string src = R"(
__global__ void k(int* out) {
  __shared__ int s[64];
  int mine = threadIdx.x * 3;
  BARRIER
  decltype(mine) twice = mine * 2;
  s[threadIdx.x] = mine;
  __syncthreads();
  out[threadIdx.x] = s[63 - threadIdx.x] + twice;
})";
  for (const bool replicated : {true, false}) {
    std::string source = src;
    source.replace(source.find("BARRIER"), 7, replicated ? "__syncthreads();" : "");
    std::string why;
    const bool taken = cpu::form_regions(source, &why).has_value();
    EXPECT_EQ(taken, replicated) << why;
    if (!replicated) {
      EXPECT_NE(why.find("('mine')"), std::string::npos) << why;
    }
    Built b = build(source, "k");
    EXPECT_EQ(b.kernel->attributes().threads, replicated ? "regions" : "coroutines");
    Buffer<int> out(64, -1);
    launch(*b.kernel, {1}, {64}, 0, out.p);
    const auto o = out.host();
    for (int t = 0; t < 64; ++t) ASSERT_EQ(o[t], (63 - t) * 3 + t * 6) << t;
  }
}

// `typename W<T>::type v = ...;` at barrier level (cuda-samples' templated vector types): a
// declaration like any other, its type a dependent name (it was read as no declaration, so the
// rewrite did not compile and the whole module ran as fibers). Against the host.
TEST(CpuRegions, DependentTypeNameDeclarations) {
  const std::string src = R"(
template <typename T> struct pair_of { typedef int2 type; };
template <typename T>
__global__ void k(int* out) {
  __shared__ int s[64];
  typename pair_of<T>::type p = make_int2(threadIdx.x, 2 * threadIdx.x);
  s[threadIdx.x] = p.x;
  __syncthreads();
  p.y += s[63 - threadIdx.x];
  out[threadIdx.x] = p.y;
})";
  Built b = build(src, "k<float>");
  EXPECT_EQ(b.kernel->attributes().threads, "regions") << b.kernel->attributes().why;
  Buffer<int> out(64, -1);
  launch(*b.kernel, {1}, {64}, 0, out.p);
  const auto o = out.host();
  for (int t = 0; t < 64; ++t) ASSERT_EQ(o[t], 2 * t + 63 - t) << t;
}

// Which device functions a region may call without writing threadIdx for each thread.
TEST(CpuInlineSync, IdentityFreeFunctions) {
  const std::string src = R"(#define TID threadIdx.x
__device__ int best_of(int a, int b, int c) { int m = a > b ? a : b; return fmaxf(m, c); }
__device__ int uses_best(int a) { return best_of(a, a, int(a * 2)); }
__device__ int lane() { return threadIdx.x % 32; }
__device__ int macro_lane() { return TID % 32; }
__device__ int calls_lane(int v) { return v + lane(); }
__device__ int deep(int d) { return d == 0 ? 0 : deep(d - 1) + 1; }
__device__ int checks(int v) { assert(v > 0); return v; }
__device__ int min(int a, int b) { return blockIdx.x ? a : b; }
__global__ void k(int* x) { x[0] = best_of(1, 2, 3); })";
  const std::set<std::string> free = cpu::identity_free_functions(src, {"TID"});
  for (const char* f : {"best_of", "uses_best", "fmaxf", "sqrtf"}) EXPECT_TRUE(free.count(f)) << f;
  for (const char* f : {"lane", "macro_lane", "calls_lane", "deep", "checks", "min", "k"})
    EXPECT_FALSE(free.count(f)) << f;
}

}  // namespace
}  // namespace kiln::cpu_test
