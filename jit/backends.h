// Choosing a backend and pairing it with its compiler: the only file that knows every backend.
// The choice ("auto", "cuda", "cpu") and every path come from the caller (repl/settings reads
// them from the environment once).
#pragma once
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "jit/compiler.h"
#include "jit/cpu/compiler.h"
#include "runtime/backend.h"
#include "runtime/cpu/backend.h"

namespace kiln::jit {

struct PlatformOptions {
  std::string backend = "auto";            // "auto", "cuda" or "cpu"
  std::filesystem::path kernels_dir;       // kiln.cuh, kiln/cpu_prelude.h
  std::vector<std::string> cuda_toolkits;  // where to look for NVRTC first ($CUDA_HOME, ...)
  CpuBackendOptions cpu;                   // workers, check
  std::string host_compiler = "c++";       // the cpu compiler's C++ compiler
  bool regions = true;                     // cpu: barrier kernels as regions where they qualify
  bool precompiled_prelude = true;         // cpu: the prelude precompiled once (GCC)
  // Under mpirun, this rank's place among the ranks on its node: the cuda backend takes device
  // local_rank modulo the device count (one GPU per rank).
  int local_rank = 0;
};

// A backend and the compiler whose images it loads.
struct Platform {
  std::shared_ptr<Backend> backend;
  std::shared_ptr<Compiler> compiler;
  std::string note;  // how the choice was made, for kiln --info
};

// Whether the cuda backend (driver, device and a matching NVRTC) can run here; why says what is
// missing when not.
bool cuda_available(const PlatformOptions& options, std::string* why);

// Opens the backend the options name. auto falls back to cpu quietly; an explicit "cuda" that
// cannot run throws kiln::Error naming what is missing, as does an unknown name.
Platform open_platform(const PlatformOptions& options);

}  // namespace kiln::jit
