__global__ void autos(const float* in, float* out, int n) {
  __shared__ float s[64];
  const auto i = blockIdx.x * blockDim.x + threadIdx.x;
  auto w = 0.5f * n, *p = &s[threadIdx.x];
  int local = n;
  auto bad = local + 1;
  s[threadIdx.x] = i < n ? in[i] : 0.0f;
  __syncthreads();
  if (i < n) out[i] = s[(threadIdx.x + 1) % 64] * w + *p + bad;
}
