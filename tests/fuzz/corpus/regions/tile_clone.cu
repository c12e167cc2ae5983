#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
template <typename T, typename Group>
__device__ T group_sum(T in, Group& threads) {
  return cg::reduce(threads, in, cg::plus<T>());
}
__global__ void by_tile(const int* in, int* out) {
  cg::thread_block cta = cg::this_thread_block();
  auto tile = cg::tiled_partition<32>(cta);
  int v = group_sum(in[threadIdx.x], tile);
  out[threadIdx.x] = v;
}
__global__ void by_group(const int* in, int* out) {
  auto cta = cg::this_thread_block();
  auto big = cg::tiled_partition<64>(cta);
  out[threadIdx.x] = group_sum(in[threadIdx.x], big) + cta.group_index().x;
}
