#define LANE()                              \
  ({                                        \
    unsigned l;                             \
    asm("mov.u32 %0, %%laneid;" : "=r"(l)); \
    l;                                      \
  })
#define SYNC() asm volatile("bar.sync 0;" ::: "memory")
__device__ unsigned wide_add(unsigned a, unsigned b, unsigned& hi) {
  unsigned lo;
  asm("add.cc.u32 %0, %2, %3;\n\taddc.u32 %1, 0, 0;" : "=r"(lo), "=r"(hi) : "r"(a), "r"(b));
  return lo;
}
__global__ void k(const float4* in, int* out, unsigned* c) {
  __shared__ int s[64];
  float a, b, x, y;
  asm volatile("ld.global.nc.v4.f32 {%0, %1, %2, %3}, [%4+16];"
               : "=f"(a), "=f"(b), "=f"(x), "=f"(y)
               : "l"(in));
  int v = (int)a, r;
  for (int o = 16; o > 0; o >>= 1) {
    asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(r) : "r"(v), "r"(o));
    v += r;
  }
  s[threadIdx.x] = v;
  SYNC();
  if (threadIdx.x == 0)
    asm("red.global.add.u32 [%0], %1;" ::"l"(c), "r"(s[1]));
  else
    v = 0;
  asm volatile("{ .reg .pred p; setp.ne.s32 p, %1, 0; @p mov.s32 %0, 1; @!p mov.s32 %0, 2; }"
               : "=r"(r)
               : "r"(v));
  unsigned sh = static_cast<unsigned>(__cvta_generic_to_shared(s));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 16;" ::"r"(sh), "l"(in));
  asm volatile("" ::: "memory");
  out[threadIdx.x] = r + LANE();
}
