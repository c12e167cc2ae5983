// cooperative_groups for the cpu backend: the subset real kernels use (thread_block,
// thread_block_tile<N> with shuffles, votes and sync, cg::reduce and the scans). Reached through
// the shim <cooperative_groups.h>; built on the prelude's barriers and warp operations.
#pragma once
#include "kiln/cpu_prelude.h"

namespace cooperative_groups {

// The threads of the running block.
class thread_block {
 public:
  void sync() const { __syncthreads(); }
  static void barrier_wait() { __syncthreads(); }
  unsigned thread_rank() const { return kiln_cpu::linear_tid(); }
  unsigned size() const { return blockDim.x * blockDim.y * blockDim.z; }
  unsigned num_threads() const { return size(); }
  dim3 group_index() const { return dim3(blockIdx); }
  dim3 thread_index() const { return dim3(threadIdx); }
  dim3 group_dim() const { return blockDim; }
  dim3 dim_threads() const { return blockDim; }
};
inline thread_block this_thread_block() { return {}; }

// The whole grid (no grid-wide sync: that needs a cooperative launch).
class grid_group {
 public:
  unsigned long long thread_rank() const {
    unsigned long long block = blockIdx.x + (unsigned long long)gridDim.x * (blockIdx.y + (unsigned long long)gridDim.y * blockIdx.z);
    return block * (blockDim.x * blockDim.y * blockDim.z) + kiln_cpu::linear_tid();
  }
  unsigned long long size() const {
    return (unsigned long long)gridDim.x * gridDim.y * gridDim.z * blockDim.x * blockDim.y * blockDim.z;
  }
  unsigned long long num_threads() const { return size(); }
  bool is_valid() const { return true; }
};
inline grid_group this_grid() { return {}; }

// N consecutive threads of a warp (N a power of two up to 32).
template <unsigned N>
class thread_block_tile {
  static_assert(N >= 1 && N <= 32 && (N & (N - 1)) == 0, "tile size must be a power of two <= 32");

 public:
  unsigned thread_rank() const { return kiln_cpu::linear_tid() & (N - 1); }
  static constexpr unsigned size() { return N; }
  static constexpr unsigned num_threads() { return N; }
  unsigned meta_group_rank() const { return kiln_cpu::linear_tid() / N; }
  unsigned meta_group_size() const {
    return (blockDim.x * blockDim.y * blockDim.z + N - 1) / N;
  }
  // The lanes of the warp that belong to this tile.
  unsigned mask() const {
    return N == 32 ? 0xffffffffu : ((1u << N) - 1u) << (kiln_cpu::lane_id() & ~(N - 1));
  }
  void sync() const { __syncwarp(mask()); }
  template <class T> T shfl(T v, int src) const { return __shfl_sync(mask(), v, src, N); }
  template <class T> T shfl_down(T v, unsigned d) const { return __shfl_down_sync(mask(), v, d, N); }
  template <class T> T shfl_up(T v, unsigned d) const { return __shfl_up_sync(mask(), v, d, N); }
  template <class T> T shfl_xor(T v, unsigned m) const { return __shfl_xor_sync(mask(), v, m, N); }
  unsigned ballot(int p) const {
    return N == 32 ? __ballot_sync(mask(), p)
                   : (__ballot_sync(mask(), p) >> (kiln_cpu::lane_id() & ~(N - 1))) & ((1u << N) - 1u);
  }
  int any(int p) const { return __any_sync(mask(), p); }
  int all(int p) const { return __all_sync(mask(), p); }
  template <class T> unsigned match_any(T v) const {
    unsigned m = __match_any_sync(mask(), v);
    return N == 32 ? m : (m >> (kiln_cpu::lane_id() & ~(N - 1))) & ((1u << N) - 1u);
  }
};

template <unsigned N, class Parent>
inline thread_block_tile<N> tiled_partition(const Parent&) { return {}; }

// The active threads of the warp at this point.
class coalesced_group {
 public:
  coalesced_group() : mask_(__activemask()) {}
  unsigned size() const { return __popc(mask_); }
  unsigned num_threads() const { return size(); }
  unsigned thread_rank() const { return __popc(mask_ & __lanemask_lt()); }
  void sync() const { __syncwarp(mask_); }
  template <class T> T shfl(T v, int rank) const {
    unsigned m = mask_;
    for (int i = 0; i < rank; ++i) m &= m - 1;
    return __shfl_sync(mask_, v, __ffs(int(m)) - 1);
  }
  unsigned ballot(int p) const { return __ballot_sync(mask_, p); }
  int any(int p) const { return __any_sync(mask_, p); }
  int all(int p) const { return __all_sync(mask_, p); }

 private:
  unsigned mask_;
};
inline coalesced_group coalesced_threads() { return {}; }

template <class T> struct plus { T operator()(T a, T b) const { return a + b; } };
template <class T> struct less { T operator()(T a, T b) const { return b < a ? b : a; } };
template <class T> struct greater { T operator()(T a, T b) const { return a < b ? b : a; } };
template <class T> struct bit_and { T operator()(T a, T b) const { return a & b; } };
template <class T> struct bit_or { T operator()(T a, T b) const { return a | b; } };
template <class T> struct bit_xor { T operator()(T a, T b) const { return a ^ b; } };

// Every thread of the tile gets op folded over all the tile's values.
template <unsigned N, class T, class Op>
inline T reduce(const thread_block_tile<N>& g, T v, Op op) {
  for (unsigned o = N / 2; o > 0; o /= 2) v = op(v, g.shfl_xor(v, o));
  return v;
}
// Inclusive prefix of op over the tile's values, in thread_rank order.
template <unsigned N, class T, class Op = plus<T>>
inline T inclusive_scan(const thread_block_tile<N>& g, T v, Op op = Op()) {
  for (unsigned d = 1; d < N; d *= 2) {
    T o = g.shfl_up(v, d);
    if (g.thread_rank() >= d) v = op(v, o);
  }
  return v;
}
template <unsigned N, class T, class Op = plus<T>>
inline T exclusive_scan(const thread_block_tile<N>& g, T v, Op op = Op()) {
  T inc = inclusive_scan(g, v, op);
  T prev = g.shfl_up(inc, 1);
  return g.thread_rank() == 0 ? T{} : prev;
}

}  // namespace cooperative_groups
