#include "runtime/backends.h"

#include <cstdlib>

#include "runtime/cpu_backend.h"
#include "runtime/error.h"
#ifdef KILN_HAVE_CUDA
#include "runtime/cuda_backend.h"
#endif

namespace kiln {

namespace {

// The cuda backend, or nullptr with why.
std::shared_ptr<Backend> try_cuda(std::string* why) {
#ifdef KILN_HAVE_CUDA
  return make_cuda_backend(0, why);
#else
  *why = "kiln was built without the CUDA toolkit headers";
  return nullptr;
#endif
}

}  // namespace

bool cuda_available(std::string* why) {
  std::string reason;
  bool ok = try_cuda(&reason) != nullptr;
  if (why) *why = reason;
  return ok;
}

std::shared_ptr<Backend> open_backend(std::string which, std::string* note) {
  if (which.empty()) {
    const char* env = std::getenv("KILN_BACKEND");
    which = env && *env ? env : "auto";
  }
  std::string why;
  if (which == "cuda") {
    if (auto b = try_cuda(&why)) return *note = "cuda (KILN_BACKEND=cuda)", b;
    throw Error("KILN_BACKEND=cuda, but the cuda backend cannot run: " + why);
  }
  if (which == "auto") {
    if (auto b = try_cuda(&why)) return *note = "cuda (auto: a CUDA device is present)", b;
    *note = "cpu (auto: " + why + ")";
    return make_cpu_backend(CpuBackendOptions{});
  }
  if (which == "cpu") {
    *note = "cpu (KILN_BACKEND=cpu)";
    return make_cpu_backend(CpuBackendOptions{});
  }
  throw Error("KILN_BACKEND='" + which + "' is not one of auto, cuda, cpu");
}

}  // namespace kiln
