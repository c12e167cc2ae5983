// The floor under kiln's "new process, cached kernel: first launch" figure on a GPU: a bare C++
// process that does what bench/first_launch.lua does, through the driver alone. It loads libcuda
// (cuInit and the entry points), makes the primary context current, allocates two arrays, loads
// a cubin from a file, launches a 256-element copy and prints the marker that bench/run.sh
// waits for (as first_launch.lua does, before the kernel has finished). With --write it first
// compiles that kernel with NVRTC for this device into the file (not timed).
// Usage: kiln_cuda_floor --write CUBIN | kiln_cuda_floor CUBIN
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include "jit/backends.h"
#include "repl/settings.h"
#include "runtime/cuda/driver.h"
#include "runtime/error.h"

namespace {

constexpr const char* kSource = R"(
extern "C" __global__ void copy(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i];
}
)";

// Compiles kSource for this machine's device into path.
void write_cubin(const std::string& path) {
  kiln::jit::PlatformOptions options = kiln::Settings::from_environment().platform;
  options.backend = "cuda";
  kiln::jit::Platform platform = kiln::jit::open_platform(options);
  kiln::jit::CompileRequest request;
  request.source = kSource;
  request.filename = "floor.cu";
  request.name_expressions = {"copy"};
  kiln::CompileResult compiled = platform.compiler->compile(request);
  std::ofstream(path, std::ios::binary)
      .write(compiled.image.data(), static_cast<std::streamsize>(compiled.image.size()));
}

// The timed part: driver, context, arrays, module, one launch, the marker.
void first_launch(const std::string& path) {
  std::string why;
  std::shared_ptr<kiln::cuda::Driver> driver = kiln::cuda::Driver::load(&why);
  if (!driver) throw kiln::Error(why);
  CUdevice device;
  driver->check(driver->cuDeviceGet(&device, 0), "cuDeviceGet");
  kiln::cuda::PrimaryContext context(driver, device);
  context.make_current();
  const int n = 256;
  CUdeviceptr in, out;
  driver->check(driver->cuMemAlloc(&in, n * sizeof(float)), "cuMemAlloc");
  driver->check(driver->cuMemAlloc(&out, n * sizeof(float)), "cuMemAlloc");
  std::ifstream file(path, std::ios::binary);
  std::string image((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  CUmodule module;
  driver->check(driver->cuModuleLoadDataEx(&module, image.data(), 0, nullptr, nullptr),
                "cuModuleLoadDataEx");
  CUfunction copy;
  driver->check(driver->cuModuleGetFunction(&copy, module, "copy"), "cuModuleGetFunction");
  int count = n;
  void* args[] = {&in, &out, &count};
  driver->check(driver->cuLaunchKernel(copy, 1, 1, 1, n, 1, 1, 0, nullptr, args, nullptr),
                "cuLaunchKernel");
  std::puts("KILN_BENCH_LAUNCHED");
  std::fflush(stdout);
  driver->check(driver->cuCtxSynchronize(), "cuCtxSynchronize");
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc == 3 && std::string(argv[1]) == "--write") return write_cubin(argv[2]), 0;
    if (argc == 2) return first_launch(argv[1]), 0;
    std::fprintf(stderr, "usage: kiln_cuda_floor --write CUBIN | kiln_cuda_floor CUBIN\n");
    return 2;
  } catch (const kiln::Error& e) {
    std::fprintf(stderr, "kiln_cuda_floor: %s\n", e.what());
    return 1;
  }
}
