// Reductions by a binary expression (Numba's @cuda.reduce): "a + b", "max(a, b)" folded over a
// device array by two launches of one generated kernel, compiled per dtype on first use.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "jit/jit.h"
#include "runtime/device_array.h"
#include "runtime/host_array.h"

namespace kiln::jit {

class Reduction {
 public:
  // Device memory of the given size: the caller's allocator (the Lua bindings collect garbage
  // and retry when the device is full).
  using Allocate = std::function<std::shared_ptr<DeviceBuffer>(std::size_t bytes)>;

  // expr is one line of C++ in a and b; throws kiln::Error when it is not one line.
  Reduction(std::shared_ptr<Jit> jit, std::string expr);

  const std::string& expression() const { return expr_; }

  // Folds the n elements of dtype at device pointer in, then init when given (a Lua number or
  // boolean as an ArgValue); returns a one-element array of the accumulator's dtype: int64 or
  // uint64 for integers (exact; a result that overflows 64 bits is an error), dtype otherwise.
  // Throws kiln::Error when n is 0 and there is no init, or when the expression does not
  // compile for the dtype.
  HostArray reduce(void* in, std::int64_t n, DType dtype, const std::optional<ArgValue>& init,
                   const Allocate& allocate);

 private:
  // The kernel folding dtype values as acc values; compiled on its first launch.
  Kernel& kernel_for(DType dtype, DType acc);
  // The two launches: n values of dtype at in, folded as acc, then init.
  HostArray fold(void* in, std::int64_t n, DType dtype, DType acc,
                 const std::optional<ArgValue>& init, const Allocate& allocate);

  std::shared_ptr<Jit> jit_;
  std::string expr_;
  std::shared_ptr<SourceText> source_;
  std::map<std::pair<DType, DType>, std::unique_ptr<Kernel>> kernels_;
  bool shadow_compiles_ = true;  // whether the expression compiles for doubles
  std::shared_ptr<DeviceBuffer> scratch_;  // the blocks' results and the total, reused
};

}  // namespace kiln::jit
