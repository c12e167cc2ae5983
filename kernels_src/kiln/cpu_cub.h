// CUB's block- and warp-level collectives for the cpu backend, with CUB's interface (class
// templates, TempStorage, the methods and their arguments) but kiln's own implementation: a
// block's threads share TempStorage in __shared__ memory and meet at __syncthreads, exactly as
// many times as CUB itself synchronises (once per reduction, twice per scan), so code that is
// correct with CUB's rules (a __syncthreads before TempStorage is reused) is correct here.
// Results follow CUB's contracts: a block reduction's result is valid in thread 0, a warp
// reduction's in lane 0. Reached through the shims <cub/cub.cuh>, <cub/block/...>,
// <cub/warp/...>. Also cuda::std::plus / minus and cuda::maximum / minimum, the operators CUDA
// 13's CUB takes, and CUB 2's cub::Sum / Max / Min.
#pragma once
#include <algorithm>
#include <type_traits>

#include "kiln/cpu_prelude.h"

namespace cuda {
namespace std {
template <class T = void>
struct plus {
  constexpr T operator()(const T& a, const T& b) const { return a + b; }
};
template <>
struct plus<void> {
  template <class T>
  constexpr T operator()(const T& a, const T& b) const { return a + b; }
};
template <class T = void>
struct minus {
  constexpr T operator()(const T& a, const T& b) const { return a - b; }
};
}  // namespace std
template <class T = void>
struct maximum {
  constexpr T operator()(const T& a, const T& b) const { return a < b ? b : a; }
};
template <>
struct maximum<void> {
  template <class T>
  constexpr T operator()(const T& a, const T& b) const { return a < b ? b : a; }
};
template <class T = void>
struct minimum {
  constexpr T operator()(const T& a, const T& b) const { return b < a ? b : a; }
};
template <>
struct minimum<void> {
  template <class T>
  constexpr T operator()(const T& a, const T& b) const { return b < a ? b : a; }
};
}  // namespace cuda

enum cudaSharedMemConfig {
  cudaSharedMemBankSizeDefault,
  cudaSharedMemBankSizeFourByte,
  cudaSharedMemBankSizeEightByte
};

namespace cub {

struct Sum : ::cuda::std::plus<> {};
struct Max : ::cuda::maximum<> {};
struct Min : ::cuda::minimum<> {};
struct NullType {};

enum BlockReduceAlgorithm {
  BLOCK_REDUCE_RAKING_COMMUTATIVE_ONLY,
  BLOCK_REDUCE_RAKING,
  BLOCK_REDUCE_WARP_REDUCTIONS
};
enum BlockScanAlgorithm { BLOCK_SCAN_RAKING, BLOCK_SCAN_RAKING_MEMOIZE, BLOCK_SCAN_WARP_SCANS };
enum BlockLoadAlgorithm {
  BLOCK_LOAD_DIRECT,
  BLOCK_LOAD_STRIPED,
  BLOCK_LOAD_VECTORIZE,
  BLOCK_LOAD_TRANSPOSE,
  BLOCK_LOAD_WARP_TRANSPOSE,
  BLOCK_LOAD_WARP_TRANSPOSE_TIMESLICED
};
enum BlockStoreAlgorithm {
  BLOCK_STORE_DIRECT,
  BLOCK_STORE_STRIPED,
  BLOCK_STORE_VECTORIZE,
  BLOCK_STORE_TRANSPOSE,
  BLOCK_STORE_WARP_TRANSPOSE,
  BLOCK_STORE_WARP_TRANSPOSE_TIMESLICED
};

namespace detail {

// The calling thread's rank in a block of the given x and y extents.
inline int block_rank(int dim_x, int dim_y) {
  return int(threadIdx.x) + dim_x * (int(threadIdx.y) + dim_y * int(threadIdx.z));
}

// Storage a collective made with no TempStorage uses: one per block (__shared__ is per block).
template <class Storage>
Storage& private_storage() {
  static __shared__ Storage storage;
  return storage;
}

// The lanes of the calling thread's logical warp of N lanes (a power of two up to 32).
template <int N>
unsigned logical_warp_mask() {
  return N == 32 ? 0xffffffffu : ((1u << N) - 1u) << (kiln_cpu::lane_id() & ~unsigned(N - 1));
}

// Folds items[0..N) with op.
template <class T, int N, class Op>
T thread_reduce(const T (&items)[N], Op op) {
  T acc = items[0];
  for (int i = 1; i < N; ++i) acc = op(acc, items[i]);
  return acc;
}

// Radix-sortable bits of a key, ordered as the keys (CUB's twiddling: floats by sign and
// magnitude, signed integers with the sign bit flipped).
template <class K>
auto ordered_bits(K key) {
  if constexpr (::std::is_floating_point_v<K>) {
    using U = ::std::conditional_t<sizeof(K) == 4, unsigned, unsigned long long>;
    U u;
    memcpy(&u, &key, sizeof u);
    const U sign = U(1) << (8 * sizeof(U) - 1);
    return (u & sign) ? U(~u) : U(u | sign);
  } else if constexpr (::std::is_signed_v<K>) {
    using U = ::std::make_unsigned_t<K>;
    return U(U(key) ^ (U(1) << (8 * sizeof(U) - 1)));
  } else {
    return key;
  }
}

}  // namespace detail

// ---- Block reduction ---------------------------------------------------------------------------
template <class T, int BLOCK_DIM_X, BlockReduceAlgorithm ALGORITHM = BLOCK_REDUCE_WARP_REDUCTIONS,
          int BLOCK_DIM_Y = 1, int BLOCK_DIM_Z = 1>
class BlockReduce {
  static constexpr int kThreads = BLOCK_DIM_X * BLOCK_DIM_Y * BLOCK_DIM_Z;

