// Matrix multiply C = A * B, naive: one thread per element of C (kiln::grid<2>(): x is the
// column, y the row, so neighbouring threads read neighbouring columns of B), each looping over
// the shared dimension and reading A and B from global memory: 2*K loads per 2*K flops. The
// shapes come from the arrays themselves, as in the seed's cuda_matmul; any sizes work.
#include <kiln.cuh>

template <typename T>
__global__ void matmul_naive(kiln::Array<T, 2> a, kiln::Array<T, 2> b, kiln::Array<T, 2> c) {
  const auto p = kiln::grid<2>();
  const long long row = p.y, col = p.x;
  if (row < c.shape[0] && col < c.shape[1]) {
    T sum = T(0);
    for (long long k = 0; k < a.shape[1]; ++k) sum += a(row, k) * b(k, col);
    c(row, col) = sum;
  }
}
