#define STEPS 4
__global__ void rows_down(const int* wall, int* out, int rows, int cols, int first) {
  __shared__ int acc[2][128];
  int tx = threadIdx.x;
  int col = blockIdx.x * 120 - 4 + tx;
  bool inside = col >= 0 && col < cols;
  acc[0][tx] = inside ? wall[col] : 0;
  __syncthreads();
  for (int i = 0; i < STEPS; i += 1) {
    int from = i & 1;
    if (inside && tx > i && tx < 127 - i)
      acc[1 - from][tx] = acc[from][tx - 1] + wall[(first + i) * cols + col] + wall[i / 2];
    __syncthreads();
  }
  for (int j = rows - 1; j >= rows - 3; --j) {
    acc[0][tx] += j > 0 ? wall[j * cols + (col >= cols ? 0 : col)] : 0;
    __syncthreads();
  }
  if (inside) out[col] = acc[STEPS & 1][tx];
}
