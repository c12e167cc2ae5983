struct quad {
  int a, b, c, d;
};
__global__ void k(const int* in, int* out) {
  __shared__ int s[64];
  quad q = {in[threadIdx.x], 1, 2, 3};
  int w = in[threadIdx.x] % 5;
  auto field = [&](int f) { return f == 0 ? q.a : q.d + w; };
  auto copy = [=] { return w; };
  s[threadIdx.x] = field(0);
  __syncthreads();
  w = s[(threadIdx.x + 3) % blockDim.x];
  q.a = __shfl_xor_sync(0xffffffffu, q.a, 5);
  out[threadIdx.x] = field(threadIdx.x % 2) + copy();
}
