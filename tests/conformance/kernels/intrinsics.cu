// Conformance: what nvcc shows device code (__CUDA_ARCH__, __CUDACC__), the qualifiers published
// kernels use (__launch_bounds__, __restrict__, __forceinline__, __ldg) and the integer and float
// intrinsics of the CUDA Math API. Each thread writes INTS integer and FLOATS float results for
// its pair of inputs; the Lua side recomputes them.
#define INTS 16
#define FLOATS 8

__device__ __forceinline__ unsigned rotate_left(unsigned x, unsigned s) {
  return __funnelshift_l(x, x, s);
}

__global__ void __launch_bounds__(128) arch(int* out) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
  out[0] = __CUDA_ARCH__;
#else
  out[0] = -1;
#endif
#ifdef __CUDACC__
  out[1] = 1;
#else
  out[1] = 0;
#endif
}

__global__ void __launch_bounds__(256, 2)
    integer_ops(const unsigned* __restrict__ a, const unsigned* __restrict__ b,
                long long* __restrict__ out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const unsigned x = __ldg(a + i), y = __ldg(b + i);
  long long* o = out + (long long)i * INTS;
  o[0] = __popc(x);
  o[1] = __clz((int)x);
  o[2] = __ffs((int)x);
  o[3] = __brev(x);
  o[4] = __byte_perm(x, y, 0x7531);
  o[5] = __funnelshift_l(x, y, y & 63);
  o[6] = __funnelshift_r(x, y, y & 63);
  o[7] = __mul24((int)x, (int)y);
  o[8] = __umulhi(x, y);
  o[9] = __umul24(x, y);
  o[10] = __popcll(((unsigned long long)x << 32) | y);
  o[11] = __clzll((long long)y);
  o[12] = rotate_left(x, 7);
  o[13] = __dp4a((int)x, (int)y, 5);
  o[14] = __usad(x, y, 3);
  o[15] = __mulhi((int)x, (int)y);
}

__global__ void float_ops(const float* __restrict__ a, const float* __restrict__ b,
                          float* __restrict__ out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float x = a[i], y = b[i];
  float* o = out + (long long)i * FLOATS;
  float s, c;
  sincosf(x, &s, &c);
  o[0] = __fdividef(x, y);
  o[1] = __saturatef(x - 0.5f);
  o[2] = rsqrtf(y);
  o[3] = s;
  o[4] = c;
  o[5] = __fmaf_rn(x, y, 1.0f);
  o[6] = fminf(x, y) + fmaxf(x, y);
  o[7] = __int_as_float(__float_as_int(x) ^ 0x80000000);
}
