// The cpu prelude's intrinsics and atomics against known answers.
#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>

#include "cpu_test_util.h"

namespace kiln::cpu_test {
namespace {

TEST(CpuIntrinsics, IntegerAndFloatIntrinsics) {
  Built b = build(R"(
__global__ void k(int* o, float* f) {
  o[0] = __popc(0xF0F0u);
  o[1] = __clz(1);
  o[2] = __clz(0);
  o[3] = __ffs(0x50);
  o[4] = (int)__brev(1u);
  o[5] = __float2int_rn(2.5f);
  o[6] = __float2int_rn(3.5f);
  o[7] = __float2int_rz(-2.7f);
  o[8] = __float2int_rd(-2.2f);
  o[9] = __float2int_ru(2.2f);
  o[10] = __float_as_int(1.0f);
  o[11] = __popcll(0xFFFFFFFFFFull);
  o[12] = __clzll(1ll);
  o[13] = __mulhi(0x40000000, 8);
  o[14] = (int)__byte_perm(0x33221100u, 0x77665544u, 0x4321u);
  o[15] = min(3, 7) + max(3u, 7u);
  o[16] = __float2int_rn(1e20f);
  f[0] = __saturatef(1.5f);
  f[1] = __saturatef(-0.5f);
  f[2] = rsqrtf(4.0f);
  f[3] = __fdividef(1.0f, 4.0f);
  f[4] = fminf(2.0f, 3.0f) + fmaxf(2.0f, 3.0f);
  f[5] = __expf(0.0f);
  f[6] = sqrtf(16.0f);
  f[7] = __int_as_float(0x3f800000);
  float s, c; sincosf(0.0f, &s, &c); f[8] = s + 2 * c;
  f[9] = max(1.5f, -2.0f);
})",
                  "k");
  Buffer<int> o(17);
  Buffer<float> f(10);
  launch(*b.kernel, {1}, {1}, 0, o.p, f.p);
  std::vector<int> expect{8,          31, 32, 5, int(0x80000000u), 2,  4,         -2, -3, 3,
                          0x3f800000, 40, 63, 2, 0x44332211,       10, 2147483647};
  EXPECT_EQ(o.host(), expect);
  std::vector<float> fe{1.0f, 0.0f, 0.5f, 0.25f, 5.0f, 1.0f, 4.0f, 1.0f, 2.0f, 1.5f};
  EXPECT_EQ(f.host(), fe);
}

// CUDA's typed min/max and its directed-rounding conversions: 2^24 + 1 and 2^53 + 1 lie
// between two floats (doubles), so each mode picks its own side.
TEST(CpuIntrinsics, TypedMinMaxAndDirectedConversions) {
  Built b = build(R"(
__global__ void k(long long* o, float* f, double* d) {
  o[0] = umin(3u, 0xFFFFFFFFu); o[1] = umax(3u, 0xFFFFFFFFu);
  o[2] = llmin(-5ll, 1ll << 40); o[3] = llmax(-5ll, 1ll << 40);
  o[4] = (long long)(ullmin(~0ull, 9ull) + ullmax(0ull, 2ull));
  const int odd = (1 << 24) + 1;
  f[0] = __int2float_rn(odd); f[1] = __int2float_rz(odd); f[2] = __int2float_ru(odd);
  f[3] = __int2float_rd(-odd); f[4] = __int2float_rz(-odd); f[5] = __uint2float_ru(unsigned(odd));
  f[6] = __ull2float_rd(~0ull); f[7] = __ll2float_ru((1ll << 40) + 1);
  f[8] = __double2float_rz(1.0 + 1e-9); f[9] = __double2float_ru(1.0 + 1e-9);
  f[10] = __double2float_rd(-1.0 - 1e-9);
  const long long odd53 = (1ll << 53) + 1;
  d[0] = __ll2double_rn(odd53); d[1] = __ll2double_ru(odd53); d[2] = __ll2double_rz(-odd53);
  d[3] = __ull2double_rd(~0ull); d[4] = __int2double_rn(-7); d[5] = __uint2double_rn(7u);
})",
                  "k");
  Buffer<long long> o(5);
  Buffer<float> f(11);
  Buffer<double> d(6);
  launch(*b.kernel, {1}, {1}, 0, o.p, f.p, d.p);
  EXPECT_EQ(o.host(), (std::vector<long long>{3, 0xFFFFFFFFll, -5, 1ll << 40, 11}));
  const float lo = 16777216.0f, hi = 16777218.0f;
  EXPECT_EQ(f.host(), (std::vector<float>{
                          lo, lo, hi, -hi, -lo, hi, std::nextafter(18446744073709551616.0f, 0.0f),
                          std::nextafter(1099511627776.0f, 2e12f), 1.0f, std::nextafter(1.0f, 2.0f),
                          std::nextafter(-1.0f, -2.0f)}));
  const double two53 = 9007199254740992.0;
  EXPECT_EQ(d.host(), (std::vector<double>{two53, two53 + 2, -two53,
                                           std::nextafter(18446744073709551616.0, 0.0), -7, 7}));
}

