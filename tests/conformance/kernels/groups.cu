// Conformance: cooperative groups as CUDA 12/13 samples use them: block_tile_memory scratch,
// memcpy_async + wait, the free sync/thread_rank/group_size, static, dynamic and wide tiles,
// labeled and binary partitions, reductions and scans over tiles and coalesced groups, match.
// Each thread writes 12 results; the Lua side recomputes every one.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cooperative_groups/scan.h>
#include <cooperative_groups/memcpy_async.h>
namespace cg = cooperative_groups;
__global__ void groups(const int* in, int* out) {
  __shared__ cg::block_tile_memory<128> scratch;
  cg::thread_block block = cg::this_thread_block(scratch);
  __shared__ int tile_in[128];
  cg::memcpy_async(block, tile_in, in + blockIdx.x * 128, sizeof(int) * 128);
  cg::wait(block);
  const unsigned r = cg::thread_rank(block);
  const int v = tile_in[r];
  cg::sync(block);
  auto t16 = cg::tiled_partition<16>(block);
  cg::thread_group dyn = cg::tiled_partition(block, 8);
  auto t64 = cg::tiled_partition<64>(block);
  int* o = out + (blockIdx.x * 128 + r) * 12;
  o[0] = cg::inclusive_scan(t16, v);
  o[1] = cg::exclusive_scan(t16, v);
  o[2] = dyn.thread_rank() + 10000 * (int)dyn.size();
  o[3] = t64.thread_rank() + 100 * t64.meta_group_rank();
  t64.sync();
  auto warp = cg::tiled_partition<32>(block);
  cg::coalesced_group parity = cg::labeled_partition(warp, v & 1);
  o[4] = cg::reduce(parity, v, cg::plus<int>());
  o[5] = parity.thread_rank() + 100 * (int)parity.size();
  cg::coalesced_group big = cg::binary_partition(warp, v > 0);
  o[6] = cg::reduce(big, v, cg::greater<int>());
  o[7] = cg::group_size(big);
  o[8] = (int)t16.match_any(v & 3);
  int all_pred = 0;
  o[9] = (int)t16.match_all(7, all_pred) + 1000000 * all_pred;
  o[10] = cg::inclusive_scan(parity, 1);
  o[11] = t16.meta_group_size() + 100 * (int)cg::group_size(t16);
}

// A block sum in the style of the reduction samples: tiles reduce with cg::reduce, the tile
// leaders combine through shared memory after cg::sync(block).
template <typename T>
__global__ void block_sum(const T* in, T* out, int n) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
  extern __shared__ unsigned char smem_bytes[];
  T* partial = reinterpret_cast<T*>(smem_bytes);
  T v = 0;
  for (int i = blockIdx.x * blockDim.x + block.thread_rank(); i < n; i += gridDim.x * blockDim.x)
    v += in[i];
  v = cg::reduce(tile, v, cg::plus<T>());
  if (tile.thread_rank() == 0) partial[tile.meta_group_rank()] = v;
  cg::sync(block);
  if (tile.meta_group_rank() == 0) {
    v = tile.thread_rank() < tile.meta_group_size() ? partial[tile.thread_rank()] : T(0);
    v = cg::reduce(tile, v, cg::plus<T>());
    if (tile.thread_rank() == 0) out[blockIdx.x] = v;
  }
}

// CUDA 12's one-thread calls and asynchronous reductions: invoke_one, invoke_one_broadcast,
// reduce_store_async into shared memory, reduce_update_async into an atomic_ref. Per block:
// out[0] the value invoke_one stored, out[1] the warps' stored sums added, out[2] the atomic's
// total; per thread, bcast[i] what its warp's broadcast returned.
#include <cuda/atomic>
__global__ void one_thread_calls(const int* in, int* out, int* bcast) {
  cg::thread_block block = cg::this_thread_block();
  auto warp = cg::tiled_partition<32>(block);
  __shared__ int first, part[4], total;
  const int v = in[blockIdx.x * 128 + block.thread_rank()];
  cg::invoke_one(block, [&] {
    first = 5 + (int)blockIdx.x;
    total = 0;
  });
  block.sync();
  bcast[blockIdx.x * 128 + block.thread_rank()] =
      cg::invoke_one_broadcast(warp, [&] { return 7 + (int)warp.meta_group_rank() + v; });
  cg::reduce_store_async(warp, &part[warp.meta_group_rank()], v, cg::plus<int>());
  cuda::atomic_ref<int, cuda::thread_scope_block> atomic_total(total);
  cg::reduce_update_async(warp, atomic_total, v, cg::plus<int>());
  block.sync();
  if (block.thread_rank() == 0) {
    out[blockIdx.x * 3 + 0] = first;
    out[blockIdx.x * 3 + 1] = part[0] + part[1] + part[2] + part[3];
    out[blockIdx.x * 3 + 2] = total;
  }
}
