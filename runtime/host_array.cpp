#include "runtime/host_array.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>

#include <sys/mman.h>
#include <sys/sysinfo.h>

#include "runtime/error.h"

namespace kiln {

std::uint64_t memory_and_swap_bytes() {
  struct sysinfo info {};
  if (::sysinfo(&info) != 0) return 0;
  return (std::uint64_t(info.totalram) + info.totalswap) * info.mem_unit;
}

namespace {

constexpr std::size_t kAlignment = 64;  // a cache line, and enough for any SIMD load
constexpr std::size_t kMmapThreshold = std::size_t{1} << 20;

__extension__ typedef __int128 Int128;  // exact integer sums; __extension__ keeps -Wpedantic quiet

// The dtype switch, shorter.
template <typename F>
decltype(auto) dispatch(DType t, F&& f) {
  return dispatch_dtype(t, std::forward<F>(f));
}

// A double as the shortest text that reads back the same ("2.5", "1e+300", "nan").
std::string number_string(double v) {
  if (std::isnan(v)) return "nan";  // 0/0 is -nan on x86; the sign of a NaN means nothing
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

std::string dtype_name(DType t) {
  return std::string(dtype_info(t).name);
}

// Whether the double v is an integer that type T (an integer type or bool) represents.
template <typename T>
bool fits_integer(double v) {
  if (!std::isfinite(v) || v != std::trunc(v)) return false;
  if constexpr (std::is_same_v<T, bool>) {
    return v == 0 || v == 1;
  } else if constexpr (sizeof(T) == 8) {
    // 2^63 and 2^64 are exact doubles; the largest int64/uint64 are not.
    constexpr double top = std::is_signed_v<T> ? 9223372036854775808.0 : 18446744073709551616.0;
    return v >= (std::is_signed_v<T> ? -top : 0.0) && v < top;
  } else {
    return v >= static_cast<double>(std::numeric_limits<T>::min()) &&
           v <= static_cast<double>(std::numeric_limits<T>::max());
  }
}

// The range of T as "[0, 255]", for error messages.
template <typename T>
std::string range_string() {
  if constexpr (std::is_same_v<T, bool>) {
    return "{0, 1, true, false}";
  } else {
    return "[" + std::to_string(std::numeric_limits<T>::min()) + ", " +
           std::to_string(std::numeric_limits<T>::max()) + "]";
  }
}

// Converts one element value to T with kiln's rules (see astype in the header); `what` names the
// value in the error message.
template <typename T, typename S>
T convert(S v, DType to, const char* what, std::int64_t index) {
  if constexpr (is_float_v<T>) {
    if constexpr (std::is_arithmetic_v<S>)
      return static_cast<T>(v);
    else
      return static_cast<T>(static_cast<double>(v));  // a 16-bit float, exactly widened
  } else if constexpr (std::is_same_v<T, bool>) {
    return v != 0;
  } else if constexpr (is_float_v<S>) {
    double t = std::trunc(static_cast<double>(v));
    if (!fits_integer<T>(t))
      throw Error(std::string(what) + ": element " + std::to_string(index + 1) + " (" +
                  number_string(static_cast<double>(v)) + ") is out of range for " +
                  dtype_name(to) + " " + range_string<T>());
    return static_cast<T>(t);
  } else if constexpr (std::is_same_v<S, bool>) {
    return static_cast<T>(v);
  } else {
    if (!std::in_range<T>(v))
      throw Error(std::string(what) + ": element " + std::to_string(index + 1) + " (" +
                  std::to_string(v) + ") is out of range for " + dtype_name(to) + " " +
                  range_string<T>());
    return static_cast<T>(v);
  }
}

// A 64-byte-aligned, zero-filled buffer of `bytes` bytes (never null, even when empty); throws
// kiln::Error naming shape and dtype when memory runs out. Large buffers come straight from mmap:
// page-aligned, zeroed by the kernel page by page as they are touched (so an array that is never
// written costs no memory), and returned to the system as soon as they are freed.
std::shared_ptr<void> allocate(std::size_t bytes, const Shape& shape, DType dtype) {
  auto fail = [&](const std::string& why = "") {
    return Error("array: cannot allocate " + std::to_string(bytes) + " bytes (shape " +
                 shape_string(shape) + ", " + dtype_name(dtype) + ")" + why);
  };
  if (bytes >= kMmapThreshold) {
    if (std::uint64_t total = memory_and_swap_bytes(); total > 0 && bytes > total)
      throw fail(": more than this machine's memory and swap together (" +
                 std::to_string(total >> 30) + " GiB)");
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw fail();
    return std::shared_ptr<void>(p, [bytes](void* q) { munmap(q, bytes); });
  }
  std::size_t rounded =
      bytes == 0 ? kAlignment : (bytes + kAlignment - 1) / kAlignment * kAlignment;
  void* p = std::aligned_alloc(kAlignment, rounded);
  if (p == nullptr) throw fail();
  std::memset(p, 0, rounded);
  return std::shared_ptr<void>(p, [](void* q) { std::free(q); });
}

// Throws unless a and b have the same shape; `what` names the operation.
void check_same_shape(const HostArray& a, const HostArray& b, const char* what) {
  if (a.shape() != b.shape())
    throw Error(std::string(what) + ": shapes differ: " + shape_string(a.shape()) + " and " +
                shape_string(b.shape()));
}

// Element i as a long double: exact for every dtype (64-bit mantissa on x86-64, 113 on aarch64).
long double element_exact(const HostArray& a, std::int64_t i) {
  return dispatch(a.dtype(), [&](auto tag) -> long double {
    using T = decltype(tag);
    return static_cast<long double>(a.as<T>()[i]);
  });
}

// Index of the first element that `better` prefers over all others; NaN wins at once.
template <typename Better>
std::int64_t arg_extreme(const HostArray& a, const char* what, Better better) {
  if (a.size() == 0) throw Error(std::string(what) + ": the array is empty");
  return dispatch(a.dtype(), [&](auto tag) -> std::int64_t {
    using T = decltype(tag);
    const T* x = a.as<T>();
    std::int64_t best = 0;
    for (std::int64_t i = 0; i < a.size(); ++i) {
      if constexpr (is_float_v<T>)
        if (std::isnan(x[i])) return i;
      if (better(x[i], x[best])) best = i;
    }
    return best;
  });
}

// The exact sum of an integer or bool array in 128 bits (no overflow below 2^64 elements).
Int128 sum_wide(const HostArray& a) {
  return dispatch(a.dtype(), [&](auto tag) -> Int128 {
    using T = decltype(tag);
    if constexpr (is_float_v<T>) {
      throw Error("sum: the array is " + dtype_name(a.dtype()) + ", not an integer dtype");
    } else {
      const T* x = a.as<T>();
      Int128 s = 0;
      for (std::int64_t i = 0; i < a.size(); ++i) s += x[i];
      return s;
    }
  });
}

}  // namespace

std::int64_t shape_size(const Shape& shape) {
  std::int64_t n = 1;
  for (std::int64_t d : shape) {
    if (d < 0)
      throw Error("array: negative dimension " + std::to_string(d) + " in shape " +
                  shape_string(shape));
    if (d != 0 && n > std::numeric_limits<std::int64_t>::max() / d)
      throw Error("array: shape " + shape_string(shape) + " has too many elements");
    n *= d;
  }
  return n;
}

std::string shape_string(const Shape& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + (shape.size() == 1 ? ",)" : ")");
}

HostArray::HostArray(Shape shape, DType dtype)
    : shape_(std::move(shape)), dtype_(dtype), size_(shape_size(shape_)) {
  std::size_t elem = dtype_info(dtype_).size;
  if (static_cast<std::uint64_t>(size_) > std::numeric_limits<std::size_t>::max() / elem / 2)
    throw Error("array: cannot allocate " + std::to_string(size_) + " elements (shape " +
                shape_string(shape_) + ", " + dtype_name(dtype_) + "): too large");
  data_ = allocate(static_cast<std::size_t>(size_) * elem, shape_, dtype_);
}

HostArray::HostArray(Shape shape, DType dtype, void* data, std::function<void(void*)> free)
    : shape_(std::move(shape)),
      dtype_(dtype),
      size_(shape_size(shape_)),
      data_(data, std::move(free)) {}

void refuse_vector_dtype(DType t) {
  const DTypeInfo& i = dtype_info(t);
  throw Error(std::string(i.name) + " arrays hold vectors of " + std::to_string(i.lanes) + " " +
              std::string(dtype_info(i.base).name) +
              ": element-wise arithmetic, comparisons and reductions work on the lanes, "
              "a:view(\"" + std::string(dtype_info(i.base).name) + "\")");
}

Shape viewed_shape(const Shape& shape, DType from, DType to) {
  const std::size_t from_size = dtype_info(from).size, to_size = dtype_info(to).size;
  Shape out = shape.empty() ? Shape{1} : shape;
  const std::size_t last_bytes = static_cast<std::size_t>(out.back()) * from_size;
  if (last_bytes % to_size != 0)
    throw Error("view: the last axis of a " + shape_string(shape) + " " + dtype_name(from) +
                " array holds " + std::to_string(last_bytes) + " bytes, not a whole number of " +
                dtype_name(to) + " (" + std::to_string(to_size) + " bytes)");
  out.back() = static_cast<std::int64_t>(last_bytes / to_size);
  return out;
}

HostArray HostArray::viewed(DType dtype) const {
  Shape shape = viewed_shape(shape_, dtype_, dtype);
  if (reinterpret_cast<std::uintptr_t>(data_.get()) % dtype_info(dtype).align != 0)
    throw Error("view: the buffer is not aligned for " + dtype_name(dtype));
  HostArray v = *this;
  v.dtype_ = dtype;
  v.shape_ = std::move(shape);
  v.size_ = shape_size(v.shape_);
  return v;
}

std::size_t HostArray::nbytes() const {
  return static_cast<std::size_t>(size_) * dtype_info(dtype_).size;
}

// Throws unless 0 <= i < size (C++ callers use 0-based flat indices).
static void check_index(const HostArray& a, std::int64_t i) {
  if (i < 0 || i >= a.size())
    throw Error("array: flat index " + std::to_string(i) + " out of range [0, " +
                std::to_string(a.size()) + ")");
}

double HostArray::get_number(std::int64_t i) const {
  check_index(*this, i);
  return dispatch(dtype_, [&](auto tag) { return static_cast<double>(as<decltype(tag)>()[i]); });
}

std::int64_t HostArray::get_integer(std::int64_t i) const {
  check_index(*this, i);
  return dispatch(dtype_, [&](auto tag) -> std::int64_t {
    using T = decltype(tag);
    T v = as<T>()[i];
    if constexpr (is_float_v<T>) {
      if (!fits_integer<std::int64_t>(static_cast<double>(v)))
        throw Error("array: element " + std::to_string(i) + " (" +
                    number_string(static_cast<double>(v)) + ") is not an int64 integer");
      return static_cast<std::int64_t>(v);
    } else if constexpr (std::is_same_v<T, bool>) {
      return v;
    } else {
      if (!std::in_range<std::int64_t>(v))
        throw Error("array: element " + std::to_string(i) + " (" + std::to_string(v) +
                    ") does not fit in int64");
      return static_cast<std::int64_t>(v);
    }
  });
}

void HostArray::set_number(std::int64_t i, double v) {
  check_index(*this, i);
  dispatch(dtype_, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_float_v<T>) {
      as<T>()[i] = static_cast<T>(v);
    } else {
      if (!fits_integer<T>(v))
        throw Error("array: value " + number_string(v) +
                    (std::isfinite(v) && v == std::trunc(v) ? " is out of range for "
                                                            : " is not an integer, as ") +
                    dtype_name(dtype_) +
                    (std::is_same_v<T, bool>                  ? " needs"
                     : std::isfinite(v) && v == std::trunc(v) ? " "
                                                              : " needs ") +
                    (std::is_same_v<T, bool> ? "" : range_string<T>()));
      as<T>()[i] = static_cast<T>(v);
    }
  });
}

