// The cpu compiler: a kernel source becomes a shared library for runtime/cpu/ by the host C++
// compiler: prelude + the user's source (rewritten per the plan, lines kept) + entry points.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "jit/compiler.h"

namespace kiln::jit {

struct CpuCompilerOptions {
  std::string kernels_dir;       // holds kiln.cuh and kiln/cpu_prelude.h
  std::string compiler = "c++";  // the host C++ compiler, by name or path
  bool check = false;            // check mode: bounds-checked pointers, line tables
  bool regions = true;           // barrier kernels as regions where they qualify (regions.h)
  bool precompiled_prelude = true;  // GCC: the prelude precompiled once (prelude_pch.h)
  // The CUDA toolkit's include folder, whose <curand_kernel.h> the cpu backend compiles as it
  // is (kiln/cpu_include/curand_kernel.h); empty where there is none.
  std::string cuda_include;
};

// The include folder of the first CUDA toolkit of `toolkits` ($CUDA_HOME, ...), then of
// /usr/local/cuda, that has <curand_kernel.h>; empty when none has.
std::string find_curand_include(const std::vector<std::string>& toolkits);

// The cpu compiler. Throws kiln::Error when kernels_dir has no kiln/cpu_prelude.h.
std::unique_ptr<Compiler> make_cpu_compiler(const CpuCompilerOptions& options);

}  // namespace kiln::jit

namespace kiln::cpu {

// The compiler arguments a request's options map to; throws kiln::Error naming an option the
// cpu backend does not accept.
std::vector<std::string> translate_options(const std::vector<std::string>& options);

}  // namespace kiln::cpu
