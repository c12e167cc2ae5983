// The cuda backend's device-free parts: loading the driver where there is none, the choice of
// NVRTC target, launch checks against device limits, and the wording of errors.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "runtime/cuda/driver.h"

namespace kiln::cuda {
namespace {

// True when this machine has a real libcuda.so.1 (the GPU machines): absence tests skip there.
bool have_libcuda() {
  void* handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  return handle != nullptr;  // left loaded: the driver is never unloaded
}

TEST(CudaDriver, MissingLibraryIsNamed) {
  std::string why;
  EXPECT_EQ(Driver::load(&why, "libcuda-kiln-test-absent.so.1"), nullptr);
  EXPECT_EQ(why, "no CUDA driver (libcuda-kiln-test-absent.so.1 not found)");
}

TEST(CudaDriver, NoDriverOnThisMachine) {
  if (have_libcuda()) GTEST_SKIP() << "this machine has libcuda.so.1";
  std::string why;
  EXPECT_EQ(Driver::load(&why), nullptr);
  EXPECT_EQ(why, "no CUDA driver (libcuda.so.1 not found)");
}

TEST(CudaDriver, StubLibraryIsNotADriver) {
  // The toolkit's link-time stub exports every entry point and answers CUDA_ERROR_STUB_LIBRARY.
  const std::filesystem::path stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
  if (!std::filesystem::exists(stub)) GTEST_SKIP() << "no " << stub;
  std::string why;
  EXPECT_EQ(Driver::load(&why, stub.string()), nullptr);
  EXPECT_NE(why.find("no CUDA driver"), std::string::npos) << why;
  EXPECT_NE(why.find("stub library"), std::string::npos) << why;
}

// NVRTC 13.0's architectures.
const std::vector<int> nvrtc13 = {75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121};
const std::vector<int> nvrtc124 = {50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90};

struct TargetCase {
  const char* what;
  int device_cc;
  std::vector<int> archs;
  int driver, nvrtc;
  const char* arch;  // nullptr: an error is expected
  bool cubin;
  const char* error_part;
};

TEST(CudaTarget, Table) {
  const TargetCase cases[] = {
      {"device arch supported, same versions", 90, nvrtc13, 13000, 13000, "sm_90", true, nullptr},
      {"driver newer than NVRTC", 90, nvrtc13, 13020, 13000, "sm_90", true, nullptr},
      {"driver older minor than NVRTC: cubin, not PTX", 90, nvrtc13, 13000, 13010, "sm_90", true,
       nullptr},
      {"newest arch of the same major", 89, {75, 80, 86}, 12000, 12000, "sm_86", true, nullptr},
      {"device minor above NVRTC's", 121, {75, 80, 90, 120}, 13000, 13000, "sm_120", true, nullptr},
      {"device major newer than NVRTC: PTX", 100, nvrtc124, 12080, 12040, "compute_90", false,
       nullptr},
      {"Blackwell desktop on NVRTC 12.4: PTX", 120, nvrtc124, 12080, 12040, "compute_90", false,
       nullptr},
      {"architectures given unsorted", 86, {90, 75, 86, 80}, 13000, 13000, "sm_86", true, nullptr},
      {"driver major older than NVRTC", 90, nvrtc13, 12040, 13000, nullptr, false,
       "the CUDA driver supports CUDA 12.4 but this NVRTC is 13.0"},
      {"device older than NVRTC's oldest", 70, nvrtc13, 13000, 13000, nullptr, false,
       "the device is sm_70 but the oldest architecture this NVRTC (13.0) supports is sm_75"},
      {"NVRTC without architectures", 90, {}, 13000, 13000, nullptr, false, "no supported GPU"},
  };
  for (const TargetCase& c : cases) {
    Target target;
    std::string error;
    bool ok = choose_target(c.device_cc, c.archs, c.driver, c.nvrtc, &target, &error);
    if (c.arch) {
      ASSERT_TRUE(ok) << c.what << ": " << error;
      EXPECT_EQ(target.arch, c.arch) << c.what;
      EXPECT_EQ(target.cubin, c.cubin) << c.what;
    } else {
      ASSERT_FALSE(ok) << c.what << " chose " << target.arch;
      EXPECT_NE(error.find(c.error_part), std::string::npos) << c.what << ": " << error;
    }
  }
}

// The limits of an H100 as cuDeviceGetAttribute reports them.
DeviceInfo h100() {
  DeviceInfo info;
  info.name = "NVIDIA H100";
  info.cc_major = 9;
  info.max_threads_per_block = 1024;
  info.max_shared_per_block = 48 * 1024;
  info.max_shared_per_block_optin = 227 * 1024;
  return info;
}

LaunchConfig launch(Dim3 grid, Dim3 block, std::size_t shared = 0) {
  LaunchConfig config;
  config.grid = grid;
  config.block = block;
  config.shared_bytes = shared;
  return config;
}

TEST(CudaLaunchCheck, ValidLaunchesPass) {
  KernelAttributes attributes;
  for (const LaunchConfig& config :
       {launch({1}, {1}), launch({2147483647}, {1024}), launch({1, 65535, 65535}, {32, 32, 1}),
        launch({4}, {1, 1, 64}), launch({4}, {256}, 48 * 1024)}) {
    LaunchCheck check = check_launch(h100(), config, attributes, "k");
    EXPECT_EQ(check.error, "");
    EXPECT_FALSE(check.needs_optin);
  }
}

TEST(CudaLaunchCheck, ZeroDimensions) {
  LaunchCheck check = check_launch(h100(), launch({4, 0, 1}, {32}), {}, "blur");
  EXPECT_EQ(check.error,
            "kernel 'blur': grid (4, 0, 1): dimension y is 0; every dimension must be at least 1");
  check = check_launch(h100(), launch({4}, {0}), {}, "blur");
  EXPECT_EQ(check.error,
            "kernel 'blur': block (0, 1, 1): dimension x is 0; every dimension must be at least 1");
}

TEST(CudaLaunchCheck, TooManyThreads) {
  LaunchCheck check = check_launch(h100(), launch({1}, {32, 64, 1}), {}, "k");
  EXPECT_EQ(
      check.error,
      "kernel 'k': block (32, 64, 1) has 2048 threads; NVIDIA H100 allows at most 1024 per block");
  check = check_launch(h100(), launch({1}, {1025}), {}, "k");
  EXPECT_EQ(check.error,
            "kernel 'k': block (1025, 1, 1): dimension x is 1025; the device allows at most 1024");
  check = check_launch(h100(), launch({1}, {1, 1, 65}), {}, "k");
  EXPECT_EQ(check.error,
            "kernel 'k': block (1, 1, 65): dimension z is 65; the device allows at most 64");
}

TEST(CudaLaunchCheck, KernelThreadLimitFromRegisters) {
  KernelAttributes attributes;
  attributes.registers = 128;
  attributes.max_threads_per_block = 512;
  EXPECT_EQ(check_launch(h100(), launch({1}, {512}), attributes, "big").error, "");
  EXPECT_EQ(check_launch(h100(), launch({1}, {1024}), attributes, "big").error,
            "kernel 'big': block (1024, 1, 1) has 1024 threads; this kernel allows at most 512 per "
            "block (it uses 128 registers per thread)");
}

TEST(CudaLaunchCheck, GridTooLarge) {
  LaunchCheck check = check_launch(h100(), launch({1, 65536, 1}, {32}), {}, "k");
  EXPECT_EQ(
      check.error,
      "kernel 'k': grid (1, 65536, 1): dimension y is 65536; the device allows at most 65535");
  Dim3 huge;
  huge.x = 4294967295u;
  check = check_launch(h100(), launch(huge, {32}), {}, "k");
  EXPECT_NE(check.error.find("dimension x is 4294967295; the device allows at most 2147483647"),
            std::string::npos)
      << check.error;
}

TEST(CudaLaunchCheck, DynamicSharedMemoryAbove48KiBNeedsOptIn) {
  KernelAttributes attributes;
  LaunchCheck check = check_launch(h100(), launch({1}, {256}, 48 * 1024 + 1), attributes, "k");
  EXPECT_EQ(check.error, "");
  EXPECT_TRUE(check.needs_optin);
  check = check_launch(h100(), launch({1}, {256}, 227 * 1024), attributes, "k");
  EXPECT_EQ(check.error, "");
  EXPECT_TRUE(check.needs_optin);
  // Static shared memory counts against both limits.
  attributes.shared_bytes = 1024;
  check = check_launch(h100(), launch({1}, {256}, 47 * 1024 + 1), attributes, "k");
  EXPECT_TRUE(check.needs_optin);
  check = check_launch(h100(), launch({1}, {256}, 47 * 1024), attributes, "k");
  EXPECT_FALSE(check.needs_optin);
}

TEST(CudaLaunchCheck, SharedMemoryBeyondTheOptInLimit) {
  KernelAttributes attributes;
  LaunchCheck check = check_launch(h100(), launch({1}, {256}, 227 * 1024 + 1), attributes, "tile");
  EXPECT_EQ(
      check.error,
      "kernel 'tile': 232449 bytes of dynamic shared memory exceed the 232448 bytes per block "
      "that NVIDIA H100 allows");
  attributes.shared_bytes = 16;
  check = check_launch(h100(), launch({1}, {256}, 227 * 1024 - 8), attributes, "tile");
  EXPECT_EQ(check.error,
            "kernel 'tile': 232440 bytes of dynamic shared memory plus 16 static exceed the 232448 "
            "bytes per block that NVIDIA H100 allows");
}

TEST(CudaErrors, FailureNamesCallAndResult) {
  EXPECT_EQ(format_failure("cuMemAlloc", CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY",
                           "out of memory"),
            "cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)");
  // Without the driver's words (it could not say), the number still appears.
  EXPECT_EQ(format_failure("cuInit", 999, nullptr, nullptr), "cuInit failed: CUresult 999");
  EXPECT_EQ(describe_result(700, "CUDA_ERROR_ILLEGAL_ADDRESS", ""), "CUDA_ERROR_ILLEGAL_ADDRESS");
}

TEST(CudaErrors, OutOfMemoryMessage) {
  EXPECT_EQ(format_out_of_memory(16000000000ull, 79100000000ull, 79600000000ull, "NVIDIA H100"),
            "out of device memory: cannot allocate 16.00 GB (16000000000 bytes); 79.1 GB free of "
            "79.6 GB on NVIDIA H100");
  EXPECT_EQ(
      format_out_of_memory(1500, 1000, 2000000, "GPU"),
      "out of device memory: cannot allocate 1.50 kB (1500 bytes); 1.0 kB free of 2.0 MB on GPU");
  EXPECT_EQ(format_bytes(999, 2), "999 bytes");
  EXPECT_EQ(format_bytes(2500000000000ull, 1), "2.5 TB");
}

TEST(CudaErrors, StickyFaults) {
  EXPECT_TRUE(is_sticky(CUDA_ERROR_ILLEGAL_ADDRESS));
  EXPECT_TRUE(is_sticky(CUDA_ERROR_LAUNCH_FAILED));
  EXPECT_TRUE(is_sticky(CUDA_ERROR_MISALIGNED_ADDRESS));
  EXPECT_FALSE(is_sticky(CUDA_ERROR_OUT_OF_MEMORY));
  EXPECT_FALSE(is_sticky(CUDA_ERROR_INVALID_VALUE));
  EXPECT_FALSE(is_sticky(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES));  // a bad launch, not a fault
  EXPECT_EQ(format_sticky("scatter", "CUDA_ERROR_ILLEGAL_ADDRESS")
                .rfind("the GPU context is broken by an earlier fault in kernel 'scatter' "
                       "(CUDA_ERROR_ILLEGAL_ADDRESS): call cuda.reset()",
                       0),
            0u);
  EXPECT_EQ(
      format_sticky("", "CUDA_ERROR_LAUNCH_FAILED")
          .rfind("the GPU context is broken by an earlier fault (CUDA_ERROR_LAUNCH_FAILED)", 0),
      0u);
}

TEST(CudaErrors, KernelNamesForMessages) {
  EXPECT_EQ(display_name("_Z7vec_addIfEvPT_i"), "vec_add<float>");
  EXPECT_EQ(display_name("_Z5saxpyfPKfPfi"), "saxpy");
  EXPECT_EQ(display_name("_Z6reduceIfLi256EEvPKT_PS0_i"), "reduce<float, 256>");
  EXPECT_EQ(display_name("_ZN4blur6kernelEPKhPhii"), "blur::kernel");
  EXPECT_EQ(display_name("vec_add"), "vec_add");  // extern "C"
}

TEST(CudaErrors, VersionStrings) {
  EXPECT_EQ(version_string(13000), "13.0");
  EXPECT_EQ(version_string(12040), "12.4");
  EXPECT_EQ(version_string(12080), "12.8");
}

}  // namespace
}  // namespace kiln::cuda
