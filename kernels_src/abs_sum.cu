// The seed's abs-sum reduction, sum_i |x_i|, as a kernel: reduce.cu's two-level reduction (a
// grid-stride loop in registers, warp shuffles, one __shared__ value per warp, one partial sum
// per block; a second one-block launch adds the partials) with |x| taken as each element is
// read. The seed wrote it for @cuda.reduce as
//   if b < 0: return a - b  else: return a + b
// which is right only because the reduction always passes an element or a non-negative partial
// sum as b; the lab also runs that expression through cuda.reduce. Pass 2 must sum the
// (non-negative) partials, which abs_sum does as well. Blocks must be TPB threads.
#include <kiln.cuh>

#ifndef TPB
#define TPB 256
#endif

// The sum over a warp of v, valid in lane 0 (named apart from reduce.cu's warp_sum).
template <typename T>
__device__ T abs_warp_sum(T v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

template <typename T>
__global__ void abs_sum(kiln::Array<T, 1> in, kiln::Array<T, 1> partial) {
  __shared__ T warp_sums[TPB / 32];
  const long long n = in.size(), stride = kiln::gridsize<1>();
  T s = T(0);
  for (long long i = kiln::grid<1>(); i < n; i += stride) {
    const T x = in[i];
    s += x < T(0) ? -x : x;
  }
  s = abs_warp_sum(s);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) warp_sums[warp] = s;
  __syncthreads();
  if (warp == 0) {
    s = lane < TPB / 32 ? warp_sums[lane] : T(0);
    s = abs_warp_sum(s);
    if (lane == 0) partial[blockIdx.x] = s;
  }
}
