#define S(x)       \
  __syncthreads(); \
  printf(#x)
#define P(a, b) \
  a##b();       \
  __syncthreads()
#ifdef EMU
#define E __syncthreads()
#endif
__global__ void k(int* s) {
  S(hi);
  P(__sync, threads);
  E;
}
