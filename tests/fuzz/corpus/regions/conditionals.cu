#define THREADS 256
#define HALF (THREADS / 2)
#ifndef TILE
#define TILE 16
#endif
__global__ void k(int* x, int n) {
  __shared__ int s[THREADS];
  s[threadIdx.x] = x[threadIdx.x];
  __syncthreads();
#if defined(FUZZ) && LEVEL > 2 && __CUDA_ARCH__ >= 700
  for (int d = HALF; d > 0; d /= 2) {
    if (threadIdx.x < d) s[threadIdx.x] += s[threadIdx.x + d];
    __syncthreads();
  }
#elif TILE
  x[0] = 1;
#else
  x[1] = 2;
#endif
#ifdef UNKNOWN_FLAG
  x[2] = 3;
#endif
  if (threadIdx.x == 0) x[blockIdx.x] = s[0];
}
