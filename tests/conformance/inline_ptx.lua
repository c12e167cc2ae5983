-- Conformance: inline PTX (`asm("..." : outputs : inputs)`) as kernels from the wild write it:
-- special registers, carry chains for wide integers, bit-field and permute instructions,
-- rounding-mode arithmetic and conversions, vector loads and atomics, and warp shuffles and
-- votes in CUB's style. References: the PTX ISA manual's definitions, written again here in
-- Lua, and known answers (float bits of correctly rounded results).
local m = cuda.module([[
__device__ __forceinline__ unsigned ptx_laneid() {
  unsigned r;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(r));
  return r;
}

__global__ void registers(unsigned* out) {
  const unsigned t = threadIdx.x + blockDim.x * threadIdx.y;
  const unsigned i = blockIdx.x * blockDim.x * blockDim.y + t;
  unsigned* o = out + 10 * i;
  unsigned tx, ty, nx, cx, ncx, lt, warp, smid, nsmid;
  unsigned long long c0, c1;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(c0));
  asm("mov.u32 %0, %%tid.x;\n\tmov.u32 %1, %%tid.y;" : "=r"(tx), "=r"(ty));
  asm("mov.u32 %0, %%ntid.x;" : "=r"(nx));
  asm("mov.u32 %0, %%ctaid.x;\n\t"
      "mov.u32 %1, %%nctaid.x;" : "=r"(cx), "=r"(ncx));
  asm("mov.u32 %0, %%lanemask_lt;" : "=r"(lt));
  asm volatile("mov.u32 %0, %%warpid;" : "=r"(warp));
  asm volatile("mov.u32 %0, %%smid;\n\tmov.u32 %1, %%nsmid;" : "=r"(smid), "=r"(nsmid));
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(c1));
  o[0] = ptx_laneid(); o[1] = tx; o[2] = ty; o[3] = nx; o[4] = cx; o[5] = ncx; o[6] = lt;
  o[7] = warp; o[8] = smid < nsmid; o[9] = c1 >= c0;
}

// a + b on four 32-bit limbs (a 128-bit add), a * b + c as two limbs, x - y on two limbs, and
// 64-bit products' high halves.
__global__ void wide(const unsigned* a, const unsigned* b, unsigned* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const unsigned* x = a + 4 * i;
  const unsigned* y = b + 4 * i;
  unsigned* o = out + 16 * i;
  asm("add.cc.u32  %0, %4, %8;\n\t"
      "addc.cc.u32 %1, %5, %9;\n\t"
      "addc.cc.u32 %2, %6, %10;\n\t"
      "addc.u32    %3, %7, %11;"
      : "=r"(o[0]), "=r"(o[1]), "=r"(o[2]), "=r"(o[3])
      : "r"(x[0]), "r"(x[1]), "r"(x[2]), "r"(x[3]), "r"(y[0]), "r"(y[1]), "r"(y[2]), "r"(y[3]));
  asm("mad.lo.cc.u32 %0, %2, %3, %4;\n\t"
      "madc.hi.u32 %1, %2, %3, 0;" : "=r"(o[4]), "=r"(o[5]) : "r"(x[0]), "r"(y[0]), "r"(x[1]));
  asm("sub.cc.u32 %0, %2, %4;\n\t"
      "subc.u32 %1, %3, %5;" : "=r"(o[6]), "=r"(o[7]) : "r"(x[0]), "r"(x[1]), "r"(y[0]), "r"(y[1]));
  unsigned long long p = ((unsigned long long)x[1] << 32) | x[0];
  unsigned long long q = ((unsigned long long)y[1] << 32) | y[0];
  unsigned long long hi, wide_lo;
  asm("mul.hi.u64 %0, %1, %2;" : "=l"(hi) : "l"(p), "l"(q));
  asm("mul.wide.u32 %0, %1, %2;" : "=l"(wide_lo) : "r"(x[2]), "r"(y[2]));
  asm("mov.b64 {%0, %1}, %2;" : "=r"(o[8]), "=r"(o[9]) : "l"(hi));
  asm("mov.b64 {%0, %1}, %2;" : "=r"(o[10]), "=r"(o[11]) : "l"(wide_lo));
  int s;
  asm("mul.hi.s32 %0, %1, %2;" : "=r"(s) : "r"((int)x[3]), "r"((int)y[3]));
  o[12] = s;
  asm("add.sat.s32 %0, %1, %2;" : "=r"(s) : "r"((int)x[3]), "r"((int)y[3]));
  o[13] = s;
  unsigned long long packed;
  asm("mov.b64 %0, {%1, %2};" : "=l"(packed) : "r"(x[0]), "r"(y[0]));
  o[14] = (unsigned)(packed >> 32);
  o[15] = (unsigned)packed;
}