void HostArray::set_integer(std::int64_t i, std::int64_t v) {
  check_index(*this, i);
  dispatch(dtype_, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_float_v<T>) {
      as<T>()[i] = static_cast<T>(v);
    } else if constexpr (std::is_same_v<T, bool>) {
      if (v != 0 && v != 1)
        throw Error("array: value " + std::to_string(v) + " is not a bool (0, 1, true, false)");
      as<T>()[i] = v != 0;
    } else if constexpr (std::is_same_v<T, std::uint64_t>) {
      as<T>()[i] = static_cast<T>(v);  // (a negative v: the bits past 2^63 - 1, as Lua has them)
    } else {
      if (!std::in_range<T>(v))
        throw Error("array: value " + std::to_string(v) + " is out of range for " +
                    dtype_name(dtype_) + " " + range_string<T>());
      as<T>()[i] = static_cast<T>(v);
    }
  });
}

HostArray HostArray::reshaped(Shape shape) const {
  std::int64_t n = shape_size(shape);
  if (n != size_)
    throw Error("reshape: cannot reshape an array of shape " + shape_string(shape_) + " (size " +
                std::to_string(size_) + ") into shape " + shape_string(shape) + " (size " +
                std::to_string(n) + ")");
  HostArray r = *this;
  r.shape_ = std::move(shape);
  return r;
}

