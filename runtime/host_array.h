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

namespace kiln {

using Shape = std::vector<std::int64_t>;

// Number of elements of a shape; throws kiln::Error on a negative extent or overflow.
std::int64_t shape_size(const Shape& shape);
// "(2, 3)" as numpy prints shapes; "(5,)" for 1-D.
std::string shape_string(const Shape& shape);

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

 private:
  Shape shape_;
  DType dtype_;
  std::int64_t size_;
  std::shared_ptr<void> data_;
};

}  // namespace kiln
