// The CUDA device environment for kernels compiled by the host C++ compiler (the cpu backend).
// Included first in every generated translation unit: it defines the CUDA keywords, built-in
// variables, vector types, math library, intrinsics, atomics and warp operations so that
// unmodified CUDA C++ kernels compile and behave as on an NVIDIA GPU. Barriers and warp
// operations call back into the runtime (kiln_cpu::Api), which runs the block's threads as
// fibers. Kept light on purpose: every kernel compile parses it. Split by topic, in the order
// the kernel-side code needs them.
// A guard macro, not #pragma once: compiled as a precompiled header (jit/cpu/prelude_pch.h) the
// prelude is the main file, where #pragma once means nothing; the macro survives into the .gch,
// so a second #include (cuda_runtime.h's, say) is empty.
#ifndef KILN_CPU_PRELUDE_H
#define KILN_CPU_PRELUDE_H
#define KILN_CPU 1

#include <limits.h>  // INT_MAX, ...: nvcc's implicit cuda_runtime.h brings it (driver_types.h)
#include <math.h>    // the C++ wrapper: float overloads of sqrt, abs, ... in the global namespace
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>

#include "kiln/cpu_abi.h"

// In this order (each topic uses the ones before it), so kept out of clang-format's sorting.
// clang-format off
#include "kiln/cpu_types.h"
#include "kiln/cpu_math.h"
#include "kiln/cpu_atomics.h"
#include "kiln/cpu_sync.h"
#include "kiln/cpu_ptx.h"
#include "kiln/cpu_check.h"
#include "kiln/cpu_modes.h"
// clang-format on

// abort() and exit() in a kernel end the launch with an error that names them, as a GPU's
// trap does, never the process (exit is host-only: NVRTC refuses it; with the NVRTC check off
// it would end kiln and the session). The C library's are noexcept, so a kernel's calls are
// renamed to functions that may leave by the runtime's error: every use of the words in the
// user's source, std:: ones included, after the C library's headers were read.
namespace kiln_cpu {
[[noreturn]] inline void kernel_exit(int status) {
  static thread_local char message[64];
  snprintf(message, sizeof message, "exit(%d) called in a kernel", status);
  trap(message);
}
}  // namespace kiln_cpu
[[noreturn]] inline void kiln_abort() { kiln_cpu::trap("abort() called in a kernel"); }
[[noreturn]] inline void kiln_exit(int status) { kiln_cpu::kernel_exit(status); }
namespace std {
using ::kiln_abort;
using ::kiln_exit;
}  // namespace std
#define abort kiln_abort
#define exit kiln_exit
#endif  // KILN_CPU_PRELUDE_H
