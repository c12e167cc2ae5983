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

// The rest of the API as mixed-precision code reaches for it: directed rounding, integer
// conversions that saturate, _sat and _relu forms, NaN-aware comparisons and max, pair masks,
// complex multiply-add and rint; 20 results per input.
__global__ void narrow_api(const float* a, const float* b, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const __half ha = __float2half(a[i]), hb = __float2half(b[i]), nan = __ushort_as_half(0x7fff);
  const __half2 p = make_half2(ha, hb), q = __lowhigh2highlow(p);
  float* o = out + 20 * i;
  o[0] = __half2float(__float2half_rz(a[i]));
  o[1] = __half2float(__float2half_rd(a[i]));
  o[2] = __half2float(__float2half_ru(a[i]));
  o[3] = __bfloat162float(__float2bfloat16_rz(a[i]));
  o[4] = __bfloat162float(__float2bfloat16_ru(a[i]));
  o[5] = __half2int_rd(ha);
  o[6] = __half2int_ru(ha);
  o[7] = __half2short_rn(__float2half(a[i] * 200.0f));
  o[8] = __half2uint_rz(ha);
  o[9] = __half2float(__int2half_ru((int)(a[i] * 1000.0f)));
  o[10] = __half2float(__int2half_rz((int)(a[i] * 1000.0f)));
  o[11] = __bfloat162float(__ll2bfloat16_rd((long long)(a[i] * 1e12)));
  o[12] = __half2float(__hadd_sat(ha, hb));
  o[13] = __half2float(__hfma_relu(ha, hb, __float2half(1.0f)));
  o[14] = __hltu(ha, nan) + 2 * __hlt(ha, nan) + 4 * __hisnan(__hmax_nan(ha, hb)) +
          8 * __hisnan(__hmax_nan(ha, nan)) + 16 * (__hmax(ha, nan) == ha) + 32 * __hbge2(p, p);
  o[15] = (float)__hgt2_mask(p, q);
  const __half2 c = __hcmadd(p, p, p);
  o[16] = __low2float(c);
  o[17] = __high2float(c);
  o[18] = __half2float(hrint(ha));
  o[19] = __half2float(__hsub_sat(hb, ha));
}

// Every thread adds 1 to a half and {1, 0.5} to a half2: atomicAdd on 16-bit floats.
__global__ void count_half(__half* total, __half2* pair, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  atomicAdd(total, __float2half(1.0f));
  atomicAdd(pair, __half2(1.0f, 0.5f));  // (the constructor from two values)
}

// Eight halves loaded as one int4 and read back as four half2s, as vectorised fp16 code loads
// them: the bytes stored through one type are read through another (the host compiler's strict
// aliasing once dropped the store: 0 instead of the sum).
__global__ void pun_sum(const __half* x, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int4 raw = *reinterpret_cast<const int4*>(x + 8 * i);
  const __half2* pairs = reinterpret_cast<const __half2*>(&raw);
  __half2 acc = __float2half2_rn(0.0f);
  for (int k = 0; k < 4; ++k) acc = __hadd2(acc, pairs[k]);
  out[i] = __low2float(acc) + __high2float(acc);
}