// Bit instructions of words x, y, z.
__global__ void bits(const unsigned* w, unsigned* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const unsigned x = w[3 * i], y = w[3 * i + 1], z = w[3 * i + 2];
  unsigned* o = out + 24 * i;
  asm("lop3.b32 %0, %1, %2, %3, 0x96;" : "=r"(o[0]) : "r"(x), "r"(y), "r"(z));
  asm("lop3.b32 %0, %1, %2, %3, 0xE8;" : "=r"(o[1]) : "r"(x), "r"(y), "r"(z));
  asm("lop3.b32 %0, %1, %2, %3, %4;" : "=r"(o[2]) : "r"(x), "r"(y), "r"(z), "n"(0xCA));
  asm("prmt.b32 %0, %1, %2, %3;" : "=r"(o[3]) : "r"(x), "r"(y), "r"(z));
  asm("prmt.b32.f4e %0, %1, %2, %3;" : "=r"(o[4]) : "r"(x), "r"(y), "r"(z));
  asm("prmt.b32.b4e %0, %1, %2, %3;" : "=r"(o[5]) : "r"(x), "r"(y), "r"(z));
  asm("prmt.b32.ecl %0, %1, %2, %3;" : "=r"(o[6]) : "r"(x), "r"(y), "r"(z));
  asm("prmt.b32.ecr %0, %1, %2, %3;" : "=r"(o[7]) : "r"(x), "r"(y), "r"(z));
  asm("prmt.b32.rc16 %0, %1, %2, %3;" : "=r"(o[8]) : "r"(x), "r"(y), "r"(z));
  asm("bfe.u32 %0, %1, %2, %3;" : "=r"(o[9]) : "r"(x), "r"(y & 31), "r"(z & 31));
  asm("bfe.s32 %0, %1, %2, %3;" : "=r"(o[10]) : "r"(x), "r"(y & 31), "r"(z & 31));
  asm("bfi.b32 %0, %1, %2, %3, %4;" : "=r"(o[11]) : "r"(x), "r"(y), "r"(z & 31), "r"((z >> 8) & 31));
  asm("bfind.u32 %0, %1;" : "=r"(o[12]) : "r"(x >> (y & 31)));
  asm("bfind.s32 %0, %1;" : "=r"(o[13]) : "r"(x));
  asm("bfind.shiftamt.u32 %0, %1;" : "=r"(o[14]) : "r"(y >> 7));
  asm("brev.b32 %0, %1;" : "=r"(o[15]) : "r"(x));
  asm("popc.b32 %0, %1;" : "=r"(o[16]) : "r"(x));
  asm("clz.b32 %0, %1;" : "=r"(o[17]) : "r"(y >> (z & 31)));
  asm("shf.l.wrap.b32 %0, %1, %2, %3;" : "=r"(o[18]) : "r"(x), "r"(y), "r"(z));
  asm("shf.r.clamp.b32 %0, %1, %2, %3;" : "=r"(o[19]) : "r"(x), "r"(y), "r"(z & 63));
  asm("shl.b32 %0, %1, %2;" : "=r"(o[20]) : "r"(x), "r"(z & 63));
  asm("shr.s32 %0, %1, %2;" : "=r"(o[21]) : "r"(x), "r"(z & 63));
  unsigned long long v = ((unsigned long long)y << 32) | x, r;
  asm("bfe.u64 %0, %1, %2, %3;" : "=l"(r) : "l"(v), "r"(z & 63), "r"((z >> 8) & 63));
  o[22] = (unsigned)r;
  o[23] = (unsigned)(r >> 32);
}

// Rounding modes, conversions, comparisons and classes, with known answers.
__global__ void floats(unsigned* o, float* f) {
  const double third = 1.0 / 3.0;
  float r;
  asm("cvt.rn.f32.f64 %0, %1;" : "=f"(r) : "d"(third)); o[0] = __float_as_uint(r);
  asm("cvt.rz.f32.f64 %0, %1;" : "=f"(r) : "d"(third)); o[1] = __float_as_uint(r);
  asm("cvt.rm.f32.f64 %0, %1;" : "=f"(r) : "d"(-third)); o[2] = __float_as_uint(r);
  asm("cvt.rp.f32.f64 %0, %1;" : "=f"(r) : "d"(-third)); o[3] = __float_as_uint(r);
  asm("cvt.rz.f32.u32 %0, %1;" : "=f"(r) : "r"(0xffffffffu)); o[4] = __float_as_uint(r);
  asm("cvt.rn.f32.u32 %0, %1;" : "=f"(r) : "r"(0xffffffffu)); o[5] = __float_as_uint(r);
  int k;
  asm("cvt.rni.s32.f32 %0, %1;" : "=r"(k) : "f"(2.5f)); o[6] = k;
  asm("cvt.rni.s32.f32 %0, %1;" : "=r"(k) : "f"(-3.5f)); o[7] = k;
  asm("cvt.rzi.s32.f32 %0, %1;" : "=r"(k) : "f"(3e9f)); o[8] = k;
  asm("cvt.rmi.s32.f32 %0, %1;" : "=r"(k) : "f"(-1.5f)); o[9] = k;
  asm("cvt.rzi.u32.f32 %0, %1;" : "=r"(k) : "f"(-7.0f)); o[10] = k;
  asm("cvt.rzi.s32.f32 %0, %1;" : "=r"(k) : "f"(__int_as_float(0x7fc00000))); o[11] = k;
  asm("add.rz.f32 %0, %1, %2;" : "=f"(r) : "f"(1.0f), "f"(0x1p-30f)); o[12] = __float_as_uint(r);
  asm("add.rp.f32 %0, %1, %2;" : "=f"(r) : "f"(1.0f), "f"(0x1p-30f)); o[13] = __float_as_uint(r);
  asm("rcp.rn.f32 %0, %1;" : "=f"(r) : "f"(3.0f)); o[14] = __float_as_uint(r);
  asm("sqrt.rn.f32 %0, %1;" : "=f"(r) : "f"(2.0f)); o[15] = __float_as_uint(r);
  asm("fma.rn.f32 %0, %1, %2, %3;" : "=f"(r) : "f"(1.0f + 0x1p-13f), "f"(1.0f - 0x1p-13f), "f"(-1.0f));
  f[0] = r;
  asm("mul.rn.f32 %0, %1, %2;\n\tadd.rn.f32 %0, %0, %3;" : "=&f"(r) : "f"(1.0f + 0x1p-13f), "f"(1.0f - 0x1p-13f), "f"(-1.0f));
  f[1] = r;
  const float nan = __int_as_float(0x7fc00000);
  unsigned p;
  asm("{ .reg .pred a, b, c, d;\n\t"
      "setp.ne.f32 a, %1, 1.0;\n\t"
      "setp.neu.f32 b, %1, 1.0;\n\t"
      "setp.lt.u32 c, %2, 1;\n\t"
      "setp.lt.s32 d, %2, 1;\n\t"
      "selp.u32 %0, 1, 0, a;\n\t"
      "@b add.u32 %0, %0, 2;\n\t"
      "@c add.u32 %0, %0, 4;\n\t"
      "@!d add.u32 %0, %0, 8; }" : "=r"(p) : "f"(nan), "r"(0xffffffffu));
  o[16] = p;  // b only: 2
  asm("{ .reg .pred n, s;\n\t"
      "testp.notanumber.f32 n, %1;\n\t"
      "testp.subnormal.f32 s, %2;\n\t"
      "selp.u32 %0, 1, 0, n;\n\t"
      "@s or.b32 %0, %0, 2; }" : "=r"(p) : "f"(nan), "f"(0x1p-130f));
  o[17] = p;  // 3
  asm("min.f32 %0, %1, %2;" : "=f"(r) : "f"(nan), "f"(1.5f)); f[2] = r;
  asm("copysign.f32 %0, %1, %2;" : "=f"(r) : "f"(-1.0f), "f"(3.0f)); f[3] = r;
  asm("ex2.approx.f32 %0, %1;" : "=f"(r) : "f"(3.0f)); f[4] = r;
  asm("lg2.approx.f32 %0, %1;" : "=f"(r) : "f"(10.0f)); f[5] = r;
  asm("rsqrt.approx.f32 %0, %1;" : "=f"(r) : "f"(4.0f)); f[6] = r;
  double d;
  asm("fma.rz.f64 %0, %1, %2, %3;" : "=d"(d) : "d"(third), "d"(3.0), "d"(0.0)); f[7] = (float)(d - 1.0);
}

