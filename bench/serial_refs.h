// Serial C++ references of the lab kernels' algorithms, compiled -O2 (as the issue asks) with
// -march=native (as the cpu backend compiles kernels), one thread, for the cpu backend's targets.
#pragma once
#include <cstddef>
#include <cstdint>

namespace kiln::bench {

// blur.cu: 9x9 (radius r) box blur, every neighbour bounds-checked, divided by the in-image count.
void serial_blur_naive(const float* in, float* out, long h, long w, int r);
// blur_shared.cu: the same numbers through 16x16 tiles with a 4-pixel halo copied to a buffer.
void serial_blur_tiled(const float* in, float* out, long h, long w);
// matmul.cu: c = a * b, one dot product per element of c (k innermost, b read down a column).
void serial_matmul_naive(const float* a, const float* b, float* c, long m, long n, long k);
// matmul_tiled.cu: the same through 16x16 tiles of a and b copied to buffers.
void serial_matmul_tiled(const float* a, const float* b, float* c, long m, long n, long k);
// histogram.cu: 256 bins of uint8 values.
void serial_histogram(const std::uint8_t* values, std::size_t n, unsigned* bins);
// reduce.cu: the sum of n floats, accumulated in float.
float serial_sum(const float* x, std::size_t n);
// abs_sum.cu: the sum of |x|.
float serial_abs_sum(const float* x, std::size_t n);

}  // namespace kiln::bench
