// The cuda backend: its factory where there is no driver, compiling for a device target without
// one, and (on a machine with a GPU only; skipped elsewhere) memory, launches, faults and reset.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <numeric>
#include <vector>

#include "jit/backends.h"
#include "jit/cuda/compiler.h"
#include "jit/cuda/nvrtc.h"
#include "runtime/cuda/backend.h"
#include "runtime/error.h"

namespace kiln {
namespace {

using jit::CompileRequest;

bool have_libcuda() {
  return dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL) != nullptr;
}

// Why a GPU is expected here (KILN_BACKEND=cuda, or the NVIDIA driver's device node exists), or
// "" (the same rule as tests/gpu/lib/gpu.lua): where one is, a cuda backend that does not start
// fails the device tests instead of skipping them.
std::string gpu_expected() {
  const char* backend = std::getenv("KILN_BACKEND");
  if (backend && std::string(backend) == "cuda") return "KILN_BACKEND=cuda";
  if (backend && std::string(backend) == "cpu") return "";
  return ::access("/dev/nvidiactl", F_OK) == 0 ? "/dev/nvidiactl exists" : "";
}

// The kernel-side headers are not needed by these kernels; NVRTC gets none.
const std::map<std::string, std::string> no_headers;

const char* saxpy_source = R"(
template <typename T>
__global__ void saxpy(T a, const T* x, T* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
)";

CompileRequest saxpy_request() {
  CompileRequest request;
  request.source = saxpy_source;
  request.filename = "saxpy.cu";
  request.name_expressions = {"saxpy<float>"};
  return request;
}

TEST(CudaBackend, FactorySaysWhyWithoutADriver) {
  if (have_libcuda()) GTEST_SKIP() << "this machine has libcuda.so.1";
  std::string why;
  EXPECT_EQ(make_cuda_backend(0, &why), nullptr);
  EXPECT_EQ(why, "no CUDA driver (libcuda.so.1 not found)");
  EXPECT_EQ(make_cuda_backend(0, nullptr), nullptr);  // why is optional
}

// NVRTC (no GPU needed) or a skip saying why not.
std::shared_ptr<jit::Nvrtc> nvrtc_or_skip(std::string* why) {
  return jit::Nvrtc::load(why);
}

TEST(CudaCompile, DefaultTargetSm90GivesACubin) {
  std::string why;
  auto nvrtc = nvrtc_or_skip(&why);
  if (!nvrtc) GTEST_SKIP() << why;
  const std::string target = "sm_90";
  CompileResult result = jit::compile_for_target(*nvrtc, saxpy_request(), target, no_headers);
  EXPECT_EQ(result.image_kind, "cubin");
  ASSERT_GT(result.image.size(), 4u);
  EXPECT_EQ(std::memcmp(result.image.data(),
                        "\x7f"
                        "ELF",
                        4),
            0);  // a cubin is an ELF file
  EXPECT_NE(result.ptx.find(".target sm_90"), std::string::npos);
  ASSERT_EQ(result.lowered_names.size(), 1u);
  EXPECT_EQ(cuda::display_name(result.lowered_names[0]), "saxpy<float>");
}

TEST(CudaCompile, PtxTargetGivesPtxForTheDriverJit) {
  std::string why;
  auto nvrtc = nvrtc_or_skip(&why);
  if (!nvrtc) GTEST_SKIP() << why;
  const std::string target = "compute_80";
  CompileResult result = jit::compile_for_target(*nvrtc, saxpy_request(), target, no_headers);
  EXPECT_EQ(result.image_kind, "ptx");
  EXPECT_NE(result.ptx.find(".target sm_80"), std::string::npos);
}

TEST(CudaCompile, ExplicitArchWinsAndIsCapped) {
  std::string why;
  auto nvrtc = nvrtc_or_skip(&why);
  if (!nvrtc) GTEST_SKIP() << why;
  const std::string target = "sm_90";
  CompileRequest request = saxpy_request();
  request.arch = "sm_80";
  CompileResult result = jit::compile_for_target(*nvrtc, request, target, no_headers);
  EXPECT_EQ(result.image_kind, "cubin");
  EXPECT_NE(result.ptx.find(".target sm_80"), std::string::npos);
  // An architecture beyond this NVRTC becomes PTX of its newest one.
  request.arch = "sm_990";
  result = jit::compile_for_target(*nvrtc, request, target, no_headers);
  EXPECT_EQ(result.image_kind, "ptx");
}

TEST(CudaCompile, ErrorsCarryTheLog) {
  std::string why;
  auto nvrtc = nvrtc_or_skip(&why);
  if (!nvrtc) GTEST_SKIP() << why;
  CompileRequest request;
  request.source = "__global__ void k(float* x) { x[0] = undefined_name; }\n";
  request.filename = "bad.cu";
  request.name_expressions = {"k"};
  try {
    jit::compile_for_target(*nvrtc, request, "sm_90", no_headers);
    FAIL() << "compiled an undefined name";
  } catch (const CompileError& e) {
    EXPECT_NE(e.log().find("undefined_name"), std::string::npos) << e.log();
  }
}

// ---- A real device from here on: these run on GPU machines and skip elsewhere. ----

class CudaDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    jit::PlatformOptions options;
    options.backend = "cuda";
    options.kernels_dir = KILN_KERNELS_DIR;
    try {
      jit::Platform platform = jit::open_platform(options);
      backend_ = std::dynamic_pointer_cast<CudaBackend>(platform.backend);
      compiler_ = platform.compiler;
    } catch (const Error& e) {
      if (std::string why = gpu_expected(); !why.empty())
        FAIL() << "a GPU is expected here (" << why << "), but the cuda backend did not start: "
               << e.what();
      GTEST_SKIP() << "no GPU expected here: " << e.what();
    }
  }
  std::shared_ptr<CudaBackend> backend_;
  std::shared_ptr<jit::Compiler> compiler_;
};

