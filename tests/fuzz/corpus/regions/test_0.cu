__global__ void plain(int* x) { x[threadIdx.x] = 1; }
__global__ void k(float* out) {
  __shared__ float s[32];
  const int t = threadIdx.x, u = 31 - t;
  float v[2];
  v[0] = t; v[1] = u;
  s[t] = v[0];
  __syncthreads();
  out[t] = s[u] + v[1];
}