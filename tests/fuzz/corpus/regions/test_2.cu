
__global__ void k(int* out) {
  __shared__ int s[32];
  int steps = 0;
  while (true) {
    s[threadIdx.x] = steps;
    __syncthreads();
    if (steps == (int)threadIdx.x) { out[threadIdx.x] = s[31 - threadIdx.x] + 100; return; }
    ++steps;
    __syncthreads();
  }
}