// Speckle-reducing anisotropic diffusion, in the style of Rodinia's srad: an image J is smoothed
// where it is flat and kept where it has edges. Each iteration:
//   1. srad_sums: sums of J and J^2 per block (the host adds them up and derives q0^2, the
//      speckle statistic: variance over squared mean);
//   2. srad_coefficients: each pixel's differences to its four neighbours and its diffusion
//      coefficient c, from the local gradient and Laplacian compared with q0^2;
//   3. srad_update: J += lambda/4 * divergence of c * gradient (each pixel uses its own c for
//      its north and west faces and its south and east neighbours' c for the other two).
// At the image's edge a missing neighbour is the pixel itself. rows and cols must be multiples
// of BLOCK_SIZE; 2-D kernels take BLOCK_SIZE x BLOCK_SIZE blocks, srad_sums SUM_THREADS.
#ifndef BLOCK_SIZE
#define BLOCK_SIZE 16
#endif
#ifndef SUM_THREADS
#define SUM_THREADS 256
#endif
#define CLAMP(x, lo, hi) ((x) < (lo) ? (lo) : (x) > (hi) ? (hi) : (x))

// sums[blockIdx.x] and sums[gridDim.x + blockIdx.x]: this block's share of sum(J), sum(J^2).
__global__ void srad_sums(const float* J, int n, float* sums) {
  __shared__ float s1[SUM_THREADS];
  __shared__ float s2[SUM_THREADS];
  int tx = threadIdx.x;
  float a = 0.0f, b = 0.0f;
  for (int i = blockIdx.x * SUM_THREADS + tx; i < n; i += gridDim.x * SUM_THREADS) {
    float v = J[i];
    a += v;
    b += v * v;
  }
  s1[tx] = a;
  s2[tx] = b;
  __syncthreads();
  for (int half = SUM_THREADS / 2; half > 0; half /= 2) {
    if (tx < half) {
      s1[tx] += s1[tx + half];
      s2[tx] += s2[tx + half];
    }
    __syncthreads();
  }
  if (tx == 0) {
    sums[blockIdx.x] = s1[0];
    sums[gridDim.x + blockIdx.x] = s2[0];
  }
}

__global__ void srad_coefficients(const float* J, float* dN, float* dS, float* dW, float* dE,
                                  float* c, int rows, int cols, float q0sqr) {
  __shared__ float tile[BLOCK_SIZE + 2][BLOCK_SIZE + 2];  // the block's pixels and a 1-pixel ring

  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * BLOCK_SIZE + ty;
  int col = blockIdx.x * BLOCK_SIZE + tx;
  int index = row * cols + col;

  tile[ty + 1][tx + 1] = J[index];
  // Threads on the block's border also load the ring beyond it (clamped at the image's edge).
  if (ty == 0) tile[0][tx + 1] = J[CLAMP(row - 1, 0, rows - 1) * cols + col];
  if (ty == BLOCK_SIZE - 1) tile[BLOCK_SIZE + 1][tx + 1] = J[CLAMP(row + 1, 0, rows - 1) * cols + col];
  if (tx == 0) tile[ty + 1][0] = J[row * cols + CLAMP(col - 1, 0, cols - 1)];
  if (tx == BLOCK_SIZE - 1) tile[ty + 1][BLOCK_SIZE + 1] = J[row * cols + CLAMP(col + 1, 0, cols - 1)];
  __syncthreads();

  float jc = tile[ty + 1][tx + 1];
  float n = tile[ty][tx + 1] - jc;
  float s = tile[ty + 2][tx + 1] - jc;
  float w = tile[ty + 1][tx] - jc;
  float e = tile[ty + 1][tx + 2] - jc;

  // Normalised gradient magnitude and Laplacian, then the instantaneous coefficient of variation.
  float g2 = (n * n + s * s + w * w + e * e) / (jc * jc);
  float lap = (n + s + w + e) / jc;
  float num = 0.5f * g2 - 0.0625f * (lap * lap);
  float den = 1.0f + 0.25f * lap;
  float qsqr = num / (den * den);
  // Diffusion is strong where q^2 is near the speckle level q0^2 and weak at edges (q^2 >> q0^2).
  float excess = (qsqr - q0sqr) / (q0sqr * (1.0f + q0sqr));
  float coef = 1.0f / (1.0f + excess);

  dN[index] = n;
  dS[index] = s;
  dW[index] = w;
  dE[index] = e;
  c[index] = CLAMP(coef, 0.0f, 1.0f);
}

__global__ void srad_update(const float* J, float* J_out, const float* dN, const float* dS,
                            const float* dW, const float* dE, const float* c, int rows, int cols,
                            float lambda) {
  __shared__ float ct[BLOCK_SIZE + 1][BLOCK_SIZE + 1];  // c of the block, the row below, the column right

  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * BLOCK_SIZE + ty;
  int col = blockIdx.x * BLOCK_SIZE + tx;
  int index = row * cols + col;

  ct[ty][tx] = c[index];
  if (ty == BLOCK_SIZE - 1) ct[BLOCK_SIZE][tx] = c[CLAMP(row + 1, 0, rows - 1) * cols + col];
  if (tx == BLOCK_SIZE - 1) ct[ty][BLOCK_SIZE] = c[row * cols + CLAMP(col + 1, 0, cols - 1)];
  __syncthreads();

  float c_here = ct[ty][tx];
  float divergence = c_here * dN[index] + ct[ty + 1][tx] * dS[index] + c_here * dW[index] +
                     ct[ty][tx + 1] * dE[index];
  J_out[index] = J[index] + 0.25f * lambda * divergence;
}
