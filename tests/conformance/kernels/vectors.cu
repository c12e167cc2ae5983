// Conformance: CUDA's vector types as kernels in the samples use them: float4 loads and stores
// for bandwidth, a uchar4 pixel kernel, a float2 complex multiply, vectors by value, and the
// sizes and alignments the host must lay arrays out with.
#define VECTOR_TYPES(X)                                                                          \
  X(float2)                                                                                      \
  X(float3)                                                                                      \
  X(float4) X(double2) X(int2) X(int3) X(int4) X(uint2) X(uint3) X(uint4) X(char4) X(uchar4)     \
      X(short2) X(ushort2) X(double3) X(double4) X(char2) X(char3) X(uchar2) X(uchar3) X(short3) \
          X(short4) X(ushort3) X(ushort4)

__global__ void layouts(int* out) {
  int k = 0;
#define LAYOUT(T) out[k++] = sizeof(T); out[k++] = alignof(T);
  VECTOR_TYPES(LAYOUT)
#undef LAYOUT
}

// y = a * x + y over float4 lanes: the vectorised saxpy of bandwidth-bound samples.
__global__ void saxpy4(float a, const float4* __restrict__ x, float4* __restrict__ y, int n4) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n4) return;
  const float4 xv = x[i];
  float4 yv = y[i];
  yv.x += a * xv.x;
  yv.y += a * xv.y;
  yv.z += a * xv.z;
  yv.w += a * xv.w;
  y[i] = yv;
}

// RGBA pixels: invert the colour, keep alpha; tint by a uchar4 passed by value.
__global__ void invert(uchar4* pixels, uchar4 tint, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  uchar4 p = pixels[i];
  pixels[i] = make_uchar4(255 - p.x, 255 - p.y, (255 - p.z) & tint.z, p.w);
}

// Complex products, the float2 of the FFT samples.
__global__ void complex_mul(const float2* a, const float2* b, float2* c, float2 scale, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float2 u = a[i], v = b[i];
  c[i] = make_float2((u.x * v.x - u.y * v.y) * scale.x, (u.x * v.y + u.y * v.x) * scale.y);
}

// Vectors by value between scalars: each at its alignment in the parameter buffer.
__global__ void by_value(int a, double2 v, char b, float3 w, int4 q, double* out) {
  out[0] = a; out[1] = v.x; out[2] = v.y; out[3] = b; out[4] = w.x; out[5] = w.y; out[6] = w.z;
  out[7] = q.x; out[8] = q.y; out[9] = q.z; out[10] = q.w;
}

// Bodies in double precision, as an fp64 n-body keeps them: w = x + y * z, and each body's
// position moved by its double3 velocity.
__global__ void bodies(double4* b, const double3* v, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double4 p = b[i];
  p.w = p.x + p.y * p.z;
  p.x += v[i].x;
  p.y += v[i].y;
  p.z += v[i].z;
  b[i] = p;
}

// Interleaved RGB (the layout of tutorials and OpenCV) read as uchar3: luma per pixel.
__global__ void gray(const uchar3* rgb, unsigned char* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const uchar3 p = rgb[i];
  out[i] = (unsigned char)((299 * p.x + 587 * p.y + 114 * p.z) / 1000);
}
