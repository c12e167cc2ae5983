// 9x9 box blur with shared-memory tiling. Each TILE x TILE block first copies its tile plus a
// RADIUS-pixel halo ((TILE + 2*RADIUS)^2 = 24x24 pixels for the defaults) into __shared__ memory,
// zero outside the image, waits at __syncthreads(), then averages from shared memory: every input
// pixel is read from global memory about once per block instead of 81 times.
//
// The seed's first version was blocky because its strided tile load started from each thread's
// own pixel (x - RADIUS + i) instead of the block's origin, so the tile held the wrong pixels.
// Here the load is strided too, but every shared cell (sy, sx) maps to exactly one image pixel
// (origin_y - RADIUS + sy, origin_x - RADIUS + sx). The sum visits the neighbours in the same
// order as blur.cu and divides by the same count of in-image neighbours, so the two kernels
// produce identical output (integer or floating point).
//
// Blocks must be TILE x TILE threads. Blocks step over tiles with a block-stride loop (uniform
// for the whole block, so the barriers are safe), letting any grid cover any image.
#include <kiln.cuh>

#ifndef RADIUS
#define RADIUS 4
#endif
#ifndef TILE
#define TILE 16
#endif
#define SHARED_SIZE (TILE + 2 * RADIUS)

template <typename T>
__global__ void blur_shared(kiln::Array<T, 2> in, kiln::Array<T, 2> out) {
  using Acc = decltype(T() + 0);
  __shared__ T tile[SHARED_SIZE][SHARED_SIZE];
  const long long h = in.shape[0], w = in.shape[1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  for (long long oy = (long long)blockIdx.y * TILE; oy < h; oy += (long long)gridDim.y * TILE) {
    for (long long ox = (long long)blockIdx.x * TILE; ox < w; ox += (long long)gridDim.x * TILE) {
      // Load the tile and its halo: shared cell (sy, sx) <- pixel (oy-R+sy, ox-R+sx) or 0.
      for (int sy = ty; sy < SHARED_SIZE; sy += TILE) {
        for (int sx = tx; sx < SHARED_SIZE; sx += TILE) {
          const long long gy = oy - RADIUS + sy, gx = ox - RADIUS + sx;
          tile[sy][sx] = (gy >= 0 && gy < h && gx >= 0 && gx < w) ? in(gy, gx) : T(0);
        }
      }
      __syncthreads();
      const long long y = oy + ty, x = ox + tx;
      if (y < h && x < w) {
        Acc sum = 0;
        for (int dy = -RADIUS; dy <= RADIUS; ++dy)
          for (int dx = -RADIUS; dx <= RADIUS; ++dx) sum += tile[ty + RADIUS + dy][tx + RADIUS + dx];
        // In-image neighbours: the clipped window's rows times its columns.
        const long long y0 = y - RADIUS < 0 ? 0 : y - RADIUS, y1 = y + RADIUS >= h ? h - 1 : y + RADIUS;
        const long long x0 = x - RADIUS < 0 ? 0 : x - RADIUS, x1 = x + RADIUS >= w ? w - 1 : x + RADIUS;
        const int count = int((y1 - y0 + 1) * (x1 - x0 + 1));
        out(y, x) = T(sum / Acc(count));
      }
      __syncthreads();  // the next tile's load must not overwrite cells still being read
    }
  }
}
