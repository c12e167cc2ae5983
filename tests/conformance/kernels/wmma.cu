// Conformance: warp matrix multiply-accumulate (<mma.h>, nvcuda::wmma) as NVIDIA's tensor-core
// samples use it, for every shape and element type short of the experimental sub-byte ones.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>
using namespace nvcuda;

// C = alpha * A * B + beta * C for A (M x K, row-major) and B (K x N, column-major) in half:
// each block of 4 warps stages a 32 x 16 slab of A and of B in shared memory, each warp keeps
// the accumulator of one 16 x 16 tile of its block's 32 x 32 across the slabs, then scales it
// with C through shared memory, as cudaTensorCoreGemm does. M, N multiples of 32, K of 16.
#define TILE 32
__global__ void gemm_shared(const half* a, const half* b, float* c, int M, int N, int K,
                            float alpha, float beta) {
  __shared__ half sa[TILE][16];
  __shared__ half sb[TILE][16];
  __shared__ float out[4][16][16];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int row0 = blockIdx.y * TILE, col0 = blockIdx.x * TILE;
  const int wr = (warp / 2) * 16, wc = (warp % 2) * 16;
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
  wmma::fill_fragment(acc, 0.0f);
  for (int k0 = 0; k0 < K; k0 += 16) {
    for (int i = threadIdx.x; i < TILE * 16; i += blockDim.x) {
      sa[i / 16][i % 16] = a[(row0 + i / 16) * K + k0 + i % 16];
      sb[i / 16][i % 16] = b[(col0 + i / 16) * K + k0 + i % 16];
    }
    __syncthreads();
    wmma::load_matrix_sync(fa, &sa[wr][0], 16);
    wmma::load_matrix_sync(fb, &sb[wc][0], 16);
    wmma::mma_sync(acc, fa, fb, acc);
    __syncthreads();
  }
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> cf;
  float* ctile = c + (row0 + wr) * N + col0 + wc;
  wmma::load_matrix_sync(cf, ctile, N, wmma::mem_row_major);
  for (int i = 0; i < cf.num_elements; i++) cf.x[i] = alpha * acc.x[i] + beta * cf.x[i];
  wmma::store_matrix_sync(&out[warp][0][0], cf, 16, wmma::mem_row_major);
  __syncwarp();
  for (int i = lane; i < 256; i += 32) ctile[(i / 16) * N + i % 16] = out[warp][i / 16][i % 16];
}

// One tile per warp of each other shape and type; A row-major, B row-major, D stored
// column-major (ldm = M), so every load and store layout is taken somewhere.
template <int M, int N, int K, typename TI, typename TA, typename TC>
__device__ void one_tile(const TA* a, const TA* b, const TC* c, TC* d) {
  wmma::fragment<wmma::matrix_a, M, N, K, TI, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, M, N, K, TI, wmma::row_major> fb;
  wmma::fragment<wmma::accumulator, M, N, K, TC> fc;
  wmma::load_matrix_sync(fa, a, K);
  wmma::load_matrix_sync(fb, b, N);
  wmma::load_matrix_sync(fc, c, N, wmma::mem_row_major);
  wmma::mma_sync(fc, fa, fb, fc);
  wmma::store_matrix_sync(d, fc, M, wmma::mem_col_major);
}
__global__ void tile_32x8x16_half(const half* a, const half* b, const half* c, half* d) {
  one_tile<32, 8, 16, half>(a, b, c, d);
}
__global__ void tile_8x32x16_bf16(const __nv_bfloat16* a, const __nv_bfloat16* b, const float* c,
                                  float* d) {
  one_tile<8, 32, 16, __nv_bfloat16>(a, b, c, d);
}
__global__ void tile_8x8x4_double(const double* a, const double* b, const double* c, double* d) {
  one_tile<8, 8, 4, double>(a, b, c, d);
}
__global__ void tile_16x16x16_u8(const unsigned char* a, const unsigned char* b, const int* c,
                                 int* d) {
  one_tile<16, 16, 16, unsigned char>(a, b, c, d);
}

// tf32: A and B converted after loading (__float_to_tf32: round to nearest, ties away).
__global__ void tile_tf32(const float* a, const float* b, float* d) {
  wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 8, float> fc;
  wmma::load_matrix_sync(fa, a, 8);
  wmma::load_matrix_sync(fb, b, 8);
  for (int i = 0; i < fa.num_elements; i++) fa.x[i] = wmma::__float_to_tf32(fa.x[i]);
  for (int i = 0; i < fb.num_elements; i++) fb.x[i] = wmma::__float_to_tf32(fb.x[i]);
  wmma::fill_fragment(fc, 0.0f);
  wmma::mma_sync(fc, fa, fb, fc);
  wmma::store_matrix_sync(d, fc, 16, wmma::mem_row_major);
}

__global__ void to_tf32(const float* x, float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = wmma::__float_to_tf32(x[i]);
}

// int8 with saturation: the same product from a C near INT_MAX, wrapped and clamped.
__global__ void tile_s8_satf(const signed char* a, const signed char* b, const int* c, int* wrapped,
                             int* clamped) {
  wmma::fragment<wmma::matrix_a, 16, 16, 16, signed char, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, signed char, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, int> fc, fd;
  wmma::load_matrix_sync(fa, a, 16);
  wmma::load_matrix_sync(fb, b, 16);
  wmma::load_matrix_sync(fc, c, 16, wmma::mem_row_major);
  wmma::mma_sync(fd, fa, fb, fc);
  wmma::store_matrix_sync(wrapped, fd, 16, wmma::mem_row_major);
  wmma::mma_sync(fd, fa, fb, fc, true);
  wmma::store_matrix_sync(clamped, fd, 16, wmma::mem_row_major);
}
