
__global__ void k(int* out) {
  __shared__ int s[32];
  for (int r = 0; r < 4; ++r) {
    s[threadIdx.x] = r;
    __syncthreads();
    if (r == 2) break;
    __syncthreads();
  }
  out[threadIdx.x] = s[31 - threadIdx.x];
}