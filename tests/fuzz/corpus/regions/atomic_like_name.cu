// A call named like an atomic that kiln does not bind, on a shared array (a fuzz finding).
__device__ void atomicAddv(unsigned* p, unsigned v);
__global__ void count(const unsigned char* in, unsigned* out, int n) {
  __shared__ unsigned bins[16];
  if (threadIdx.x < 16) bins[threadIdx.x] = 0;
  __syncthreads();
  for (int i = threadIdx.x; i < n; i += blockDim.x) atomicAddv(&bins[in[i] % 16], 1u);
  __syncthreads();
  if (threadIdx.x < 16) out[threadIdx.x] = bins[threadIdx.x];
}
