// The cpu backend: kernels built by the host C++ compiler (jit/cpu/) into shared libraries and
// run on the host with GPU semantics (blocks on a worker pool, a block's threads as loops,
// regions, coroutines or fibers, as the module's entry points say). Device memory is host
// memory; streams run in order, synchronously at the call. See docs/cpu-backend.md.
#pragma once
#include <memory>
#include <string>

#include "runtime/backend.h"

namespace kiln {

struct CpuBackendOptions {
  int workers = 0;     // worker threads; 0: one per core
  bool check = false;  // check mode: allocations tracked for bounds-checked kernels
};

// The cpu backend.
std::shared_ptr<Backend> make_cpu_backend(const CpuBackendOptions& options = {});

namespace cpu {
// This host's CPU ("Intel(R) Xeon(R) ...", from /proc/cpuinfo; "host CPU" when unknown): the
// device name, and part of the cpu compiler's identity, since -march=native code is for it alone.
std::string cpu_model_name();
}  // namespace cpu

}  // namespace kiln
