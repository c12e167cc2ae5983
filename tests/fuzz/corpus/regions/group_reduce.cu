#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
__global__ void warp_max(const float* in, float* out, int n) {
  auto block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = i < n ? in[i] : -1e30f;
  float m = cg::reduce(warp, v, cg::greater<float>());
  unsigned any = cg::reduce(warp, (unsigned)(v > 0.0f), cg::bit_or<unsigned>());
  if (warp.thread_rank() == 0) out[i / 32] = any ? m : 0.0f;
}
