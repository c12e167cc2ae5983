// Device arrays: memory owned by a backend, freed through it when the last handle goes.
#pragma once
#include <cstddef>
#include <memory>
#include <utility>

#include "runtime/backend.h"
#include "runtime/host_array.h"

namespace kiln {

// One allocation on a backend. Holds the backend alive, so arrays may outlive anything else.
class DeviceBuffer {
 public:
  DeviceBuffer(std::shared_ptr<Backend> backend, std::size_t bytes)
      : backend_(std::move(backend)),
        bytes_(bytes),
        ptr_(bytes ? backend_->alloc(bytes) : nullptr),
        generation_(backend_->generation()) {}
  ~DeviceBuffer() { release(); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* ptr() const { return ptr_; }
  std::size_t bytes() const { return bytes_; }
  Backend& backend() const { return *backend_; }
  bool freed() const { return freed_; }
  // The backend's context was reset since this was allocated: the memory is gone.
  bool stale() const { return generation_ != backend_->generation(); }
  // Frees now (d:free()); later use of the array is an error, reported by whoever holds it.
  void release() noexcept {
    if (ptr_ && !freed_ && !stale()) backend_->free(ptr_);
    freed_ = true;
  }

 private:
  std::shared_ptr<Backend> backend_;
  std::size_t bytes_;
  void* ptr_;
  std::uint64_t generation_;
  bool freed_ = false;
};

struct DeviceArray {
  std::shared_ptr<DeviceBuffer> buffer;
  DType dtype;
  Shape shape;
  std::size_t offset = 0;  // bytes into the buffer: a sub-array (d:sub) starts there
  bool view = false;       // a sub-array or a view, which does not own the buffer
  void* data() const { return static_cast<char*>(buffer->ptr()) + offset; }
  std::int64_t size() const { return shape_size(shape); }
  std::size_t nbytes() const { return static_cast<std::size_t>(size()) * dtype_info(dtype).size; }
};

}  // namespace kiln