 public:
  struct TempStorage {
    T values[kThreads];
  };
  BlockReduce() : BlockReduce(detail::private_storage<TempStorage>()) {}
  explicit BlockReduce(TempStorage& storage)
      : storage_(storage), rank_(detail::block_rank(BLOCK_DIM_X, BLOCK_DIM_Y)) {}

  // op folded over the first `valid` threads' inputs, in rank order; valid in thread 0.
  template <class Op>
  T Reduce(T input, Op op, int valid = kThreads) {
    storage_.values[rank_] = input;
    __syncthreads();
    if (rank_ != 0) return input;
    T acc = storage_.values[0];
    for (int i = 1; i < valid && i < kThreads; ++i) acc = op(acc, storage_.values[i]);
    return acc;
  }
  template <int N, class Op>
  T Reduce(const T (&inputs)[N], Op op) {
    return Reduce(detail::thread_reduce(inputs, op), op);
  }
  T Sum(T input) { return Reduce(input, ::cuda::std::plus<>()); }
  T Sum(T input, int valid) { return Reduce(input, ::cuda::std::plus<>(), valid); }
  template <int N>
  T Sum(const T (&inputs)[N]) {
    return Reduce(inputs, ::cuda::std::plus<>());
  }

 private:
  TempStorage& storage_;
  int rank_;
};

// ---- Block scan -------------------------------------------------------------------------------
template <class T, int BLOCK_DIM_X, BlockScanAlgorithm ALGORITHM = BLOCK_SCAN_RAKING,
          int BLOCK_DIM_Y = 1, int BLOCK_DIM_Z = 1>
class BlockScan {
  static constexpr int kThreads = BLOCK_DIM_X * BLOCK_DIM_Y * BLOCK_DIM_Z;

 public:
  struct TempStorage {
    T values[kThreads];
    T prefix[kThreads];
    T aggregate;
  };
  BlockScan() : BlockScan(detail::private_storage<TempStorage>()) {}
  explicit BlockScan(TempStorage& storage)
      : storage_(storage), rank_(detail::block_rank(BLOCK_DIM_X, BLOCK_DIM_Y)) {}

  // Exclusive: output = initial op inputs of the lower ranks (thread 0: initial).
  template <class Op>
  void ExclusiveScan(T input, T& output, T initial, Op op) {
    T aggregate;
    ExclusiveScan(input, output, initial, op, aggregate);
  }
  template <class Op>
  void ExclusiveScan(T input, T& output, T initial, Op op, T& aggregate) {
    scan(input, op, &initial);
    output = storage_.prefix[rank_];
    aggregate = storage_.aggregate;
  }
  // Without an initial value, thread 0's output is undefined in CUB; here it is its input.
  template <class Op>
  void ExclusiveScan(T input, T& output, Op op) {
    scan(input, op, nullptr);
    output = rank_ == 0 ? input : storage_.prefix[rank_];
  }
  template <class Op>
  void InclusiveScan(T input, T& output, Op op) {
    T aggregate;
    InclusiveScan(input, output, op, aggregate);
  }
  template <class Op>
  void InclusiveScan(T input, T& output, Op op, T& aggregate) {
    scan(input, op, nullptr);
    output = rank_ == 0 ? input : op(storage_.prefix[rank_], input);
    aggregate = storage_.aggregate;
  }
  void ExclusiveSum(T input, T& output) { ExclusiveScan(input, output, T(0), ::cuda::std::plus<>()); }
  void ExclusiveSum(T input, T& output, T& aggregate) {
    ExclusiveScan(input, output, T(0), ::cuda::std::plus<>(), aggregate);
  }
  void InclusiveSum(T input, T& output) { InclusiveScan(input, output, ::cuda::std::plus<>()); }
  void InclusiveSum(T input, T& output, T& aggregate) {
    InclusiveScan(input, output, ::cuda::std::plus<>(), aggregate);
  }

