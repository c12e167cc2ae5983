// Check mode's runtime (KILN_CHECK=1): the live allocations a bounds-checked pointer is looked up
// in, and the error an out-of-bounds access raises, given its source line once the launch stops.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "runtime/error.h"

namespace kiln::cpu {

// The live device allocations, for check mode's bounds lookups (thread-safe).
class Allocations {
 public:
  void add(const void* base, std::size_t bytes);
  void remove(const void* base);
  // The allocation holding p (or ending at p) as [*lo, *hi); false when p is in none.
  bool find(const void* p, const void** lo, const void** hi) const;

 private:
  mutable std::mutex mutex_;
  std::map<std::uintptr_t, std::size_t> ranges_;  // base -> bytes
};

// An out-of-bounds access found by a check-mode kernel: where (kernel, block, thread) and what,
// and the code address of the access, mapped to a source line once the launch has stopped.
class OutOfBounds : public Error {
 public:
  OutOfBounds(std::string where, std::string what, const void* code)
      : Error(where + ": " + what), where_(std::move(where)), what_(std::move(what)), code_(code) {}
  // The message with the source line of the access ("kernel 'k': thread ... of block ...:
  // out-of-bounds access ... at file.cu:12"), found with addr2line while the module is loaded.
  std::string with_source_line() const;

 private:
  std::string where_, what_;
  const void* code_;
};

}  // namespace kiln::cpu
