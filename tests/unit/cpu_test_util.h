// Helpers for the cpu backend's tests: compile one source, launch with hand-laid arguments.
#pragma once
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "runtime/cpu_backend.h"

namespace kiln::cpu_test {

// One backend for the whole test binary (its worker pool and compiler version are reused).
inline std::shared_ptr<Backend> backend() {
  static std::shared_ptr<Backend> b = make_cpu_backend({});
  return b;
}

// Another, with region mode off: kernels with barriers run as coroutines where they can.
inline std::shared_ptr<Backend> backend_without_regions() {
  static std::shared_ptr<Backend> b = [] {
    CpuBackendOptions o;
    o.regions = false;
    return make_cpu_backend(o);
  }();
  return b;
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
                   std::vector<std::string> options = {},
                   const std::shared_ptr<Backend>& on = backend()) {
  CompileRequest req;
  req.source = source;
  req.filename = "test_kernel.cu";
  req.name_expressions = {name};
  req.options = std::move(options);
  Built b;
  b.result = on->compile(req);
  b.module = on->load(b.result);
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