  // The blocked forms: ITEMS consecutive items per thread, scanned in order.
  template <int N, class Op>
  void ExclusiveScan(const T (&input)[N], T (&output)[N], T initial, Op op) {
    T aggregate;
    ExclusiveScan(input, output, initial, op, aggregate);
  }
  template <int N, class Op>
  void ExclusiveScan(const T (&input)[N], T (&output)[N], T initial, Op op, T& aggregate) {
    T prefix;
    ExclusiveScan(detail::thread_reduce(input, op), prefix, initial, op, aggregate);
    for (int i = 0; i < N; ++i) {
      const T item = input[i];
      output[i] = prefix;
      prefix = op(prefix, item);
    }
  }
  template <int N, class Op>
  void InclusiveScan(const T (&input)[N], T (&output)[N], Op op) {
    T aggregate;
    InclusiveScan(input, output, op, aggregate);
  }
  template <int N, class Op>
  void InclusiveScan(const T (&input)[N], T (&output)[N], Op op, T& aggregate) {
    T prefix;
    ExclusiveScan(detail::thread_reduce(input, op), prefix, op);
    aggregate = storage_.aggregate;
    for (int i = 0; i < N; ++i) {
      prefix = rank_ == 0 && i == 0 ? input[0] : op(prefix, input[i]);
      output[i] = prefix;
    }
  }
  template <int N>
  void ExclusiveSum(const T (&input)[N], T (&output)[N]) {
    ExclusiveScan(input, output, T(0), ::cuda::std::plus<>());
  }
  template <int N>
  void ExclusiveSum(const T (&input)[N], T (&output)[N], T& aggregate) {
    ExclusiveScan(input, output, T(0), ::cuda::std::plus<>(), aggregate);
  }
  template <int N>
  void InclusiveSum(const T (&input)[N], T (&output)[N]) {
    InclusiveScan(input, output, ::cuda::std::plus<>());
  }
  template <int N>
  void InclusiveSum(const T (&input)[N], T (&output)[N], T& aggregate) {
    InclusiveScan(input, output, ::cuda::std::plus<>(), aggregate);
  }

 private:
  // Every thread's exclusive prefix into storage_.prefix (from *initial when given), and the
  // aggregate of the inputs alone (CUB's block_aggregate): thread 0 folds while the others wait.
  // Two barriers.
  template <class Op>
  void scan(T input, Op op, const T* initial) {
    storage_.values[rank_] = input;
    __syncthreads();
    if (rank_ == 0) {
      T aggregate = storage_.values[0];
      storage_.prefix[0] = initial ? *initial : aggregate;
      for (int i = 1; i < kThreads; ++i) {
        storage_.prefix[i] = initial ? op(*initial, aggregate) : aggregate;
        aggregate = op(aggregate, storage_.values[i]);
      }
      storage_.aggregate = aggregate;
    }
    __syncthreads();
  }

  TempStorage& storage_;
  int rank_;
};

// ---- Block load and store ---------------------------------------------------------------------
// Every algorithm but the striped one gives (or takes) the blocked arrangement: thread r holds
// items r*N .. r*N+N-1. Direct loads need no storage and no barrier.
template <class T, int BLOCK_DIM_X, int ITEMS_PER_THREAD,
          BlockLoadAlgorithm ALGORITHM = BLOCK_LOAD_DIRECT, int BLOCK_DIM_Y = 1, int BLOCK_DIM_Z = 1>
class BlockLoad {
  static constexpr int kThreads = BLOCK_DIM_X * BLOCK_DIM_Y * BLOCK_DIM_Z;

 public:
  struct TempStorage {};
  BlockLoad() : rank_(detail::block_rank(BLOCK_DIM_X, BLOCK_DIM_Y)) {}
  explicit BlockLoad(TempStorage&) : BlockLoad() {}

  template <class It, class U>
  void Load(It block, U (&items)[ITEMS_PER_THREAD]) {
    for (int i = 0; i < ITEMS_PER_THREAD; ++i) items[i] = block[index(i)];
  }
  template <class It, class U>
  void Load(It block, U (&items)[ITEMS_PER_THREAD], int valid) {
    for (int i = 0; i < ITEMS_PER_THREAD; ++i)
      if (index(i) < valid) items[i] = block[index(i)];
  }
  template <class It, class U, class D>
  void Load(It block, U (&items)[ITEMS_PER_THREAD], int valid, D oob_default) {
    for (int i = 0; i < ITEMS_PER_THREAD; ++i)
      items[i] = index(i) < valid ? U(block[index(i)]) : U(oob_default);
  }

 private:
  int index(int i) const {
    return ALGORITHM == BLOCK_LOAD_STRIPED ? i * kThreads + rank_ : rank_ * ITEMS_PER_THREAD + i;
  }
  int rank_;
};

template <class T, int BLOCK_DIM_X, int ITEMS_PER_THREAD,
          BlockStoreAlgorithm ALGORITHM = BLOCK_STORE_DIRECT, int BLOCK_DIM_Y = 1,
          int BLOCK_DIM_Z = 1>
class BlockStore {
  static constexpr int kThreads = BLOCK_DIM_X * BLOCK_DIM_Y * BLOCK_DIM_Z;

 public:
  struct TempStorage {};
  BlockStore() : rank_(detail::block_rank(BLOCK_DIM_X, BLOCK_DIM_Y)) {}
  explicit BlockStore(TempStorage&) : BlockStore() {}

