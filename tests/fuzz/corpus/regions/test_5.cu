
__global__ void k(int bad) {
  __shared__ int s[8];
  s[threadIdx.x] = 1;
  __syncthreads();
  if ((int)threadIdx.x == bad && blockIdx.x == 1) __trap();
}