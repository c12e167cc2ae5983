__global__ void gemm_tile(const float* a, const float* b, float* c, int n) {
  __shared__ float as[16][16], bs[16][16];
  int tx = threadIdx.x, ty = threadIdx.y;
  float acc[2][2] = {{0, 0}, {0, 0}}, bias[2]{1.0f, 2.0f};
  float2 scale = {1.0f, 0.5f};
  for (int k0 = 0; k0 < n; k0 += 16) {
    as[ty][tx] = a[ty * n + k0 + tx];
    bs[ty][tx] = b[(k0 + ty) * n + tx];
    __syncthreads();
    for (int k = 0; k < 16; ++k) acc[k & 1][tx & 1] += as[ty][k] * bs[k][tx];
    __syncthreads();
  }
  c[ty * n + tx] = (acc[0][0] + acc[1][1]) * scale.x + bias[ty & 1] * scale.y;
}
