// Prelude part 1 of 6: CUDA's keywords, built-in variables and vector types, which all else uses.
// Included by cpu_prelude.h only.
#pragma once

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

// assert() inside kernels: a GPU reports the failed assertion and stops the kernel. function
// is __PRETTY_FUNCTION__, which names the kernel even where the cpu backend runs its body in a
// lambda ("void k(float*)::<lambda(unsigned)>", whose __func__ is "operator()"): the message
// gives the name before its first '('.
[[noreturn]] inline void assert_fail(const char* expr, const char* file, int line,
                                     const char* function) {
  const char* open = strchr(function, '(');
  const char* name = function;
  for (const char* p = function; open && p < open; ++p)
    if (*p == ' ' || (*p == ':' && p + 1 < open && p[1] == ':')) name = *p == ' ' ? p + 1 : p + 2;
  const int length = open ? int(open - name) : int(strlen(name));
  char buf[512];
  snprintf(buf, sizeof buf, "%s:%d: %.*s: assertion '%s' failed", file, line, length, name, expr);
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
  ((e) ? (void)0 : ::kiln_cpu::assert_fail(#e, __FILE__, __LINE__, __PRETTY_FUNCTION__))
#endif

// ---- Built-in variables ----------------------------------------------------------------------
using kiln_cpu::dim3;
using kiln_cpu::uint3;
// They name kiln_cpu_tls() unqualified: a region-mode kernel declares a local of that name that
// holds the Tls address taken once per block (jit/cpu/regions.cpp).
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
