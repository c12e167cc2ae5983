// The cpu backend: CUDA C++ kernels compiled by the host C++ compiler into a shared library and
// run on the host with GPU semantics (blocks on a worker pool, a block's threads as fibers when
// they need barriers or warp operations). Device memory is host memory; streams run in order,
// synchronously at the call. See docs/cpu-backend.md.
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/cpu_abi.h"
#include "runtime/backend.h"

namespace kiln {

struct CpuBackendOptions {
  std::string
      kernels_dir;  // for #include <kiln.cuh>; "": $KILN_HOME/kernels_src, else KILN_KERNELS_DIR
  int workers = 0;  // worker threads; 0: $KILN_CPU_THREADS, else one per core
  std::string compiler;  // "": $KILN_CXX, else KILN_CXX_COMPILER, else "c++"
  bool check = false;    // check mode (also when $KILN_CHECK is set and not "0")
  bool regions = true;   // kernels with barriers as regions where they qualify (cpu_regions.h);
                         // also off when $KILN_REGIONS is "0"
};

// The cpu backend. Throws kiln::Error when the options are unusable.
std::shared_ptr<Backend> make_cpu_backend(const CpuBackendOptions& options = {});

namespace cpu {

// For each name expression, how that kernel's threads run, from a token scan (comments ignored):
// - mode_loop: nothing it can reach names a barrier or a warp operation;
// - mode_coroutines: its body names __syncthreads*, and every barrier of the source is a
//   __syncthreads* written in a __global__ body without a lambda (the module is built one way);
// - mode_fibers: otherwise (warp operations, cooperative groups, barriers in device functions or
//   in the headers the source includes with quotes or as <kiln...> from include_dirs).
std::vector<kiln_cpu::ThreadMode> thread_modes(std::string_view source, const std::string& filename,
                                               const std::vector<std::string>& include_dirs,
                                               const std::vector<std::string>& name_expressions);

// Coroutine mode: each `return` in a __global__ body that names a barrier becomes `co_return`
// (columns shift; lines stay).
std::string rewrite_coroutine_returns(std::string_view source);

// Rewrites each `extern __shared__ T name[];` into a pointer to the block's dynamic shared
// memory, keeping the line count unchanged.
std::string rewrite_extern_shared(std::string_view source);

// Check mode: rewrites each plain `T* name` / `const T* __restrict__ name` parameter of a
// __global__ function into `::kiln_cpu::checked_ptr<T> name` (same line count).
std::string rewrite_pointer_params(std::string_view source);

// The compiler arguments a request's options map to; throws kiln::Error naming an option the
// cpu backend does not accept.
std::vector<std::string> translate_options(const std::vector<std::string>& options);

}  // namespace cpu
}  // namespace kiln
