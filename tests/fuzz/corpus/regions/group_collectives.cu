
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cooperative_groups/scan.h>
namespace cg = cooperative_groups;

template <class Tile>
__device__ int offset_in(Tile t, int keep) {
  return cg::exclusive_scan(t, keep);
}

// Scans on tiles of 32, 16 and 8 lanes: with the default plus (the value's type) and with ops.
__global__ void tile_scans(const int* x, const float* f, int* out, float* fout) {
  auto block = cg::this_thread_block();
  auto t32 = cg::tiled_partition<32>(block);
  cg::thread_block_tile<16> t16 = cg::tiled_partition<16>(block);
  auto t8 = cg::tiled_partition<8>(block);
  const int i = blockIdx.x * blockDim.x + threadIdx.x, n = gridDim.x * blockDim.x;
  int v = x[i];
  float w = f[i];
  int a = cg::inclusive_scan(t32, v);
  int b = cg::exclusive_scan(t16, v);
  int c = cg::inclusive_scan(t8, v, cg::greater<int>());
  unsigned d = cg::exclusive_scan(t32, unsigned(v), cg::bit_or<unsigned>());
  float e = cg::inclusive_scan(t32, w, cg::plus<float>());
  out[i] = a;
  out[n + i] = b;
  out[2 * n + i] = c;
  out[3 * n + i] = int(d);
  fout[i] = e;
}

// Stream compaction by warps: each kept element's place from a scan of the flags.
__global__ void compact(const int* x, int* out, int* count, int n) {
  auto tile = cg::tiled_partition<32>(cg::this_thread_block());
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  int keep = i < n && x[i] % 3 == 0;
  int at = offset_in(tile, keep);
  int total = cg::reduce(tile, keep, cg::plus<int>());
  int base = 0;
  if (tile.thread_rank() == 0) base = atomicAdd(count, total);
  base = tile.shfl(base, 0);
  if (keep) out[base + at] = x[i];
}

// A coalesced group in each branch of an if/else: the lanes of its own branch.
__global__ void coalesced(const int* x, int* out, float* fout, unsigned* bits) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x, n = gridDim.x * blockDim.x;
  const int v = x[i];
  int r0 = -1, r1 = -1, r2 = -1, r3 = -1, r4 = -1, r5 = -1;
  unsigned r6 = 0;
  float r7 = 0;
  if (v % 3 != 0) {
    auto g = cg::coalesced_threads();
    r0 = g.thread_rank() + 100 * g.size();
    r1 = cg::reduce(g, v, cg::plus<int>());
    r2 = cg::reduce(g, v, cg::less<int>());
    r3 = cg::inclusive_scan(g, v);
    r4 = cg::exclusive_scan(g, v, cg::greater<int>());
    r5 = g.shfl_down(v, 1) + 1000 * g.shfl_up(v, 2);
    r6 = g.ballot(v > 50);
    r7 = cg::reduce(g, float(v) * 0.5f, cg::plus<float>());
    if (g.any(v > 90)) r0 += 10000;
    if (g.all(v > 5)) r0 += 100000;
    g.sync();
  } else {
    const cg::coalesced_group g = cg::coalesced_threads();
    r0 = g.thread_rank() + 100 * g.num_threads() + 1000000 * g.meta_group_size();
    r1 = g.shfl(v, g.size() - 1);
    r3 = cg::exclusive_scan(g, v);
  }
  out[i] = r0;
  out[n + i] = r1;
  out[2 * n + i] = r2;
  out[3 * n + i] = r3;
  out[4 * n + i] = r4;
  out[5 * n + i] = r5;
  bits[i] = r6;
  fout[i] = r7;
}

// Warp-aggregated atomics (a device function's coalesced group, called in a condition's branch).
__device__ int next_slot(int* counter) {
  auto g = cg::coalesced_threads();
  int first;
  if (g.thread_rank() == 0) first = atomicAdd(counter, int(g.size()));
  return g.shfl(first, 0) + g.thread_rank();
}
__global__ void filter(const int* x, int* out, int* count, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && x[i] > 40) out[next_slot(count)] = x[i];
}