  template <class It, class U>
  void Store(It block, U (&items)[ITEMS_PER_THREAD]) {
    for (int i = 0; i < ITEMS_PER_THREAD; ++i) block[index(i)] = items[i];
  }
  template <class It, class U>
  void Store(It block, U (&items)[ITEMS_PER_THREAD], int valid) {
    for (int i = 0; i < ITEMS_PER_THREAD; ++i)
      if (index(i) < valid) block[index(i)] = items[i];
  }

 private:
  int index(int i) const {
    return ALGORITHM == BLOCK_STORE_STRIPED ? i * kThreads + rank_ : rank_ * ITEMS_PER_THREAD + i;
  }
  int rank_;
};

// ---- Block radix sort -------------------------------------------------------------------------
// Stable, by the key bits [begin_bit, end_bit) in CUB's order (floats and signed integers by
// value). Thread 0 sorts the block's items in shared memory between two barriers.
template <class KeyT, int BLOCK_DIM_X, int ITEMS_PER_THREAD, class ValueT = NullType,
          int RADIX_BITS = 4, bool MEMOIZE_OUTER_SCAN = true,
          BlockScanAlgorithm INNER_SCAN_ALGORITHM = BLOCK_SCAN_WARP_SCANS,
          cudaSharedMemConfig SMEM_CONFIG = cudaSharedMemBankSizeFourByte, int BLOCK_DIM_Y = 1,
          int BLOCK_DIM_Z = 1>
class BlockRadixSort {
  static constexpr int kThreads = BLOCK_DIM_X * BLOCK_DIM_Y * BLOCK_DIM_Z;
  static constexpr int kItems = kThreads * ITEMS_PER_THREAD;
  static constexpr bool kValues = !::std::is_same_v<ValueT, NullType>;
  using Value = ::std::conditional_t<kValues, ValueT, char>;

 public:
  struct TempStorage {
    KeyT keys[kItems], sorted_keys[kItems];
    Value values[kValues ? kItems : 1], sorted_values[kValues ? kItems : 1];
    int order[kItems];
  };
  BlockRadixSort() : BlockRadixSort(detail::private_storage<TempStorage>()) {}
  explicit BlockRadixSort(TempStorage& storage)
      : storage_(storage), rank_(detail::block_rank(BLOCK_DIM_X, BLOCK_DIM_Y)) {}

  void Sort(KeyT (&keys)[ITEMS_PER_THREAD], int begin_bit = 0, int end_bit = 8 * sizeof(KeyT)) {
    sort(keys, nullptr, begin_bit, end_bit, false, false);
  }
  void Sort(KeyT (&keys)[ITEMS_PER_THREAD], Value (&values)[ITEMS_PER_THREAD], int begin_bit = 0,
            int end_bit = 8 * sizeof(KeyT)) {
    sort(keys, values, begin_bit, end_bit, false, false);
  }
  void SortDescending(KeyT (&keys)[ITEMS_PER_THREAD], int begin_bit = 0,
                      int end_bit = 8 * sizeof(KeyT)) {
    sort(keys, nullptr, begin_bit, end_bit, true, false);
  }
  void SortDescending(KeyT (&keys)[ITEMS_PER_THREAD], Value (&values)[ITEMS_PER_THREAD],
                      int begin_bit = 0, int end_bit = 8 * sizeof(KeyT)) {
    sort(keys, values, begin_bit, end_bit, true, false);
  }
  void SortBlockedToStriped(KeyT (&keys)[ITEMS_PER_THREAD], int begin_bit = 0,
                            int end_bit = 8 * sizeof(KeyT)) {
    sort(keys, nullptr, begin_bit, end_bit, false, true);
  }
  void SortBlockedToStriped(KeyT (&keys)[ITEMS_PER_THREAD], Value (&values)[ITEMS_PER_THREAD],
                            int begin_bit = 0, int end_bit = 8 * sizeof(KeyT)) {
    sort(keys, values, begin_bit, end_bit, false, true);
  }
  void SortDescendingBlockedToStriped(KeyT (&keys)[ITEMS_PER_THREAD], int begin_bit = 0,
                                      int end_bit = 8 * sizeof(KeyT)) {
    sort(keys, nullptr, begin_bit, end_bit, true, true);
  }

