#define N 16
__global__ void lower(float* m, int dim) {
  int i, j;
  __shared__ float tile[N][N];
  int off = blockIdx.x * N;
  for (i = 0; i < N; i++) tile[i][threadIdx.x] = m[(off + i) * dim + threadIdx.x];
  __syncthreads();
  for (i = 0; i < N - 1; i++) {
    if (threadIdx.x > i) {
      for (j = 0; j < i; j++) tile[threadIdx.x][i] -= tile[threadIdx.x][j] * tile[j][i];
    }
    __syncthreads();
  }
  for (i = 2; i <= N; i = 2 * i) {
    if (threadIdx.x % i == 0) tile[0][threadIdx.x] += tile[0][threadIdx.x + i / 2];
    __syncthreads();
  }
  m[off * dim + threadIdx.x] = tile[threadIdx.x][0] + i;
}
