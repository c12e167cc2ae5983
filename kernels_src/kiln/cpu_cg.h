// cooperative_groups for the cpu backend, as CUDA 12 and 13 declare it for device code:
// thread_block (also from block_tile_memory scratch), thread_block_tile<N> (shuffles, votes,
// match, meta groups), the dynamic tiled_partition, coalesced_threads, labeled_partition and
// binary_partition, the free sync / thread_rank / group_size, cg::reduce and the scans,
// memcpy_async with wait, and grid_group::sync through a cooperative launch. Reached through the
// shim <cooperative_groups.h>; built on the prelude's barriers and warp operations.
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
inline thread_block this_thread_block() {
  return {};
}

// Scratch that CUDA needs for tiles wider than a warp; the cpu backend needs none. Either form,
// block_tile_memory<MaxBlockSize> (CUDA 12) or <TileCommunicationSize, MaxBlockSize> (CUDA 11).
template <unsigned... Sizes>
struct block_tile_memory {};
template <unsigned... Sizes>
inline thread_block this_thread_block(block_tile_memory<Sizes...>&) {
  return {};
}

// The whole grid. sync() needs a cooperative launch, which kiln chooses for a kernel that
// names this_grid (as Numba does); it waits for every thread of every block.
class grid_group {
 public:
  void sync() const {
    kiln_cpu::tls.api->barrier(kiln_cpu::tls.exec, kiln_cpu::barrier_grid, 0);
  }
  static void barrier_wait() {
    kiln_cpu::tls.api->barrier(kiln_cpu::tls.exec, kiln_cpu::barrier_grid, 0);
  }
  unsigned long long thread_rank() const {
    unsigned long long block =
        blockIdx.x +
        (unsigned long long)gridDim.x * (blockIdx.y + (unsigned long long)gridDim.y * blockIdx.z);
    return block * (blockDim.x * blockDim.y * blockDim.z) + kiln_cpu::linear_tid();
  }
  unsigned long long size() const {
    return (unsigned long long)gridDim.x * gridDim.y * gridDim.z * blockDim.x * blockDim.y *
           blockDim.z;
  }
  unsigned long long num_threads() const { return size(); }
  bool is_valid() const { return true; }
};
inline grid_group this_grid() {
  return {};
}

// A group of lanes of one warp given by a mask: what coalesced_threads(), labeled_partition,
// binary_partition and the dynamic tiled_partition return. Ranks count the mask's set bits.
class coalesced_group {
 public:
  __attribute__((always_inline)) coalesced_group() : mask_(__activemask()) {}
  explicit coalesced_group(unsigned mask, unsigned meta_rank = 0, unsigned meta_size = 1)
      : mask_(mask), meta_rank_(meta_rank), meta_size_(meta_size) {}
  unsigned size() const { return __popc(mask_); }
  unsigned num_threads() const { return size(); }
  unsigned thread_rank() const { return __popc(mask_ & __lanemask_lt()); }
  unsigned meta_group_rank() const { return meta_rank_; }
  unsigned meta_group_size() const { return meta_size_; }
  void sync() const { __syncwarp(mask_); }
  template <class T>
  T shfl(T v, unsigned rank) const {
    return __shfl_sync(mask_, v, lane_of(rank));
  }
  template <class T>
  T shfl_down(T v, unsigned d) const {
    const unsigned r = thread_rank() + d;
    return __shfl_sync(mask_, v, lane_of(r < size() ? r : thread_rank()));
  }
  template <class T>
  T shfl_up(T v, unsigned d) const {
    const unsigned r = thread_rank();
    return __shfl_sync(mask_, v, lane_of(r >= d ? r - d : r));
  }
  unsigned ballot(int p) const {
    return compress(__ballot_sync(mask_, p));  // bit i: the thread of rank i
  }
  int any(int p) const { return __any_sync(mask_, p); }
  int all(int p) const { return __all_sync(mask_, p); }
  template <class T>
  unsigned match_any(T v) const {
    return compress(__match_any_sync(mask_, v));
  }
  template <class T>
  unsigned match_all(T v, int& pred) const {
    return compress(__match_all_sync(mask_, v, &pred));
  }
  unsigned get_mask() const { return mask_; }