// Half and bfloat16 conversions (bits in "h" registers), clamps to narrow integers, and the
// GCC operand model: inputs read before any output is written.
__global__ void narrow(unsigned short* h, unsigned* o, float* f, const unsigned long long* list) {
  const float third = 1.0f / 3.0f, nan = __int_as_float(0x7fc00000);
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h[0]) : "f"(third));
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h[1]) : "f"(65520.0f));
  asm("cvt.rz.f16.f32 %0, %1;" : "=h"(h[2]) : "f"(65520.0f));
  asm("cvt.rm.f16.f32 %0, %1;" : "=h"(h[3]) : "f"(-65520.0f));
  asm("cvt.rp.f16.f32 %0, %1;" : "=h"(h[4]) : "f"(-65520.0f));
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h[5]) : "f"(0x1p-25f));
  asm("cvt.rp.f16.f32 %0, %1;" : "=h"(h[6]) : "f"(0x1p-25f));
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h[7]) : "f"(nan));
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h[8]) : "f"(1.00390625f));
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h[9]) : "f"(1.005859375f));
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(o[0]) : "f"(2.0f), "f"(-1.0f));
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(o[1]) : "f"(1.0f), "f"(0.5f));
  asm("cvt.f32.f16 %0, %1;" : "=f"(f[0]) : "h"((unsigned short)0x0001));
  asm("cvt.f32.f16 %0, %1;" : "=f"(f[1]) : "h"((unsigned short)0xc200));
  unsigned short u8;  // (an 8-bit result in a 16-bit register)
  short s16;
  asm("cvt.rni.u8.f32 %0, %1;" : "=h"(u8) : "f"(300.0f));
  asm("cvt.rzi.s16.f32 %0, %1;" : "=h"(s16) : "f"(-1e6f));
  o[2] = u8;
  o[3] = (unsigned)(int)s16;
  unsigned x = 10;
  asm("mov.u32 %0, 0;\n\tadd.u32 %0, %0, %1;" : "=&r"(x) : "r"(x + 1));  // x + 1 of x before
  o[4] = x;
  unsigned long long a = (unsigned long long)list, b;  // a list node: {next, value}
  asm volatile("ld.global.v2.u64 {%0, %1}, [%2];" : "=l"(a), "=l"(b) : "l"(a));
  o[5] = (unsigned)b;
  o[6] = a == list[0];
  float v;
  asm volatile("ld.acquire.gpu.global.f32 %0, [%1];" : "=f"(v) : "l"(f + 1));
  f[2] = v;
}

