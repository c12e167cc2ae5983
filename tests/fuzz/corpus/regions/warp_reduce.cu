// Sum reduction, written by hand: what cuda.reduce does for you. Pass 1: each thread sums a
// grid-stride slice of the input in registers; each warp adds its 32 partial sums with
// __shfl_down_sync (no shared memory, no barrier); warp leaders put one value per warp in
// __shared__ memory; after one __syncthreads() the first warp reduces those, and thread 0 writes
// the block's sum to partial[blockIdx.x]. Pass 2 launches one block over the partials, so two
// launches reduce any size. Blocks must be TPB threads, a multiple of 32 and at most 1024.
#include <kiln.cuh>

#ifndef TPB
#define TPB 256
#endif

// The sum over a warp of v, valid in lane 0.
template <typename T>
__device__ T warp_sum(T v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

template <typename T>
__global__ void reduce_sum(kiln::Array<T, 1> in, kiln::Array<T, 1> partial) {
  __shared__ T warp_sums[TPB / 32];
  const long long n = in.size(), stride = kiln::gridsize<1>();
  T s = T(0);
  for (long long i = kiln::grid<1>(); i < n; i += stride) {
    s += in[i];
  }
  s = warp_sum(s);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) warp_sums[warp] = s;
  __syncthreads();
  if (warp == 0) {
    s = lane < TPB / 32 ? warp_sums[lane] : T(0);
    s = warp_sum(s);
    if (lane == 0) partial[blockIdx.x] = s;
  }
}
