// The cpu backend's device memory: each allocation in a mapping of its own between two
// inaccessible guard pages, its end as close to the upper guard as 64-byte alignment allows.
// A kernel's stray write past either end of an array, or into an array already freed, faults
// (the launch fails, naming the kernel) instead of landing in kiln's own heap. Check mode
// (KILN_CHECK) still reports the exact access and source line.
#pragma once
#include <cstddef>
#include <mutex>
#include <unordered_map>

namespace kiln::cpu {

class GuardedMemory {
 public:
  GuardedMemory() = default;
  ~GuardedMemory();  // unmaps whatever was not released
  GuardedMemory(const GuardedMemory&) = delete;
  GuardedMemory& operator=(const GuardedMemory&) = delete;

  // bytes of zeroed memory, 64-byte aligned; throws kiln::Error naming the size on exhaustion.
  void* allocate(std::size_t bytes);
  // Unmaps an allocation (pages and guards); nothing for a pointer it did not make.
  void release(void* ptr) noexcept;

 private:
  struct Mapping {
    void* base;
    std::size_t length;
  };
  std::mutex mutex_;
  std::unordered_map<void*, Mapping> mappings_;
};

}  // namespace kiln::cpu
