// Prelude part 5 of 6: check mode (KILN_CHECK=1), bounds checks that name the faulting line.
// Included by cpu_prelude.h only, after cpu_sync.h.
#pragma once

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
// T may be volatile (a flag parameter); a cast to another pointer type (`(unsigned*)p`,
// `(int*)flag` for atomicCAS) gives the raw pointer, unchecked from there on.
template <class T>
class checked_ptr {
 public:
  using element_type = T;
  checked_ptr() = default;
  checked_ptr(T* p) : p_(p) {  // NOLINT: converts like the raw pointer it replaces
    const void *lo = nullptr, *hi = nullptr;
    if (p && tls.api->bounds(tls.exec, (const void*)p, &lo, &hi)) {
      lo_ = static_cast<const char*>(lo);
      hi_ = static_cast<const char*>(hi);
    }
  }
  operator T*() const { return p_; }
  template <class U>
  explicit operator U*() const {
    return (U*)p_;
  }
  T* get() const { return p_; }
  // (std::add_lvalue_reference_t: a `void*` parameter's checked_ptr<void> declares these too)
  template <class I, class = std::enable_if_t<std::is_integral_v<I> || std::is_enum_v<I>>>
  __attribute__((always_inline)) std::add_lvalue_reference_t<T> operator[](I i) const {
    check(p_ + i);
    return p_[i];
  }
  __attribute__((always_inline)) std::add_lvalue_reference_t<T> operator*() const {
    check(p_);
    return *p_;
  }
  // `&p[i]` (element_address; a name no user class has): within the array or one past its end.
  template <class I, class = std::enable_if_t<std::is_integral_v<I> || std::is_enum_v<I>>>
  __attribute__((always_inline)) T* kiln_address_of(I i) const {
    if (lo_ && ((const char*)(p_ + i) < lo_ || (const char*)(p_ + i) > hi_))
      pointer_out_of_bounds((const void*)(p_ + i), lo_, hi_, sizeof(T));
    return p_ + i;
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
      pointer_out_of_bounds((const void*)q, lo_, hi_, sizeof(T));
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
[[noreturn]] __attribute__((noinline, cold)) inline void dynamic_shared_out_of_bounds(
    long long index, unsigned size) {
  char buf[200];
  snprintf(buf, sizeof buf,
           "out-of-bounds access: element %lld of the dynamic shared memory, of which the launch "
           "gave %lld element(s) (%llu bytes, %u-byte elements)",
           index, (long long)(tls.dyn_smem_bytes / size), (unsigned long long)tls.dyn_smem_bytes,
           size);
  tls.api->out_of_bounds(tls.exec, buf, __builtin_extract_return_addr(__builtin_return_address(0)));
  __builtin_unreachable();
}
// An `extern __shared__ T name[];` in check mode: the launch's dynamic shared memory, each
// name[i] and *name checked against the bytes the launch gave (none, unless it asked). It holds
// nothing: every use reads the running launch's buffer. Converts to any pointer type (a C-style
// cast, a function's T* parameter), unchecked from there on.
template <class T>
struct dyn_shared {
  __attribute__((always_inline)) T* get() const { return reinterpret_cast<T*>(tls.dyn_smem); }
  template <class U>
  operator U*() const { return reinterpret_cast<U*>(tls.dyn_smem); }  // NOLINT: as the array
  template <class I, class = std::enable_if_t<std::is_integral_v<I> || std::is_enum_v<I>>>
  __attribute__((always_inline)) T& operator[](I i) const {
    if ((long long)i < 0 || (unsigned long long)((long long)i + 1) * sizeof(T) > tls.dyn_smem_bytes)
      dynamic_shared_out_of_bounds((long long)i, sizeof(T));
    return get()[i];
  }
  __attribute__((always_inline)) T& operator*() const { return (*this)[0]; }
  template <class I, class = std::enable_if_t<std::is_integral_v<I> || std::is_enum_v<I>>>
  __attribute__((always_inline)) T* kiln_address_of(I i) const {  // `&s[i]`: up to one past the end
    if ((long long)i < 0 || (unsigned long long)(long long)i > tls.dyn_smem_bytes / sizeof(T))
      dynamic_shared_out_of_bounds((long long)i, sizeof(T));
    return get() + i;
  }
  template <class I, class = std::enable_if_t<std::is_integral_v<I>>>
  T* operator+(I i) const { return get() + i; }
  template <class I, class = std::enable_if_t<std::is_integral_v<I>>>
  friend T* operator+(I i, const dyn_shared& s) { return s.get() + i; }
};
[[noreturn]] __attribute__((noinline, cold)) inline void shared_array_out_of_bounds(
    long long index, long long extent) {
  char buf[160];
  snprintf(buf, sizeof buf,
           "out-of-bounds access: index %lld of a __shared__ array's dimension of %lld "
           "element(s)",
           index, extent);
  tls.api->out_of_bounds(tls.exec, buf, __builtin_extract_return_addr(__builtin_return_address(0)));
  __builtin_unreachable();
}
// The raw array type T[E]... (T for no extents).
template <class T, long long... E>
struct extents_of {
  using type = T;
};
template <class T, long long N, long long... E>
struct extents_of<T, N, E...> {
  using type = typename extents_of<T, E...>::type[N];
};
template <class T, long long N, long long... Rest>
struct shared_array;
template <class T, long long... Rest>
struct shared_row {
  using type = T;
};
template <class T, long long N, long long... Rest>
struct shared_row<T, N, Rest...> {
  using type = shared_array<T, N, Rest...>;
};
// A static `__shared__ T name[N][Rest]...;` in check mode (rewrite_shared_arrays): the array,
// whose subscripts are checked against each extent. It decays as the array does (to a T*, or a
// pointer to its rows), unchecked from there on; sizeof is the array's.
template <class T, long long N, long long... Rest>
struct shared_array {
  using raw_row = typename extents_of<T, Rest...>::type;  // T, or T[R]...
  using row = typename shared_row<T, Rest...>::type;      // T, or a checked row
  raw_row data[N];
  // Not copied: where the array decays (`auto p = tile;`, `f(tile)` for a template's P) a copy
  // would be written in its place; such code does not compile, and the build takes plain arrays.
  shared_array() = default;
  shared_array(const shared_array&) = delete;
  shared_array& operator=(const shared_array&) = delete;
  template <class I, class = std::enable_if_t<std::is_integral_v<I> || std::is_enum_v<I>>>
  __attribute__((always_inline)) row& operator[](I i) {
    if ((long long)i < 0 || (long long)i >= N) shared_array_out_of_bounds((long long)i, N);
    return reinterpret_cast<row&>(data[i]);
  }
  template <class I, class = std::enable_if_t<std::is_integral_v<I> || std::is_enum_v<I>>>
  __attribute__((always_inline)) const row& operator[](I i) const {
    if ((long long)i < 0 || (long long)i >= N) shared_array_out_of_bounds((long long)i, N);
    return reinterpret_cast<const row&>(data[i]);
  }
  operator raw_row*() { return data; }              // NOLINT: decays as the array
  operator const raw_row*() const { return data; }  // NOLINT
  template <class U>
  explicit operator U*() {  // (a cast to another pointer type: `(int*)bytes`)
    return (U*)data;
  }
  template <class I, class = std::enable_if_t<std::is_integral_v<I> || std::is_enum_v<I>>>
  __attribute__((always_inline)) row* kiln_address_of(I i) {  // `&s[i]`: up to one past the end
    if ((long long)i < 0 || (long long)i > N) shared_array_out_of_bounds((long long)i, N);
    return reinterpret_cast<row*>(data + i);
  }
  row& operator*() { return (*this)[0]; }
  template <class I, class = std::enable_if_t<std::is_integral_v<I>>>
  raw_row* operator+(I i) {
    return data + i;
  }
  template <class I, class = std::enable_if_t<std::is_integral_v<I>>>
  friend raw_row* operator+(I i, shared_array& a) {
    return a.data + i;
  }
  raw_row* begin() { return data; }
  raw_row* end() { return data + N; }
};
// `&a[i]` in check mode (jit/cpu rewrite_element_addresses): for a checked array, the address
// with i checked against one past its end (an end pointer, `&s[N]`, which no access reaches);
// for anything else, `&a[i]`.
template <class A, class I, class = void>
struct has_address_of : std::false_type {};
template <class A, class I>
struct has_address_of<A, I,
                      std::void_t<decltype(std::declval<A&>().kiln_address_of(std::declval<I>()))>>
    : std::true_type {};
template <class A, class I>
__attribute__((always_inline)) constexpr decltype(auto) element_address(A& a, I&& i) {
  if constexpr (has_address_of<A, I>::value)
    return a.kiln_address_of(i);
  else
    return &a[std::forward<I>(i)];
}
template <class A, class I>
__attribute__((always_inline)) constexpr decltype(auto) element_address(A&& a, I&& i) {
  return &a[std::forward<I>(i)];  // (a row of a plain array's temporary view, a proxy)
}
template <class T> struct RawArg { using type = T; };
template <class T> struct RawArg<checked_ptr<T>> { using type = T*; };
}  // namespace kiln_cpu
// The load and store hints (`__ldg(p + i)`) take a checked pointer as the pointer it checks
// (a template does not convert it to one).
#define KILN_CHECKED_LOAD(NAME)                                 \
  template <class T>                                            \
  inline std::remove_cv_t<T> NAME(kiln_cpu::checked_ptr<T> p) { \
    return *p;                                                  \
  }
#define KILN_CHECKED_STORE(NAME)                      \
  template <class T>                                  \
  inline void NAME(kiln_cpu::checked_ptr<T> p, T v) { \
    *p = v;                                           \
  }
KILN_CHECKED_LOAD(__ldg)
KILN_CHECKED_LOAD(__ldcg) KILN_CHECKED_LOAD(__ldca) KILN_CHECKED_LOAD(__ldcs)
    KILN_CHECKED_LOAD(__ldlu) KILN_CHECKED_LOAD(__ldcv) KILN_CHECKED_STORE(__stwb)
        KILN_CHECKED_STORE(__stcg) KILN_CHECKED_STORE(__stcs) KILN_CHECKED_STORE(__stwt)
#undef KILN_CHECKED_LOAD
#undef KILN_CHECKED_STORE
            namespace kiln_ptx {
  // An inline-PTX operand that is a checked pointer: its address, as the raw pointer's.
  template <class T, class P>
  inline T get(kiln_cpu::checked_ptr<P> p) {
    return get<T>(p.get());
  }
}  // namespace kiln_ptx
namespace kiln_cpu {
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
