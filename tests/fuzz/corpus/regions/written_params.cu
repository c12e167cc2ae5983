#define TILE 64
__global__ void advance(const float* src, float* dst, int n, int stride) {
  __shared__ float s[TILE];
  src += blockIdx.x * TILE + threadIdx.x;
  dst += blockIdx.x * TILE;
  n -= blockIdx.x * TILE;
  s[threadIdx.x] = threadIdx.x < n ? src[0] : 0.0f;
  __syncthreads();
  for (int k = 1; k < TILE; k *= 2) {
    float v = threadIdx.x >= k ? s[threadIdx.x - k] : 0.0f;
    __syncthreads();
    s[threadIdx.x] += v;
    __syncthreads();
  }
  if (threadIdx.x < n) dst[threadIdx.x * stride] = s[threadIdx.x] + src[0];
}
