// libcu++ (<cuda/std/...>, <cuda/atomic>, <cuda/barrier>, <cuda/pipeline>) for the cpu backend.
// CCCL's own headers take their device paths whenever __CUDA_ARCH__ is defined, as it is here,
// so the cpu backend does not use them: cuda::std is the host's standard library (the shims
// <cuda/std/X> include <X>), and cuda::atomic / cuda::atomic_ref are the host's atomics,
// whatever the thread scope (a system-scope atomic is correct at every narrower scope). Reached
// through those shims.
#pragma once
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
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
  // The check of a wait the region rewrite made __syncthreads() (jit/cpu/block_barriers.h).
  void kiln_whole_block() const { check(); }

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

// cuda::pipeline, as <cuda/pipeline> has it. Copies happen at once here, so what is left of a
// pipeline is its ordering between threads. One a thread makes for itself (make_pipeline())
// orders nothing. A block's unified pipeline (make_pipeline(block, &shared_state), every thread
// both producer and consumer) becomes the block's barrier at producer_acquire (the stage's
// readers have released it) and at consumer_wait (every thread's copies into it are done), which
// is exact because each thread calls them in the same sequence; a partitioned pipeline (a role,
// or producers fewer than the group) stops the kernel with an error that says so.
enum class pipeline_role { producer, consumer };

template <thread_scope Scope, unsigned char StagesCount>
struct pipeline_shared_state {
  pipeline_shared_state() = default;
  pipeline_shared_state(const pipeline_shared_state&) = delete;
  pipeline_shared_state& operator=(const pipeline_shared_state&) = delete;
};

template <thread_scope Scope>
class pipeline {
 public:
  pipeline& operator=(const pipeline&) = delete;
  void producer_acquire() { block_wait(); }
  void producer_commit() {}
  void consumer_wait() { block_wait(); }
  template <class Rep, class Period>
  bool consumer_wait_for(const ::std::chrono::duration<Rep, Period>&) {
    consumer_wait();
    return true;
  }
  template <class Clock, class Duration>
  bool consumer_wait_until(const ::std::chrono::time_point<Clock, Duration>&) {
    consumer_wait();
    return true;
  }
  void consumer_release() {}
  bool quit() { return true; }

  // make_pipeline's forms; a block pipeline checks that it is unified.
  explicit pipeline(bool block) : block_(block) {}
  template <class Group>
  static pipeline unified(const Group& g, bool partitioned) {
    if (partitioned ||
        ::std::ptrdiff_t(g.size()) != ::std::ptrdiff_t(blockDim.x) * blockDim.y * blockDim.z)
      kiln_cpu::trap(
          "cuda::pipeline: the cpu backend supports a pipeline shared by the whole block whose "
          "every thread produces and consumes (make_pipeline(this_thread_block(), "
          "&shared_state)); this one is partitioned or made for part of the block");
    return pipeline(Scope != thread_scope_thread);
  }

 private:
  void block_wait() const {
    if (block_) __syncthreads();
  }
  bool block_;
};

inline pipeline<thread_scope_thread> make_pipeline() {
  return pipeline<thread_scope_thread>(false);
}
template <class Group, thread_scope Scope, unsigned char Stages>
pipeline<Scope> make_pipeline(const Group& g, pipeline_shared_state<Scope, Stages>*) {
  return pipeline<Scope>::unified(g, false);
}
template <class Group, thread_scope Scope, unsigned char Stages>
pipeline<Scope> make_pipeline(const Group& g, pipeline_shared_state<Scope, Stages>*,
                              ::std::size_t producer_count) {
  return pipeline<Scope>::unified(g, producer_count != g.size());
}
template <class Group, thread_scope Scope, unsigned char Stages>
pipeline<Scope> make_pipeline(const Group& g, pipeline_shared_state<Scope, Stages>*,
                              pipeline_role) {
  return pipeline<Scope>::unified(g, true);
}

// pipeline_consumer_wait_prior<N>(p): every stage but the newest N is complete (all of them here).
template <::std::uint8_t Prior, thread_scope Scope>
void pipeline_consumer_wait_prior(pipeline<Scope>& p) {
  p.consumer_wait();
}
template <thread_scope Scope>
void pipeline_producer_commit(pipeline<thread_scope_thread>& p, barrier<Scope>&) {
  p.producer_commit();
}

// cuda::memcpy_async with a barrier or into a pipeline's stage (Sync): the copy happens at once
// (the cpu backend has no asynchronous copy engine), so it is complete when the barrier or the
// stage it names completes, as CUDA promises. The group form splits the bytes among the group's
// threads.
template <template <thread_scope> class Sync, thread_scope Scope>
inline void memcpy_async(void* dst, const void* src, ::std::size_t bytes, Sync<Scope>&) {
  memcpy(dst, src, bytes);
}
template <class Group, template <thread_scope> class Sync, thread_scope Scope>
inline void memcpy_async(const Group& g, void* dst, const void* src, ::std::size_t bytes,
                         Sync<Scope>&) {
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

namespace kiln_cpu {
// The type of a block barrier the region rewrite lowered (jit/cpu/block_barriers.h).
using block_barrier = ::cuda::barrier<::cuda::thread_scope_block>;
}  // namespace kiln_cpu
