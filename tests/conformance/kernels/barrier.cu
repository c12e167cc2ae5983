// Conformance: cuda::barrier and cuda::memcpy_async as the async-copy samples use them: a block
// stages a tile of global memory in shared memory through a block-scope barrier, then every
// thread reads its neighbour's element; arrive() and wait(token) split the barrier around work.
#include <cooperative_groups.h>
#include <cuda/barrier>
namespace cg = cooperative_groups;

#define TILE 128

__global__ void shifted(const float* in, float* out, float* scaled) {
  __shared__ float tile[TILE];
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  cg::thread_block block = cg::this_thread_block();
  if (block.thread_rank() == 0) init(&bar, block.size());
  block.sync();
  cuda::memcpy_async(block, tile, in + blockIdx.x * TILE, sizeof(float) * TILE, bar);
  bar.arrive_and_wait();
  const int t = block.thread_rank();
  out[blockIdx.x * TILE + t] = tile[(t + 1) % TILE];
  auto token = bar.arrive();
  const float mine = 2.0f * tile[t];  // work between arrive and wait
  bar.wait(std::move(token));
  scaled[blockIdx.x * TILE + t] = mine + tile[TILE - 1 - t];
}
