#include "runtime/cpu/guarded_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <string>

#include "runtime/cpu/stacks.h"  // KILN_ASAN_FIBERS
#include "runtime/error.h"
#include "runtime/host_array.h"  // memory_and_swap_bytes

#ifdef KILN_ASAN_FIBERS
#include <sanitizer/asan_interface.h>
#define KILN_ASAN_UNPOISON(p, n) __asan_unpoison_memory_region((p), (n))
#else
#define KILN_ASAN_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

namespace kiln::cpu {

GuardedMemory::~GuardedMemory() {
  for (auto& [ptr, m] : mappings_) ::munmap(m.base, m.length);
}

void* GuardedMemory::allocate(std::size_t bytes) {
  const std::size_t page = std::size_t(::sysconf(_SC_PAGESIZE));
  const std::size_t rounded = (std::max<std::size_t>(bytes, 1) + 63) / 64 * 64;
  const std::size_t data_pages = (rounded + page - 1) / page * page;
  if (data_pages < rounded || data_pages > SIZE_MAX - 2 * page)
    throw Error("cpu backend: out of memory allocating " + std::to_string(bytes) + " bytes");
  // (mmap with MAP_NORESERVE grants any size: refused here beyond what could ever be filled;
  // asked only of a large request, which no machine of less than a GiB makes)
  if (std::uint64_t total = bytes >= (std::size_t(1) << 30) ? memory_and_swap_bytes() : 0;
      total > 0 && bytes > total)
    throw Error("cpu backend: out of memory allocating " + std::to_string(bytes) +
                " bytes: more than this machine's memory and swap together (" +
                std::to_string(total >> 30) + " GiB)");
  const std::size_t length = data_pages + 2 * page;
  // MAP_NORESERVE: like malloc's large blocks, pages cost memory only once touched.
  void* base = ::mmap(nullptr, length, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED)
    throw Error("cpu backend: out of memory allocating " + std::to_string(bytes) + " bytes");
  char* data = static_cast<char*>(base) + page;
  if (::mprotect(data, data_pages, PROT_READ | PROT_WRITE) != 0) {
    ::munmap(base, length);
    throw Error("cpu backend: out of memory allocating " + std::to_string(bytes) + " bytes");
  }
  // Under ASan, the addresses may have been a thread's or a fiber's stack before, whose
  // poisoning ASan kept: this is plain memory now.
  KILN_ASAN_UNPOISON(data, data_pages);
  void* ptr = data + (data_pages - rounded);  // ends at the upper guard, give or take alignment
  std::lock_guard<std::mutex> lock(mutex_);
  mappings_.emplace(ptr, Mapping{base, length});
  return ptr;
}

void GuardedMemory::release(void* ptr) noexcept {
  Mapping m{};
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = mappings_.find(ptr);
    if (it == mappings_.end()) return;
    m = it->second;
    mappings_.erase(it);
  }
  ::munmap(m.base, m.length);
}

}  // namespace kiln::cpu