 private:
  // The lane of the thread of this rank.
  unsigned lane_of(unsigned rank) const {
    unsigned m = mask_;
    for (unsigned i = 0; i < rank; ++i) m &= m - 1;
    return unsigned(__ffs(int(m)) - 1);
  }
  // A warp-wide lane mask, as bits by rank in this group.
  unsigned compress(unsigned lanes) const {
    unsigned out = 0, bit = 0;
    for (unsigned m = mask_; m; m &= m - 1, ++bit)
      if (lanes & (1u << (__ffs(int(m)) - 1))) out |= 1u << bit;
    return out;
  }
  unsigned mask_;
  unsigned meta_rank_ = 0, meta_size_ = 1;
};
__attribute__((always_inline)) inline coalesced_group coalesced_threads() {
  return {};
}

// N consecutive threads of the block. Up to 32 (a power of two), within one warp, with
// shuffles and votes; wider tiles (64 .. 1024, CUDA 12 with block_tile_memory) have only
// thread_rank, size, the meta group, cg::reduce and the scans, and sync, which the cpu backend
// makes a block barrier: every tile of the block must reach it, as kernels written for such
// tiles do (reduce and the scans meet at it too).
// Parent is CUDA's second parameter (thread_block_tile<32, thread_block>); tiles convert to
// and from the parentless form, as in CUDA.
// (static_assert's message must be a literal; undefined after the class)
#define KILN_CG_WARP_ONLY \
  "kiln: shuffles, votes and match need a tile of at most 32 threads (CUDA has none wider)"
template <unsigned N, class Parent = void>
class thread_block_tile {
  static_assert(N >= 1 && N <= 1024 && (N & (N - 1)) == 0,
                "tile size must be a power of two up to 1024");

 public:
  thread_block_tile() = default;
  template <class P>
  thread_block_tile(const thread_block_tile<N, P>&) {}

  unsigned thread_rank() const { return kiln_cpu::linear_tid() & (N - 1); }
  static constexpr unsigned size() { return N; }
  static constexpr unsigned num_threads() { return N; }
  unsigned meta_group_rank() const { return kiln_cpu::linear_tid() / N; }
  unsigned meta_group_size() const { return (blockDim.x * blockDim.y * blockDim.z + N - 1) / N; }
  // The lanes of the warp that belong to this tile.
  unsigned mask() const {
    return N >= 32 ? 0xffffffffu : ((1u << N) - 1u) << (kiln_cpu::lane_id() & ~(N - 1));
  }
  void sync() const {
    if constexpr (N <= 32)
      __syncwarp(mask());
    else
      __syncthreads();
  }
  operator coalesced_group() const {
    static_assert(N <= 32, "only tiles within a warp convert to a coalesced_group");
    return coalesced_group(mask(), meta_group_rank(), meta_group_size());
  }
  template <class T>
  T shfl(T v, int src) const {
    static_assert(N <= 32, KILN_CG_WARP_ONLY);
    return __shfl_sync(mask(), v, src, N);
  }
  template <class T>
  T shfl_down(T v, unsigned d) const {
    static_assert(N <= 32, KILN_CG_WARP_ONLY);
    return __shfl_down_sync(mask(), v, d, N);
  }
  template <class T>
  T shfl_up(T v, unsigned d) const {
    static_assert(N <= 32, KILN_CG_WARP_ONLY);
    return __shfl_up_sync(mask(), v, d, N);
  }
  template <class T>
  T shfl_xor(T v, unsigned m) const {
    static_assert(N <= 32, KILN_CG_WARP_ONLY);
    return __shfl_xor_sync(mask(), v, m, N);
  }
  unsigned ballot(int p) const {
    static_assert(N <= 32, KILN_CG_WARP_ONLY);
    return N == 32
               ? __ballot_sync(mask(), p)
               : (__ballot_sync(mask(), p) >> (kiln_cpu::lane_id() & ~(N - 1))) & ((1u << N) - 1u);
  }
  int any(int p) const {
    static_assert(N <= 32, KILN_CG_WARP_ONLY);
    return __any_sync(mask(), p);
  }
  int all(int p) const {
    static_assert(N <= 32, KILN_CG_WARP_ONLY);
    return __all_sync(mask(), p);
  }
  template <class T>
  unsigned match_any(T v) const {
    static_assert(N <= 32, KILN_CG_WARP_ONLY);
    unsigned m = __match_any_sync(mask(), v);
    return N == 32 ? m : (m >> (kiln_cpu::lane_id() & ~(N - 1))) & ((1u << N) - 1u);
  }
  template <class T>
  unsigned match_all(T v, int& pred) const {
    static_assert(N <= 32, KILN_CG_WARP_ONLY);
    unsigned m = __match_all_sync(mask(), v, &pred);
    return N == 32 ? m : (m >> (kiln_cpu::lane_id() & ~(N - 1))) & ((1u << N) - 1u);
  }
};
#undef KILN_CG_WARP_ONLY

