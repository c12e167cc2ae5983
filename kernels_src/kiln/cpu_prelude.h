// The CUDA device environment for kernels compiled by the host C++ compiler (the cpu backend).
// Included first in every generated translation unit: it defines the CUDA keywords, built-in
// variables, vector types, math library, intrinsics, atomics and warp operations so that
// unmodified CUDA C++ kernels compile and behave as on an NVIDIA GPU. Barriers and warp
// operations call back into the runtime (kiln_cpu::Api), which runs the block's threads as
// fibers. Kept light on purpose: every kernel compile parses it.
#pragma once
#define KILN_CPU 1

#include <math.h>  // the C++ wrapper: float overloads of sqrt, abs, ... in the global namespace
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>

#include "kiln/cpu_abi.h"

// ---- Keywords --------------------------------------------------------------------------------
#define __global__
#define __device__
#define __host__
#define __constant__
#define __managed__
#define __grid_constant__
#define __shared__ thread_local  // one block runs at a time per OS thread: per-block storage
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __align__(n) __attribute__((aligned(n)))
#define __builtin_align__(n) __attribute__((aligned(n)))
#define __launch_bounds__(...)
#define __cudart_builtin__
#define CUDART_CB

namespace kiln_cpu {

#pragma GCC visibility push(hidden)
// This thread's CUDA identity; the runtime rebinds it per block and per fiber switch.
static thread_local Tls tls{};  // constant-initialised: no TLS init guard
#pragma GCC visibility pop

// Traps the launch: the runtime reports message with the kernel, block and thread.
[[noreturn]] inline void trap(const char* message) {
  tls.api->trap(tls.exec, message);
  __builtin_unreachable();
}

// assert() inside kernels: a GPU reports the failed assertion and stops the kernel.
[[noreturn]] inline void assert_fail(const char* expr, const char* file, int line,
                                     const char* func) {
  char buf[512];
  snprintf(buf, sizeof buf, "%s:%d: %s: assertion '%s' failed", file, line, func, expr);
  trap(buf);
}

inline unsigned linear_tid() {
  return tls.thread_idx.x + tls.block_dim.x * (tls.thread_idx.y + tls.block_dim.y * tls.thread_idx.z);
}
inline unsigned lane_id() { return linear_tid() & 31u; }

}  // namespace kiln_cpu

