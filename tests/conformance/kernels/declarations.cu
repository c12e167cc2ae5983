// Conformance: declarations as published code writes them. A separable-convolution row pass
// with its filter in a __constant__ table sized by a macro; dynamic shared memory declared with
// the type before __shared__ in a template, and as aligned bytes; kernels whose names the C and
// CUDA headers also use.
#define KERNEL_RADIUS 4
#define KERNEL_LENGTH (2 * KERNEL_RADIUS + 1)

static __constant__ float c_Kernel[KERNEL_LENGTH];  // (static, as quasirandomGenerator's)
__device__ int d_calls;

__global__ void convolution_rows(float* __restrict__ dst, const float* __restrict__ src, int w,
                                 int h) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x >= w || y >= h) return;
  float sum = 0;
#pragma unroll
  for (int k = -KERNEL_RADIUS; k <= KERNEL_RADIUS; ++k) {
    const int xx = min(max(x + k, 0), w - 1);
    sum += src[y * w + xx] * c_Kernel[KERNEL_RADIUS - k];
  }
  dst[y * w + x] = sum;
  if (x == 0 && y == 0) atomicAdd(&d_calls, 1);
}

// Reverses each block's slice through dynamic shared memory: `extern T __shared__`.
template <typename T>
__global__ void reverse_blocks(const T* in, T* out) {
  extern T __shared__ tile[];
  const int t = threadIdx.x, base = blockIdx.x * blockDim.x;
  tile[t] = in[base + t];
  __syncthreads();
  out[base + t] = tile[blockDim.x - 1 - t];
}

// The same with aligned raw bytes, reinterpreted.
__global__ void reverse_bytes(const double* in, double* out) {
  extern __shared__ __align__(16) unsigned char raw[];
  double* tile = reinterpret_cast<double*>(raw);
  const int t = threadIdx.x, base = blockIdx.x * blockDim.x;
  tile[t] = in[base + t];
  __syncthreads();
  out[base + t] = tile[blockDim.x - 1 - t];
}

// Rows of dynamic shared memory, their width a macro with parentheses (cudaTensorCoreGemm's
// `extern __shared__ half shmem[][CHUNK_K * K + SKEW_HALF];`): a block transposes its tile.
#define ROW (4 * (2 + 2))
__global__ void transpose_rows(const float* in, float* out) {
  extern __shared__ float rows[][ROW];
  const int r = threadIdx.x / ROW, c = threadIdx.x % ROW, base = blockIdx.x * ROW * ROW;
  rows[r][c] = in[base + threadIdx.x];
  __syncthreads();
  out[base + threadIdx.x] = rows[c][r];
}

__global__ void a(int* o) { o[threadIdx.x] = 1; }
__global__ void f(int* o) { o[threadIdx.x] = 2; }
__global__ void min(int* o) { o[threadIdx.x] = 3; }
__global__ void max(int* o) { o[threadIdx.x] = 4; }
// Named like functions of the host's C library, with parameters of their own.
__global__ void rand(int* o, int n) {
  if (threadIdx.x < n) o[threadIdx.x] = 5;
}
__global__ void time(int* o, int n) {
  if (threadIdx.x < n) o[threadIdx.x] = 6;
}
__global__ void index(int* o, int n) {
  if (threadIdx.x < n) o[threadIdx.x] = 7;
}
__global__ void select(int* o, int n) {
  if (threadIdx.x < n) o[threadIdx.x] = 8;
}
__global__ void div(int* o, int n) {
  if (threadIdx.x < n) o[threadIdx.x] = 9;
}