// A NaN converted to an integer gives what an H200 gave (2026-11-27; bench/results): 0 from a
// float to 32 bits or fewer, the sign bit alone from a double or to 64 bits; casts, intrinsics
// and inline cvt alike.
TEST(CpuIntrinsics, NaNConvertsAsTheGpuDid) {
  Built b = build(R"(
__global__ void k(long long* o, float f, double d) {
  o[0] = (int)f; o[1] = (unsigned)f; o[2] = (long long)f; o[3] = (long long)(unsigned long long)f;
  o[4] = (short)f; o[5] = (int)d; o[6] = (unsigned)d; o[7] = (long long)d; o[8] = (short)d;
  o[9] = (unsigned char)d; o[10] = __float2int_rz(f); o[11] = __float2ll_rz(f);
  o[12] = __double2int_rz(d); o[13] = __double2uint_rz(d); o[14] = (long long)__double2ull_rn(d);
  long long p; asm("cvt.rzi.s64.f64 %0, %1;" : "=l"(p) : "d"(d)); o[15] = p;
  int q; asm("cvt.rzi.s32.f64 %0, %1;" : "=r"(q) : "d"(d)); o[16] = q;
  asm("cvt.rni.s32.f32 %0, %1;" : "=r"(q) : "f"(f)); o[17] = q;
})",
                  "k");
  Buffer<long long> o(18);
  launch(*b.kernel, {1}, {1}, 0, o.p, std::nanf(""), std::nan(""));
  const long long sign64 = std::numeric_limits<long long>::min(), sign32 = INT_MIN;
  EXPECT_EQ(o.host(),
            (std::vector<long long>{0, 0, sign64, sign64, 0, sign32, 1ll << 31, sign64, 0, 0, 0,
                                    sign64, sign32, 1ll << 31, sign64, sign64, sign32, 0}));
}

TEST(CpuIntrinsics, VectorTypes) {
  Built b = build(R"(
__global__ void k(float4* out, const int2* in) {
  float4 v = make_float4(1, 2, 3, 4);
  int2 p = in[threadIdx.x];
  v.x += p.x; v.w += p.y;
  out[threadIdx.x] = v;
  static_assert(sizeof(float4) == 16 && alignof(float4) == 16, "float4");
  static_assert(sizeof(double2) == 16 && alignof(double2) == 16, "double2");
  static_assert(sizeof(float3) == 12, "float3");
  static_assert(sizeof(uchar4) == 4 && alignof(uchar4) == 4, "uchar4");
})",
                  "k");
  Buffer<int> in(std::vector<int>{10, 20, 30, 40});
  Buffer<float> out(8);
  launch(*b.kernel, {1}, {2}, 0, out.p, in.p);
  EXPECT_EQ(out.host(), (std::vector<float>{11, 2, 3, 24, 31, 2, 3, 44}));
}

TEST(CpuAtomics, KnownAnswers) {
  Built b = build(R"(
__global__ void k(unsigned* inc, unsigned* dec, int* sum, float* fsum, double* dsum,
                  unsigned long long* u64, int* mn, int* mx, int* cas_sum, unsigned* bits) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  atomicInc(inc, 9u);          // wraps at 10: 1000 increments leave 1000 % 10
  atomicDec(dec, 9u);
  atomicAdd(sum, t);
  atomicAdd(fsum, (float)(t % 7));
  atomicAdd(dsum, (double)t);
  atomicAdd(u64, 1ull << 33);
  atomicMin(mn, -t);
  atomicMax(mx, t);
  int old = *cas_sum, assumed;
  do { assumed = old; old = atomicCAS(cas_sum, assumed, assumed + 2); } while (old != assumed);
  atomicOr(bits, 1u << (t % 32));
})",
                  "k");
  Buffer<unsigned> inc(1, 0), dec(1, 3), bits(1, 0);
  Buffer<int> sum(1, 0), mn(1, 0), mx(1, 0), cas(1, 0);
  Buffer<float> fsum(1, 0);
  Buffer<double> dsum(1, 0);
  Buffer<unsigned long long> u64(1, 0);
  launch(*b.kernel, {8}, {125}, 0, inc.p, dec.p, sum.p, fsum.p, dsum.p, u64.p, mn.p, mx.p, cas.p,
         bits.p);
  EXPECT_EQ(inc.host()[0], 1000u % 10u);
  // dec from 3 with wrap to 9: the sequence 3,2,1,0,9,8,...; after 1000 steps: (3 - 1000) mod 10 =
  // 3
  EXPECT_EQ(dec.host()[0], 3u);
  EXPECT_EQ(sum.host()[0], 999 * 1000 / 2);
  double expect_f = 0;
  for (int t = 0; t < 1000; ++t) expect_f += t % 7;
  EXPECT_EQ(fsum.host()[0], float(expect_f));
  EXPECT_EQ(dsum.host()[0], 999.0 * 1000 / 2);
  EXPECT_EQ(u64.host()[0], 1000ull << 33);
  EXPECT_EQ(mn.host()[0], -999);
  EXPECT_EQ(mx.host()[0], 999);
  EXPECT_EQ(cas.host()[0], 2000);
  EXPECT_EQ(bits.host()[0], 0xffffffffu);
}

