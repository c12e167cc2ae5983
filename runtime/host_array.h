// Host arrays: a dtype, a row-major shape and a 64-byte-aligned buffer shared by copies of the
// handle (the buffer is owned, never a view into Lua memory).
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runtime/dtype.h"
#include "runtime/narrow_float.h"

namespace kiln {

using Shape = std::vector<std::int64_t>;

// Throws the kiln::Error that says a vector dtype (float4, ...) has no element-wise arithmetic,
// comparison or reduction of its own, and how to reach its lanes.
[[noreturn]] void refuse_vector_dtype(DType t);

// Calls f with a value-initialised object of dtype t's C++ type (a type tag: f reads its type
// with decltype) and returns what f returns. Scalars only: a vector dtype throws.
template <typename F>
decltype(auto) dispatch_dtype(DType t, F&& f) {
  switch (t) {
    case DType::float32:
      return f(float{});
    case DType::float64:
      return f(double{});
    case DType::int8:
      return f(std::int8_t{});
    case DType::uint8:
      return f(std::uint8_t{});
    case DType::int16:
      return f(std::int16_t{});
    case DType::uint16:
      return f(std::uint16_t{});
    case DType::int32:
      return f(std::int32_t{});
    case DType::uint32:
      return f(std::uint32_t{});
    case DType::int64:
      return f(std::int64_t{});
    case DType::uint64:
      return f(std::uint64_t{});
    case DType::float16:
      return f(Float16{});
    case DType::bfloat16:
      return f(BFloat16{});
    case DType::boolean:
      break;
    default:
      refuse_vector_dtype(t);
  }
  return f(bool{});
}

// The shape of an array of dtype `from` read as dtype `to` (numpy's view): the last axis scales
// by the ratio of the sizes. Throws kiln::Error when its bytes do not divide into `to`.
Shape viewed_shape(const Shape& shape, DType from, DType to);

// A contiguous sub-array: its first flat element, its element count and its shape.
struct SubRange {
  std::int64_t first = 0, count = 0;
  Shape shape;
};
// The sub-array of an array of `shape` that 1-based inclusive ranges select, one per leading
// dimension ({r1, r2} of the rows, then {c1, c2}, ...; -1 is the last index). It must be
// contiguous: single indices before the last dimension taken in part, whole dimensions after it
// (rows of a matrix, or part of one row; not a column). Throws kiln::Error naming the range otherwise.
SubRange sub_range(const Shape& shape, const std::vector<std::pair<std::int64_t, std::int64_t>>& ranges);

// Number of elements of a shape; throws kiln::Error on a negative extent or overflow.
std::int64_t shape_size(const Shape& shape);
// "(2, 3)" as numpy prints shapes; "(5,)" for 1-D.
std::string shape_string(const Shape& shape);

// The machine's memory and swap together in bytes (0 where unknown). Where the system
// overcommits memory, mmap grants any size; an array larger than this could never be filled,
// and filling it would end in the OOM killer, so host arrays and the cpu backend's device
// arrays beyond it are refused.
std::uint64_t memory_and_swap_bytes();

class HostArray {
 public:
  // A zero-filled array. Throws kiln::Error when the size is invalid or memory runs out.
  HostArray(Shape shape, DType dtype);
  // An array over memory someone else allocated (pinned memory from a backend): free is called
  // with data when the last handle goes.
  HostArray(Shape shape, DType dtype, void* data, std::function<void(void*)> free);

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  std::int64_t size() const { return size_; }
  int ndim() const { return static_cast<int>(shape_.size()); }
  std::size_t nbytes() const;
  void* data() const { return data_.get(); }
  template <typename T> T* as() const { return static_cast<T*>(data_.get()); }

  // Element i (0-based, flat) as a double / int64 (exact for integer dtypes), and back.
  double get_number(std::int64_t i) const;
  std::int64_t get_integer(std::int64_t i) const;
  void set_number(std::int64_t i, double v);
  void set_integer(std::int64_t i, std::int64_t v);

  // The same buffer under another shape of the same size (numpy's reshape view); writes through
  // either handle show in both. Throws kiln::Error when the sizes differ.
  HostArray reshaped(Shape shape) const;
  // Elements [first, first + count) of the flat buffer as an array of `shape` (count elements),
  // sharing the buffer: a contiguous sub-array (a:sub). Throws kiln::Error when out of range.
  HostArray sliced(std::int64_t first, std::int64_t count, Shape shape) const;
  // The same buffer read as another dtype (numpy's view): the last axis scales by the ratio of
  // the sizes (a float4 {n} is a float32 {4n}). Throws kiln::Error when the last axis's bytes do
  // not divide into the new dtype, or the buffer is not aligned for it.
  HostArray viewed(DType dtype) const;

 private:
  Shape shape_;
  DType dtype_;
  std::int64_t size_;
  std::shared_ptr<void> data_;
};

// A deep copy converted to dtype (the same dtype: a plain copy). Floats truncate toward zero into
// integer dtypes and nonzero becomes true in bool, as numpy does; NaN, infinities and values out
// of the target range are a kiln::Error naming the element, never wrapped.
HostArray astype(const HostArray& a, DType dtype);

// Sum of an integer or bool array, exact; a kiln::Error when it does not fit in int64.
std::int64_t sum_integer(const HostArray& a);
// Sum of any array as a double; float dtypes use Neumaier's compensated summation.
double sum_float(const HostArray& a);
// The mean as a double; a kiln::Error for an empty array.
double mean(const HostArray& a);
// Flat index of the first minimum / maximum (the first NaN when there is one, as numpy's min
// propagates NaN); a kiln::Error for an empty array.
std::int64_t argmin(const HostArray& a);
std::int64_t argmax(const HostArray& a);

// numpy's array_equal: same shape and every pair of values equal, compared exactly whatever the
// two dtypes (NaN is unequal to itself).
bool array_equal(const HostArray& a, const HostArray& b);
// numpy's allclose: |a - b| <= atol + rtol * |b| elementwise. A kiln::Error when shapes differ.
bool allclose(const HostArray& a, const HostArray& b, double rtol = 1e-5, double atol = 1e-8);
// max |a - b| over the elements (0 for empty arrays, NaN when any difference is NaN). A
// kiln::Error when shapes differ.
double max_abs_diff(const HostArray& a, const HostArray& b);

}  // namespace kiln