TEST_F(CudaDevice, DescribesItself) {
  const DeviceInfo& info = backend_->device();
  EXPECT_FALSE(info.name.empty());
  EXPECT_GE(info.cc_major, 7);
  EXPECT_GT(info.total_memory, 0u);
  EXPECT_GT(info.multiprocessors, 0);
  EXPECT_GE(info.max_shared_per_block_optin, info.max_shared_per_block);
  ASSERT_FALSE(backend_->list_devices().empty());
  EXPECT_EQ(backend_->list_devices()[0].name, info.name);
  EXPECT_NE(backend_->describe().find(info.name), std::string::npos);
}

TEST_F(CudaDevice, CopiesRoundTrip) {
  std::vector<int> host(1 << 20), back(host.size(), -1);
  std::iota(host.begin(), host.end(), 7);
  std::size_t bytes = host.size() * sizeof(int);
  void* a = backend_->alloc(bytes);
  void* b = backend_->alloc(bytes);
  backend_->copy_to_device(a, host.data(), bytes, nullptr);
  backend_->copy_on_device(b, a, bytes, nullptr);
  backend_->copy_to_host(back.data(), b, bytes, nullptr);
  EXPECT_EQ(back, host);
  backend_->memset(b, 0, bytes, nullptr);
  backend_->copy_to_host(back.data(), b, bytes, nullptr);
  EXPECT_EQ(std::count(back.begin(), back.end(), 0), long(back.size()));
  backend_->free(a);
  backend_->free(b);
}

// Loads of one image share their globals unless a load asks for its own (a kiln module whose
// globals Lua sets: two modules of one source must not see each other's constants).
TEST_F(CudaDevice, OwnGlobalsAreNotSharedWithAnotherLoad) {
  CompileRequest request = saxpy_request();
  request.source += "\n__device__ int counter;\n";
  CompileResult compiled = compiler_->compile(request);
  auto shared_a = backend_->load(compiled), shared_b = backend_->load(compiled);
  auto own_a = backend_->load(compiled, true), own_b = backend_->load(compiled, true);
  const int one = 1, two = 2;
  int got = 0;
  shared_a->set_global("counter", &one, sizeof one);
  shared_b->get_global("counter", &got, sizeof got);
  EXPECT_EQ(got, 1);  // one loaded image
  own_a->set_global("counter", &two, sizeof two);
  own_b->get_global("counter", &got, sizeof got);
  EXPECT_EQ(got, 0);
  own_a->get_global("counter", &got, sizeof got);
  EXPECT_EQ(got, 2);
  shared_a->get_global("counter", &got, sizeof got);
  EXPECT_EQ(got, 1);
}

TEST_F(CudaDevice, LaunchMatchesCpuReference) {
  CompileResult compiled = compiler_->compile(saxpy_request());
  auto module = backend_->load(compiled);
  auto program = module->kernel(compiled.lowered_names[0]);
  EXPECT_GT(program->attributes().registers, 0);
  const int n = 100000;
  std::vector<float> x(n), y(n), expected(n);
  for (int i = 0; i < n; ++i)
    x[i] = 0.5f * i, y[i] = float(n - i), expected[i] = 2.0f * x[i] + y[i];
  void* dx = backend_->alloc(n * sizeof(float));
  void* dy = backend_->alloc(n * sizeof(float));
  backend_->copy_to_device(dx, x.data(), n * sizeof(float), nullptr);
  backend_->copy_to_device(dy, y.data(), n * sizeof(float), nullptr);
  auto stream = backend_->create_stream();
  auto start = backend_->create_event(), stop = backend_->create_event();
  float a = 2.0f;
  int count = n;
  void* args[] = {&a, &dx, &dy, &count};
  LaunchConfig config;
  int block = backend_->occupancy_block_size(*program);
  ASSERT_GT(block, 0);
  config.block.x = block;
  config.grid.x = (n + block - 1) / block;
  config.stream = stream.get();
  start->record(stream.get());
  program->launch(config, args);
  stop->record(stream.get());
  stream->synchronize();
  backend_->copy_to_host(y.data(), dy, n * sizeof(float), nullptr);
  EXPECT_EQ(y, expected);
  backend_->free(dx);
  backend_->free(dy);
}

