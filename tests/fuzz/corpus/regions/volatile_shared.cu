__global__ void flip(const int* in, int* out) {
  volatile __shared__ int s[64];
  static volatile __shared__ int seen;
  s[threadIdx.x] = in[threadIdx.x];
  if (threadIdx.x == 0) seen = 1;
  __syncthreads();
  out[threadIdx.x] = s[63 - threadIdx.x] + seen;
}