// Every atomic add returns the value before it (CUDA's contract, which ticket and compaction
// code rely on): n adds of 1 hand out each of 0 .. n-1 exactly once, for every type.
TEST(CpuAtomics, AddReturnsTheOldValue) {
  Built b = build(R"(
__global__ void tickets(float* f, double* d, int* i, unsigned long long* u, float* fo, double* dd,
                        int* io, unsigned long long* uo) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  fo[t] = atomicAdd(f, 1.0f);
  dd[t] = atomicAdd(d, 1.0);
  io[t] = atomicAdd(i, 1);
  uo[t] = atomicAdd(u, 1ull);
})",
                  "tickets");
  const int n = 1000;
  Buffer<float> f(1, 0), fo(n, -1);
  Buffer<double> d(1, 0), dd(n, -1);
  Buffer<int> i(1, 0), io(n, -1);
  Buffer<unsigned long long> u(1, 0), uo(n, 0);
  launch(*b.kernel, {8}, {125}, 0, f.p, d.p, i.p, u.p, fo.p, dd.p, io.p, uo.p);
  auto sorted = [](auto v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  auto f_old = sorted(fo.host());
  auto d_old = sorted(dd.host());
  auto i_old = sorted(io.host());
  auto u_old = sorted(uo.host());
  for (int k = 0; k < n; ++k) {
    ASSERT_EQ(f_old[k], float(k)) << "float ticket " << k;
    ASSERT_EQ(d_old[k], double(k)) << "double ticket " << k;
    ASSERT_EQ(i_old[k], k) << "int ticket " << k;
    ASSERT_EQ(u_old[k], (unsigned long long)k) << "u64 ticket " << k;
  }
  EXPECT_EQ(f.host()[0], float(n));
}

// Atomics on shared memory (static and dynamic) take the cpu backend's unlocked path: every
// update must still count, for each kind of update, with threads that switch at barriers.
TEST(CpuAtomics, SharedMemoryUpdatesAllCount) {
  Built b = build(R"(
__global__ void k(unsigned* out, float* fout, int rounds) {
  __shared__ unsigned bins[8];
  __shared__ float fsum;
  __shared__ int lo, hi;
  extern __shared__ unsigned long long dyn[];
  const int t = threadIdx.x;
  if (t < 8) bins[t] = 0;
  if (t == 0) { fsum = 0; lo = 1 << 30; hi = -1; dyn[0] = 0; dyn[1] = ~0ull; }
  __syncthreads();
  for (int r = 0; r < rounds; ++r) {
    atomicAdd(&bins[(t + r) % 8], 1u);
    atomicAdd(&fsum, 0.5f);
    atomicMin(&lo, t + r);
    atomicMax(&hi, t * r);
    atomicAdd(&dyn[0], 3ull);
    atomicAnd(&dyn[1], ~(1ull << ((t + r) % 64)));
    if (r % 2) __syncthreads();
  }
  __syncthreads();
  if (t < 8) atomicAdd(&out[t], bins[t]);
  if (t == 0) {
    atomicAdd(fout, fsum);
    out[8] = lo; out[9] = hi; out[10] = (unsigned)dyn[0]; out[11] = (unsigned)(dyn[1] != 0);
  }
})",
                  "k");
  const int threads = 96, blocks = 5, rounds = 6;
  Buffer<unsigned> out(12, 0);
  Buffer<float> fout(1, 0.0f);
  launch(*b.kernel, {blocks}, {threads}, 2 * sizeof(unsigned long long), out.p, fout.p, rounds);
  auto o = out.host();
  for (int i = 0; i < 8; ++i) EXPECT_EQ(o[i], unsigned(blocks * threads * rounds / 8)) << i;
  EXPECT_EQ(fout.host()[0], 0.5f * threads * rounds * blocks);
  EXPECT_EQ(o[8], 0u);
  EXPECT_EQ(o[9], unsigned((threads - 1) * (rounds - 1)));
  EXPECT_EQ(o[10], unsigned(3 * threads * rounds));
  EXPECT_EQ(o[11], 0u);  // every bit cleared by some thread
}

TEST(CpuAtomics, IncWrapsAtLimit) {
  Built b = build(R"(
__global__ void k(unsigned* p, unsigned* old) { old[threadIdx.x] = atomicInc(p, 2u); })",
                  "k");
  Buffer<unsigned> p(1, 0), old(1, 99);
  for (unsigned expected : {0u, 1u, 2u, 0u, 1u}) {
    launch(*b.kernel, {1}, {1}, 0, p.p, old.p);
    EXPECT_EQ(old.host()[0], expected);
  }
}

}  // namespace
}  // namespace kiln::cpu_test