 private:
  void sort(KeyT (&keys)[ITEMS_PER_THREAD], Value* values, int begin_bit, int end_bit,
            bool descending, bool striped_out) {
    for (int i = 0; i < ITEMS_PER_THREAD; ++i) {
      storage_.keys[rank_ * ITEMS_PER_THREAD + i] = keys[i];
      if (values) storage_.values[rank_ * ITEMS_PER_THREAD + i] = values[i];
    }
    __syncthreads();
    if (rank_ == 0) {
      const int width = end_bit - begin_bit;
      auto digit = [&](int k) {
        const auto bits = detail::ordered_bits(storage_.keys[k]);
        using U = decltype(bits);
        const U mask = width >= int(8 * sizeof(U)) ? U(~U(0)) : U((U(1) << width) - 1);
        return U((bits >> begin_bit) & mask);
      };
      int* order = storage_.order;
      for (int k = 0; k < kItems; ++k) order[k] = k;
      ::std::stable_sort(order, order + kItems, [&](int a, int b) {
        return descending ? digit(b) < digit(a) : digit(a) < digit(b);
      });
      for (int k = 0; k < kItems; ++k) storage_.sorted_keys[k] = storage_.keys[order[k]];
      for (int k = 0; k < kItems; ++k) storage_.keys[k] = storage_.sorted_keys[k];
      if (kValues && values) {
        for (int k = 0; k < kItems; ++k) storage_.sorted_values[k] = storage_.values[order[k]];
        for (int k = 0; k < kItems; ++k) storage_.values[k] = storage_.sorted_values[k];
      }
    }
    __syncthreads();
    for (int i = 0; i < ITEMS_PER_THREAD; ++i) {
      const int k = striped_out ? i * kThreads + rank_ : rank_ * ITEMS_PER_THREAD + i;
      keys[i] = storage_.keys[k];
      if (values) values[i] = storage_.values[k];
    }
  }

  TempStorage& storage_;
  int rank_;
};

// ---- Warp reduction and scan ------------------------------------------------------------------
// Logical warps of LOGICAL_WARP_THREADS lanes (a power of two up to 32), through the prelude's
// shuffles. No storage is needed; TempStorage exists for the interface.
template <class T, int LOGICAL_WARP_THREADS = 32>
class WarpReduce {
 public:
  struct TempStorage {};
  WarpReduce() = default;
  explicit WarpReduce(TempStorage&) {}

  // op over the first `valid` lanes of the logical warp; valid in its lane 0.
  template <class Op>
  T Reduce(T input, Op op, int valid = LOGICAL_WARP_THREADS) {
    const int lane = int(kiln_cpu::lane_id()) % LOGICAL_WARP_THREADS;
    for (int offset = 1; offset < LOGICAL_WARP_THREADS; offset *= 2) {
      const T other = __shfl_down_sync(mask(), input, offset, LOGICAL_WARP_THREADS);
      if (lane % (2 * offset) == 0 && lane + offset < valid) input = op(input, other);
    }
    return input;
  }
  T Sum(T input) { return Reduce(input, ::cuda::std::plus<>()); }
  T Sum(T input, int valid) { return Reduce(input, ::cuda::std::plus<>(), valid); }

 private:
  static unsigned mask() { return detail::logical_warp_mask<LOGICAL_WARP_THREADS>(); }
};

template <class T, int LOGICAL_WARP_THREADS = 32>
class WarpScan {
 public:
  struct TempStorage {};
  WarpScan() = default;
  explicit WarpScan(TempStorage&) {}

  template <class Op>
  void InclusiveScan(T input, T& output, Op op) {
    T aggregate;
    InclusiveScan(input, output, op, aggregate);
  }
  template <class Op>
  void InclusiveScan(T input, T& output, Op op, T& aggregate) {
    const int lane = int(kiln_cpu::lane_id()) % LOGICAL_WARP_THREADS;
    for (int offset = 1; offset < LOGICAL_WARP_THREADS; offset *= 2) {
      const T other = __shfl_up_sync(mask(), input, offset, LOGICAL_WARP_THREADS);
      if (lane >= offset) input = op(other, input);
    }
    output = input;
    aggregate = __shfl_sync(mask(), input, LOGICAL_WARP_THREADS - 1, LOGICAL_WARP_THREADS);
  }
  template <class Op>
  void ExclusiveScan(T input, T& output, T initial, Op op) {
    T aggregate;
    ExclusiveScan(input, output, initial, op, aggregate);
  }
  template <class Op>
  void ExclusiveScan(T input, T& output, T initial, Op op, T& aggregate) {
    T inclusive;
    InclusiveScan(input, inclusive, op, aggregate);
    const T before = __shfl_up_sync(mask(), inclusive, 1, LOGICAL_WARP_THREADS);
    output = int(kiln_cpu::lane_id()) % LOGICAL_WARP_THREADS == 0 ? initial : op(initial, before);
  }
  void InclusiveSum(T input, T& output) { InclusiveScan(input, output, ::cuda::std::plus<>()); }
  void InclusiveSum(T input, T& output, T& aggregate) {
    InclusiveScan(input, output, ::cuda::std::plus<>(), aggregate);
  }
  void ExclusiveSum(T input, T& output) {
    ExclusiveScan(input, output, T(0), ::cuda::std::plus<>());
  }
  void ExclusiveSum(T input, T& output, T& aggregate) {
    ExclusiveScan(input, output, T(0), ::cuda::std::plus<>(), aggregate);
  }
  T Broadcast(T input, unsigned src_lane) {
    return __shfl_sync(mask(), input, int(src_lane), LOGICAL_WARP_THREADS);
  }

