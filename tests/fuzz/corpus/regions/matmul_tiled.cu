// Matrix multiply C = A * B with shared-memory tiles (the seed's cuda_fast_matmul, TPB = 16).
// Each TPB x TPB block computes one TPB x TPB tile of C. It walks the shared dimension one tile
// at a time: every thread loads one element of A's tile and one of B's into __shared__ memory,
// __syncthreads(), then each thread does TPB multiply-adds from shared memory, and a second
// barrier protects the tiles before the next load. Global loads drop from 2*K to 2*K/TPB per
// element of C. Unlike the seed, it works for any sizes: loads outside A or B store 0 (adding
// nothing), and threads outside C still take part in the loads and barriers (no early return,
// which would deadlock the barrier) but write nothing. Blocks must be TPB x TPB threads.
#include <kiln.cuh>

#ifndef TPB
#define TPB 16
#endif

template <typename T>
__global__ void matmul_tiled(kiln::Array<T, 2> a, kiln::Array<T, 2> b, kiln::Array<T, 2> c) {
  __shared__ T sa[TPB][TPB];
  __shared__ T sb[TPB][TPB];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const long long row = (long long)blockIdx.y * TPB + ty, col = (long long)blockIdx.x * TPB + tx;
  const long long m = c.shape[0], n = c.shape[1], kdim = a.shape[1];
  T sum = T(0);
  for (long long k0 = 0; k0 < kdim; k0 += TPB) {
    sa[ty][tx] = (row < m && k0 + tx < kdim) ? a(row, k0 + tx) : T(0);
    sb[ty][tx] = (k0 + ty < kdim && col < n) ? b(k0 + ty, col) : T(0);
    __syncthreads();
    for (int k = 0; k < TPB; ++k) sum += sa[ty][k] * sb[k][tx];
    __syncthreads();
  }
  if (row < m && col < n) c(row, col) = sum;
}
