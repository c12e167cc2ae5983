#include <cooperative_groups.h>
namespace cg = cooperative_groups;
template <unsigned N>
__device__ int block_sum(volatile int* s, int v, const cg::thread_block& cta) {
  cg::thread_block_tile<32> tile = cg::tiled_partition<32>(cta);
  const unsigned t = cta.thread_rank();
  s[t] = v;
  cg::sync(tile);
  cg::sync(cta);
  for (unsigned half = N / 2; half > 0; half /= 2) {
    if (t < half) s[t] += s[t + half];
    cg::sync(cta);
  }
  return s[0];
}
__device__ void store(int* out, int v, cg::thread_block& cta) {
  out[blockIdx.x * 64 + cta.thread_rank()] = v;
}
__global__ void k(const int* in, int* out) {
  cg::thread_block cta = cg::this_thread_block();
  __shared__ int s[64];
  int v = in[blockIdx.x * 64 + cta.thread_rank()];
  int total = block_sum<64>(s, v, cta);
  store(out, total - v, cta);
  helper(cta);
}
