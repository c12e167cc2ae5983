// 9x9 box blur, naive: every output pixel reads its (2*RADIUS+1)^2 neighbours straight from
// global memory. As in the seed, the kernel takes no width/height arguments: it reads the
// image's shape through kiln::Array (Numba's `height, width = input_img.shape`). A grid-stride
// loop over kiln::gridsize<2>() lets any grid cover any image. Only neighbours inside the image
// are summed and the sum is divided by their count (an integer average for integer pixels), so
// borders are not darkened. blur_shared.cu computes exactly the same numbers from shared memory.
#include <kiln.cuh>

#ifndef RADIUS
#define RADIUS 4
#endif

template <typename T>
__global__ void blur_naive(kiln::Array<T, 2> in, kiln::Array<T, 2> out) {
  using Acc = decltype(T() + 0);  // int for 8/16-bit pixels, else T itself
  const long long h = in.shape[0], w = in.shape[1];
  const auto start = kiln::grid<2>();
  const auto stride = kiln::gridsize<2>();
  for (long long y = start.y; y < h; y += stride.y) {
    for (long long x = start.x; x < w; x += stride.x) {
      Acc sum = 0;
      int count = 0;
      for (int dy = -RADIUS; dy <= RADIUS; ++dy) {
        for (int dx = -RADIUS; dx <= RADIUS; ++dx) {
          const long long yy = y + dy, xx = x + dx;
          if (yy >= 0 && yy < h && xx >= 0 && xx < w) {
            sum += in(yy, xx);
            ++count;
          }
        }
      }
      out(y, x) = T(sum / Acc(count));
    }
  }
}
