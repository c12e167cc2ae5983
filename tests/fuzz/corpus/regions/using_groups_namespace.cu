#include <cooperative_groups.h>
using namespace cooperative_groups;
__device__ int reduce(int v) {
  return v;
}
__global__ void k(int* x) {
  thread_block b = this_thread_block();
  thread_block_tile<16> t = tiled_partition<16>(b);
  x[b.thread_rank()] = t.shfl_down(reduce(x[0]), 1);
  sync(b);
}