// Bignum helpers in CGBN's style, one asm statement per instruction, the carry flag between
// them; .ftz; a product rounded on its own (mul.rn, __fmul_rn), never fused into what follows;
// a block vote in asm.
__device__ __forceinline__ unsigned add_cc(unsigned a, unsigned b) {
  unsigned r;
  asm volatile("add.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
  return r;
}
__device__ __forceinline__ unsigned addc_cc(unsigned a, unsigned b) {
  unsigned r;
  asm volatile("addc.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
  return r;
}
__device__ __forceinline__ unsigned addc(unsigned a, unsigned b) {
  unsigned r;
  asm volatile("addc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
  return r;
}
__global__ void helpers(const unsigned* a, const unsigned* b, unsigned* sum, float* f, int* votes) {
  const int i = threadIdx.x;
  const unsigned* x = a + 4 * i;
  const unsigned* y = b + 4 * i;
  unsigned* s = sum + 4 * i;
  s[0] = add_cc(x[0], y[0]);
  s[1] = addc_cc(x[1], y[1]);
  s[2] = addc_cc(x[2], y[2]);
  s[3] = addc(x[3], y[3]);
  if (i == 0) {
    const float tiny = 1e-40f, e = 1.0f + 0x1p-12f;
    float r;
    asm("cvt.ftz.f32.f32 %0, %1;" : "=f"(r) : "f"(tiny)); f[0] = r;
    asm("add.ftz.f32 %0, %1, %2;" : "=f"(r) : "f"(tiny), "f"(tiny)); f[1] = r;
    asm("add.f32 %0, %1, %2;" : "=f"(r) : "f"(tiny), "f"(tiny)); f[2] = r;
    asm("mul.rn.f32 %0, %1, %1;" : "=f"(r) : "f"(e));
    f[3] = r - (1.0f + 0x1p-11f);  // (the product rounded first: 0; fused, 2^-24)
    f[4] = __fmul_rn(e, e) - (1.0f + 0x1p-11f);
  }
  unsigned n;
  asm volatile("{ .reg .pred p;\n\tsetp.ne.s32 p, %1, 0;\n\tbar.red.popc.u32 %0, 0, p; }"
               : "=r"(n) : "r"(i % 3));
  votes[i] = n;
}

// 24-bit multiplies, sad, bmsk, fns, byte dot products of mixed signs, isspacep.
__global__ void packed(unsigned* o, const unsigned* g) {
  asm("mul24.lo.s32 %0, %1, %2;" : "=r"(o[0]) : "r"(0x7f800001u), "r"(3u));
  asm("mul24.hi.u32 %0, %1, %2;" : "=r"(o[1]) : "r"(0xabffffffu), "r"(0x00ffffffu));
  asm("mad24.lo.u32 %0, %1, %2, %3;" : "=r"(o[2]) : "r"(0x01000010u), "r"(0x10u), "r"(7u));
  asm("sad.s32 %0, %1, %2, %3;" : "=r"(o[3]) : "r"(-5), "r"(7), "r"(100));
  asm("sad.u32 %0, %1, %2, %3;" : "=r"(o[4]) : "r"(3u), "r"(10u), "r"(1u));
  asm("bmsk.clamp.b32 %0, %1, %2;" : "=r"(o[5]) : "r"(4u), "r"(8u));
  asm("bmsk.wrap.b32 %0, %1, %2;" : "=r"(o[6]) : "r"(28u), "r"(8u));
  asm("bmsk.clamp.b32 %0, %1, %2;" : "=r"(o[7]) : "r"(40u), "r"(5u));
  asm("fns.b32 %0, %1, %2, %3;" : "=r"(o[8]) : "r"(0xb6u), "r"(0u), "r"(3));
  asm("fns.b32 %0, %1, %2, %3;" : "=r"(o[9]) : "r"(0xb6u), "r"(6u), "r"(-2));
  asm("fns.b32 %0, %1, %2, %3;" : "=r"(o[10]) : "r"(0xb6u), "r"(0u), "r"(6));
  asm("dp4a.u32.s32 %0, %1, %2, %3;" : "=r"(o[11]) : "r"(0x01020304u), "r"(0xff01fe02u), "r"(10u));
  asm("dp2a.lo.s32.u32 %0, %1, %2, %3;" : "=r"(o[12]) : "r"(0xfffe0003u), "r"(0x0000ff05u), "r"(0u));
  asm("dp2a.hi.s32.u32 %0, %1, %2, %3;" : "=r"(o[13]) : "r"(0xfffe0003u), "r"(0x0000ff05u), "r"(9u));
  asm("{ .reg .pred p, q;\n\tisspacep.global p, %1;\n\tisspacep.shared q, %1;\n\t"
      "selp.u32 %0, 1, 0, p;\n\t@q add.u32 %0, %0, 2; }" : "=r"(o[14]) : "l"(g));
  asm("vadd.u32.u32.u32.add %0, %1, %2, %3;" : "=r"(o[15]) : "r"(0xfffffff0u), "r"(0x20u), "r"(5u));
  asm("vshr.u32.u32.u32.clamp.add %0, %1, %2, %3;" : "=r"(o[16]) : "r"(0x100u), "r"(4u), "r"(1u));
  asm("vshl.u32.u32.u32.clamp.add %0, %1, %2, %3;" : "=r"(o[17]) : "r"(7u), "r"(40u), "r"(3u));
  asm("vmin.s32.s32.s32.max %0, %1, %2, %3;" : "=r"(o[18]) : "r"(-9), "r"(4), "r"(-20));
  asm("szext.clamp.s32 %0, %1, %2;" : "=r"(o[19]) : "r"(0x1f0u), "r"(8u));
  asm("szext.wrap.u32 %0, %1, %2;" : "=r"(o[20]) : "r"(0x1f0u), "r"(36u));
}

// Vector loads and stores, offsets, atomics and reductions, acquire and release.
__global__ void memory(const float4* in, float4* out, const unsigned* words, unsigned* counts,
                       float* sum, unsigned* tickets, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float a, b, c, d;
  asm volatile("ld.global.nc.v4.f32 {%0, %1, %2, %3}, [%4];"
               : "=f"(a), "=f"(b), "=f"(c), "=f"(d) : "l"(in + i));
  asm volatile("st.global.v4.f32 [%0], {%1, %2, %3, %4};"
               :: "l"(out + i), "f"(d), "f"(c * 2.0f), "f"(b), "f"(a + 1.0f) : "memory");
  unsigned w;
  asm("ld.global.u32 %0, [%1+8];" : "=r"(w) : "l"(words + i));
  unsigned ticket;
  asm volatile("atom.global.add.u32 %0, [%1], 1;" : "=r"(ticket) : "l"(counts) : "memory");
  tickets[i] = ticket;
  asm volatile("red.global.add.f32 [%0], %1;" :: "l"(sum), "f"(a) : "memory");
  asm volatile("red.global.add.u32 [%0], %1;" :: "l"(counts + 1), "r"(w) : "memory");
  asm volatile("atom.global.max.s32 %0, [%1], %2;" : "=r"(ticket) : "l"(counts + 2), "r"(int(w) - 50) : "memory");
  unsigned old, expected = 0, seen;
  asm volatile("atom.global.cas.b32 %0, [%1], %2, %3;" : "=r"(old) : "l"(counts + 3), "r"(expected), "r"(i + 1u) : "memory");
  if (old == 0) counts[4] = i + 1;  // the one thread that won
  unsigned long long g;
  asm("cvta.to.global.u64 %0, %1;" : "=l"(g) : "l"(counts + 5));
  asm volatile("st.release.gpu.global.u32 [%0], %1;" :: "l"(g), "r"(7u) : "memory");
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(seen) : "l"(g) : "memory");
  if (seen != 7u) counts[6] = 1;
}

// Warp shuffles, votes and reductions as CUB writes them, and a block barrier.
__global__ void warps(const int* v, int* o) {
  __shared__ int s[64];
  const unsigned t = threadIdx.x, lane = t & 31;
  int x = v[blockIdx.x * blockDim.x + t];
  int* out = o + 8 * (blockIdx.x * blockDim.x + t);
  int sum = x;
  for (int offset = 16; offset > 0; offset /= 2) {
    int y;
    asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(y) : "r"(sum), "r"(offset));
    sum += y;
  }
  out[0] = sum;
  int scan = x;
  for (int offset = 1; offset < 32; offset *= 2)
    asm volatile("{ .reg .s32 r0;\n\t"
                 "  .reg .pred p;\n\t"
                 "  shfl.sync.up.b32 r0|p, %1, %2, 0, 0xffffffff;\n\t"
                 "  @p add.s32 r0, r0, %1;\n\t"
                 "  mov.s32 %0, r0; }" : "=r"(scan) : "r"(scan), "r"(offset));
  out[1] = scan;
  int lead;
  asm volatile("shfl.sync.idx.b32 %0, %1, 0, 0x181f, 0xffffffff;" : "=r"(lead) : "r"(x));  // width 8
  out[2] = lead;
  unsigned ballot;
  asm volatile("{ .reg .pred p;\n\t"
               "  setp.gt.s32 p, %1, 50;\n\t"
               "  vote.sync.ballot.b32 %0, p, 0xffffffff; }" : "=r"(ballot) : "r"(x));
  out[3] = ballot;
  unsigned total;
  asm volatile("redux.sync.add.u32 %0, %1, 0xffffffff;" : "=r"(total) : "r"(x));
  out[4] = total;
  unsigned same;
  asm volatile("match.any.sync.b32 %0, %1, 0xffffffff;" : "=r"(same) : "r"(lane / 4));
  out[5] = same;
  s[t] = x;
  asm volatile("bar.sync 0;" ::: "memory");
  out[6] = *(int*)__cvta_shared_to_generic(__cvta_generic_to_shared(&s[(t + 1) % blockDim.x]));
  if (lane < 10) {
    unsigned active;
    asm volatile("activemask.b32 %0;" : "=r"(active));
    out[7] = (active >> lane & 1) && (active >> 10) == 0;
  } else {
    out[7] = 1;
  }
}
]])

