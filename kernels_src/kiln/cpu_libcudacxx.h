// libcu++ (<cuda/std/...>, <cuda/atomic>, <cuda/barrier>) for the cpu backend. CCCL's own headers take their
// device paths whenever __CUDA_ARCH__ is defined, as it is here, so the cpu backend does not use
// them: cuda::std is the host's standard library (the shims <cuda/std/X> include <X>), and
// cuda::atomic / cuda::atomic_ref are the host's atomics, whatever the thread scope (a
// system-scope atomic is correct at every narrower scope). Reached through those shims.
#pragma once
#include <atomic>
#include <type_traits>

namespace cuda {
namespace std {
using namespace ::std;
}  // namespace std

enum thread_scope {
  thread_scope_system = 0,
  thread_scope_device = 1,
  thread_scope_block = 2,
  thread_scope_thread = 3
};

// cuda::atomic<T, Scope>: the host's std::atomic.
template <class T, thread_scope Scope = thread_scope_system>
struct atomic : ::std::atomic<T> {
  using ::std::atomic<T>::atomic;
  using ::std::atomic<T>::operator=;
  T fetch_min(T v, ::std::memory_order order = ::std::memory_order_seq_cst) {
    T old = this->load(::std::memory_order_relaxed);
    while (v < old && !this->compare_exchange_weak(old, v, order)) {
    }
    return old;
  }
  T fetch_max(T v, ::std::memory_order order = ::std::memory_order_seq_cst) {
    T old = this->load(::std::memory_order_relaxed);
    while (old < v && !this->compare_exchange_weak(old, v, order)) {
    }
    return old;
  }
};

// cuda::atomic_ref<T, Scope>: atomic operations on an object that is not itself atomic (C++20's
// std::atomic_ref, which this C++17 unit lacks), through the compiler's __atomic builtins.
template <class T, thread_scope Scope = thread_scope_system>
class atomic_ref {
 public:
  explicit atomic_ref(T& object) : p_(&object) {}
  // The generic builtins: any trivially copyable T of a lock-free size, floats included.
  T load(::std::memory_order order = ::std::memory_order_seq_cst) const {
    T v;
    __atomic_load(p_, &v, int(order));
    return v;
  }
  void store(T v, ::std::memory_order order = ::std::memory_order_seq_cst) const {
    __atomic_store(p_, &v, int(order));
  }
  T exchange(T v, ::std::memory_order order = ::std::memory_order_seq_cst) const {
    T old;
    __atomic_exchange(p_, &v, &old, int(order));
    return old;
  }
  bool compare_exchange_strong(T& expected, T desired,
                               ::std::memory_order order = ::std::memory_order_seq_cst) const {
    return __atomic_compare_exchange(p_, &expected, &desired, false, int(order),
                                     int(::std::memory_order_relaxed));
  }
  bool compare_exchange_weak(T& expected, T desired,
                             ::std::memory_order order = ::std::memory_order_seq_cst) const {
    return __atomic_compare_exchange(p_, &expected, &desired, true, int(order),
                                     int(::std::memory_order_relaxed));
  }
  T fetch_add(T v, ::std::memory_order order = ::std::memory_order_seq_cst) const {
    if constexpr (::std::is_integral_v<T>)
      return __atomic_fetch_add(p_, v, int(order));
    else
      return update([v](T old) { return old + v; }, order);
  }
  T fetch_sub(T v, ::std::memory_order order = ::std::memory_order_seq_cst) const {
    if constexpr (::std::is_integral_v<T>)
      return __atomic_fetch_sub(p_, v, int(order));
    else
      return update([v](T old) { return old - v; }, order);
  }
  T fetch_and(T v, ::std::memory_order order = ::std::memory_order_seq_cst) const {
    return __atomic_fetch_and(p_, v, int(order));
  }
  T fetch_or(T v, ::std::memory_order order = ::std::memory_order_seq_cst) const {
    return __atomic_fetch_or(p_, v, int(order));
  }
  T fetch_xor(T v, ::std::memory_order order = ::std::memory_order_seq_cst) const {
    return __atomic_fetch_xor(p_, v, int(order));
  }
  T fetch_min(T v, ::std::memory_order order = ::std::memory_order_seq_cst) const {
    return update([v](T old) { return v < old ? v : old; }, order);
  }
  T fetch_max(T v, ::std::memory_order order = ::std::memory_order_seq_cst) const {
    return update([v](T old) { return old < v ? v : old; }, order);
  }
  operator T() const { return load(); }
  T operator=(T v) const { return store(v), v; }
  T operator+=(T v) const { return fetch_add(v) + v; }
  T operator-=(T v) const { return fetch_sub(v) - v; }
  T operator++() const { return fetch_add(T(1)) + T(1); }
  T operator++(int) const { return fetch_add(T(1)); }

 private:
  // Replaces the value with f(old) atomically (a compare-exchange loop); returns old.
  template <class F>
  T update(F f, ::std::memory_order order) const {
    T old = load(::std::memory_order_relaxed);
    while (!compare_exchange_weak(old, f(old), order)) {
    }
    return old;
  }
  T* p_;
};

// cuda::barrier<thread_scope_block>, as samples use it: in shared memory, initialised by one
// thread for the block's threads, then arrive_and_wait(), or arrive() and later wait(token).
// The cpu backend maps both onto the block's barrier (a deferred one for arrive/wait), which is
// exact when every thread of the block takes part, as the expected count must then say; any
// other count stops the kernel with an error that says so.
template <thread_scope Scope>
class barrier {
 public:
  struct arrival_token {};
  barrier() = default;
  barrier(const barrier&) = delete;
  barrier& operator=(const barrier&) = delete;
  friend void init(barrier* b, ::std::ptrdiff_t expected) { b->expected_ = expected; }
  arrival_token arrive() {
    check();
    return {};
  }
  void wait(arrival_token&&) const {
    check();
    __syncthreads();
  }
  void arrive_and_wait() {
    check();
    __syncthreads();
  }
  static constexpr ::std::ptrdiff_t max() { return 1 << 30; }

 private:
  void check() const {
    const ::std::ptrdiff_t block = ::std::ptrdiff_t(blockDim.x) * blockDim.y * blockDim.z;
    if (expected_ != block)
      kiln_cpu::trap(
          "cuda::barrier: the cpu backend supports a barrier for every thread of the block "
          "(init(&bar, blockDim.x * blockDim.y * blockDim.z)); this one expects another count");
  }
  ::std::ptrdiff_t expected_ = 0;
};

// cuda::memcpy_async: the copy happens at once (the cpu backend has no asynchronous copy
// engine), so it is complete when the barrier it names completes, as CUDA promises. The group
// form splits the bytes among the group's threads.
template <thread_scope Scope>
inline void memcpy_async(void* dst, const void* src, ::std::size_t bytes, barrier<Scope>&) {
  memcpy(dst, src, bytes);
}
template <class Group, thread_scope Scope>
inline void memcpy_async(const Group& g, void* dst, const void* src, ::std::size_t bytes,
                         barrier<Scope>&) {
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  for (::std::size_t i = g.thread_rank(); i < bytes; i += g.size()) d[i] = s[i];
}

// cuda::aligned_size_t<N>(bytes): a byte count known to be a multiple of N.
template <::std::size_t Align>
struct aligned_size_t {
  ::std::size_t value;
  explicit constexpr aligned_size_t(::std::size_t v) : value(v) {}
  constexpr operator ::std::size_t() const { return value; }
};

namespace std {
template <class T>
using atomic_ref = ::cuda::atomic_ref<T>;
}  // namespace std

}  // namespace cuda
