// Prelude part 3 of 6: CUDA's atomics, relaxed as CUDA's (a plain update on shared memory).
// Included by cpu_prelude.h only, after cpu_math.h.
#pragma once

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
namespace kiln_cpu {
// old + v as atomicAdd stores it in global memory (global) or a block's shared memory: for a
// float, a NaN the canonical 0x7fffffff, and in global memory (atom.add.f32, the PTX ISA says)
// subnormal operands and sum flushed to zero of their sign (an H200's results, both).
template <class T>
inline T atomic_sum(T old, T v, bool global) {
  if constexpr (std::is_same_v<T, float>) {
    const auto flush = [global](float x) {
      return global && __builtin_fabsf(x) < 0x1p-126f ? __builtin_copysignf(0.0f, x) : x;
    };
    const float sum = flush(old) + flush(v);
    return sum != sum ? bit_cast<float>(0x7fffffffu) : flush(sum);
  } else {
    return static_cast<T>(old + v);
  }
}
// old - v as atomicSub stores it (a float's as atomicAdd of -v).
template <class T>
inline T atomic_difference(T old, T v, bool global) {
  if constexpr (std::is_same_v<T, float>)
    return atomic_sum(old, -v, global);
  else
    return static_cast<T>(old - v);
}
}  // namespace kiln_cpu
inline float atomicAdd(float* p, float v) {
  if (kiln_cpu::block_local(p)) {
    const float old = *p;
    *p = kiln_cpu::atomic_sum(old, v, false);
    return old;
  }
  return kiln_cpu::atomic_update_bits<float, unsigned>(
      p, [v](float o) { return kiln_cpu::atomic_sum(o, v, true); });
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
