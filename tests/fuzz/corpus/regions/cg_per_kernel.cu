#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = ::cooperative_groups;
template <class T>
__device__ T lane_sum(cg::thread_block_tile<32> t, T v) {
  return cg::reduce(t, v, cg::plus<T>());
}
template <>
__device__ int lane_sum<int>(cg::thread_block_tile<32> t, int v) {
  return __reduce_add_sync(~0u, v);
}
namespace util {
__device__ float twice(float v) noexcept {
  return v * 2;
}
}  // namespace util
#define SUM(t, v) lane_sum(t, v)
__global__ void plain_block(const int* in, int* out) {
  cg::thread_block cta = cg::this_thread_block();
  __shared__ int s[64];
  s[cta.thread_rank()] = in[blockIdx.x * 64 + cta.thread_rank()] + int(util::twice(1.0f));
  cg::sync(cta);
  out[blockIdx.x * 64 + cta.thread_rank()] = s[63 - cta.thread_rank()];
}
__global__ void passes_tile(const int* in, int* out) {
  cg::thread_block cta = cg::this_thread_block();
  auto tile = cg::tiled_partition<32>(cta);
  int v = SUM(tile, in[blockIdx.x * 64 + cta.thread_rank()]);
  if (tile.thread_rank() == 0) out[blockIdx.x * 2 + tile.meta_group_rank()] = v;
}