local M32 = 0xffffffff
local function u32(x) return x & M32 end
local function s32(x) x = x & M32; return x >= 0x80000000 and x - 0x100000000 or x end
local function bit(x, i) return (x >> i) & 1 end
local function check(what, got, want)
  assert(got == want, ("%s: got 0x%x, want 0x%x"):format(what, got, want))
end

-- Special registers, in a {32, 4} block of a 3-block grid.
local regs = cuda.device_array(3 * 128 * 10, "uint32")
m.registers[{ 3, { 32, 4 } }](regs)
local hr = regs:copy_to_host()
for b = 0, 2 do
  for ty = 0, 3 do
    for tx = 0, 31 do
      local t = tx + 32 * ty
      local o = (b * 128 + t) * 10
      local want = { t % 32, tx, ty, 32, b, 3, (1 << (t % 32)) - 1 }
      for j = 1, 7 do check(("registers[%d,%d,%d][%d]"):format(b, tx, ty, j - 1), hr[o + j], want[j]) end
      -- %warpid is the warp's slot on its SM: one value across the warp's lanes
      check("warpid across a warp", hr[o + 8], hr[(b * 128 + 32 * ty) * 10 + 8])
      check("smid < nsmid", hr[o + 9], 1)
      check("clock64 runs forward", hr[o + 10], 1)
    end
  end
end

-- Wide arithmetic on pseudo-random limbs.
local n = 40
local seed = 12345
local function rand32()
  seed = (seed * 6364136223846793005 + 1442695040888963407)
  return (seed >> 32) & M32
end
local ha, hb = array.zeros(4 * n, "uint32"), array.zeros(4 * n, "uint32")
for i = 1, 4 * n do ha[i], hb[i] = rand32(), rand32() end
ha[1], ha[2], ha[3], ha[4] = M32, M32, M32, 0x7fffffff     -- carries through every limb
hb[1], hb[2], hb[3], hb[4] = 1, 0, 0, 0x7fffffff           -- and add.sat's overflow
local wide_out = cuda.device_array(16 * n, "uint32")
m.wide[{ 1, 64 }](cuda.to_device(ha), cuda.to_device(hb), wide_out, n)
local hw = wide_out:copy_to_host()
-- the high 64 bits of a 64 x 64-bit product, from 32-bit limbs
local function mul_hi64(a0, a1, b0, b1)
  local p00, p01, p10, p11 = a0 * b0, a0 * b1, a1 * b0, a1 * b1
  local mid = (p00 >> 32) + (p01 & M32) + (p10 & M32)
  return p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32)