SubRange sub_range(const Shape& shape,
                   const std::vector<std::pair<std::int64_t, std::int64_t>>& ranges) {
  if (ranges.empty() || ranges.size() > shape.size())
    throw Error("sub: expected 1 to " + std::to_string(shape.size()) + " ranges for an array of shape " +
                shape_string(shape) + ", got " + std::to_string(ranges.size()));
  SubRange r;
  r.shape = shape;
  std::vector<std::int64_t> lows(shape.size(), 1);
  std::size_t last_partial = 0;
  bool any_partial = false;
  for (std::size_t d = 0; d < ranges.size(); ++d) {
    const std::int64_t n = shape[d];
    auto [lo, hi] = ranges[d];
    if (lo < 0) lo += n + 1;
    if (hi < 0) hi += n + 1;
    if (lo < 1 || hi > n || lo > hi + 1)
      throw Error("sub: range " + std::to_string(ranges[d].first) + ".." +
                  std::to_string(ranges[d].second) + " is outside dimension " +
                  std::to_string(d + 1) + " (size " + std::to_string(n) + ")");
    lows[d] = lo;
    r.shape[d] = hi - lo + 1;
    if (r.shape[d] != n) last_partial = d, any_partial = true;
  }
  // Contiguous: single indices before the last partial dimension, whole ones after it.
  for (std::size_t d = 0; any_partial && d < last_partial; ++d)
    if (r.shape[d] != 1)
      throw Error("sub: dimension " + std::to_string(d + 1) + " takes " +
                  std::to_string(r.shape[d]) + " indices before a partial dimension " +
                  std::to_string(last_partial + 1) +
                  ": kiln's sub-arrays are views of contiguous memory (rows, or part of one row; "
                  "not a column)");
  std::int64_t stride = 1;
  for (std::size_t d = shape.size(); d-- > 0;) {
    r.first += (lows[d] - 1) * stride;
    stride *= shape[d];
  }
  r.count = shape_size(r.shape);
  return r;
}

