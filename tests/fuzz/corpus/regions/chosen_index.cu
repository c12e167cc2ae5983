// Neighbours chosen at the grid's edge: reads through them become chosen loads.
__global__ void relax(const float* in, float* out, int cols) {
  __shared__ float cur[2][128];
  int tx = threadIdx.x;
  int col = blockIdx.x * 120 - 4 + tx;
  int left = col > 0 ? tx - 1 : tx;
  int right = (col < cols - 1 ? tx + 1 : tx);
  cur[0][tx] = col >= 0 && col < cols ? in[col] : 0.0f;
  __syncthreads();
  for (int i = 0; i < 4; i++) {
    cur[1 - (i & 1)][tx] = 0.5f * cur[i & 1][tx] + 0.25f * (cur[i & 1][left] + cur[i & 1][right]);
    __syncthreads();
  }
  if (tx >= 4 && tx < 124 && col < cols) out[col] = cur[0][tx] + cur[0][left] * 0.0f;
}
