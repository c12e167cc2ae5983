
__global__ void k(int* out, const int* reps_of) {
  __shared__ int s[64];
  const int t = threadIdx.x;
  if    __syncthreads();
    (r + 1);
    __syncthreads();
    acc += s[t == 52 ? 5 : t + 1];
  acc += s[t == 52 ? 5 : t + 1];
    __syncthreads();
  }
  out[t] = acc;
}