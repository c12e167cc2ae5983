// Conformance: a grid-wide synchronisation in the style of the samples' cooperative reductions:
// phase one writes per-block partials, this_grid().sync(), phase two has every thread read
// them all. kiln launches the kernel cooperatively because it names this_grid.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

#define THREADS 128

__device__ void sum_partials(const int* partial, int blocks, int* out, unsigned long long rank) {
  int total = 0;
  for (int b = 0; b < blocks; ++b) total += partial[b];
  out[rank] = total;
}

__global__ void grid_sum(const int* in, int* partial, int* out, int n) {
  cg::grid_group grid = cg::this_grid();
  cg::thread_block block = cg::this_thread_block();
  __shared__ int s[THREADS];
  int v = 0;
  for (unsigned long long i = grid.thread_rank(); i < (unsigned long long)n; i += grid.size())
    v += in[i];
  s[block.thread_rank()] = v;
  block.sync();
  for (int half = THREADS / 2; half > 0; half /= 2) {
    if ((int)block.thread_rank() < half) s[block.thread_rank()] += s[block.thread_rank() + half];
    block.sync();
  }
  if (block.thread_rank() == 0) partial[blockIdx.x] = s[0];
  grid.sync();
  sum_partials(partial, gridDim.x, out, grid.thread_rank());
}

// In the same module and not naming this_grid: launched as usual, any grid size.
__global__ void fill(int* out) { out[blockIdx.x * blockDim.x + threadIdx.x] = 7; }