 private:
  static unsigned mask() { return detail::logical_warp_mask<LOGICAL_WARP_THREADS>(); }
};

// ---- Block exchange ---------------------------------------------------------------------------
// Rearranges a block's items between arrangements through shared memory, with one barrier
// between the writes and the reads (as CUB's). Blocked: thread r holds items r*N .. r*N+N-1;
// striped: item i of thread r is i*THREADS + r; warp-striped: within each warp's 32*N items,
// item i of lane l is i*32 + l.
template <class T, int BLOCK_DIM_X, int ITEMS_PER_THREAD, bool WARP_TIME_SLICING = false,
          int BLOCK_DIM_Y = 1, int BLOCK_DIM_Z = 1>
class BlockExchange {
  static constexpr int kThreads = BLOCK_DIM_X * BLOCK_DIM_Y * BLOCK_DIM_Z;
  static constexpr int N = ITEMS_PER_THREAD;

 public:
  struct TempStorage {
    T items[kThreads * N];
  };
  BlockExchange() : BlockExchange(detail::private_storage<TempStorage>()) {}
  explicit BlockExchange(TempStorage& storage)
      : storage_(storage), rank_(detail::block_rank(BLOCK_DIM_X, BLOCK_DIM_Y)) {}

  template <class In, class Out>
  void StripedToBlocked(const In (&input)[N], Out (&output)[N]) {
    exchange(input, output, &BlockExchange::striped, &BlockExchange::blocked);
  }
  template <class In, class Out>
  void BlockedToStriped(const In (&input)[N], Out (&output)[N]) {
    exchange(input, output, &BlockExchange::blocked, &BlockExchange::striped);
  }
  template <class In, class Out>
  void WarpStripedToBlocked(const In (&input)[N], Out (&output)[N]) {
    exchange(input, output, &BlockExchange::warp_striped, &BlockExchange::blocked);
  }
  template <class In, class Out>
  void BlockedToWarpStriped(const In (&input)[N], Out (&output)[N]) {
    exchange(input, output, &BlockExchange::blocked, &BlockExchange::warp_striped);
  }
  void StripedToBlocked(T (&items)[N]) { StripedToBlocked(items, items); }
  void BlockedToStriped(T (&items)[N]) { BlockedToStriped(items, items); }
  void WarpStripedToBlocked(T (&items)[N]) { WarpStripedToBlocked(items, items); }
  void BlockedToWarpStriped(T (&items)[N]) { BlockedToWarpStriped(items, items); }
  // Each item to the place its rank names, then read back blocked (or striped).
  template <class Offset>
  void ScatterToBlocked(T (&items)[N], Offset (&ranks)[N]) {
    scatter(items, ranks, &BlockExchange::blocked);
  }
  template <class Offset>
  void ScatterToStriped(T (&items)[N], Offset (&ranks)[N]) {
    scatter(items, ranks, &BlockExchange::striped);
  }

 private:
  int blocked(int i) const { return rank_ * N + i; }
  int striped(int i) const { return i * kThreads + rank_; }
  int warp_striped(int i) const { return (rank_ / 32) * 32 * N + i * 32 + rank_ % 32; }
  template <class In, class Out>
  void exchange(const In (&input)[N], Out (&output)[N], int (BlockExchange::*from)(int) const,
                int (BlockExchange::*to)(int) const) {
    for (int i = 0; i < N; ++i) storage_.items[(this->*from)(i)] = input[i];
    __syncthreads();
    for (int i = 0; i < N; ++i) output[i] = storage_.items[(this->*to)(i)];
  }
  template <class Offset>
  void scatter(T (&items)[N], Offset (&ranks)[N], int (BlockExchange::*to)(int) const) {
    for (int i = 0; i < N; ++i) storage_.items[ranks[i]] = items[i];
    __syncthreads();
    for (int i = 0; i < N; ++i) items[i] = storage_.items[(this->*to)(i)];
  }
  TempStorage& storage_;
  int rank_;
};

// ---- Block discontinuity and adjacent difference ----------------------------------------------
// Both compare each item of a blocked arrangement with its neighbour, the first and last items
// of a thread with the neighbouring threads' (shared once, one barrier). A flag op is called
// (a, b) or (a, b, b's index), and says whether a and b are discontinuous.
namespace detail {
template <class Op, class T>
bool flag(Op op, const T& a, const T& b, int b_index) {
  if constexpr (::std::is_invocable_v<Op, T, T, int>)
    return op(a, b, b_index);
  else
    return op(a, b);
}
}  // namespace detail

template <class T, int BLOCK_DIM_X, int BLOCK_DIM_Y = 1, int BLOCK_DIM_Z = 1>
class BlockDiscontinuity {
  static constexpr int kThreads = BLOCK_DIM_X * BLOCK_DIM_Y * BLOCK_DIM_Z;

 public:
  struct TempStorage {
    T first[kThreads], last[kThreads];
  };
  BlockDiscontinuity() : BlockDiscontinuity(detail::private_storage<TempStorage>()) {}
  explicit BlockDiscontinuity(TempStorage& storage)
      : storage_(storage), rank_(detail::block_rank(BLOCK_DIM_X, BLOCK_DIM_Y)) {}

