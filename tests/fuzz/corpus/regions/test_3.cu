
struct P { int a, b; };
__global__ void k(int* out, const int* in) {
  __shared__ int s[4][4][4];
  const int x = threadIdx.x, y = threadIdx.y, z = threadIdx.z;
  int v[3];
  const int* p = in + x, *q(in + y);
  P pair{z, x};
  v[0] = *p; v[1] = *q; v[2] = z;
  s[z][y][x] = v[0] + 10 * v[1];
  __syncthreads();
  out[(z * 4 + y) * 4 + x] = s[x][z][y] * 1000 + v[2] * 100 + pair.a * 10 + pair.b;
}