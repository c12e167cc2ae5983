// Serial references of the lab kernels (see serial_refs.h); bench/CMakeLists.txt compiles this
// file with -O2 -march=native whatever the build type.
#include "bench/serial_refs.h"

#include <cstring>

namespace kiln::bench {

void serial_blur_naive(const float* in, float* out, long h, long w, int r) {
  for (long y = 0; y < h; ++y) {
    for (long x = 0; x < w; ++x) {
      float sum = 0;
      int count = 0;
      for (int dy = -r; dy <= r; ++dy) {
        for (int dx = -r; dx <= r; ++dx) {
          const long yy = y + dy, xx = x + dx;
          if (yy >= 0 && yy < h && xx >= 0 && xx < w) {
            sum += in[yy * w + xx];
            ++count;
          }
        }
      }
      out[y * w + x] = sum / float(count);
    }
  }
}

void serial_blur_tiled(const float* in, float* out, long h, long w) {
  constexpr int kTile = 16, kRadius = 4, kShared = kTile + 2 * kRadius;
  float tile[kShared][kShared];
  for (long oy = 0; oy < h; oy += kTile) {
    for (long ox = 0; ox < w; ox += kTile) {
      for (int sy = 0; sy < kShared; ++sy) {
        for (int sx = 0; sx < kShared; ++sx) {
          const long gy = oy - kRadius + sy, gx = ox - kRadius + sx;
          tile[sy][sx] = (gy >= 0 && gy < h && gx >= 0 && gx < w) ? in[gy * w + gx] : 0.0f;
        }
      }
      for (int ty = 0; ty < kTile; ++ty) {
        for (int tx = 0; tx < kTile; ++tx) {
          const long y = oy + ty, x = ox + tx;
          if (y >= h || x >= w) continue;
          float sum = 0;
          for (int dy = -kRadius; dy <= kRadius; ++dy)
            for (int dx = -kRadius; dx <= kRadius; ++dx)
              sum += tile[ty + kRadius + dy][tx + kRadius + dx];
          const long y0 = y - kRadius < 0 ? 0 : y - kRadius, y1 = y + kRadius >= h ? h - 1 : y + kRadius;
          const long x0 = x - kRadius < 0 ? 0 : x - kRadius, x1 = x + kRadius >= w ? w - 1 : x + kRadius;
          out[y * w + x] = sum / float((y1 - y0 + 1) * (x1 - x0 + 1));
        }
      }
    }
  }
}

void serial_matmul_naive(const float* a, const float* b, float* c, long m, long n, long k) {
  for (long row = 0; row < m; ++row) {
    for (long col = 0; col < n; ++col) {
      float sum = 0;
      for (long i = 0; i < k; ++i) sum += a[row * k + i] * b[i * n + col];
      c[row * n + col] = sum;
    }
  }
}

void serial_matmul_tiled(const float* a, const float* b, float* c, long m, long n, long k) {
  constexpr int kTpb = 16;
  float sa[kTpb][kTpb], sb[kTpb][kTpb], acc[kTpb][kTpb];
  for (long by = 0; by < m; by += kTpb) {
    for (long bx = 0; bx < n; bx += kTpb) {
      std::memset(acc, 0, sizeof acc);
      for (long k0 = 0; k0 < k; k0 += kTpb) {
        for (int ty = 0; ty < kTpb; ++ty) {
          for (int tx = 0; tx < kTpb; ++tx) {
            const long row = by + ty, col = bx + tx;
            sa[ty][tx] = (row < m && k0 + tx < k) ? a[row * k + k0 + tx] : 0.0f;
            sb[ty][tx] = (k0 + ty < k && col < n) ? b[(k0 + ty) * n + col] : 0.0f;
          }
        }
        for (int ty = 0; ty < kTpb; ++ty)
          for (int tx = 0; tx < kTpb; ++tx)
            for (int i = 0; i < kTpb; ++i) acc[ty][tx] += sa[ty][i] * sb[i][tx];
      }
      for (int ty = 0; ty < kTpb; ++ty)
        for (int tx = 0; tx < kTpb; ++tx)
          if (by + ty < m && bx + tx < n) c[(by + ty) * n + bx + tx] = acc[ty][tx];
    }
  }
}

void serial_histogram(const std::uint8_t* values, std::size_t n, unsigned* bins) {
  std::memset(bins, 0, 256 * sizeof(unsigned));
  for (std::size_t i = 0; i < n; ++i) ++bins[values[i]];
}

float serial_sum(const float* x, std::size_t n) {
  float s = 0;
  for (std::size_t i = 0; i < n; ++i) s += x[i];
  return s;
}

float serial_abs_sum(const float* x, std::size_t n) {
  float s = 0;
  for (std::size_t i = 0; i < n; ++i) s += x[i] < 0 ? -x[i] : x[i];
  return s;
}

}  // namespace kiln::bench
