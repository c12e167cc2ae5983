// The Julia set z -> z^2 + c on a 2-D grid: every pixel is independent, so one thread computes
// one pixel (kiln::grid<2>(), Numba's cuda.grid(2); x is the fastest axis so neighbouring
// threads write neighbouring bytes). A grid-stride loop (kiln::gridsize<2>()) lets a smaller
// grid cover any image. T is the arithmetic type (float or double), taken from the output
// array; the output holds each pixel's escape iteration (MAX_ITER when it never escapes).
#include <kiln.cuh>

#ifndef MAX_ITER
#define MAX_ITER 256
#endif

template <typename T>
__global__ void julia(kiln::Array<T, 2> iters, double c_re, double c_im, double x_min,
                      double x_max, double y_min, double y_max) {
  const long long h = iters.shape[0], w = iters.shape[1];
  const auto start = kiln::grid<2>();
  const auto stride = kiln::gridsize<2>();
  const T cr = T(c_re), ci = T(c_im);
  const T dx = T((x_max - x_min) / double(w)), dy = T((y_max - y_min) / double(h));
  for (long long row = start.y; row < h; row += stride.y) {
    for (long long col = start.x; col < w; col += stride.x) {
      T zr = T(x_min) + T(col) * dx;
      T zi = T(y_min) + T(row) * dy;
      int n = 0;
      while (n < MAX_ITER && zr * zr + zi * zi <= T(4)) {
        const T re = zr * zr - zi * zi + cr;
        zi = T(2) * zr * zi + ci;
        zr = re;
        ++n;
      }
      iters(row, col) = T(n);
    }
  }
}