end
for i = 0, n - 1 do
  local x = { ha[4 * i + 1], ha[4 * i + 2], ha[4 * i + 3], ha[4 * i + 4] }
  local y = { hb[4 * i + 1], hb[4 * i + 2], hb[4 * i + 3], hb[4 * i + 4] }
  local o = 16 * i
  local carry = 0
  for l = 1, 4 do
    local s = x[l] + y[l] + carry
    check(("128-bit add %d limb %d"):format(i, l), hw[o + l], s & M32)
    carry = s >> 32
  end
  local mad = x[1] * y[1] + x[2]  -- < 2^64: exact modulo 2^64
  check("mad.lo.cc / madc.hi lo", hw[o + 5], mad & M32)
  check("mad.lo.cc / madc.hi hi", hw[o + 6], (mad >> 32) & M32)
  local diff = ((x[2] << 32) | x[1]) - ((y[2] << 32) | y[1])
  check("sub.cc / subc lo", hw[o + 7], diff & M32)
  check("sub.cc / subc hi", hw[o + 8], (diff >> 32) & M32)
  local hi = mul_hi64(x[1], x[2], y[1], y[2])
  check("mul.hi.u64 lo", hw[o + 9], hi & M32)
  check("mul.hi.u64 hi", hw[o + 10], (hi >> 32) & M32)
  local wl = x[3] * y[3]
  check("mul.wide.u32 lo", hw[o + 11], wl & M32)
  check("mul.wide.u32 hi", hw[o + 12], (wl >> 32) & M32)
  check("mul.hi.s32", hw[o + 13], u32((s32(x[4]) * s32(y[4])) >> 32))
  local sat = math.max(-2 ^ 31, math.min(2 ^ 31 - 1, s32(x[4]) + s32(y[4])))
  check("add.sat.s32", hw[o + 14], u32(math.tointeger(sat)))
  check("mov.b64 pack hi", hw[o + 15], y[1])
  check("mov.b64 pack lo", hw[o + 16], x[1])
end

-- Bit instructions, against the manual's definitions bit by bit.
local words = array.zeros(3 * n, "uint32")
for i = 1, 3 * n do words[i] = rand32() end
words[1], words[2], words[3] = 0x80000000, 0x00001f1f, 0x00000a1f  -- bfe/bfind edge cases
words[4], words[5], words[6] = 0, 0, 0
local bits_out = cuda.device_array(24 * n, "uint32")
m.bits[{ 1, 64 }](cuda.to_device(words), bits_out, n)
local hbits = bits_out:copy_to_host()
local function lop3(a, b, c, lut)
  local r = 0
  for i = 0, 31 do
    local idx = (bit(a, i) << 2) | (bit(b, i) << 1) | bit(c, i)
    r = r | (bit(lut, idx) << i)
  end
  return r
end
local function byte_of(a, b, k) return k < 4 and (a >> (8 * k)) & 0xff or (b >> (8 * (k - 4))) & 0xff end
local function prmt(a, b, c)  -- the default mode: each nibble picks a byte, bit 3 replicates its sign
  local r = 0
  for i = 0, 3 do
    local sel = (c >> (4 * i)) & 0xf
    local v = byte_of(a, b, sel & 7)
    if sel & 8 ~= 0 then v = (v & 0x80) ~= 0 and 0xff or 0 end
    r = r | (v << (8 * i))
  end
  return r
end
-- the manual's tables for the other modes: bytes d.b0..d.b3 for selector c[1:0] = 0..3
local prmt_tables = {
  f4e = { { 0, 1, 2, 3 }, { 1, 2, 3, 4 }, { 2, 3, 4, 5 }, { 3, 4, 5, 6 } },
  b4e = { { 0, 7, 6, 5 }, { 1, 0, 7, 6 }, { 2, 1, 0, 7 }, { 3, 2, 1, 0 } },
  ecl = { { 0, 1, 2, 3 }, { 1, 1, 2, 3 }, { 2, 2, 2, 3 }, { 3, 3, 3, 3 } },
  ecr = { { 0, 0, 0, 0 }, { 0, 1, 1, 1 }, { 0, 1, 2, 2 }, { 0, 1, 2, 3 } },
  rc16 = { { 0, 1, 0, 1 }, { 2, 3, 2, 3 }, { 0, 1, 0, 1 }, { 2, 3, 2, 3 } },
}
local function prmt_mode(a, b, c, mode)
  local t = prmt_tables[mode][(c & 3) + 1]
  local r = 0
  for i = 0, 3 do r = r | (byte_of(a, b, t[i + 1]) << (8 * i)) end
  return r
end
local function bfe(a, pos, len, signed, width)
  local msb = width - 1
  local sbit = (signed and len ~= 0) and bit(a, math.min(pos + len - 1, msb)) or 0
  local r = 0
  for i = 0, msb do
    local b = (i < len and pos + i <= msb) and bit(a, pos + i) or sbit
    r = r | (b << i)
  end
  return r
end
local function bfind(a, signed)
  if signed and a & 0x80000000 ~= 0 then a = ~a & M32 end
  for i = 31, 0, -1 do if bit(a, i) == 1 then return i end end
  return M32
end
for i = 0, n - 1 do
  local x, y, z = words[3 * i + 1], words[3 * i + 2], words[3 * i + 3]
  local o = 24 * i
  local function want(j, v, what) check(("bits[%d] %s"):format(i, what), hbits[o + j + 1], u32(v)) end
  want(0, lop3(x, y, z, 0x96), "lop3 0x96")
  want(1, lop3(x, y, z, 0xE8), "lop3 0xE8")
  want(2, lop3(x, y, z, 0xCA), "lop3 0xCA")
  want(3, prmt(x, y, z), "prmt")
  for j, mode in ipairs({ "f4e", "b4e", "ecl", "ecr", "rc16" }) do
    want(3 + j, prmt_mode(x, y, z, mode), "prmt." .. mode)
  end
  want(9, bfe(x, y & 31, z & 31, false, 32), "bfe.u32")
  want(10, bfe(x, y & 31, z & 31, true, 32), "bfe.s32")
  local pos, len, ins = z & 31, (z >> 8) & 31, y
  for k = 0, len - 1 do
    if pos + k <= 31 then ins = (ins & ~(1 << (pos + k))) | (bit(x, k) << (pos + k)) end
  end
  want(11, ins, "bfi.b32")
  want(12, bfind(x >> (y & 31), false), "bfind.u32")
  want(13, bfind(x, true), "bfind.s32")
  local f = bfind(y >> 7, false)
  want(14, f == M32 and M32 or 31 - f, "bfind.shiftamt.u32")
  local rev = 0
  for k = 0, 31 do rev = rev | (bit(x, k) << (31 - k)) end
  want(15, rev, "brev.b32")
  local pop = 0
  for k = 0, 31 do pop = pop + bit(x, k) end
  want(16, pop, "popc.b32")
  local v, clz = y >> (z & 31), 32
  for k = 31, 0, -1 do if bit(v, k) == 1 then clz = 31 - k break end end
  want(17, clz, "clz.b32")
  local wrap = z & 31
  want(18, wrap == 0 and y or ((y << wrap) | (x >> (32 - wrap))), "shf.l.wrap")
  local clamp = math.min(z & 63, 32)
  want(19, clamp == 32 and y or ((((y << 32) | x) >> clamp)), "shf.r.clamp")
  want(20, (z & 63) >= 32 and 0 or (x << (z & 63)), "shl.b32 (clamped)")
  local sh = math.min(z & 63, 31)
  want(21, u32(s32(x) >> sh), "shr.s32 (clamped)")
  local r64 = bfe((y << 32) | x, z & 63, (z >> 8) & 63, false, 64)
  want(22, r64 & M32, "bfe.u64 lo")
  want(23, (r64 >> 32) & M32, "bfe.u64 hi")