// CUDA's generic group, to which every group converts (a device function's `thread_group g`):
// the rank, size and sync of the group it was made from. What the dynamic
// tiled_partition(parent, n) returns.
class thread_group {
 public:
  thread_group(const thread_block&) {}
  thread_group(const coalesced_group& g) : lanes_(g), in_warp_(true) {}
  template <unsigned N, class P>
  thread_group(const thread_block_tile<N, P>& t) : width_(N) {
    if constexpr (N <= 32) lanes_ = t, in_warp_ = true;
  }
  unsigned thread_rank() const {
    const unsigned tid = kiln_cpu::linear_tid();
    return in_warp_ ? lanes_.thread_rank() : width_ ? tid % width_ : tid;
  }
  unsigned size() const {
    return in_warp_ ? lanes_.size() : width_ ? width_ : blockDim.x * blockDim.y * blockDim.z;
  }
  unsigned num_threads() const { return size(); }
  void sync() const {
    if (in_warp_)
      lanes_.sync();
    else
      __syncthreads();  // the block, or a tile wider than a warp (see thread_block_tile)
  }

 private:
  coalesced_group lanes_{0u};  // a group within a warp
  unsigned width_ = 0;         // a tile wider than a warp: its width (0: the block)
  bool in_warp_ = false;
};

template <unsigned N, class Parent>
inline thread_block_tile<N> tiled_partition(const Parent&) {
  return {};
}
// The dynamic form: tiles of n threads (a power of two up to 32) of the block or of a tile.
template <class Parent>
inline thread_group tiled_partition(const Parent&, unsigned n) {
  const unsigned tid = kiln_cpu::linear_tid(), block = blockDim.x * blockDim.y * blockDim.z;
  const unsigned mask = n >= 32 ? 0xffffffffu : ((1u << n) - 1u) << (kiln_cpu::lane_id() & ~(n - 1));
  return coalesced_group(mask, tid / n, (block + n - 1) / n);
}

// The dynamic partition of a coalesced group: its ranks in consecutive runs of n.
inline coalesced_group tiled_partition(const coalesced_group& g, unsigned n) {
  const unsigned first = g.thread_rank() / n * n;
  unsigned mask = 0, rank = 0;
  for (unsigned m = g.get_mask(); m; m &= m - 1, ++rank)
    if (rank >= first && rank < first + n) mask |= 1u << (__ffs(int(m)) - 1);
  return coalesced_group(mask, g.thread_rank() / n, (g.size() + n - 1) / n);
}
// The calling thread alone.
inline thread_block_tile<1> this_thread() {
  return {};
}

// The threads of a warp-sized group split by a label: those with the same label together.
template <class Label>
inline coalesced_group labeled_partition(const coalesced_group& g, Label label) {
  return coalesced_group(__match_any_sync(g.get_mask(), label));
}
template <unsigned N, class P, class Label>
inline coalesced_group labeled_partition(const thread_block_tile<N, P>& g, Label label) {
  return coalesced_group(__match_any_sync(g.mask(), label));
}
// The same split in two by a predicate.
template <class Group>
inline coalesced_group binary_partition(const Group& g, bool pred) {
  return labeled_partition(g, int(pred));
}

