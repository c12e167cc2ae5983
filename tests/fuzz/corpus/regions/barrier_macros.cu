#define SYNC() __syncthreads()
#define BAR \
  SYNC();   \
  SYNC()
#define F(a, b) \
  {             \
    a += b;     \
    SYNC();     \
  }
__global__ void k(int* s) {
  int t = threadIdx.x;
  SYNC();
  BAR;
  F(s[t], (1, 2));
  F(s[t], 3);
}