end

-- Floats: bits of correctly rounded results (worked out from the formats).
local fo, ff = cuda.device_array(18, "uint32"), cuda.device_array(8, "float32")
m.floats[{ 1, 1 }](fo, ff)
local hf, hff = fo:copy_to_host(), ff:copy_to_host()
local known = {
  0x3eaaaaab, 0x3eaaaaaa, 0xbeaaaaab, 0xbeaaaaaa,  -- 1/3 rn, rz; -1/3 rm, rp
  0x4f7fffff, 0x4f800000,                          -- 2^32 - 1 rz, rn
  2, u32(-4), 0x7fffffff, u32(-2), 0, 0,           -- rni ties to even, rzi saturates, rmi, u32 of -7, NaN
  0x3f800000, 0x3f800001,                          -- 1 + 2^-30 rz, rp
  0x3eaaaaab, 0x3fb504f3,                          -- rcp.rn(3), sqrt.rn(2)
  2, 3,                                            -- predicates with NaN and signedness; testp
}
for i, want in ipairs(known) do check(("floats[%d]"):format(i - 1), hf[i], want) end
assert(hff[1] == -2 ^ -26, "fma.rn keeps the product exact: " .. hff[1])
assert(hff[2] == 0, "mul.rn then add.rn rounds the product: " .. hff[2])
assert(hff[3] == 1.5 and hff[4] == -3, "min.f32 with NaN, copysign")
assert(math.abs(hff[5] - 8) < 1e-5 and math.abs(hff[6] - math.log(10, 2)) < 1e-5 and
       math.abs(hff[7] - 0.5) < 1e-6, "ex2, lg2, rsqrt approximations")
assert(hff[8] < 0 and hff[8] > -1e-15, "fma.rz.f64 of (1/3) * 3 rounds toward zero: " .. hff[8])