TEST_F(CudaDevice, InvalidLaunchIsRefusedBeforeTheDriver) {
  CompileResult compiled = compiler_->compile(saxpy_request());
  auto program = backend_->load(compiled)->kernel(compiled.lowered_names[0]);
  LaunchConfig config;
  config.block.x = 2048;
  void* args[4] = {};
  try {
    program->launch(config, args);
    FAIL() << "launched 2048 threads per block";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("kernel 'saxpy<float>': block (2048, 1, 1)"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(CudaDevice, OutOfMemoryNamesBytesAndFreeMemory) {
  std::size_t too_much = backend_->device().total_memory * 2;
  try {
    backend_->alloc(too_much);
    FAIL() << "allocated twice the device's memory";
  } catch (const Error& e) {
    std::string message = e.what();
    EXPECT_EQ(message.rfind("out of device memory: cannot allocate ", 0), 0u) << message;
    EXPECT_NE(message.find("(" + std::to_string(too_much) + " bytes)"), std::string::npos)
        << message;
    EXPECT_NE(message.find(backend_->device().name), std::string::npos) << message;
  }
  void* small = backend_->alloc(1024);  // the backend still works
  backend_->free(small);
}

TEST_F(CudaDevice, EventsTimeWhatTheyBracket) {
  CompileRequest request;
  request.source = R"(
extern "C" __global__ void spin(long long ns) {  // runs for ns nanoseconds of wall time
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now)); while (now - start < ns);
}
)";
  request.filename = "spin.cu";
  request.name_expressions = {"spin"};
  CompileResult compiled = compiler_->compile(request);
  auto program = backend_->load(compiled)->kernel(compiled.lowered_names[0]);
  auto stream = backend_->create_stream();
  auto start = backend_->create_event(), stop = backend_->create_event();
  long long ns = 5'000'000;
  void* args[] = {&ns};
  LaunchConfig config;
  config.stream = stream.get();
  start->record(stream.get());
  program->launch(config, args);
  stop->record(stream.get());
  stream->synchronize();
  double ms = stop->elapsed_ms_since(*start);
  EXPECT_GE(ms, 4.9);
  EXPECT_LT(ms, 1000.0);
}

TEST_F(CudaDevice, FaultBreaksContextUntilReset) {
  CompileRequest request;
  request.source = "extern \"C\" __global__ void wild(int* p) { p[1ll << 40] = 1; }\n";
  request.filename = "wild.cu";
  request.name_expressions = {"wild"};
  CompileResult compiled = compiler_->compile(request);
  auto program = backend_->load(compiled)->kernel(compiled.lowered_names[0]);
  void* buffer = backend_->alloc(64);
  std::uint64_t generation = backend_->generation();
  void* args[] = {&buffer};
  LaunchConfig config;
  program->launch(config, args);
  try {
    backend_->synchronize();
    FAIL() << "a wild write did not fault";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("broken by an earlier fault in kernel 'wild'"),
              std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(backend_->broken());
  EXPECT_THROW(backend_->alloc(64), Error);  // every later call says the same
  // The driver recreates the context, or (CUDA documents an illegal address so) refuses to for
  // the rest of the process: then every later call says to restart kiln.
  try {
    backend_->reset();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("restart kiln"), std::string::npos) << e.what();
    EXPECT_FALSE(backend_->broken());
    EXPECT_GT(backend_->generation(), generation);
    backend_->free(buffer);  // a no-op, not a crash
    try {
      backend_->alloc(64);
      ADD_FAILURE() << "an allocation after a refused reset succeeded";
    } catch (const Error& later) {
      EXPECT_NE(std::string(later.what()).find("restart kiln"), std::string::npos) << later.what();
    }
    return;  // the refusal, said plainly, is the outcome to test on this driver
  }
  EXPECT_FALSE(backend_->broken());
  EXPECT_GT(backend_->generation(), generation);
  backend_->free(buffer);  // from before the reset: a no-op, not a crash
  // Kernels reload into the new context; a healthy launch works again.
  auto saxpy = compiler_->compile(saxpy_request());
  auto healthy = backend_->load(saxpy)->kernel(saxpy.lowered_names[0]);
  float a = 1, x = 2, y = 3;
  void* dx = backend_->alloc(sizeof x);
  void* dy = backend_->alloc(sizeof y);
  backend_->copy_to_device(dx, &x, sizeof x, nullptr);
  backend_->copy_to_device(dy, &y, sizeof y, nullptr);
  int n = 1;
  void* saxpy_args[] = {&a, &dx, &dy, &n};
  healthy->launch(config, saxpy_args);
  backend_->copy_to_host(&y, dy, sizeof y, nullptr);
  EXPECT_EQ(y, 5.0f);
  backend_->free(dx);
  backend_->free(dy);
}

}  // namespace
}  // namespace kiln
