__device__ void mark(bool& b, int v) {
  if (v % 3 == 0) b = true;
}
__global__ void k(const int* in, int* out, int rounds) {
  __shared__ int s[64];
  int t = threadIdx.x;
  bool hit = false, odd;
  bool keep = in[t] > 50;
  bool* where = &keep;
  decltype(keep) other = false;
  bool more = rounds > 0;
  s[t] = in[t];
  __syncthreads();
  odd = s[63 - t] % 2 == 1;
  mark(hit, s[(t + 1) % 64]);
  hit |= t == 0;
  other ^= odd;
  __syncthreads();
  while (more) {
    s[t] += hit ? 1 : 0;
    __syncthreads();
    more = s[0] < rounds + in[0];
    __syncthreads();
  }
  out[t] = s[t] + (odd ? 1000 : 0) + (*where ? 10000 : 0) + (other ? 100000 : 0);
}