// The free functions of every group.
template <class Group>
inline void sync(const Group& g) {
  g.sync();
}
template <class Group>
inline auto thread_rank(const Group& g) {
  return g.thread_rank();
}
template <class Group>
inline auto group_size(const Group& g) {
  return g.size();
}

template <class T>
struct plus {
  T operator()(T a, T b) const { return a + b; }
};
template <class T>
struct less {
  T operator()(T a, T b) const { return b < a ? b : a; }
};
template <class T>
struct greater {
  T operator()(T a, T b) const { return a < b ? b : a; }
};
template <class T>
struct bit_and {
  T operator()(T a, T b) const { return a & b; }
};
template <class T>
struct bit_or {
  T operator()(T a, T b) const { return a | b; }
};
template <class T>
struct bit_xor {
  T operator()(T a, T b) const { return a ^ b; }
};

namespace detail {
// The warps' totals for the collectives of tiles wider than a warp: one per warp of the block.
template <class T>
inline T* warp_totals() {
  static __shared__ T totals[32];
  return totals;
}
// Over a tile of N > 32 threads (whole warps): every thread's warp total (inclusive: its prefix
// in the warp), then the block meets, as a wide tile's sync does in kiln, and each thread folds
// in those of the earlier warps of its tile (reduce: all of them). Returns the value, and in
// before the fold of the earlier warps alone (what an exclusive scan's first lane gets).
template <unsigned N, class T, class Op>
inline T across_warps(T v, Op op, bool scan, T* before = nullptr, bool* has_before = nullptr) {
  const unsigned lane = kiln_cpu::lane_id(), warp = kiln_cpu::linear_tid() / 32;
  const unsigned first = warp / (N / 32) * (N / 32), last = scan ? warp : first + N / 32;
  for (unsigned d = 1; d < 32; d *= 2) {
    const T o = scan ? __shfl_up_sync(0xffffffffu, v, d) : __shfl_xor_sync(0xffffffffu, v, d);
    if (!scan || lane >= d) v = scan ? op(o, v) : op(v, o);
  }
  T* totals = warp_totals<T>();
  __syncthreads();  // (the last call's readers are done)
  if (lane == 31) totals[warp] = v;
  __syncthreads();
  if (first == last) return v;
  T acc = totals[first];
  for (unsigned w = first + 1; w < last; ++w) acc = op(acc, totals[w]);
  if (before) *before = acc, *has_before = true;
  return scan ? op(acc, v) : acc;
}
}  // namespace detail

// Every thread of the tile gets op folded over all the tile's values. (A tile wider than a warp
// meets the block's other tiles at a barrier, as its sync does.)
template <unsigned N, class P, class T, class Op>
inline T reduce(const thread_block_tile<N, P>& g, T v, Op op) {
  if constexpr (N > 32) {
    return detail::across_warps<N>(v, op, false);
  } else {
    for (unsigned o = N / 2; o > 0; o /= 2) v = op(v, g.shfl_xor(v, o));
    return v;
  }
}
// The same over a coalesced group, in rank order.
template <class T, class Op>
inline T reduce(const coalesced_group& g, T v, Op op) {
  T acc = g.shfl(v, 0);
  for (unsigned r = 1; r < g.size(); ++r) acc = op(acc, g.shfl(v, r));
  return acc;
}
// Inclusive and exclusive prefixes over a coalesced group, in rank order.
template <class T, class Op = plus<T>>
inline T inclusive_scan(const coalesced_group& g, T v, Op op = Op()) {
  T acc = g.shfl(v, 0);
  for (unsigned r = 1; r <= g.thread_rank(); ++r) acc = op(acc, g.shfl(v, r));
  for (unsigned r = g.thread_rank() + 1; r < g.size(); ++r) (void)g.shfl(v, r);  // all take part
  return acc;
}
template <class T, class Op = plus<T>>
inline T exclusive_scan(const coalesced_group& g, T v, Op op = Op()) {
  T inc = inclusive_scan(g, v, op);
  T prev = g.shfl_up(inc, 1);
  return g.thread_rank() == 0 ? T{} : prev;
}
// Inclusive prefix of op over the tile's values, in thread_rank order.
template <unsigned N, class P, class T, class Op = plus<T>>
inline T inclusive_scan(const thread_block_tile<N, P>& g, T v, Op op = Op()) {
  if constexpr (N > 32) {
    return detail::across_warps<N>(v, op, true);
  } else {
    for (unsigned d = 1; d < N; d *= 2) {
      T o = g.shfl_up(v, d);
      if (g.thread_rank() >= d) v = op(o, v);
    }
    return v;
  }
}
template <unsigned N, class P, class T, class Op = plus<T>>
inline T exclusive_scan(const thread_block_tile<N, P>& g, T v, Op op = Op()) {
  if constexpr (N > 32) {
    T before{};
    bool has_before = false;
    const T inc = detail::across_warps<N>(v, op, true, &before, &has_before);
    const T prev = __shfl_up_sync(0xffffffffu, inc, 1);
    return kiln_cpu::lane_id() > 0 ? prev : has_before ? before : T{};
  } else {
    T inc = inclusive_scan(g, v, op);
    T prev = g.shfl_up(inc, 1);
    return g.thread_rank() == 0 ? T{} : prev;
  }
}

