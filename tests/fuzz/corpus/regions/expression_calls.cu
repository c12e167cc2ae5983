__device__ int scan_inclusive(int v, volatile int* s, int size) {
  int pos = 2 * threadIdx.x - (threadIdx.x & (size - 1));
  s[pos] = 0;
  pos += size;
  s[pos] = v;
  for (int offset = 1; offset < size; offset <<= 1) {
    __syncthreads();
    int t = s[pos] + s[pos - offset];
    __syncthreads();
    s[pos] = t;
  }
  return s[pos];
}
__device__ int scan_exclusive(int v, volatile int* s, int size) {
  return scan_inclusive(v, s, size) - v;
}
__global__ void k(const int* in, int* out) {
  __shared__ int s[2 * 256];
  const int v = in[blockIdx.x * blockDim.x + threadIdx.x];
  out[blockIdx.x * blockDim.x + threadIdx.x] = 10 * scan_exclusive(v, s, 256) + 1;
  int a = v > 0 ? scan_exclusive(v, s, 256) : 0, b = sizeof(scan_exclusive(a, s, 2));
  if (a) out[0] = h(scan_exclusive(a, s, 256), b);
}
