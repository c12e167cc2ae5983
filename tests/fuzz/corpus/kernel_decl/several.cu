#include <kiln.cuh>
// a comment with __global__ void fake()
extern "C" __global__ void cfill(double* x, double v, unsigned n) { x[threadIdx.x] = v; }
template <typename T, int TPB = 256> __global__ void reduce(const T* in, T* out, long long n);
template <typename T, int TPB> __global__ void reduce(const T* in, T* out, long long n) {
  __shared__ T s[TPB]; __syncthreads(); const char* str = "__global__ void no()";
}
__global__ void img(kiln::Array<float, 2> a, kiln::Array<unsigned char, 3> b) {}
