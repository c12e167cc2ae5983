// Vector normalisation y = x / |x| with shared memory (the seed's exercise). One block of TPB
// threads does it all, so no grid-wide synchronisation is needed: each thread owns a strided
// part of the vector and sums the squares of its elements; the block adds those TPB partial
// sums by a tree reduction in __shared__ memory (halving the active threads each step, with a
// barrier between steps); every thread then reads the norm from shared memory and scales its
// own part. Launch with exactly one block of TPB threads (a power of two, at most 1024).
#include <kiln.cuh>

#ifndef TPB
#define TPB 256
#endif

template <typename T>
__global__ void normalize(kiln::Array<T, 1> x, kiln::Array<T, 1> y) {
  __shared__ T partial[TPB];
  const long long n = x.size();
  const int t = threadIdx.x;
  T s = T(0);
  for (long long i = t; i < n; i += TPB) s += x[i] * x[i];
  partial[t] = s;
  __syncthreads();
  for (int half = TPB / 2; half > 0; half /= 2) {
    if (t < half) partial[t] += partial[t + half];
    __syncthreads();
  }
  const T norm = sqrt(partial[0]);
  for (long long i = t; i < n; i += TPB) y[i] = norm > T(0) ? x[i] / norm : T(0);
}
