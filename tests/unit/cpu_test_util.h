// Helpers for the cpu backend's tests: compile one source, launch with hand-laid arguments.
#pragma once
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "jit/compiler.h"
#include "jit/cpu/compiler.h"
#include "runtime/cpu/backend.h"

namespace kiln::cpu_test {

using jit::CompileRequest;

// The cpu backend and a compiler for it.
struct Cpu {
  std::shared_ptr<Backend> backend;
  std::shared_ptr<jit::Compiler> compiler;
};

// The compiler's options for the test binary: kiln's own kernels folder, the host compiler.
inline jit::CpuCompilerOptions compiler_options(bool check = false, bool regions = true) {
  return {KILN_KERNELS_DIR, KILN_CXX_COMPILER, check, regions};
}

// One backend and compiler for the whole test binary (worker pool, compiler version reused).
inline const Cpu& cpu() {
  static Cpu c{make_cpu_backend({}), jit::make_cpu_compiler(compiler_options())};
  return c;
}
inline std::shared_ptr<Backend> backend() {
  return cpu().backend;
}
inline std::shared_ptr<jit::Compiler> compiler() {
  return cpu().compiler;
}

// The same backend with region mode off: kernels with barriers run as coroutines where they can.
inline const Cpu& without_regions() {
  static Cpu c{backend(), jit::make_cpu_compiler(compiler_options(false, false))};
  return c;
}

// A device function that recurses d levels deep with 512 bytes of locals per level (build it
// with -O0): for the stack-overflow tests.
inline constexpr const char* kDeepRecursion = R"(
__device__ int deep(volatile int* p, int d) {
  volatile char pad[512];
  pad[d % 512] = (char)d;
  return d == 0 ? *p : deep(p, d - 1) + pad[(d * 7) % 512];
}
)";

// A compiled and loaded module with its first kernel.
struct Built {
  CompileResult result;
  std::unique_ptr<Module> module;
  std::unique_ptr<Program> kernel;
};

inline Built build(const std::string& source, const std::string& name,
                   std::vector<std::string> options = {}, const Cpu& on = cpu()) {
  CompileRequest req;
  req.source = source;
  req.filename = "test_kernel.cu";
  req.name_expressions = {name};
  req.options = std::move(options);
  Built b;
  b.result = on.compiler->compile(req);
  b.module = on.backend->load(b.result);
  b.kernel = b.module->kernel(b.result.lowered_names[0]);
  return b;
}

// Device memory holding n values of T, freed at scope exit.
template <class T>
struct Buffer {
  explicit Buffer(std::size_t n, T fill = T{}) : n(n) {
    p = static_cast<T*>(backend()->alloc(n * sizeof(T)));
    for (std::size_t i = 0; i < n; ++i) p[i] = fill;
  }
  explicit Buffer(const std::vector<T>& v) : Buffer(v.size()) {
    backend()->copy_to_device(p, v.data(), v.size() * sizeof(T), nullptr);
  }
  ~Buffer() { backend()->free(p); }
  std::vector<T> host() const {
    std::vector<T> v(n);
    backend()->copy_to_host(v.data(), p, n * sizeof(T), nullptr);
    return v;
  }
  T* p;
  std::size_t n;
};

// Launches with the given geometry; each argument is passed by address as cuLaunchKernel takes it.
template <class... A>
void launch(Program& k, Dim3 grid, Dim3 block, std::size_t shared, A... args) {
  void* ptrs[] = {static_cast<void*>(&args)..., nullptr};
  LaunchConfig c;
  c.grid = grid;
  c.block = block;
  c.shared_bytes = shared;
  k.launch(c, ptrs);
}

}  // namespace kiln::cpu_test
