// Loading kernel modules with dlopen, from files and memfds.
#include "runtime/cpu/shared_object.h"

#include <fcntl.h>
#include <link.h>

#include <vector>

namespace kiln::cpu {

namespace {

// Whether an object loaded under path is still in the process (one dlclose could not unload).
bool still_loaded(const std::string& path) {
  void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (h) ::dlclose(h);
  return h != nullptr;
}

}  // namespace

std::shared_ptr<SharedObject> open_object(const std::string& path, int memfd) {
  void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) throw Error(std::string("cpu backend: cannot load a kernel module: ") + ::dlerror());
  return std::make_shared<SharedObject>(h, memfd);
}

// dlopens the module in memfd (taking ownership of fd). dlopen returns an already-loaded object
// whose name matches, and "/proc/self/fd/N" names a new module after an earlier one's fd N was
// closed; if that earlier object is still loaded (something kept it resident), the module is
// opened through a duplicate fd whose name is not taken.
std::shared_ptr<SharedObject> open_memfd_object(int fd) {
  std::vector<int> taken;  // numbers whose names are held by stale objects, closed at the end
  auto close_taken = [&] {
    for (int t : taken) ::close(t);
  };
  while (still_loaded("/proc/self/fd/" + std::to_string(fd))) {
    int dup = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (dup < 0 || taken.size() > 64) {
      ::close(fd);
      if (dup >= 0) ::close(dup);
      close_taken();
      throw Error("cpu backend: cannot find an unused name to load a kernel module under");
    }
    taken.push_back(fd);
    fd = dup;
  }
  try {
    auto so = open_object("/proc/self/fd/" + std::to_string(fd), fd);  // so owns fd from here
    close_taken();
    return so;
  } catch (...) {
    ::close(fd);
    close_taken();
    throw;
  }
}

// Bytes of the module's thread-local segment (its static __shared__ arrays live there).
long tls_segment_bytes(const SharedObject& so) {
  Dl_info info{};
  void* sym = so.symbol("kiln_set_launch");
  if (!sym || !::dladdr(sym, &info)) return -1;
  struct Query {
    void* base;
    long bytes = -1;
  } q{info.dli_fbase};
  ::dl_iterate_phdr(
      [](dl_phdr_info* i, std::size_t, void* data) {
        auto* q = static_cast<Query*>(data);
        for (int k = 0; k < i->dlpi_phnum; ++k) {
          if (i->dlpi_phdr[k].p_type == PT_LOAD && i->dlpi_phdr[k].p_offset == 0 &&
              reinterpret_cast<void*>(i->dlpi_addr + i->dlpi_phdr[k].p_vaddr) != q->base)
            return 0;
        }
        for (int k = 0; k < i->dlpi_phnum; ++k)
          if (i->dlpi_phdr[k].p_type == PT_TLS) q->bytes = long(i->dlpi_phdr[k].p_memsz);
        return q->bytes >= 0 ? 1 : 0;
      },
      &q);
  return q.bytes;
}

}  // namespace kiln::cpu