HostArray HostArray::sliced(std::int64_t first, std::int64_t count, Shape shape) const {
  if (first < 0 || count < 0 || first > size_ - count || shape_size(shape) != count)
    throw Error("sub: elements " + std::to_string(first) + " + " + std::to_string(count) +
                " are outside an array of size " + std::to_string(size_));
  HostArray r = *this;
  r.data_ = std::shared_ptr<void>(data_, static_cast<char*>(data_.get()) +
                                             first * std::int64_t(dtype_info(dtype_).size));
  r.shape_ = std::move(shape);
  r.size_ = count;
  return r;
}

HostArray astype(const HostArray& a, DType dtype) {
  HostArray r(a.shape(), dtype);
  if (dtype == a.dtype()) {
    std::memcpy(r.data(), a.data(), a.nbytes());
    return r;
  }
  dispatch(a.dtype(), [&](auto stag) {
    using S = decltype(stag);
    dispatch(dtype, [&](auto dtag) {
      using D = decltype(dtag);
      const S* x = a.as<S>();
      D* y = r.as<D>();
      for (std::int64_t i = 0; i < a.size(); ++i) y[i] = convert<D>(x[i], dtype, "astype", i);
    });
  });
  return r;
}

std::int64_t sum_integer(const HostArray& a) {
  Int128 s = sum_wide(a);
  if (s < std::numeric_limits<std::int64_t>::min() || s > std::numeric_limits<std::int64_t>::max())
    throw Error("sum: the sum of this " + dtype_name(a.dtype()) +
                " array does not fit in int64 (a:astype('float64'):sum() gives it approximately)");
  return static_cast<std::int64_t>(s);
}