-- Half and bfloat16 bits, narrow clamps, inputs before outputs.
local hh, ho2, hf2 = cuda.device_array(10, "uint16"), cuda.device_array(7, "uint32"), cuda.device_array(3, "float32")
local nodes = cuda.device_array(4, "uint64")
m.narrow[{ 1, 1 }](hh, ho2, hf2, nodes)  -- (first, to learn the list's address)
local node = nodes:copy_to_host()
node[1], node[2] = 0, 77  -- a node whose next is null, value 77
nodes = cuda.to_device(node)
m.narrow[{ 1, 1 }](hh, ho2, hf2, nodes)
local want_h = { 0x3555, 0x7c00, 0x7bff, 0xfc00, 0xfbff, 0x0000, 0x0001, 0x7fff, 0x3f80, 0x3f81 }
local got_h = hh:copy_to_host()
for i, w in ipairs(want_h) do check(("narrow half/bf16 bits[%d]"):format(i - 1), got_h[i], w) end
local got_o = ho2:copy_to_host()
for i, w in ipairs({ 0x4000bf80, 0x3c003800, 255, u32(-32768), 11, 77, 1 }) do
  check(("narrow[%d]"):format(i - 1), got_o[i], w)
end
local got_f = hf2:copy_to_host()
assert(got_f[1] == 2 ^ -24 and got_f[2] == -3 and got_f[3] == -3, "cvt.f32.f16 and ld.acquire.f32")

-- Carries between asm statements, .ftz, unfused products, a block vote.
local la, lb = array.zeros(4 * 64, "uint32"), array.zeros(4 * 64, "uint32")
for i = 1, 4 * 64 do la[i], lb[i] = rand32(), rand32() end
for l = 1, 3 do la[l], lb[l] = M32, l == 1 and 1 or 0 end  -- a carry through three limbs
local lsum, lf, lv = cuda.device_array(4 * 64, "uint32"), cuda.device_array(5, "float32"), cuda.device_array(64, "int32")
m.helpers[{ 1, 64 }](cuda.to_device(la), cuda.to_device(lb), lsum, lf, lv)
local hs = lsum:copy_to_host()
for i = 0, 63 do
  local carry = 0
  for l = 1, 4 do
    local v = la[4 * i + l] + lb[4 * i + l] + carry
    check(("carry between statements %d limb %d"):format(i, l), hs[4 * i + l], v & M32)
    carry = v >> 32
  end
end
local hlf = lf:copy_to_host()
assert(hlf[1] == 0 and hlf[2] == 0 and hlf[3] > 1e-40,
       ".ftz flushes, plain add keeps subnormals: " .. hlf[1] .. " " .. hlf[2] .. " " .. hlf[3])
assert(hlf[4] == 0 and hlf[5] == 0, "mul.rn and __fmul_rn are not fused: " .. hlf[4] .. " " .. hlf[5])
local want_votes = 0
for i = 0, 63 do if i % 3 ~= 0 then want_votes = want_votes + 1 end end
for i = 1, 64 do check("bar.red.popc", lv:copy_to_host()[i], want_votes) end

-- The packed and 24-bit instructions, against the manual's definitions.
local po = cuda.device_array(21, "uint32")
m.packed[{ 1, 1 }](po, cuda.device_array(1, "uint32"))
local hp = po:copy_to_host()
local function sext24(x) x = x & 0xffffff; return x >= 0x800000 and x - 0x1000000 or x end
local want_p = {
  u32(sext24(0x7f800001) * 3), ((0xffffff * 0xffffff) >> 16) & M32, u32(0x10 * 0x10 + 7),
  112, 8, 0xff0, 0xf0000000, 0,
  4, 4, M32,                      -- fns: the 3rd set bit of 0xb6 from 0 up; 2nd from 6 down; none
  13, u32(3 * 5 - 2 * 255), 9, 1,
  0x15, 0x11, 3, u32(-9), u32(-16), 0,  -- vadd/vshr/vshl(clamp 32)/vmin.max; szext s32 of 8 bits, u32 of 4
}
for i, w in ipairs(want_p) do check(("packed[%d]"):format(i - 1), hp[i], w) end

-- Memory: vector loads and stores, offsets, atomics.
local count = 100
local hin = array.zeros(4 * count, "float32")  -- float4s
for i = 1, count do for j = 1, 4 do hin[4 * (i - 1) + j] = i + j / 8 end end
local hwords = array.zeros(count + 2, "uint32")
for i = 1, count + 2 do hwords[i] = (i * 37) % 101 end
local outv, counts = cuda.device_array(4 * count, "float32"), cuda.to_device(array.zeros(8, "uint32"))
local sum, tickets = cuda.to_device(array.zeros(1, "float32")), cuda.device_array(count, "uint32")
m.memory[{ 4, 32 }](cuda.to_device(hin), outv, cuda.to_device(hwords), counts, sum, tickets, count)
local ho, hc, ht = outv:copy_to_host(), counts:copy_to_host(), tickets:copy_to_host()
local want_sum, want_words, want_max, seen = 0, 0, 0, {}
for i = 1, count do
  local k = 4 * (i - 1)
  local a, b, c, d = hin[k + 1], hin[k + 2], hin[k + 3], hin[k + 4]
  assert(ho[k + 1] == d and ho[k + 2] == 2 * c and ho[k + 3] == b and ho[k + 4] == a + 1, "v4 load/store " .. i)
  want_sum = want_sum + a
  want_words = want_words + hwords[i + 2]
  want_max = math.max(want_max, hwords[i + 2] - 50)
  assert(not seen[ht[i]] and ht[i] < count, "atom.add tickets are distinct")
  seen[ht[i]] = true
end
check("atom.add count", hc[1], count)
check("red.add.u32 of words at +8 bytes", hc[2], want_words)
check("atom.max.s32", hc[3], u32(want_max))
assert(hc[4] >= 1 and hc[4] <= count and hc[5] == hc[4], "atom.cas: one winner")
check("st.release / ld.acquire", hc[6], 7)
check("acquire saw the release", hc[7], 0)
assert(math.abs(sum:copy_to_host()[1] - want_sum) < 1e-3 * want_sum, "red.add.f32")

-- Warps and a block barrier, in two blocks of 64.
local hv = array.zeros(128, "int32")
for i = 1, 128 do hv[i] = (i * 29) % 97 end
local wo = cuda.device_array(128 * 8, "int32")
m.warps[{ 2, 64 }](cuda.to_device(hv), wo)
local hwo = wo:copy_to_host()
for w = 0, 3 do
  local base = 32 * w
  local total, ballot = 0, 0
  for l = 0, 31 do
    total = total + hv[base + l + 1]
    if hv[base + l + 1] > 50 then ballot = ballot | (1 << l) end
  end
  local scan = 0
  for l = 0, 31 do
    local t = base + l
    local o = 8 * t
    scan = scan + hv[t + 1]
    check("shfl.bfly sum", hwo[o + 1], total)
    check("shfl.up scan", hwo[o + 2], scan)
    check("shfl.idx width 8", hwo[o + 3], hv[base + (l & ~7) + 1])
    check("vote.ballot", u32(hwo[o + 4]), ballot)
    check("redux.add", hwo[o + 5], total)
    check("match.any", u32(hwo[o + 6]), 0xf << (4 * (l // 4)))
    local block, tb = t // 64, t % 64
    check("bar.sync", hwo[o + 7], hv[64 * block + (tb + 1) % 64 + 1])
    check("activemask", hwo[o + 8], 1)
  end
end
-- PTX the cpu backend cannot run stops only the kernel that reaches it: the module builds.
if cuda.backend() == "cpu" then
  local mixed = cuda.module([[
__global__ void fine(int* o) { unsigned l; asm("mov.u32 %0, %%laneid;" : "=r"(l)); o[threadIdx.x] = l; }
__global__ void shared_copy(const float* g) {
  __shared__ float s[32];
  unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(&s[threadIdx.x]));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"(a), "l"(g + threadIdx.x));
}]])
  local lanes = cuda.device_array(32, "int32")
  mixed.fine[{ 1, 32 }](lanes)
  check("a kernel beside untranslatable PTX", lanes:copy_to_host()[32], 31)
  local ok, err = pcall(function() mixed.shared_copy[{ 1, 32 }](cuda.device_array(32, "float32")) end)
  assert(not ok and tostring(err):find("kernel.cu:5: inline PTX the cpu backend cannot run: `cp.async", 1, true),
         tostring(err))
end
for _, k in ipairs({ "registers", "wide", "bits", "floats", "narrow", "helpers", "packed", "memory", "warps" }) do
  print(("%-9s %s"):format(k, m[k]:info().threads))
end
print("inline_ptx: ok")
