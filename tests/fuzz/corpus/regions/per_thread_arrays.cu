__global__ void k(const float* in, float* out) {
  __shared__ float s[1024];
  float keep[20];
  unsigned int marks[2][8];
  const long long wide[3] = {1, 2, 3};
  for (int i = 0; i < 20; ++i) keep[i] = in[threadIdx.x] * i;
  for (int i = 0; i < 16; ++i) marks[i / 8][i % 8] = threadIdx.x + i;
  s[threadIdx.x] = in[threadIdx.x];
  __syncthreads();
  float acc = s[blockDim.x - 1 - threadIdx.x] + wide[2];
  for (int i = 0; i < 20; ++i) acc += keep[i];
  out[threadIdx.x] = acc + marks[1][7];
}
