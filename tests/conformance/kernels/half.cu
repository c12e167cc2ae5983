// Conformance: __half and __nv_bfloat16 as mixed-precision samples use them: inputs converted
// to 16 bits, arithmetic on the 16-bit type (scalar and paired), results widened to float.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

__global__ void narrow_math(const float* a, const float* b, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const __half ha = __float2half(a[i]), hb = __float2half(b[i]);
  const __nv_bfloat16 ba = __float2bfloat16(a[i]), bb = __float2bfloat16(b[i]);
  float* o = out + 8 * i;
  o[0] = __half2float(ha);
  o[1] = __half2float(__hadd(ha, hb));
  o[2] = __half2float(ha * hb);
  o[3] = __half2float(__hfma(ha, hb, __float2half(1.0f)));
  const __half2 pair = __hmul2(__floats2half2_rn(a[i], b[i]), __float2half2_rn(2.0f));
  o[4] = __low2float(pair) + __high2float(pair);
  o[5] = __bfloat162float(ba);
  o[6] = __bfloat162float(__hadd(ba, bb));
  o[7] = __hlt(ha, hb) ? 1.0f : 0.0f;
}

// 16-bit arrays straight from Lua (float16, half2 and bfloat16 dtypes): y = a * x + y with one
// rounding, in pairs through __half2, and bfloat16 rows summed in float.
__global__ void haxpy(const __half* x, __half* y, __half a, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = __hfma(a, x[i], y[i]);
}

__global__ void haxpy2(const __half2* x, __half2* y, __half2 a, int pairs) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < pairs) y[i] = __hfma2(a, x[i], y[i]);
}

__global__ void bf16_row_sums(const __nv_bfloat16* m, float* sums, int rows, int cols) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  float s = 0;
  for (int c = 0; c < cols; ++c) s += __bfloat162float(m[r * cols + c]);
  sums[r] = s;
}
