__global__ void k(float* __restrict__ a, const int* b, int n) {
  extern __shared__ float s[];
  if (threadIdx.x > n) return;
  __syncthreads();
}