#undef assert
#ifdef NDEBUG
#define assert(e) ((void)0)
#else
#define assert(e) \
  ((e) ? (void)0 : ::kiln_cpu::assert_fail(#e, __FILE__, __LINE__, __func__))
#endif

// ---- Built-in variables ----------------------------------------------------------------------
using kiln_cpu::dim3;
using kiln_cpu::uint3;
// They name kiln_cpu_tls() unqualified: a region-mode kernel declares a local of that name that
// holds the Tls address taken once per block (runtime/cpu_regions.cpp).
inline ::kiln_cpu::Tls& kiln_cpu_tls() { return ::kiln_cpu::tls; }
#define threadIdx (static_cast<const ::kiln_cpu::uint3&>(kiln_cpu_tls().thread_idx))
#define blockIdx (static_cast<const ::kiln_cpu::uint3&>(kiln_cpu_tls().block_idx))
#define blockDim (static_cast<const ::kiln_cpu::dim3&>(kiln_cpu_tls().block_dim))
#define gridDim (static_cast<const ::kiln_cpu::dim3&>(kiln_cpu_tls().grid_dim))
constexpr int warpSize = 32;

// ---- Vector types ----------------------------------------------------------------------------
#define KILN_VEC1(T, N, A) \
  struct __attribute__((aligned(A))) N##1 { T x; }; \
  inline N##1 make_##N##1(T x) { return N##1{x}; }
#define KILN_VEC2(T, N, A) \
  struct __attribute__((aligned(A))) N##2 { T x, y; }; \
  inline N##2 make_##N##2(T x, T y) { return N##2{x, y}; }
#define KILN_VEC3(T, N, A) \
  struct N##3 { T x, y, z; }; \
  inline N##3 make_##N##3(T x, T y, T z) { return N##3{x, y, z}; }
#define KILN_VEC4(T, N, A) \
  struct __attribute__((aligned(A))) N##4 { T x, y, z, w; }; \
  inline N##4 make_##N##4(T x, T y, T z, T w) { return N##4{x, y, z, w}; }
#define KILN_VECS(T, N, S)                                               \
  KILN_VEC1(T, N, S) KILN_VEC2(T, N, (2 * S > 16 ? 16 : 2 * S)) KILN_VEC3(T, N, S) \
  KILN_VEC4(T, N, (4 * S > 16 ? 16 : 4 * S))
KILN_VECS(signed char, char, 1)
KILN_VECS(unsigned char, uchar, 1)
KILN_VECS(short, short, 2)
KILN_VECS(unsigned short, ushort, 2)
KILN_VECS(int, int, 4)
KILN_VECS(long, long, 8)
KILN_VECS(unsigned long, ulong, 8)
KILN_VECS(long long, longlong, 8)
KILN_VECS(unsigned long long, ulonglong, 8)
KILN_VECS(float, float, 4)
KILN_VECS(double, double, 8)
KILN_VEC1(unsigned, uint, 4)
KILN_VEC2(unsigned, uint, 8)
KILN_VEC4(unsigned, uint, 16)
inline uint3 make_uint3(unsigned x, unsigned y, unsigned z) { return uint3{x, y, z}; }
#undef KILN_VECS
#undef KILN_VEC1
#undef KILN_VEC2
#undef KILN_VEC3
#undef KILN_VEC4

// ---- Math: CUDA's extras beyond <cmath> ------------------------------------------------------
// CUDA's global min/max overloads (integer and floating point, with the mixed forms).
#define KILN_MINMAX(T)                                  \
  inline T min(T a, T b) { return a < b ? a : b; }     \
  inline T max(T a, T b) { return a > b ? a : b; }
KILN_MINMAX(int)
KILN_MINMAX(unsigned)
KILN_MINMAX(long)
KILN_MINMAX(unsigned long)
KILN_MINMAX(long long)
KILN_MINMAX(unsigned long long)
#undef KILN_MINMAX
inline float min(float a, float b) { return fminf(a, b); }
inline float max(float a, float b) { return fmaxf(a, b); }
inline double min(double a, double b) { return fmin(a, b); }
inline double max(double a, double b) { return fmax(a, b); }
inline unsigned min(int a, unsigned b) { return min(unsigned(a), b); }
inline unsigned min(unsigned a, int b) { return min(a, unsigned(b)); }
inline unsigned max(int a, unsigned b) { return max(unsigned(a), b); }
inline unsigned max(unsigned a, int b) { return max(a, unsigned(b)); }
inline double min(float a, double b) { return fmin(double(a), b); }
inline double min(double a, float b) { return fmin(a, double(b)); }
inline double max(float a, double b) { return fmax(double(a), b); }
inline double max(double a, float b) { return fmax(a, double(b)); }

inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline double rsqrt(double x) { return 1.0 / sqrt(x); }
inline float rcbrtf(float x) { return 1.0f / cbrtf(x); }
inline double rcbrt(double x) { return 1.0 / cbrt(x); }
inline float __saturatef(float x) { return x != x ? 0.0f : fminf(fmaxf(x, 0.0f), 1.0f); }
inline float saturate(float x) { return __saturatef(x); }
inline float __expf(float x) { return expf(x); }
inline float __exp10f(float x) { return exp10f(x); }
inline float __logf(float x) { return logf(x); }
inline float __log2f(float x) { return log2f(x); }
inline float __log10f(float x) { return log10f(x); }
inline float __powf(float x, float y) { return powf(x, y); }
inline float __sinf(float x) { return sinf(x); }
inline float __cosf(float x) { return cosf(x); }
inline float __tanf(float x) { return tanf(x); }
inline void __sincosf(float x, float* s, float* c) { sincosf(x, s, c); }
inline float __fdividef(float x, float y) { return x / y; }
inline float fdividef(float x, float y) { return x / y; }
inline float sinpif(float x) { return float(sin(M_PI * double(x))); }
inline float cospif(float x) { return float(cos(M_PI * double(x))); }
inline double sinpi(double x) { return sin(M_PI * x); }
inline double cospi(double x) { return cos(M_PI * x); }
inline void sincospif(float x, float* s, float* c) { *s = sinpif(x); *c = cospif(x); }
inline void sincospi(double x, double* s, double* c) { *s = sinpi(x); *c = cospi(x); }
inline float normcdff(float x) { return 0.5f * erfcf(-x * float(M_SQRT1_2)); }
inline double normcdf(double x) { return 0.5 * erfc(-x * M_SQRT1_2); }
inline float rhypotf(float x, float y) { return 1.0f / hypotf(x, y); }
inline double rhypot(double x, double y) { return 1.0 / hypot(x, y); }
inline float norm3df(float a, float b, float c) { return float(sqrt(double(a) * a + double(b) * b + double(c) * c)); }
inline float rnorm3df(float a, float b, float c) { return 1.0f / norm3df(a, b, c); }
inline double norm3d(double a, double b, double c) { return sqrt(a * a + b * b + c * c); }
inline double rnorm3d(double a, double b, double c) { return 1.0 / norm3d(a, b, c); }
// Correctly rounded arithmetic with an explicit rounding mode: round-to-nearest is the host's.
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
inline float __fsqrt_rn(float a) { return sqrtf(a); }
inline float __frcp_rn(float a) { return 1.0f / a; }
inline float __frsqrt_rn(float a) { return 1.0f / sqrtf(a); }
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dsub_rn(double a, double b) { return a - b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline double __ddiv_rn(double a, double b) { return a / b; }
inline double __fma_rn(double a, double b, double c) { return fma(a, b, c); }
inline double __dsqrt_rn(double a) { return sqrt(a); }
inline double __drcp_rn(double a) { return 1.0 / a; }

// ---- Type conversion and bit casts -----------------------------------------------------------
namespace kiln_cpu {
template <class To, class From>
inline To bit_cast(From v) {
  static_assert(sizeof(To) == sizeof(From));
  To t;
  memcpy(&t, &v, sizeof t);
  return t;
}
// Float to integer with CUDA's saturation: NaN -> 0, out of range -> the nearest bound.
template <class I>
inline I f2i(double v) {
  if (v != v) return 0;
  if (v <= double(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
  if (v >= double(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
  return I(v);
}
}  // namespace kiln_cpu
inline int __float_as_int(float x) { return kiln_cpu::bit_cast<int>(x); }
inline unsigned __float_as_uint(float x) { return kiln_cpu::bit_cast<unsigned>(x); }
inline float __int_as_float(int x) { return kiln_cpu::bit_cast<float>(x); }
inline float __uint_as_float(unsigned x) { return kiln_cpu::bit_cast<float>(x); }
inline long long __double_as_longlong(double x) { return kiln_cpu::bit_cast<long long>(x); }
inline double __longlong_as_double(long long x) { return kiln_cpu::bit_cast<double>(x); }
inline int __double2hiint(double x) { return int(__double_as_longlong(x) >> 32); }
inline int __double2loint(double x) { return int(__double_as_longlong(x)); }
inline double __hiloint2double(int hi, int lo) {
  return __longlong_as_double((long long)(((unsigned long long)(unsigned)hi << 32) | (unsigned)lo));
}
#define KILN_F2I(SUF, F, T, FN) \
  inline T __##F##2##SUF(F x) { return kiln_cpu::f2i<T>(FN(double(x))); }
#define KILN_F2I_ALL(F)                                          \
  KILN_F2I(int_rn, F, int, nearbyint) KILN_F2I(int_rz, F, int, trunc) \
  KILN_F2I(int_ru, F, int, ceil) KILN_F2I(int_rd, F, int, floor)       \
  KILN_F2I(uint_rn, F, unsigned, nearbyint) KILN_F2I(uint_rz, F, unsigned, trunc) \
  KILN_F2I(uint_ru, F, unsigned, ceil) KILN_F2I(uint_rd, F, unsigned, floor) \
  KILN_F2I(ll_rn, F, long long, nearbyint) KILN_F2I(ll_rz, F, long long, trunc) \
  KILN_F2I(ll_ru, F, long long, ceil) KILN_F2I(ll_rd, F, long long, floor) \
  KILN_F2I(ull_rn, F, unsigned long long, nearbyint) KILN_F2I(ull_rz, F, unsigned long long, trunc) \
  KILN_F2I(ull_ru, F, unsigned long long, ceil) KILN_F2I(ull_rd, F, unsigned long long, floor)
KILN_F2I_ALL(float)
KILN_F2I_ALL(double)
#undef KILN_F2I_ALL
#undef KILN_F2I
inline float __int2float_rn(int x) { return float(x); }
inline float __uint2float_rn(unsigned x) { return float(x); }
inline double __int2double_rn(int x) { return double(x); }
inline double __uint2double_rn(unsigned x) { return double(x); }
inline float __ll2float_rn(long long x) { return float(x); }
inline double __ll2double_rn(long long x) { return double(x); }
inline float __double2float_rn(double x) { return float(x); }

// ---- Integer intrinsics ----------------------------------------------------------------------
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz(unsigned(x)); }
inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline unsigned __brev(unsigned x) {
  x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
  x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
  x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
  return __builtin_bswap32(x);
}
inline unsigned long long __brevll(unsigned long long x) {
  return ((unsigned long long)__brev(unsigned(x)) << 32) | __brev(unsigned(x >> 32));
}
inline int __mul24(int a, int b) { return ((a << 8) >> 8) * ((b << 8) >> 8); }
inline unsigned __umul24(unsigned a, unsigned b) { return (a & 0xffffffu) * (b & 0xffffffu); }
inline int __mulhi(int a, int b) { return int(((long long)a * b) >> 32); }
inline unsigned __umulhi(unsigned a, unsigned b) { return unsigned(((unsigned long long)a * b) >> 32); }
inline long long __mul64hi(long long a, long long b) { return (long long)(((__int128)a * b) >> 64); }
inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
  return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}
inline int __hadd(int a, int b) { return int(((long long)a + b) >> 1); }
inline int __rhadd(int a, int b) { return int(((long long)a + b + 1) >> 1); }
inline unsigned __uhadd(unsigned a, unsigned b) { return unsigned(((unsigned long long)a + b) >> 1); }
inline unsigned __urhadd(unsigned a, unsigned b) { return unsigned(((unsigned long long)a + b + 1) >> 1); }
inline unsigned __sad(int a, int b, unsigned c) { return c + unsigned(a > b ? (long long)a - b : (long long)b - a); }
inline unsigned __usad(unsigned a, unsigned b, unsigned c) { return c + (a > b ? a - b : b - a); }
inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
  unsigned long long v = ((unsigned long long)y << 32) | x;
  unsigned r = 0;
  for (int i = 0; i < 4; ++i) r |= unsigned((v >> (8 * ((s >> (4 * i)) & 7))) & 0xff) << (8 * i);
  return r;
}
inline unsigned __funnelshift_l(unsigned lo, unsigned hi, unsigned s) {
  return unsigned(((((unsigned long long)hi << 32) | lo) << (s & 31)) >> 32);
}
inline unsigned __funnelshift_lc(unsigned lo, unsigned hi, unsigned s) {
  return unsigned(((((unsigned long long)hi << 32) | lo) << (s > 32 ? 32 : s)) >> 32);
}
inline unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned s) {
  return unsigned((((unsigned long long)hi << 32) | lo) >> (s & 31));
}
inline unsigned __funnelshift_rc(unsigned lo, unsigned hi, unsigned s) {
  return unsigned((((unsigned long long)hi << 32) | lo) >> (s > 32 ? 32 : s));
}

// ---- Memory access hints, timing, misc -------------------------------------------------------
template <class T> inline T __ldg(const T* p) { return *p; }
template <class T> inline T __ldcg(const T* p) { return *p; }
template <class T> inline T __ldca(const T* p) { return *p; }
template <class T> inline T __ldcs(const T* p) { return *p; }
template <class T> inline T __ldlu(const T* p) { return *p; }
template <class T> inline T __ldcv(const T* p) { return *p; }
template <class T> inline void __stwb(T* p, T v) { *p = v; }
template <class T> inline void __stcg(T* p, T v) { *p = v; }
template <class T> inline void __stcs(T* p, T v) { *p = v; }
template <class T> inline void __stwt(T* p, T v) { *p = v; }
inline long long clock64() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}
inline unsigned long long __globaltimer() { return (unsigned long long)clock64(); }
inline void __nanosleep(unsigned ns) {
  timespec ts{0, long(ns)};
  nanosleep(&ts, nullptr);
}
[[noreturn]] inline void __trap() { kiln_cpu::trap("__trap() called"); }
[[noreturn]] inline void __brkpt() { kiln_cpu::trap("__brkpt() called"); }
template <class T> inline bool __isGlobal(const T*) { return true; }
inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_block() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_system() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void* __cvta_generic_to_shared(const void* p) { return const_cast<void*>(p); }

// ---- Atomics (relaxed, as CUDA's; each returns the old value) ---------------------------------
namespace kiln_cpu {
// Whether p is in the running block's shared memory (static: the module's thread-local block;
// dynamic: the worker's buffer). Only that block's threads touch it, on one OS thread, switching
// only at barriers and warp operations: an update there needs no bus lock (a locked
// read-modify-write costs ~20 cycles, and shared-memory histograms are made of them).
inline bool block_local(const void* p) {
  const unsigned long a = (unsigned long)p;
  return a - tls.smem_lo < tls.smem_bytes || a - (unsigned long)tls.dyn_smem < tls.dyn_smem_bytes;
}
// *p = f(*p), returning the old value: plainly in shared memory, else atomically.
template <class T, class F, class A>
inline __attribute__((always_inline)) T rmw(T* p, F f, A atomic) {
  if (!block_local(p)) return atomic();
  T old = *p;
  *p = f(old);
  return old;
}
// Applies f to *p atomically through a compare-and-swap loop on its bits.
template <class T, class F>
inline T atomic_update(T* p, F f) {
  if (block_local(p)) {
    T old = *p;
    *p = f(old);
    return old;
  }
  T old = __atomic_load_n(p, __ATOMIC_RELAXED);
  while (!__atomic_compare_exchange_n(p, &old, f(old), true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
  return old;
}
template <class T, class B, class F>
inline T atomic_update_bits(T* p, F f) {
  if (block_local(p)) {
    T old = *p;
    *p = f(old);
    return old;
  }
  B* bp = reinterpret_cast<B*>(p);
  B old = __atomic_load_n(bp, __ATOMIC_RELAXED);
  while (!__atomic_compare_exchange_n(bp, &old, bit_cast<B>(f(bit_cast<T>(old))), true,
                                      __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
  return bit_cast<T>(old);
}
}  // namespace kiln_cpu

#define KILN_ATOMIC_INT(T)                                                                    \
  inline T atomicAdd(T* p, T v) {                                                             \
    return kiln_cpu::rmw(p, [v](T o) { return static_cast<T>(o + v); },                                   \
                         [&] { return __atomic_fetch_add(p, v, __ATOMIC_RELAXED); });         \
  }                                                                                           \
  inline T atomicSub(T* p, T v) {                                                             \
    return kiln_cpu::rmw(p, [v](T o) { return static_cast<T>(o - v); },                                   \
                         [&] { return __atomic_fetch_sub(p, v, __ATOMIC_RELAXED); });         \
  }                                                                                           \
  inline T atomicExch(T* p, T v) {                                                            \
    return kiln_cpu::rmw(p, [v](T) { return v; },                                             \
                         [&] { return __atomic_exchange_n(p, v, __ATOMIC_RELAXED); });        \
  }                                                                                           \
  inline T atomicAnd(T* p, T v) {                                                             \
    return kiln_cpu::rmw(p, [v](T o) { return static_cast<T>(o & v); },                                   \
                         [&] { return __atomic_fetch_and(p, v, __ATOMIC_RELAXED); });         \
  }                                                                                           \
  inline T atomicOr(T* p, T v) {                                                              \
    return kiln_cpu::rmw(p, [v](T o) { return static_cast<T>(o | v); },                                   \
                         [&] { return __atomic_fetch_or(p, v, __ATOMIC_RELAXED); });          \
  }                                                                                           \
  inline T atomicXor(T* p, T v) {                                                             \
    return kiln_cpu::rmw(p, [v](T o) { return static_cast<T>(o ^ v); },                                   \
                         [&] { return __atomic_fetch_xor(p, v, __ATOMIC_RELAXED); });         \
  }                                                                                           \
  inline T atomicMin(T* p, T v) {                                                             \
    return kiln_cpu::atomic_update(p, [v](T o) { return o < v ? o : v; });                    \
  }                                                                                           \
  inline T atomicMax(T* p, T v) {                                                             \
    return kiln_cpu::atomic_update(p, [v](T o) { return o > v ? o : v; });                    \
  }                                                                                           \
  inline T atomicCAS(T* p, T compare, T v) {                                                  \
    __atomic_compare_exchange_n(p, &compare, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);   \
    return compare;                                                                           \
  }
KILN_ATOMIC_INT(int)
KILN_ATOMIC_INT(unsigned)
KILN_ATOMIC_INT(unsigned long long)
KILN_ATOMIC_INT(long long)
KILN_ATOMIC_INT(unsigned long)
KILN_ATOMIC_INT(long)
#undef KILN_ATOMIC_INT
inline unsigned short atomicCAS(unsigned short* p, unsigned short compare, unsigned short v) {
  __atomic_compare_exchange_n(p, &compare, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
  return compare;
}
// atomicInc/atomicDec wrap as CUDA's: ((old >= val) ? 0 : old + 1), ((old == 0 || old > val) ? val : old - 1).
inline unsigned atomicInc(unsigned* p, unsigned val) {
  return kiln_cpu::atomic_update(p, [val](unsigned o) { return o >= val ? 0u : o + 1; });
}
inline unsigned atomicDec(unsigned* p, unsigned val) {
  return kiln_cpu::atomic_update(p, [val](unsigned o) { return (o == 0 || o > val) ? val : o - 1; });
}
inline float atomicAdd(float* p, float v) {
  return kiln_cpu::atomic_update_bits<float, unsigned>(p, [v](float o) { return o + v; });
}
inline double atomicAdd(double* p, double v) {
  return kiln_cpu::atomic_update_bits<double, unsigned long long>(p, [v](double o) { return o + v; });
}
inline float atomicSub(float* p, float v) { return atomicAdd(p, -v); }
inline float atomicExch(float* p, float v) {
  return kiln_cpu::bit_cast<float>(__atomic_exchange_n(reinterpret_cast<unsigned*>(p),
                                                       kiln_cpu::bit_cast<unsigned>(v), __ATOMIC_RELAXED));
}
inline float atomicMin(float* p, float v) {
  return kiln_cpu::atomic_update_bits<float, unsigned>(p, [v](float o) { return fminf(o, v); });
}
inline float atomicMax(float* p, float v) {
  return kiln_cpu::atomic_update_bits<float, unsigned>(p, [v](float o) { return fmaxf(o, v); });
}
inline double atomicMin(double* p, double v) {
  return kiln_cpu::atomic_update_bits<double, unsigned long long>(p, [v](double o) { return fmin(o, v); });
}
inline double atomicMax(double* p, double v) {
  return kiln_cpu::atomic_update_bits<double, unsigned long long>(p, [v](double o) { return fmax(o, v); });
}
// The scoped forms (_block, _system) are the same operations on one host.
#define atomicAdd_block atomicAdd
#define atomicAdd_system atomicAdd
#define atomicSub_block atomicSub
#define atomicSub_system atomicSub
#define atomicExch_block atomicExch
#define atomicExch_system atomicExch
#define atomicMin_block atomicMin
#define atomicMin_system atomicMin
#define atomicMax_block atomicMax
#define atomicMax_system atomicMax
#define atomicInc_block atomicInc
#define atomicInc_system atomicInc
#define atomicDec_block atomicDec
#define atomicDec_system atomicDec
#define atomicCAS_block atomicCAS
#define atomicCAS_system atomicCAS
#define atomicAnd_block atomicAnd
#define atomicAnd_system atomicAnd
#define atomicOr_block atomicOr
#define atomicOr_system atomicOr
#define atomicXor_block atomicXor
#define atomicXor_system atomicXor

// ---- Block barriers --------------------------------------------------------------------------
inline void __syncthreads() { kiln_cpu::tls.api->barrier(kiln_cpu::tls.exec, kiln_cpu::barrier_plain, 0); }
inline int __syncthreads_count(int p) {
  return kiln_cpu::tls.api->barrier(kiln_cpu::tls.exec, kiln_cpu::barrier_count, p != 0);
}
inline int __syncthreads_and(int p) {
  return kiln_cpu::tls.api->barrier(kiln_cpu::tls.exec, kiln_cpu::barrier_and, p != 0);
}
inline int __syncthreads_or(int p) {
  return kiln_cpu::tls.api->barrier(kiln_cpu::tls.exec, kiln_cpu::barrier_or, p != 0);
}

// ---- Warp operations (32 lanes; exited lanes are inactive) ------------------------------------
namespace kiln_cpu {
inline unsigned long long warp_op(int op, unsigned mask, unsigned long long v, int param, int width) {
  return tls.api->warp(tls.exec, op, mask, v, param, width);
}
// Shuffles any trivially copyable value, 8 bytes at a time.
template <class T>
inline T shuffle(int op, unsigned mask, T var, int param, int width) {
  constexpr unsigned chunks = (sizeof(T) + 7) / 8;
  unsigned long long in[chunks] = {}, out[chunks];
  memcpy(in, &var, sizeof(T));
  for (unsigned c = 0; c < chunks; ++c) out[c] = warp_op(op, mask, in[c], param, width);
  T r;
  memcpy(&r, out, sizeof(T));
  return r;
}
}  // namespace kiln_cpu
template <class T>
inline T __shfl_sync(unsigned mask, T var, int src_lane, int width = 32) {
  return kiln_cpu::shuffle(kiln_cpu::warp_shfl_idx, mask, var, src_lane, width);
}
template <class T>
inline T __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = 32) {
  return kiln_cpu::shuffle(kiln_cpu::warp_shfl_up, mask, var, int(delta), width);
}
template <class T>
inline T __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = 32) {
  return kiln_cpu::shuffle(kiln_cpu::warp_shfl_down, mask, var, int(delta), width);
}
template <class T>
inline T __shfl_xor_sync(unsigned mask, T var, int lane_mask, int width = 32) {
  return kiln_cpu::shuffle(kiln_cpu::warp_shfl_xor, mask, var, lane_mask, width);
}
inline unsigned __ballot_sync(unsigned mask, int p) {
  return unsigned(kiln_cpu::warp_op(kiln_cpu::warp_ballot, mask, p != 0, 0, 32));
}
inline int __any_sync(unsigned mask, int p) {
  return int(kiln_cpu::warp_op(kiln_cpu::warp_any, mask, p != 0, 0, 32));
}
inline int __all_sync(unsigned mask, int p) {
  return int(kiln_cpu::warp_op(kiln_cpu::warp_all, mask, p != 0, 0, 32));
}
inline int __uni_sync(unsigned mask, int p) { return __all_sync(mask, p) || !__any_sync(mask, p); }
inline void __syncwarp(unsigned mask = 0xffffffffu) { kiln_cpu::warp_op(kiln_cpu::warp_sync, mask, 0, 0, 32); }
inline unsigned __activemask() {
  return unsigned(kiln_cpu::warp_op(kiln_cpu::warp_activemask, 0xffffffffu, 0, 0, 32));
}
template <class T>
inline unsigned __match_any_sync(unsigned mask, T v) {
  unsigned long long bits = 0;
  memcpy(&bits, &v, sizeof(T) < 8 ? sizeof(T) : 8);
  return unsigned(kiln_cpu::warp_op(kiln_cpu::warp_match_any, mask, bits, 0, 32));
}
template <class T>
inline unsigned __match_all_sync(unsigned mask, T v, int* pred) {
  unsigned long long bits = 0;
  memcpy(&bits, &v, sizeof(T) < 8 ? sizeof(T) : 8);
  unsigned r = unsigned(kiln_cpu::warp_op(kiln_cpu::warp_match_all, mask, bits, 0, 32));
  *pred = r != 0;
  return r;
}
template <class T>
inline T __reduce_add_sync(unsigned mask, T v) {
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(mask, v, o);
  return v;
}
inline unsigned __lanemask_lt() { return (1u << kiln_cpu::lane_id()) - 1u; }
inline unsigned __lanemask_le() { return (2u << kiln_cpu::lane_id()) - 1u; }
inline unsigned __lanemask_eq() { return 1u << kiln_cpu::lane_id(); }
inline unsigned __lanemask_gt() { return ~__lanemask_le(); }
inline unsigned __lanemask_ge() { return ~__lanemask_lt(); }

// ---- Check mode (KILN_CHECK=1): bounds-checked device pointers and kiln::Array accesses --------
namespace kiln_cpu {
// Reports an out-of-bounds access; the runtime names kernel, block, thread and the source line
// of the caller (found from the return address, so this must not be inlined).
[[noreturn]] __attribute__((noinline, cold)) inline void out_of_bounds(const char* message) {
  tls.api->out_of_bounds(tls.exec, message, __builtin_extract_return_addr(__builtin_return_address(0)));
  __builtin_unreachable();
}
#ifdef KILN_CHECK
[[noreturn]] __attribute__((noinline, cold)) inline void pointer_out_of_bounds(
    const void* p, const char* lo, const char* hi, unsigned size) {
  char buf[256];
  long long at = (const char*)p - lo;
  snprintf(buf, sizeof buf,
           "out-of-bounds access: element %lld of a device array of %lld element(s) (%u-byte "
           "elements, byte offset %lld of %lld)",
           at >= 0 ? at / (long long)size : -((-at + size - 1) / (long long)size),
           (long long)(hi - lo) / (long long)size, size, at, (long long)(hi - lo));
  tls.api->out_of_bounds(tls.exec, buf, __builtin_extract_return_addr(__builtin_return_address(0)));
  __builtin_unreachable();
}
[[noreturn]] __attribute__((noinline, cold)) inline void array_out_of_bounds(int dim,
                                                                                long long index,
                                                                                long long extent) {
  char buf[160];
  snprintf(buf, sizeof buf, "out-of-bounds access: index %lld of dimension %d of a kiln::Array "
           "whose extent there is %lld", index, dim, extent);
  tls.api->out_of_bounds(tls.exec, buf, __builtin_extract_return_addr(__builtin_return_address(0)));
  __builtin_unreachable();
}

// A kernel's T* parameter in check mode: a pointer that knows the device allocation it points
// into and checks every access through it (pointers outside any allocation are not checked).
template <class T>
class checked_ptr {
 public:
  using element_type = T;
  checked_ptr() = default;
  checked_ptr(T* p) : p_(p) {  // NOLINT: converts like the raw pointer it replaces
    const void *lo = nullptr, *hi = nullptr;
    if (p && tls.api->bounds(tls.exec, p, &lo, &hi)) {
      lo_ = static_cast<const char*>(lo);
      hi_ = static_cast<const char*>(hi);
    }
  }
  operator T*() const { return p_; }
  T* get() const { return p_; }
  template <class I, class = std::enable_if_t<std::is_integral_v<I> || std::is_enum_v<I>>>
  __attribute__((always_inline)) T& operator[](I i) const {
    check(p_ + i);
    return p_[i];
  }
  __attribute__((always_inline)) T& operator*() const {
    check(p_);
    return *p_;
  }
  __attribute__((always_inline)) T* operator->() const {
    check(p_);
    return p_;
  }
  template <class I, class = std::enable_if_t<std::is_integral_v<I>>>
  checked_ptr operator+(I i) const { return with(p_ + i); }
  template <class I, class = std::enable_if_t<std::is_integral_v<I>>>
  friend checked_ptr operator+(I i, const checked_ptr& q) { return q.with(q.p_ + i); }
  template <class I, class = std::enable_if_t<std::is_integral_v<I>>>
  checked_ptr operator-(I i) const { return with(p_ - i); }
  std::ptrdiff_t operator-(const checked_ptr& o) const { return p_ - o.p_; }
  std::ptrdiff_t operator-(const T* o) const { return p_ - o; }
  template <class I> checked_ptr& operator+=(I i) { p_ += i; return *this; }
  template <class I> checked_ptr& operator-=(I i) { p_ -= i; return *this; }
  checked_ptr& operator++() { ++p_; return *this; }
  checked_ptr& operator--() { --p_; return *this; }
  checked_ptr operator++(int) { checked_ptr o = *this; ++p_; return o; }
  checked_ptr operator--(int) { checked_ptr o = *this; --p_; return o; }

 private:
  __attribute__((always_inline)) void check(const T* q) const {
    if (lo_ && ((const char*)q < lo_ || (const char*)(q + 1) > hi_))
      pointer_out_of_bounds(q, lo_, hi_, sizeof(T));
  }
  checked_ptr with(T* q) const {
    checked_ptr r = *this;
    r.p_ = q;
    return r;
  }
  T* p_ = nullptr;
  const char* lo_ = nullptr;
  const char* hi_ = nullptr;
};
template <class T> struct RawArg { using type = T; };
template <class T> struct RawArg<checked_ptr<T>> { using type = T*; };
#else
template <class T> struct RawArg { using type = T; };
#endif
// The function-pointer type a kernel has as written (check mode's checked_ptr<T> is T*): its
// typeid gives the signature the launcher marshals arguments by.
template <class F> struct RawKernel { using type = F; };
template <class... P> struct RawKernel<void (*)(P...)> {
  using type = void (*)(typename RawArg<std::remove_cv_t<P>>::type...);
};
}  // namespace kiln_cpu
#ifdef KILN_CHECK
#define KILN_ARRAY_CHECK(array_ptr, dim, index, extent)                                     \
  ((index) >= 0 && (index) < (extent)                                                        \
       ? (void)0                                                                             \
       : ::kiln_cpu::array_out_of_bounds((dim), (long long)(index), (long long)(extent)))
#endif

// ---- Entry points ----------------------------------------------------------------------------
namespace kiln_cpu {
template <class T> using Arg = std::remove_cv_t<std::remove_reference_t<T>>;
// The index of linear block blk in grid g.
inline uint3 block_of(unsigned long long blk, dim3 g) {
  return uint3{unsigned(blk % g.x), unsigned((blk / g.x) % g.y),
               unsigned(blk / (g.x * (unsigned long long)g.y))};
}
template <class F> struct Params;
template <class... P> struct Params<void (*)(P...)> {
  static constexpr std::size_t count = sizeof...(P);
  // Calls f with each argument read from args[k] by its parameter type.
  template <auto f, std::size_t... K>
  static inline __attribute__((always_inline)) void call(void** args, std::index_sequence<K...>) {
    f(Arg<P>(*static_cast<typename RawArg<Arg<P>>::type*>(args[K]))...);
  }
  // Runs blocks [first, last) one thread after another (kernels without barriers).
  // flatten: the kernel is inlined into the thread loop, so thread identity stays in registers.
  template <auto f, std::size_t... K>
  __attribute__((flatten)) static void run(void** args, unsigned long long first, unsigned long long last,
                  std::index_sequence<K...>) {
    std::tuple<Arg<P>...> a{Arg<P>(*static_cast<typename RawArg<Arg<P>>::type*>(args[K]))...};
    const dim3 g = tls.grid_dim, b = tls.block_dim;
    for (unsigned long long blk = first; blk < last; ++blk) {
      tls.block_idx = block_of(blk, g);
      for (unsigned z = 0; z < b.z; ++z)
        for (unsigned y = 0; y < b.y; ++y)
          for (unsigned x = 0; x < b.x; ++x) {
            tls.thread_idx = uint3{x, y, z};
            f(std::get<K>(a)...);
          }
    }
  }
  // Runs blocks [first, last), one call of f each (region mode: f loops over its threads).
  template <auto f, std::size_t... K>
  __attribute__((flatten)) static void run_blocks(void** args, unsigned long long first,
                                                  unsigned long long last, std::index_sequence<K...>) {
    std::tuple<Arg<P>...> a{Arg<P>(*static_cast<typename RawArg<Arg<P>>::type*>(args[K]))...};
    const dim3 g = tls.grid_dim;
    for (unsigned long long blk = first; blk < last; ++blk) {
      tls.block_idx = block_of(blk, g);
      f(std::get<K>(a)...);
    }
  }
};
// One thread of kernel f (fiber mode).
template <auto f>
inline void invoke(void** args) {
  using P = Params<decltype(f)>;
  P::template call<f>(args, std::make_index_sequence<P::count>{});
}
// Blocks [first, last) of kernel f (loop mode).
template <auto f>
inline void run(void** args, unsigned long long first, unsigned long long last) {
  using P = Params<decltype(f)>;
  P::template run<f>(args, first, last, std::make_index_sequence<P::count>{});
}
// Blocks [first, last) of kernel f (region mode).
template <auto f>
inline void run_regions(void** args, unsigned long long first, unsigned long long last) {
  using P = Params<decltype(f)>;
  P::template run_blocks<f>(args, first, last, std::make_index_sequence<P::count>{});
}

// ---- Region mode: the helpers of kernels rewritten by runtime/cpu_regions.cpp ----------------
// p, with its origin hidden from the optimiser. For a thread-local's address taken once per
// block: GCC otherwise recomputes it (a __tls_get_addr call) at every use, in every thread.
template <class T>
inline __attribute__((always_inline)) T* opaque(T* p) {
  asm("" : "+r"(p));
  return p;
}
// What a region returns: a plain `return;` (one the rewrite did not see) does not compile.
struct RegionEnd {};
// A `return` in a region: the thread has returned; later regions skip it.
inline RegionEnd returned(bool* done, unsigned t) {
  done[t] = true;
  return {};
}
// Clears a block's returned-thread flags; returns them.
inline bool* cleared(bool* done, unsigned n) {
  for (unsigned t = 0; t < n; ++t) done[t] = false;
  return done;
}
// The first thread of the block that has not returned (n when all have; none can when done is
// null): whose values the header of a loop or if with a barrier reads.
inline unsigned leader(unsigned n, const bool* done) {
  unsigned t = 0;
  if (done)
    while (t < n && done[t]) ++t;
  return t;
}
// What threadIdx & co. read inside a region: the thread's index, and the block's.
struct RegionTls {
  uint3 thread_idx;
  uint3 block_idx;
  dim3 block_dim;
  dim3 grid_dim;
};
// Runs region f(t, threadIdx) for each thread t of the block that has not returned, in
// threadIdx order. (self: this module's Tls, whose address the kernel took once; its threadIdx
// is written only for regions that call functions, which may read it: a store per thread to
// one place keeps the compiler from vectorising the loop.)
template <bool set_identity, class F>
inline __attribute__((always_inline)) void each_thread(Tls& self, dim3 b, const bool* done, F&& f) {
  unsigned t = 0;
  for (unsigned z = 0; z < b.z; ++z)
    for (unsigned y = 0; y < b.y; ++y)
      for (unsigned x = 0; x < b.x; ++x, ++t)
        if (!done || !done[t]) {
          if constexpr (set_identity) self.thread_idx = uint3{x, y, z};
          f(t, uint3{x, y, z});
        }
}
}  // namespace kiln_cpu
// The leader's index in a loop or if header; leaves the kernel when every thread has returned.
#define KILN_LEAD                                                          \
  ({                                                                       \
    const unsigned kiln_l_ = ::kiln_cpu::leader(kiln_n_, kiln_done_);      \
    if (kiln_l_ == kiln_n_) return;                                        \
    kiln_l_;                                                               \
  })

// ---- Coroutine mode ------------------------------------------------------------------------
// Defined by the backend when this module's kernels with barriers can run as coroutines: every
// __syncthreads in a __global__ body becomes a co_await (and its `return`s co_return), so the
// compiler splits each kernel at its barriers and a block's threads take turns without a stack
// each. See docs/cpu-backend.md.
#ifdef KILN_COROUTINES
#include <coroutine>
namespace kiln_cpu {
// __syncthreads_count/and/or(p): the thread votes and suspends; the barrier's value is read
// once the runtime has released it.
struct BarrierAwait {
  int op, predicate;
  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<>) const { tls.api->barrier_vote(tls.exec, predicate); }
  int await_resume() const { return tls.api->barrier_result(tls.exec, op); }
};
// __syncthreads(): suspends until the runtime's next round.
struct SyncAwait {
  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<>) const noexcept {}
  void await_resume() const noexcept {}
};
// The promise of a kernel thread: created suspended (the runtime resumes it), its frame in the
// runtime's per-block arena, its exceptions (traps, check-mode reports) passed to the resumer.
struct ThreadPromise {
  ThreadPromise() { tls.coroutine = std::coroutine_handle<ThreadPromise>::from_promise(*this).address(); }
  static void* operator new(std::size_t bytes) { return tls.api->frame_alloc(tls.exec, bytes); }
  static void operator delete(void*) noexcept {}  // the arena is reset after the block
  void get_return_object() noexcept {}
  std::suspend_always initial_suspend() noexcept { return {}; }
  std::suspend_always final_suspend() noexcept { return {}; }
  void return_void() noexcept {}
  void unhandled_exception() { throw; }
};
// Creates one thread of kernel f, suspended; returns its frame address.
template <auto f>
inline void* start(void** args) {
  invoke<f>(args);
  return tls.coroutine;
}
// One round of a block (cpu_abi.h, kiln_round): resumes each live thread to its next barrier or
// its end; returns how many are still live, kept at the front of live.
inline unsigned round(void* const* frames, const uint3* tids, unsigned* live, unsigned count,
                      unsigned* running) {
  uint3* const thread_idx = &tls.thread_idx;  // one TLS lookup per round, not per resume
  unsigned kept = 0;
  for (unsigned j = 0; j < count; ++j) {
    const unsigned i = live[j];
    *running = i;  // names the thread in a trap's message
    *thread_idx = tids[i];
    auto thread = std::coroutine_handle<>::from_address(frames[i]);
    thread.resume();
    if (!thread.done()) live[kept++] = i;
  }
  return kept;
}
}  // namespace kiln_cpu
// A void function with a co_await (only kernels here: the backend checked that no barrier is
// named outside a __global__ body) is a kernel thread.
template <class... A>
struct std::coroutine_traits<void, A...> {
  using promise_type = ::kiln_cpu::ThreadPromise;
};
#define __syncthreads() (co_await ::kiln_cpu::SyncAwait{})
#define __syncthreads_count(p) (co_await ::kiln_cpu::BarrierAwait{::kiln_cpu::barrier_count, (p) != 0})
#define __syncthreads_and(p) (co_await ::kiln_cpu::BarrierAwait{::kiln_cpu::barrier_and, (p) != 0})
#define __syncthreads_or(p) (co_await ::kiln_cpu::BarrierAwait{::kiln_cpu::barrier_or, (p) != 0})
#endif