  // head_flags[i]: item i differs from the one before it (the block's first: 1, or against
  // tile_predecessor_item).
  template <int N, class Flag, class Op>
  void FlagHeads(Flag (&head_flags)[N], const T (&input)[N], Op op) {
    share(input);
    heads(head_flags, input, op, nullptr);
  }
  template <int N, class Flag, class Op>
  void FlagHeads(Flag (&head_flags)[N], const T (&input)[N], Op op, T tile_predecessor_item) {
    share(input);
    heads(head_flags, input, op, &tile_predecessor_item);
  }
  // tail_flags[i]: item i differs from the one after it (the block's last: 1, or against
  // tile_successor_item).
  template <int N, class Flag, class Op>
  void FlagTails(Flag (&tail_flags)[N], const T (&input)[N], Op op) {
    share(input);
    tails(tail_flags, input, op, nullptr);
  }
  template <int N, class Flag, class Op>
  void FlagTails(Flag (&tail_flags)[N], const T (&input)[N], Op op, T tile_successor_item) {
    share(input);
    tails(tail_flags, input, op, &tile_successor_item);
  }
  template <int N, class Flag, class Op>
  void FlagHeadsAndTails(Flag (&head_flags)[N], Flag (&tail_flags)[N], const T (&input)[N], Op op) {
    share(input);
    heads(head_flags, input, op, nullptr);
    tails(tail_flags, input, op, nullptr);
  }
  template <int N, class Flag, class Op>
  void FlagHeadsAndTails(Flag (&head_flags)[N], Flag (&tail_flags)[N], T tile_successor_item,
                         const T (&input)[N], Op op) {
    share(input);
    heads(head_flags, input, op, nullptr);
    tails(tail_flags, input, op, &tile_successor_item);
  }
  template <int N, class Flag, class Op>
  void FlagHeadsAndTails(Flag (&head_flags)[N], T tile_predecessor_item, Flag (&tail_flags)[N],
                         const T (&input)[N], Op op) {
    share(input);
    heads(head_flags, input, op, &tile_predecessor_item);
    tails(tail_flags, input, op, nullptr);
  }
  template <int N, class Flag, class Op>
  void FlagHeadsAndTails(Flag (&head_flags)[N], T tile_predecessor_item, Flag (&tail_flags)[N],
                         T tile_successor_item, const T (&input)[N], Op op) {
    share(input);
    heads(head_flags, input, op, &tile_predecessor_item);
    tails(tail_flags, input, op, &tile_successor_item);
  }

 private:
  template <int N>
  void share(const T (&input)[N]) {
    storage_.first[rank_] = input[0];
    storage_.last[rank_] = input[N - 1];
    __syncthreads();
  }
  template <int N, class Flag, class Op>
  void heads(Flag (&flags)[N], const T (&input)[N], Op op, const T* predecessor) {
    const int base = rank_ * N;
    if (rank_ > 0)
      flags[0] = detail::flag(op, storage_.last[rank_ - 1], input[0], base);
    else
      flags[0] = predecessor ? detail::flag(op, *predecessor, input[0], base) : 1;
    for (int i = 1; i < N; ++i) flags[i] = detail::flag(op, input[i - 1], input[i], base + i);
  }
  template <int N, class Flag, class Op>
  void tails(Flag (&flags)[N], const T (&input)[N], Op op, const T* successor) {
    const int base = rank_ * N;
    for (int i = 0; i + 1 < N; ++i)
      flags[i] = detail::flag(op, input[i], input[i + 1], base + i + 1);
    if (rank_ + 1 < kThreads)
      flags[N - 1] = detail::flag(op, input[N - 1], storage_.first[rank_ + 1], base + N);
    else
      flags[N - 1] = successor ? detail::flag(op, input[N - 1], *successor, base + N) : 1;
  }
  TempStorage& storage_;
  int rank_;
};

// output[i] = op(input[i], its left neighbour) (SubtractLeft; the block's first item stays, or
// is op'd with tile_predecessor_item), or op(input[i], its right neighbour) (SubtractRight; the
// block's last stays, or is op'd with tile_successor_item). Partial tiles: items from valid_items
// on (left), or the last valid one (right), stay.
template <class T, int BLOCK_DIM_X, int BLOCK_DIM_Y = 1, int BLOCK_DIM_Z = 1>
class BlockAdjacentDifference {
  static constexpr int kThreads = BLOCK_DIM_X * BLOCK_DIM_Y * BLOCK_DIM_Z;

 public:
  struct TempStorage {
    T first[kThreads], last[kThreads];
  };
  BlockAdjacentDifference() : BlockAdjacentDifference(detail::private_storage<TempStorage>()) {}
  explicit BlockAdjacentDifference(TempStorage& storage)
      : storage_(storage), rank_(detail::block_rank(BLOCK_DIM_X, BLOCK_DIM_Y)) {}