// invoke_one: one thread of the group (a GPU picks any; kiln the first) calls fn(args...);
// invoke_one_broadcast also hands its result to every thread of a tile or coalesced group.
template <class Group, class Fn, class... Args>
inline void invoke_one(const Group& g, Fn&& fn, Args&&... args) {
  if (g.thread_rank() == 0) fn(args...);
}
template <class Group, class Fn, class... Args>
inline auto invoke_one_broadcast(const Group& g, Fn&& fn, Args&&... args) {
  decltype(fn(args...)) result{};
  if (g.thread_rank() == 0) result = fn(args...);
  return g.shfl(result, 0);
}

// reduce_store_async / reduce_update_async: the group's reduce, which one thread then stores
// (through a pointer, or into an atomic) or folds into an atomic with op (compare and swap), as
// the asynchronous forms do once they complete: kiln completes them at once.
template <class Group, class Dst, class T, class Op>
inline void reduce_store_async(const Group& g, Dst* dst, const T& v, Op op) {
  const T r = reduce(g, v, op);
  if (g.thread_rank() == 0) *dst = r;
}
template <class Group, class Atomic, class T, class Op>
inline void reduce_store_async(const Group& g, Atomic& dst, const T& v, Op op) {
  const T r = reduce(g, v, op);
  if (g.thread_rank() == 0) dst.store(r);
}
template <class Group, class Atomic, class T, class Op>
inline void reduce_update_async(const Group& g, Atomic& dst, const T& v, Op op) {
  const T r = reduce(g, v, op);
  if (g.thread_rank() != 0) return;
  auto old = dst.load();
  while (!dst.compare_exchange_weak(old, op(old, r))) {
  }
}

// memcpy_async: the group's threads copy bytes between memories (each a strided share), and
// wait makes the copy visible to the whole group. `size` is a byte count or
// cuda::aligned_size_t<N>, anything that converts to one.
template <class Group, class Size>
inline void memcpy_async(const Group& g, void* dst, const void* src, Size size) {
  const std::size_t bytes = static_cast<std::size_t>(size);
  const std::size_t step = g.num_threads(), rank = g.thread_rank();
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  for (std::size_t i = rank; i < bytes; i += step) d[i] = s[i];
}
// The element-count form: dst_count elements of src_count copied.
template <class Group, class T>
inline void memcpy_async(const Group& g, T* dst, std::size_t dst_count, const T* src,
                         std::size_t src_count) {
  const std::size_t n = dst_count < src_count ? dst_count : src_count;
  for (std::size_t i = g.thread_rank(); i < n; i += g.num_threads()) dst[i] = src[i];
}
template <class Group>
inline void wait(const Group& g) {
  g.sync();
}
template <unsigned Count, class Group>
inline void wait_prior(const Group& g) {
  g.sync();
}

}  // namespace cooperative_groups
