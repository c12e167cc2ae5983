// One explicit (Jacobi) step of the 2-D heat equation, the five-point stencil
//   v = u + alpha * (north + south + west + east - 4u),
// on the interior rows of a block of `rows + 2` rows of `cols` cells whose first and last rows
// are halos: a neighbouring rank's edge row, or the domain's fixed boundary. The first and last
// columns are fixed too. Written as the distributed lab (scripts/labs/heat.lua) splits the domain:
// each rank owns a band of rows and exchanges its edge rows with the ranks above and below
// before each step, so one rank or many compute every cell with the same arithmetic.
// ALPHA_NUM/ALPHA_DEN: the diffusion number (at most 1/4 for a stable step).
#ifndef ALPHA_NUM
#define ALPHA_NUM 1
#endif
#ifndef ALPHA_DEN
#define ALPHA_DEN 5
#endif

template <typename T>
__global__ void heat_step(const T* __restrict__ u, T* __restrict__ v, int rows, int cols) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;      // column
  const int i = blockIdx.y * blockDim.y + threadIdx.y + 1;  // row, past the top halo
  if (i > rows || j >= cols) return;
  const size_t c = (size_t)i * cols + j;
  if (j == 0 || j == cols - 1) {  // the fixed left and right edges
    v[c] = u[c];
    return;
  }
  const T alpha = T(ALPHA_NUM) / T(ALPHA_DEN);
  v[c] = u[c] + alpha * (u[c - cols] + u[c + cols] + u[c - 1] + u[c + 1] - T(4) * u[c]);
}