  template <int N, class Out, class Op>
  void SubtractLeft(T (&input)[N], Out (&output)[N], Op op) {
    left(input, output, op, nullptr, kThreads * N);
  }
  template <int N, class Out, class Op>
  void SubtractLeft(T (&input)[N], Out (&output)[N], Op op, T tile_predecessor_item) {
    left(input, output, op, &tile_predecessor_item, kThreads * N);
  }
  template <int N, class Out, class Op>
  void SubtractLeftPartialTile(T (&input)[N], Out (&output)[N], Op op, int valid_items) {
    left(input, output, op, nullptr, valid_items);
  }
  template <int N, class Out, class Op>
  void SubtractRight(T (&input)[N], Out (&output)[N], Op op) {
    right(input, output, op, nullptr, kThreads * N);
  }
  template <int N, class Out, class Op>
  void SubtractRight(T (&input)[N], Out (&output)[N], Op op, T tile_successor_item) {
    right(input, output, op, &tile_successor_item, kThreads * N);
  }
  template <int N, class Out, class Op>
  void SubtractRightPartialTile(T (&input)[N], Out (&output)[N], Op op, int valid_items) {
    right(input, output, op, nullptr, valid_items);
  }

 private:
  template <int N, class Out, class Op>
  void left(T (&input)[N], Out (&output)[N], Op op, const T* predecessor, int valid) {
    storage_.last[rank_] = input[N - 1];
    __syncthreads();
    const T before = rank_ > 0 ? storage_.last[rank_ - 1] : predecessor ? *predecessor : input[0];
    for (int i = N - 1; i >= 0; --i) {  // (from the last: output may be input)
      const int at = rank_ * N + i;
      const T& previous = i > 0 ? input[i - 1] : before;
      output[i] =
          at >= valid || (at == 0 && !predecessor) ? Out(input[i]) : Out(op(input[i], previous));
    }
  }
  template <int N, class Out, class Op>
  void right(T (&input)[N], Out (&output)[N], Op op, const T* successor, int valid) {
    storage_.first[rank_] = input[0];
    __syncthreads();
    const T after = rank_ + 1 < kThreads ? storage_.first[rank_ + 1]
                    : successor          ? *successor
                                         : input[N - 1];
    for (int i = 0; i < N; ++i) {  // (from the first: output may be input)
      const int at = rank_ * N + i;
      const T& next = i + 1 < N ? input[i + 1] : after;
      const bool last = at + 1 >= valid && !(successor && at + 1 == kThreads * N);
      output[i] = at >= valid || last ? Out(input[i]) : Out(op(input[i], next));
    }
  }
  TempStorage& storage_;
  int rank_;
};

// ---- Block histogram --------------------------------------------------------------------------
// Counts a block's items into BINS shared counters (each item a bin index), with the block's
// atomics; Histogram() zeroes the counters first, with a barrier between. Read the counters
// after a __syncthreads(), as with CUB.
enum BlockHistogramAlgorithm { BLOCK_HISTO_SORT, BLOCK_HISTO_ATOMIC };
template <class T, int BLOCK_DIM_X, int ITEMS_PER_THREAD, int BINS,
          BlockHistogramAlgorithm ALGORITHM = BLOCK_HISTO_SORT, int BLOCK_DIM_Y = 1,
          int BLOCK_DIM_Z = 1>
class BlockHistogram {
  static constexpr int kThreads = BLOCK_DIM_X * BLOCK_DIM_Y * BLOCK_DIM_Z;

 public:
  struct TempStorage {};
  BlockHistogram() : rank_(detail::block_rank(BLOCK_DIM_X, BLOCK_DIM_Y)) {}
  explicit BlockHistogram(TempStorage&) : BlockHistogram() {}

  template <class Counter>
  void InitHistogram(Counter histogram[BINS]) {
    for (int b = rank_; b < BINS; b += kThreads) histogram[b] = 0;
  }
  template <class Counter>
  void Histogram(T (&items)[ITEMS_PER_THREAD], Counter histogram[BINS]) {
    InitHistogram(histogram);
    __syncthreads();
    Composite(items, histogram);
  }
  template <class Counter>
  void Composite(T (&items)[ITEMS_PER_THREAD], Counter histogram[BINS]) {
    for (int i = 0; i < ITEMS_PER_THREAD; ++i) atomicAdd(&histogram[items[i]], Counter(1));
  }

 private:
  int rank_;
};

// ---- Thread and warp utilities ----------------------------------------------------------------
// cub::ThreadReduce over a thread's items; the lane's and warp's numbers and lane masks.
template <int N, class T, class Op>
T ThreadReduce(const T (&items)[N], Op op) {
  return detail::thread_reduce(items, op);
}
template <int N, class T, class Op>
T ThreadReduce(const T (&items)[N], Op op, T prefix) {
  T acc = prefix;
  for (int i = 0; i < N; ++i) acc = op(acc, items[i]);
  return acc;
}
inline unsigned LaneId() {
  return kiln_cpu::lane_id();
}
inline unsigned WarpId() {
  return kiln_cpu::linear_tid() / 32;
}
inline unsigned LaneMaskLt() {
  return (1u << LaneId()) - 1u;
}
inline unsigned LaneMaskLe() {
  return LaneId() == 31 ? 0xffffffffu : (2u << LaneId()) - 1u;
}
inline unsigned LaneMaskGt() {
  return ~LaneMaskLe();
}
inline unsigned LaneMaskGe() {
  return ~LaneMaskLt();
}

}  // namespace cub
