// 256-bin histogram with per-block shared bins. Every block zeroes a private __shared__ copy of
// the bins, its threads walk the input with a grid-stride loop (kiln::gridsize<1>()) and count
// with atomicAdd on the shared bins (cheap, contended only within the block), then each block
// adds its bins to the global ones with one atomicAdd per bin. A few blocks per multiprocessor
// are enough: the grid-stride loop, not the grid, covers the data. Values outside [0, BINS) are
// not counted. T is the input's element type (uint8 in the seed); the bins are uint32.
#include <kiln.cuh>

#ifndef BINS
#define BINS 256
#endif

template <typename T>
__global__ void histogram(kiln::Array<T, 1> values, kiln::Array<unsigned int, 1> bins) {
  __shared__ unsigned int local[BINS];
  for (int b = threadIdx.x; b < BINS; b += blockDim.x) local[b] = 0;
  __syncthreads();
  const long long n = values.size(), stride = kiln::gridsize<1>();
  for (long long i = kiln::grid<1>(); i < n; i += stride) {
    const long long v = (long long)values[i];
    if (v >= 0 && v < BINS) atomicAddv(&local[v], 1u);
  }
  __syncthreads();
  for (int b = threadIdx.x; b < BINS; b += blockDim.x)
    if (local[b] != 0) atomicAdd(&bins.data[b], local[b]);
}