double sum_float(const HostArray& a) {
  return dispatch(a.dtype(), [&](auto tag) -> double {
    using T = decltype(tag);
    if constexpr (!is_float_v<T>) {
      return static_cast<double>(sum_wide(a));
    } else {
      // Neumaier: c collects the low-order bits each addition loses.
      const T* x = a.as<T>();
      double s = 0, c = 0;
      for (std::int64_t i = 0; i < a.size(); ++i) {
        double v = x[i], t = s + v;
        c += std::fabs(s) >= std::fabs(v) ? (s - t) + v : (v - t) + s;
        s = t;
      }
      return std::isfinite(s) ? s + c : s;  // inf - inf in c would turn inf into NaN
    }
  });
}

double mean(const HostArray& a) {
  if (a.size() == 0) throw Error("mean: the array is empty");
  if (dtype_info(a.dtype()).is_integer)
    return static_cast<double>(static_cast<long double>(sum_wide(a)) / a.size());
  return sum_float(a) / static_cast<double>(a.size());
}

std::int64_t argmin(const HostArray& a) {
  return arg_extreme(a, "min", [](auto x, auto y) { return x < y; });
}

std::int64_t argmax(const HostArray& a) {
  return arg_extreme(a, "max", [](auto x, auto y) { return x > y; });
}

bool array_equal(const HostArray& a, const HostArray& b) {
  if (a.shape() != b.shape()) return false;
  if (a.dtype() == b.dtype() && dtype_info(a.dtype()).is_integer)
    return std::memcmp(a.data(), b.data(), a.nbytes()) == 0;
  for (std::int64_t i = 0; i < a.size(); ++i)
    if (element_exact(a, i) != element_exact(b, i)) return false;
  return true;
}

bool allclose(const HostArray& a, const HostArray& b, double rtol, double atol) {
  check_same_shape(a, b, "allclose");
  for (std::int64_t i = 0; i < a.size(); ++i) {
    long double x = element_exact(a, i), y = element_exact(b, i);
    if (x == y) continue;                              // equal infinities are close
    if (std::isinf(x) || std::isinf(y)) return false;  // as numpy: inf is close only to itself
    if (!(std::fabs(x - y) <= atol + rtol * std::fabs(y))) return false;
  }
  return true;
}

double max_abs_diff(const HostArray& a, const HostArray& b) {
  check_same_shape(a, b, "max_abs_diff");
  long double m = 0;
  for (std::int64_t i = 0; i < a.size(); ++i) {
    long double x = element_exact(a, i), y = element_exact(b, i);
    if (x == y) continue;
    long double d = std::fabs(x - y);
    if (std::isnan(d)) return std::numeric_limits<double>::quiet_NaN();
    if (d > m) m = d;
  }
  return static_cast<double>(m);
}

}  // namespace kiln
