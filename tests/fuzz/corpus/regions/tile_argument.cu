#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
template <typename T, typename Group>
__device__ T group_sum(T in, Group& threads) {
  return cg::reduce(threads, in, cg::plus<T>());
}
__device__ int lane_max(int v, const cg::thread_block_tile<8>& t) {
  return cg::reduce(t, v, cg::greater<int>());
}
__global__ void k(const int* in, int* out) {
  cg::thread_block cta = cg::this_thread_block();
  cg::thread_block_tile<32> tile = cg::tiled_partition<32>(cta);
  auto eight = cg::tiled_partition<8>(cta);
  int v = in[threadIdx.x];
  cta.sync();
  if (tile.meta_group_rank() == 0) v = group_sum(v, tile);
  out[threadIdx.x] = v + lane_max(v, eight);
}
