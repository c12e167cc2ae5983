#define T 16
__global__ void tiles(const float* in, int cols, float* out) {
  __shared__ float tile[T][T + 1];
  int tx = threadIdx.x;
  int base = blockIdx.x * T;
  if (tx == 0) tile[0][T] = 0;
  for (int r = 0; r < T; r++) tile[r][tx] = in[(r + 1) * cols + base + tx];
  __syncthreads();
  float sum = 0;
  for (int r = 0; r < T; r += 2) sum += tile[tx][r];
  for (unsigned r = T; r > 0; r -= 4) out[(r - 1) * cols + base + tx] = tile[r - 1][tx] * sum;
  for (int r = 0; r < T; r++) {
    if (r > tx) continue;
    out[r] += 1;
  }
}
