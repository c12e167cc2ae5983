__global__ void k(const float* in, float* down, float* bfly, int* bcast, int* up) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  float v = in[t];
  float d = v;
  for (int o = 16; o > 0; o /= 2) d += __shfl_down_sync(0xffffffff, d, o);
  float x = v;
  for (int o = 16; o > 0; o /= 2) x += __shfl_xor_sync(0xffffffff, x, o);
  if ((threadIdx.x & 31) == 0) down[t / 32] = d;
  bfly[t] = x;
  bcast[t] = __shfl_sync(0xffffffff, t, 3);
  up[t] = __shfl_up_sync(0xffffffff, t, 1, 8);
}
