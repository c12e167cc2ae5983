// A kernel module's shared object: dlopen'd from a file or from a memfd, closed when the last
// module or program using it goes. The cpu backend loads modules through it; the cpu compiler
// opens what it just built to read the entry points' types.
#pragma once
#include <dlfcn.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "runtime/error.h"

namespace kiln::cpu {

// A dlopen handle, closed when the last module or program using it goes. A module loaded from a
// memfd keeps the fd open as long as the handle: dlopen finds an already-loaded object by its
// path, so a reused "/proc/self/fd/N" would return the previous module instead of this one.
struct SharedObject {
  void* handle = nullptr;
  int fd = -1;
  explicit SharedObject(void* h, int memfd = -1) : handle(h), fd(memfd) {}
  ~SharedObject() {
    if (handle) ::dlclose(handle);
    if (fd >= 0 && !still_loaded()) ::close(fd);
  }
  // Whether the loader kept the object after dlclose (C++ inline statics are STB_GNU_UNIQUE
  // symbols, which make dlclose a no-op). Its "/proc/self/fd/N" name then stays bound, so the
  // fd must stay open: a reused N would make a later dlopen return this old module.
  bool still_loaded() const {
    std::string path = "/proc/self/fd/" + std::to_string(fd);
    void* again = ::dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD);
    if (again) ::dlclose(again);
    return again != nullptr;
  }
  SharedObject(const SharedObject&) = delete;
  SharedObject& operator=(const SharedObject&) = delete;
  // The address of an exported symbol, or nullptr.
  void* symbol(const std::string& name) const { return ::dlsym(handle, name.c_str()); }
};

// dlopens path (RTLD_NOW | RTLD_LOCAL); memfd, when given, is owned by the object from here.
// Throws kiln::Error with dlerror's text.
std::shared_ptr<SharedObject> open_object(const std::string& path, int memfd = -1);

// dlopens the module in memfd (taking ownership of fd), under a /proc/self/fd name that no
// stale object holds.
std::shared_ptr<SharedObject> open_memfd_object(int fd);

// An exported symbol as F; throws kiln::Error naming it when the module lacks it.
template <class F>
F required_symbol(const SharedObject& so, const std::string& name) {
  void* p = so.symbol(name);
  if (!p) throw Error("cpu backend: kernel module lacks '" + name + "' (not built by this kiln?)");
  return reinterpret_cast<F>(p);
}

// Bytes of the module's thread-local segment (its static __shared__ arrays live there); -1 when
// it cannot be told.
long tls_segment_bytes(const SharedObject& so);

}  // namespace kiln::cpu
