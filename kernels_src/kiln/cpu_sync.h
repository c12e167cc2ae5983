// Prelude part 4 of 6: barriers and warp operations, calls into the runtime that runs the block.
// Included by cpu_prelude.h only, after cpu_atomics.h.
#pragma once

// ---- Block barriers --------------------------------------------------------------------------
inline void __syncthreads() { kiln_cpu::tls.api->barrier(kiln_cpu::tls.exec, kiln_cpu::barrier_plain, 0); }
namespace kiln_cpu {
// Each test of a spin-wait's condition (plan.h yield_in_spin_waits): the other threads of the
// block run first, one of which sets what it waits for; of one on global memory (global 1),
// another block may set it, so the thread waits on when none of its block can run.
inline void spin_yield(int global = 0) {
  tls.api->barrier(tls.exec, barrier_yield, global);
}
// cooperative_groups::memcpy_async(block, ...) as the lowering of block-level groups writes it
// (jit/cpu/block_groups.h): the calling thread's strided share of the block's copy, of `size`
// bytes (a count, or cuda::aligned_size_t<N>), or of dst_count elements of src_count.
template <class Size>
inline void block_memcpy(void* dst, const void* src, Size size) {
  const unsigned long bytes = static_cast<unsigned long>(size);
  const unsigned long step = (unsigned long)tls.block_dim.x * tls.block_dim.y * tls.block_dim.z;
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  for (unsigned long i = linear_tid(); i < bytes; i += step) d[i] = s[i];
}
template <class T>
inline void block_memcpy(T* dst, unsigned long dst_count, const T* src, unsigned long src_count) {
  const unsigned long n = dst_count < src_count ? dst_count : src_count;
  const unsigned long step = (unsigned long)tls.block_dim.x * tls.block_dim.y * tls.block_dim.z;
  for (unsigned long i = linear_tid(); i < n; i += step) dst[i] = src[i];
}
}  // namespace kiln_cpu
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
// (always inlined, as __activemask and coalesced_threads are: the runtime tells a call by its
// return address, which -O0 would leave in these wrappers, one for every call)
__attribute__((always_inline)) inline unsigned long long warp_op(int op, unsigned mask,
                                                                 unsigned long long v, int param,
                                                                 int width) {
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
__attribute__((always_inline)) inline unsigned __activemask() {
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
namespace kiln_cpu {
// __reduce_*_sync: op over the values of the lanes in mask, in each of them, as the hardware's
// redux does: a partial warp's missing lanes (a block of 48) take no part. The full warp's is a
// butterfly of 5 shuffles; a part of it reads each of its lanes (a butterfly would add lanes
// outside the mask). Each value travels with a flag, as a missing lane's shuffle gives 0.
template <class T, class Op>
inline T reduce_lanes(unsigned mask, T v, Op op) {
  struct Lane {
    T value;
    unsigned present;
  };
  Lane mine{v, 1};
  if (mask == 0xffffffffu) {
    for (int o = 16; o > 0; o /= 2)
      if (const Lane other = __shfl_xor_sync(mask, mine, o); other.present)
        mine.value = op(mine.value, other.value);
    return mine.value;
  }
  T r = v;
  for (int l = 0, first = 1; l < 32; ++l)
    if (mask >> l & 1) {
      const Lane x = __shfl_sync(mask, mine, l);
      if (!x.present) continue;
      r = first ? x.value : op(r, x.value);
      first = 0;
    }
  return r;
}
}  // namespace kiln_cpu
// (int: sums wrap, as the hardware's do)
inline unsigned __reduce_add_sync(unsigned mask, unsigned v) {
  return kiln_cpu::reduce_lanes(mask, v, [](unsigned a, unsigned b) { return a + b; });
}
inline int __reduce_add_sync(unsigned mask, int v) {
  return int(__reduce_add_sync(mask, unsigned(v)));
}
inline unsigned __reduce_min_sync(unsigned mask, unsigned v) {
  return kiln_cpu::reduce_lanes(mask, v, [](unsigned a, unsigned b) { return a < b ? a : b; });
}
inline int __reduce_min_sync(unsigned mask, int v) {
  return kiln_cpu::reduce_lanes(mask, v, [](int a, int b) { return a < b ? a : b; });
}
inline unsigned __reduce_max_sync(unsigned mask, unsigned v) {
  return kiln_cpu::reduce_lanes(mask, v, [](unsigned a, unsigned b) { return a > b ? a : b; });
}
inline int __reduce_max_sync(unsigned mask, int v) {
  return kiln_cpu::reduce_lanes(mask, v, [](int a, int b) { return a > b ? a : b; });
}
inline unsigned __reduce_and_sync(unsigned mask, unsigned v) {
  return kiln_cpu::reduce_lanes(mask, v, [](unsigned a, unsigned b) { return a & b; });
}
inline unsigned __reduce_or_sync(unsigned mask, unsigned v) {
  return kiln_cpu::reduce_lanes(mask, v, [](unsigned a, unsigned b) { return a | b; });
}
inline unsigned __reduce_xor_sync(unsigned mask, unsigned v) {
  return kiln_cpu::reduce_lanes(mask, v, [](unsigned a, unsigned b) { return a ^ b; });
}
namespace kiln_cpu {
// Legacy warp-synchronous code (`volatile float* s = sdata; s[t] += s[t + 16]; s[t] += s[t +
// 8];`, no __syncwarp) relies on a warp's lanes running each statement together: every lane reads
// before any lane writes. The cpu compiler makes such a pointer a lockstep_ptr
// (jit/cpu/plan.h: rewrite_lockstep_pointers; the kernel runs as fibers), whose every store
// waits for the warp's other lanes before it (their reads of the old value are done) and after
// it (the new value is there for their next reads), and whose every read waits for the
// warp's lanes too, after their stores: the lanes that skipped a store (`if (lane < 2) b[lane] = x;
// y = b[1];`) read after it, as a GPU's warp runs the store, masked, before the reads that follow.
// The wait is __activemask's: every lane of the warp that has not exited, or those that reached
// one while the rest wait elsewhere; a read's (activemask_after_stores) lets the lanes waiting
// at a store go first.
template <class T>
struct lockstep_ref {
  volatile T* p;
  static void step() { (void)__activemask(); }
  operator T() const {
    (void)warp_op(warp_activemask, 0xffffffffu, 0, activemask_after_stores, 32);
    return *p;
  }
  const lockstep_ref& operator=(T v) const {
    step();
    *p = v;
    step();
    return *this;
  }
  const lockstep_ref& operator=(const lockstep_ref& r) const { return *this = T(r); }
  const lockstep_ref& operator+=(T v) const { return *this = T(*p + v); }
  const lockstep_ref& operator-=(T v) const { return *this = T(*p - v); }
  const lockstep_ref& operator*=(T v) const { return *this = T(*p * v); }
  const lockstep_ref& operator/=(T v) const { return *this = T(*p / v); }
  const lockstep_ref& operator%=(T v) const { return *this = T(*p % v); }
  const lockstep_ref& operator&=(T v) const { return *this = T(*p & v); }
  const lockstep_ref& operator|=(T v) const { return *this = T(*p | v); }
  const lockstep_ref& operator^=(T v) const { return *this = T(*p ^ v); }
  const lockstep_ref& operator<<=(int v) const { return *this = T(*p << v); }
  const lockstep_ref& operator>>=(int v) const { return *this = T(*p >> v); }
  const lockstep_ref& operator++() const { return *this = T(*p + 1); }
  const lockstep_ref& operator--() const { return *this = T(*p - 1); }
  T operator++(int) const {
    const T old = *p;
    *this = T(old + 1);
    return old;
  }
  T operator--(int) const {
    const T old = *p;
    *this = T(old - 1);
    return old;
  }
  volatile T* operator&() const { return p; }
};
template <class T>
struct lockstep_ptr {
  volatile T* p = nullptr;
  lockstep_ptr() = default;
  lockstep_ptr(volatile T* q) : p(q) {}
  lockstep_ref<T> operator[](long long i) const { return {p + i}; }
  lockstep_ref<T> operator*() const { return {p}; }
  lockstep_ptr operator+(long long i) const { return p + i; }
  lockstep_ptr operator-(long long i) const { return p - i; }
  lockstep_ptr& operator+=(long long i) { return p += i, *this; }
  lockstep_ptr& operator-=(long long i) { return p -= i, *this; }
  operator volatile T*() const { return p; }
  template <class U>  // (`(int*)s`, as C casts away the volatile)
  explicit operator U*() const {
    return (U*)(p);
  }
};
// A shared array of more extents (`__shared__ volatile int b[4][2]`): its rows are lockstep
// pointers (`lockstep_ptr<int[2]> b = kiln_lockstep_b; b[w][1] = x;`).
template <class T, unsigned long N>
struct lockstep_ptr<T[N]> {
  volatile T (*p)[N] = nullptr;
  lockstep_ptr() = default;
  lockstep_ptr(volatile T (*q)[N]) : p(q) {}
  lockstep_ptr<T> operator[](long long i) const { return p[i]; }
  lockstep_ptr<T> operator*() const { return *p; }
  lockstep_ptr operator+(long long i) const { return p + i; }
  lockstep_ptr operator-(long long i) const { return p - i; }
  using row = volatile T[N];
  operator row*() const { return p; }
  template <class U>
  explicit operator U*() const {
    return (U*)(p);
  }
};
}  // namespace kiln_cpu
inline unsigned __lanemask_lt() { return (1u << kiln_cpu::lane_id()) - 1u; }
inline unsigned __lanemask_le() { return (2u << kiln_cpu::lane_id()) - 1u; }
inline unsigned __lanemask_eq() { return 1u << kiln_cpu::lane_id(); }
inline unsigned __lanemask_gt() { return ~__lanemask_le(); }
inline unsigned __lanemask_ge() { return ~__lanemask_lt(); }
