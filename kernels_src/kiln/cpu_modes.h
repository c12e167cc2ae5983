// Prelude part 6 of 6: entry points, region and coroutine modes: how the runtime runs threads.
// Included by cpu_prelude.h only, after cpu_check.h.
#pragma once

// ---- Entry points ----------------------------------------------------------------------------
namespace kiln_cpu {
template <class T>
using Arg = std::remove_cv_t<std::remove_reference_t<T>>;
// The index of linear block blk in grid g.
inline uint3 block_of(unsigned long long blk, dim3 g) {
  return uint3{unsigned(blk % g.x), unsigned((blk / g.x) % g.y),
               unsigned(blk / (g.x * (unsigned long long)g.y))};
}
template <class F>
struct Params;
template <class... P>
struct Params<void (*)(P...)> {
  static constexpr std::size_t count = sizeof...(P);
  // Calls f with each argument read from args[k] by its parameter type.
  template <auto f, std::size_t... K>
  static inline __attribute__((always_inline)) void call(void** args, std::index_sequence<K...>) {
    f(Arg<P>(*static_cast<typename RawArg<Arg<P>>::type*>(args[K]))...);
  }
  // Runs blocks [first, last) one thread after another (kernels without barriers).
  // flatten: the kernel is inlined into the thread loop, so thread identity stays in registers.
  template <auto f, std::size_t... K>
  __attribute__((flatten)) static void run(void** args, unsigned long long first,
                                           unsigned long long last, std::index_sequence<K...>) {
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
                                                  unsigned long long last,
                                                  std::index_sequence<K...>) {
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

// ---- Region mode: the helpers of kernels rewritten by jit/cpu/regions.cpp --------------------
// p, with its origin hidden from the optimiser. For a thread-local's address taken once per
// block: GCC otherwise recomputes it (a __tls_get_addr call) at every use, in every thread.
template <class T>
inline __attribute__((always_inline)) T* opaque(T* p) {
  asm("" : "+r"(p));
  return p;
}
// A subscript computed in 64 bits (jit/cpu/wide_subscripts.h): `a[E]` becomes
// `a[wide_index<decltype((E) + 0)>(W, E)]`, W being E with each operand passed through wide.
// Where E is an int, W, its sum in long long, is the subscript: the same value (int arithmetic
// is undefined where it overflows), and one that still steps evenly with the thread after GCC
// turns conditional signed arithmetic unsigned. Any other E is the subscript as written.
template <class X>
inline __attribute__((always_inline)) constexpr decltype(auto) wide(X&& x) {
  if constexpr (std::is_integral_v<std::remove_cv_t<std::remove_reference_t<X>>>)
    return static_cast<long long>(x);
  else
    return static_cast<X&&>(x);
}
template <class E, class W, class X>
inline __attribute__((always_inline)) constexpr decltype(auto) wide_index(W&& w, X&& x) {
  if constexpr (std::is_same_v<E, int>)
    return static_cast<long long>(w);
  else
    return static_cast<X&&>(x);
}
// A grid-stride loop's round ahead (regions.cpp affine_lockstep): the count elements of array
// a (a pointer, or a kiln::Array by its data) from index first on are asked into the cache.
// With few blocks each block's rounds read a short run of every long stride, a pattern the
// hardware's prefetchers do not follow (one thread reading 256 bytes of every 2 KB of 16 MB:
// 10.7 ms, against 5.2 ms in order; the histogram lab with 8 blocks: 8.3 -> 6.3 ms). A
// prefetch never faults: a round past the end costs nothing.
template <class T>
inline __attribute__((always_inline)) void prefetch_elements(T* a, long long first, unsigned count,
                                                             int) {
  const unsigned long long at = reinterpret_cast<unsigned long long>(a) + first * sizeof(T);
  const unsigned long long bytes = count * sizeof(T) < 4096 ? count * sizeof(T) : 4096;
  for (unsigned long long off = 0; off < bytes; off += 64)
    __builtin_prefetch(reinterpret_cast<const void*>(at + off));
}
template <class A>
inline __attribute__((always_inline)) auto prefetch_elements(const A& a, long long first,
                                                             unsigned count, int)
    -> decltype(prefetch_elements(a.data, first, count, 0)) {
  prefetch_elements(a.data, first, count, 0);
}
template <class A>
inline void prefetch_elements(const A&, long long, unsigned, long) {}  // (anything else)
// What a region returns: a plain `return;` (one the rewrite did not see) does not compile.
struct RegionEnd {};
// A `return` in a region: the thread has returned; later regions skip it.
inline RegionEnd returned(bool* done, unsigned t) {
  done[t] = true;
  return {};
}
// A `break` or `continue` of a loop with a barrier, in a region: the loop's flag is set, and
// after the region the block leaves the loop or goes on to its next iteration.
inline RegionEnd flagged(bool& flag) {
  flag = true;
  return {};
}
// Clears a block's returned-thread flags; returns them.
inline bool* cleared(bool* done, unsigned n) {
  for (unsigned t = 0; t < n; ++t) done[t] = false;
  return done;
}
// Whether thread t runs the code at hand: it has not returned, and (inside a warp operation's
// if or loop, act non-null) it took the branch or is still in the loop.
inline bool running(unsigned t, const bool* done, const bool* act) {
  return !(done && done[t]) && !(act && !act[t]);
}
// The thread whose values the header of a loop or if with a barrier reads: the first running
// one, else the first that has not returned (none runs the body then); n when all have returned.
inline unsigned leader(unsigned n, const bool* done, const bool* act = nullptr) {
  for (unsigned t = 0; act && t < n; ++t)
    if (running(t, done, act)) return t;
  unsigned t = 0;
  if (done)
    while (t < n && done[t]) ++t;
  return t;
}
// At the top of a loop with a barrier or warp operation: 1 when every thread has returned (the
// kernel ends), 2 when none of the threads in the loop is left (the loop ends), else 0.
inline int loop_state(unsigned n, const bool* done, const bool* act) {
  const unsigned l = leader(n, done, act);
  return l == n ? 1 : running(l, done, act) ? 0 : 2;
}
// The value of a __syncthreads_count (op 1) / _and (2) / _or (3) whose votes (each thread that
// has not returned adds its predicate) made count: as a GPU, the returned threads do not vote.
inline int vote(unsigned count, int op, unsigned n, const bool* done) {
  unsigned live = n;
  if (done)
    for (unsigned t = 0; t < n; ++t) live -= done[t];
  return op == 1 ? int(count) : op == 2 ? int(count == live) : int(count != 0);
}
// A lockstep loop (a grid-stride loop in region mode): every running thread enters it.
inline void enter_lockstep(bool* live, unsigned n, const bool* done, const bool* act) {
  for (unsigned t = 0; t < n; ++t) live[t] = running(t, done, act);
}
// The end of a lockstep loop's iteration: the threads that took `continue` (out of the rest of
// it) are in the loop again, for its step and condition.
inline void resume_continued(bool* live, bool* continued, unsigned n) {
  for (unsigned t = 0; t < n; ++t)
    if (continued[t]) live[t] = true, continued[t] = false;
}
// Whether another round is due: some thread is still in the loop and has not returned.
inline bool in_lockstep(const bool* live, unsigned n, const bool* done) {
  for (unsigned t = 0; t < n; ++t)
    if (live[t] && !(done && done[t])) return true;
  return false;
}
// What threadIdx & co. read inside a region: the thread's index, and the block's.
struct RegionTls {
  uint3 thread_idx;
  uint3 block_idx;
  dim3 block_dim;
  dim3 grid_dim;
};
// Runs region f(t, threadIdx) for each running thread t of the block (not returned; in act,
// when given), in threadIdx order. (self: this module's Tls, whose address the kernel took
// once; its threadIdx is written only for regions that call functions, which may read it: a
// store per thread to one place keeps the compiler from vectorising the loop.)
template <bool set_identity, class F>
inline __attribute__((always_inline)) void each_thread(Tls& self, dim3 b, const bool* done,
                                                       const bool* act, F&& f) {
  // (t is 64 bits and the axes signed: GCC takes an unsigned index that may wrap for one that
  // does not step evenly, and then vectorises nothing, or loads each element by a gather.)
  unsigned long t = 0;
  for (int z = 0; z < int(b.z); ++z)
    for (int y = 0; y < int(b.y); ++y)
      for (int x = 0; x < int(b.x); ++x, ++t)
        if (running(t, done, act)) {
          const uint3 tid{unsigned(x), unsigned(y), unsigned(z)};
          if constexpr (set_identity) self.thread_idx = tid;
          f(t, tid);
        }
}
// each_thread for a round of a grid-stride loop whose thread t takes index base + t (in I, the
// loop variable's type): f(t, threadIdx, index). A 32-bit unsigned index may wrap, so GCC
// vectorises nothing over base + x; where the block is one row and the round's last index does
// not wrap, the loop runs over the index itself, which it does vectorise (saxpy over 16M floats
// in `unsigned` rounds: 21 -> 7 ms, as with `int`).
template <bool set_identity, class I, class F>
inline __attribute__((always_inline)) void each_index(Tls& self, dim3 b, const bool* done,
                                                      const bool* act, I base, F&& f) {
  if constexpr (std::is_unsigned_v<I> && sizeof(I) == sizeof(unsigned)) {
    if (b.y == 1 && b.z == 1 && base <= I(~I(0) - b.x)) {
      const I end = base + I(b.x);
      for (I i = base; i < end; ++i)
        if (const unsigned long t = i - base; running(t, done, act)) {
          const uint3 tid{unsigned(t), 0, 0};
          if constexpr (set_identity) self.thread_idx = tid;
          f(t, tid, i);
        }
      return;
    }
  }
  each_thread<set_identity>(self, b, done, act,
                            [&](unsigned long t, uint3 tid) { f(t, tid, I(base + I(tid.x))); });
}
// Thread t's index in a block of b threads.
inline uint3 thread_at(unsigned long t, dim3 b) {
  return {unsigned(t % b.x), unsigned(t / b.x % b.y), unsigned(t / b.x / b.y)};
}
// Before a region of a barrier loop that reads p[E], E naming the loop's variable (regions.cpp
// prefetches_ahead): index(t, threadIdx) is E two iterations on, in thread t. The elements
// between those of the first and the last running thread are asked into the cache when they
// are at most 4 KB apart (a row of the block's threads, not a tile of rows far apart).
// Pathfinder's blocks read 1 KB runs of 20 rows 400 KB apart: 3.4 -> 2.3 ms.
template <class T, class F>
inline __attribute__((always_inline)) void prefetch_ahead(T* p, dim3 b, const bool* done,
                                                          const bool* act, F&& index, int) {
  using I = std::remove_cv_t<std::remove_reference_t<decltype(index(0ul, uint3{}))>>;
  if constexpr (std::is_integral_v<I>) {
    const unsigned long n = (unsigned long)b.x * b.y * b.z;
    unsigned long first = 0, last = n;
    while (first < n && !running(first, done, act)) ++first;
    if (first == n) return;
    while (!running(last - 1, done, act)) --last;
    long long lo = index(first, thread_at(first, b)), hi = index(last - 1, thread_at(last - 1, b));
    if (lo > hi) std::swap(lo, hi);
    if ((unsigned long long)(hi - lo) * sizeof(T) <= 4096)
      prefetch_elements(p, lo, unsigned(hi - lo + 1), 0);
  }
}
template <class A, class F>
inline __attribute__((always_inline)) auto prefetch_ahead(const A& a, dim3 b, const bool* done,
                                                          const bool* act, F&& index, int)
    -> decltype(prefetch_ahead(a.data, b, done, act, index, 0)) {
  prefetch_ahead(a.data, b, done, act, index, 0);
}
template <class A, class F>
inline void prefetch_ahead(const A&, dim3, const bool*, const bool*, F&&, long) {}  // (others)
// ---- Region mode: warp operations as steps between regions (COX's warp-level collapsing) ----
// A warp operation in a region-mode kernel splits its region: one region stores each running
// thread's operands (the value as bits, the lane parameter, the width), a step computes every
// thread's result from all of them at once, and the region after reads its own. The lanes of a
// warp are threads 32w..32w+31 of the block; a lane that is not running (returned, or outside
// the branch or loop at hand) is inactive, as an exited lane is on a GPU: a shuffle from it
// returns the caller's own value (a GPU's is undefined: the launch notes it), and it is left out
// of ballots and votes.
struct WarpSlot {
  unsigned long long value;
  int param, width;
  unsigned mask;  // the lanes the call names as taking part
};
template <class T>
inline __attribute__((always_inline)) unsigned long long to_bits(const T& v) {
  static_assert(sizeof(T) <= 8, "kiln_cpu: a warp operation's value is at most 8 bytes");
  unsigned long long bits = 0;
  memcpy(&bits, &v, sizeof(T));
  return bits;
}
template <class T>
inline __attribute__((always_inline)) T from_bits(unsigned long long bits) {
  T v;
  memcpy(&v, &bits, sizeof(T));
  return v;
}
// The copies the regions rewrite keeps of a variable larger than it allows on the stack (a
// wmma fragment, a struct): one allocation for the block's n threads, none when n is 0.
template <class E>
struct HeapCopies {
  E* copies;
  explicit HeapCopies(unsigned long n) : copies(n ? new E[n] : nullptr) {}
  HeapCopies(const HeapCopies&) = delete;
  HeapCopies& operator=(const HeapCopies&) = delete;
  ~HeapCopies() { delete[] copies; }
};

// A shuffled value wider than 8 bytes (cooperative groups shuffle any type: a uint4, a
// struct) waits in its thread's Wide, and the slot holds the thread's index instead: the step
// then hands each thread its source thread's index, which shuffle_result reads the value at.
// (The rewrite declares WideSlots for every shuffle; the Wides are made at the first wide value,
// on the heap, so that narrow shuffles cost no stack.)
struct alignas(16) Wide {
  unsigned char bytes[64];
};
struct WideSlots {
  Wide* wide = nullptr;
  WideSlots() = default;
  WideSlots(const WideSlots&) = delete;
  WideSlots& operator=(const WideSlots&) = delete;
  ~WideSlots() { delete[] wide; }
};
template <class T>
inline __attribute__((always_inline)) unsigned long long shuffle_operand(const T& v,
                                                                         WideSlots& slots,
                                                                         unsigned long t,
                                                                         unsigned long n) {
  if constexpr (sizeof(T) <= 8) {
    return to_bits(v);
  } else {
    static_assert(sizeof(T) <= sizeof(Wide), "kiln_cpu: a shuffled value is at most 64 bytes");
    if (!slots.wide) slots.wide = new Wide[n];
    memcpy(slots.wide[t].bytes, &v, sizeof(T));
    return t;
  }
}
template <class T>
inline __attribute__((always_inline)) T shuffle_result(unsigned long long bits,
                                                       const WideSlots& slots) {
  if constexpr (sizeof(T) <= 8) {
    return from_bits<T>(bits);
  } else {
    T v;
    memcpy(&v, slots.wide[bits].bytes, sizeof(T));
    return v;
  }
}
// The mask of warp w's running lanes.
inline unsigned running_lanes(unsigned w, unsigned n, const bool* done, const bool* act) {
  unsigned mask = 0;
  for (unsigned l = 0; l < 32 && 32 * w + l < n; ++l)
    mask |= unsigned(running(32 * w + l, done, act)) << l;
  return mask;
}
// The source lane of shuffle op for lane (param: the source, delta or xor mask), or lane itself
// when the source is outside lane's segment of width lanes.
inline unsigned shuffle_source(int op, unsigned lane, int param, int width) {
  const unsigned w = width >= 1 && width <= 32 ? unsigned(width) : 32u, first = lane & ~(w - 1);
  switch (op) {
    case warp_shfl_idx:
      return first + (unsigned(param) & (w - 1));
    case warp_shfl_up:
      return lane - first >= unsigned(param) ? lane - param : lane;
    case warp_shfl_down:
      return lane - first + unsigned(param) < w ? lane + param : lane;
    default: {
      const unsigned src = lane ^ unsigned(param);
      return src >= first + w || src < first ? lane : src;
    }
  }
}
// Whether __reduce_add/min/max_sync take a value of type T as int (the overload a value that
// promotes to int picks: bool, char, short, int) rather than unsigned; and/or/xor have only
// the unsigned one.
template <class T>
inline constexpr bool reduces_as_int =
    std::is_integral_v<std::remove_cv_t<std::remove_reference_t<T>>> &&
    sizeof(std::remove_cv_t<std::remove_reference_t<T>>) <= sizeof(int) &&
    !std::is_same_v<std::remove_cv_t<std::remove_reference_t<T>>, unsigned>;
// __reduce_add/min/max_sync's result for a value of type T, as the overload it picks gives it.
template <class T>
inline auto reduce_result(unsigned long long bits) {
  if constexpr (reduces_as_int<T>)
    return int(unsigned(bits));
  else
    return unsigned(bits);
}
// __reduce_<op>_sync over the 32-bit values of the lanes named by group (a lane's slot: the
// value's bits, and in param whether min and max compare them as int).
inline unsigned long long reduce_slots(int op, const WarpSlot* lane, unsigned group) {
  unsigned r = 0;
  for (unsigned l = 0, first = 1; l < 32; ++l) {
    if (!(group >> l & 1)) continue;
    const unsigned v = unsigned(lane[l].value);
    const bool less = lane[l].param ? int(v) < int(r) : v < r;
    r = first                   ? v
        : op == warp_reduce_add ? r + v
        : op == warp_reduce_min ? (less ? v : r)
        : op == warp_reduce_max ? (less || v == r ? r : v)
        : op == warp_reduce_and ? (r & v)
        : op == warp_reduce_or  ? (r | v)
                                : (r ^ v);
    first = 0;
  }
  return r;
}
// The step of warp operation op (cpu_abi.h WarpOp): out[t] for every running thread t of a
// block of n from the slots of all of them.
inline void warp_step(int op, const WarpSlot* in, unsigned long long* out, unsigned n,
                      const bool* done, const bool* act) {
  bool unjoined = false;
  for (unsigned w = 0; 32 * w < n; ++w) {
    const unsigned lanes = running_lanes(w, n, done, act), base = 32 * w;
    if (!lanes) continue;
    unsigned votes = 0;  // ballot, any, all: the running lanes whose predicate holds
    unsigned reduced_group = 0;  // __reduce_*_sync: the lanes of the last result (none yet)
    unsigned long long reduced = 0;
    if (op == warp_ballot || op == warp_any || op == warp_all)
      for (unsigned l = 0; l < 32; ++l)
        if (lanes >> l & 1) votes |= unsigned(in[base + l].value != 0) << l;
    for (unsigned l = 0; l < 32; ++l) {
      if (!(lanes >> l & 1)) continue;
      const unsigned t = base + l;
      switch (op) {
        case warp_shfl_idx:
        case warp_shfl_up:
        case warp_shfl_down:
        case warp_shfl_xor: {
          const unsigned src = shuffle_source(op, l, in[t].param, in[t].width);
          const bool joined = src < 32 && (lanes >> src & 1);
          out[t] = joined ? in[base + src].value : 0;
          // A lane not taking part (returned, branched off, beyond a partial warp, or outside
          // the mask given; its value is undefined on a GPU, where an H200 gave 0), or a
          // caller outside its own mask.
          unjoined |= src != l && (!joined || !(in[t].mask >> src & 1) || !(in[t].mask >> l & 1));
          break;
        }
        case warp_ballot:
          out[t] = votes;
          break;
        case warp_any:
          out[t] = votes != 0;
          break;
        case warp_all:
          out[t] = votes == lanes;
          break;
        case warp_activemask:
          out[t] = lanes;
          break;
        case warp_reduce_add:
        case warp_reduce_min:
        case warp_reduce_max:
        case warp_reduce_and:
        case warp_reduce_or:
        case warp_reduce_xor:
          if (const unsigned group = lanes & in[t].mask; group != reduced_group) {
            reduced = reduce_slots(op, in + base, group);  // (once per warp, as a rule)
            reduced_group = group;
          }
          out[t] = reduced;
          break;
        case warp_match_any: {
          unsigned same = 0;
          for (unsigned k = 0; k < 32; ++k)
            if ((lanes >> k & 1) && in[base + k].value == in[t].value) same |= 1u << k;
          out[t] = same;
          break;
        }
        default:
          out[t] = 0;
      }
    }
  }
  if (__builtin_expect(unjoined, 0)) tls.api->note(tls.exec, note_unjoined_shuffle);
}
// The running block's shared memory, read once per block. A region-mode kernel binds each
// atomic it uses to one that tests an address against these (a compare in registers) instead of
// the module's thread-local block (a __tls_get_addr call per update that GCC does not hoist out
// of a thread loop): updates of shared memory are then plain, as the block runs on one thread.
struct BlockMemory {
  unsigned long lo, bytes, dyn_lo, dyn_bytes;
  bool holds(const void* p) const {
    const unsigned long a = (unsigned long)p;
    return a - lo < bytes || a - dyn_lo < dyn_bytes;
  }
};
inline BlockMemory block_memory(const Tls& t) {
  return {t.smem_lo, t.smem_bytes, (unsigned long)t.dyn_smem, t.dyn_smem_bytes};
}
// After a barrier loop's init or step wrote a variable of each thread in the leader's copy
// (`int i; ... for (i = 0; ...; i++)`): every thread's copy gets its value, as every thread of a
// GPU's block runs the header and gets the same.
template <class T>
inline void broadcast(T* copies, unsigned n, unsigned lead) {
  for (unsigned t = 0; t < n; ++t)
    if (t != lead) copies[t] = copies[lead];
}
// An array declared with a braced initialiser at barrier level (`float acc[4] = {0};`, kept per
// thread): its copy takes the initialiser's elements, assign_array(acc, same_t<float[4]>{0}).
template <class T>
using same_t = T;
template <class T>
inline void assign_array(T& to, const T& from) {
  to = from;
}
template <class T, std::size_t N>
inline void assign_array(T (&to)[N], const T (&from)[N]) {
  for (std::size_t i = 0; i < N; ++i) assign_array(to[i], from[i]);
}
// A cooperative-groups block lowered (jit/cpu/block_groups.h) that a kernel still passes to a
// device function (`reduceBlock(sdata, v, tid, cta)`, NVIDIA's samples): nothing, its
// synchronisation and ranks already plain CUDA where it is used.
struct block_group {};
// A coalesced group lowered to its lane mask (`auto g = cg::coalesced_threads();` as
// `const unsigned g = __activemask();`): the lane of the thread of rank in it, or lane (the
// caller's own) where the group has no such rank, so that a shuffle past its end reads the
// caller's value, as the group's own shfl_down and shfl_up do.
inline unsigned group_lane(unsigned mask, unsigned rank, unsigned lane) {
  for (unsigned i = 0; i < rank && mask; ++i) mask &= mask - 1;
  return mask ? unsigned(__builtin_ctz(mask)) : lane;
}
// A warp-wide lane mask as bits by rank in the group of mask (a coalesced group's ballot).
inline unsigned group_bits(unsigned mask, unsigned lanes) {
  unsigned out = 0, bit = 0;
  for (; mask; mask &= mask - 1, ++bit)
    if (lanes >> __builtin_ctz(mask) & 1) out |= 1u << bit;
  return out;
}
// The copies of a `bool` across barriers, one int each (regions.cpp, replicate). GCC 12
// vectorises no thread loop that loads a bool beside wider data ("no vectype"): hotspot's `if
// (computed) tile[ty][tx] = next[ty][tx];` ran scalar, a branch per thread. An int loads as a
// vector. Headers read and write it as a bool.
struct Flag {
  int word;
  operator bool() const { return word != 0; }
  Flag& operator=(bool v) { return word = v, *this; }
  Flag& operator|=(bool v) { return word |= v, *this; }
  Flag& operator&=(bool v) { return word &= v, *this; }
  Flag& operator^=(bool v) { return word ^= v, *this; }
};
// A region that may write a Flag works on a bool of its thread (so `bool&` parameters, `&flag`
// and every operator keep their meaning), written back when the thread leaves the region.
struct FlagCopy {
  Flag& slot;
  bool value;
  explicit FlagCopy(Flag& f) : slot(f), value(f) {}
  FlagCopy(Flag& f, bool first) : slot(f), value(first) {}  // (its declaration's region)
  FlagCopy(const FlagCopy&) = delete;
  ~FlagCopy() { slot = value; }
};
}  // namespace kiln_cpu
// The region-mode binding of atomic `name`, whose new value is `update` of kiln_old and kiln_v
// (of type kiln_T; every name kiln_ so that none hides a kernel's template parameter): plain
// on a value of a type `kind` takes (std::is_arithmetic, std::is_integral) in the block's shared
// memory, else the global atomic (any overload).
#define KILN_REGION_ATOMIC(name, kind, update)                                            \
  [kiln_mem_](auto* kiln_p,                                                               \
              auto kiln_v) -> std::remove_cv_t<std::remove_pointer_t<decltype(kiln_p)>> { \
    using kiln_T = std::remove_cv_t<std::remove_pointer_t<decltype(kiln_p)>>;             \
    if constexpr (kind<kiln_T>::value) {                                                  \
      if (kiln_mem_.holds(kiln_p)) {                                                      \
        const kiln_T kiln_old = *kiln_p;                                                  \
        *kiln_p = update;                                                                 \
        return kiln_old;                                                                  \
      }                                                                                   \
    }                                                                                     \
    return ::name(kiln_p, kiln_v);                                                        \
  }
// The same for an atomic on an element of a __shared__ array of the kernel (the rewrite saw the
// array's name): plain, with no test of the address.
#define KILN_SHARED_ATOMIC(name, kind, update)                                                 \
  [](auto* kiln_p, auto kiln_v) -> std::remove_cv_t<std::remove_pointer_t<decltype(kiln_p)>> { \
    using kiln_T = std::remove_cv_t<std::remove_pointer_t<decltype(kiln_p)>>;                  \
    if constexpr (kind<kiln_T>::value) {                                                       \
      const kiln_T kiln_old = *kiln_p;                                                         \
      *kiln_p = update;                                                                        \
      return kiln_old;                                                                         \
    }                                                                                          \
    return ::name(kiln_p, kiln_v);                                                             \
  }
#define KILN_REGION_ATOMIC_CAS                                                            \
  [kiln_mem_](auto* kiln_p, auto kiln_compare,                                            \
              auto kiln_v) -> std::remove_cv_t<std::remove_pointer_t<decltype(kiln_p)>> { \
    using kiln_T = std::remove_cv_t<std::remove_pointer_t<decltype(kiln_p)>>;             \
    if constexpr (std::is_arithmetic_v<kiln_T>) {                                         \
      if (kiln_mem_.holds(kiln_p)) {                                                      \
        const kiln_T kiln_old = *kiln_p;                                                  \
        if (kiln_old == kiln_T(kiln_compare)) *kiln_p = kiln_T(kiln_v);                   \
        return kiln_old;                                                                  \
      }                                                                                   \
    }                                                                                     \
    return ::atomicCAS(kiln_p, kiln_compare, kiln_v);                                     \
  }
// The leader's index in a loop or if header; leaves the kernel when every thread has returned.
#define KILN_LEAD                                                                \
  ({                                                                             \
    const unsigned kiln_l_ = ::kiln_cpu::leader(kiln_n_, kiln_done_, kiln_act_); \
    if (kiln_l_ == kiln_n_) return;                                              \
    kiln_l_;                                                                     \
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
  ThreadPromise() {
    tls.coroutine = std::coroutine_handle<ThreadPromise>::from_promise(*this).address();
  }
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
#define __syncthreads_count(p) \
  (co_await ::kiln_cpu::BarrierAwait{::kiln_cpu::barrier_count, (p) != 0})
#define __syncthreads_and(p) (co_await ::kiln_cpu::BarrierAwait{::kiln_cpu::barrier_and, (p) != 0})
#define __syncthreads_or(p) (co_await ::kiln_cpu::BarrierAwait{::kiln_cpu::barrier_or, (p) != 0})
#endif
