
__global__ void k(int* out, const int* reps_of) {
  __shared__ int s[64];
  const int t = threadIdx.x;
  if (t < 5) return;
  const int reps = reps_of[0];
  int acc = 0;
  for (int r = 0; r < reps; ++r) {
    s[t] = t * (r + 1);
    __syncthreads();
    acc += s[t == 63 ? 5 : t + 1];
    __syncthreads();
  }
  out[t] = acc;
}