// The CUDA driver (libcuda.so.1), loaded with dlopen so that one kiln binary runs with or without
// a GPU. Entry points are resolved through cuGetProcAddress at the exact ABI version whose
// <cudaTypedefs.h> typedef we call them through (as cuda-python and PyTorch do), so a newer driver
// never hands us a function with a changed signature. The RAII wrappers below own one driver
// object each and release it through the same Driver.
#pragma once
#include <cuda.h>
#include <cudaTypedefs.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "runtime/backend.h"

namespace kiln::cuda {

// Entry points kiln cannot work without: X(name, ABI version of the typedef used).
#define KILN_CUDA_REQUIRED(X)               \
  X(cuInit, 2000)                           \
  X(cuDriverGetVersion, 2020)               \
  X(cuGetErrorName, 6000)                   \
  X(cuGetErrorString, 6000)                 \
  X(cuDeviceGetCount, 2000)                 \
  X(cuDeviceGet, 2000)                      \
  X(cuDeviceGetName, 2000)                  \
  X(cuDeviceGetAttribute, 2000)             \
  X(cuDeviceTotalMem, 3020)                 \
  X(cuDevicePrimaryCtxRetain, 7000)         \
  X(cuDevicePrimaryCtxRelease, 11000)       \
  X(cuDevicePrimaryCtxReset, 11000)         \
  X(cuCtxSetCurrent, 4000)                  \
  X(cuCtxSynchronize, 2000)                 \
  X(cuMemGetInfo, 3020)                     \
  X(cuMemAlloc, 3020)                       \
  X(cuMemFree, 3020)                        \
  X(cuMemHostRegister, 6050)                \
  X(cuMemHostUnregister, 4000)              \
  X(cuMemcpyHtoDAsync, 3020)                \
  X(cuMemcpyDtoHAsync, 3020)                \
  X(cuMemcpyDtoDAsync, 3020)                \
  X(cuMemsetD8Async, 3020)                  \
  X(cuStreamCreate, 2000)                   \
  X(cuStreamDestroy, 4000)                  \
  X(cuStreamSynchronize, 2000)              \
  X(cuStreamWaitEvent, 3020)                \
  X(cuEventCreate, 2000)                    \
  X(cuEventRecord, 2000)                    \
  X(cuEventSynchronize, 2000)               \
  X(cuEventQuery, 2000)                     \
  X(cuEventDestroy, 4000)                   \
  X(cuModuleLoadDataEx, 2010)               \
  X(cuModuleUnload, 2000)                   \
  X(cuModuleGetFunction, 2000)              \
  X(cuModuleGetGlobal, 3020)                \
  X(cuLaunchKernel, 4000)                   \
  X(cuLaunchCooperativeKernel, 9000)        \
  X(cuFuncGetAttribute, 2020)               \
  X(cuFuncSetAttribute, 9000)               \
  X(cuOccupancyMaxPotentialBlockSize, 6050) \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor, 6050)

// Entry points newer drivers have and kiln does without (nullptr when absent).
#define KILN_CUDA_OPTIONAL(X)         \
  X(cuMemAllocAsync, 11020)           \
  X(cuMemFreeAsync, 11020)            \
  X(cuDeviceGetDefaultMemPool, 11020) \
  X(cuMemPoolSetAttribute, 11020)     \
  X(cuMemPoolGetAttribute, 11020)     \
  X(cuMemPoolTrimTo, 11020)

// "CUDA_ERROR_OUT_OF_MEMORY (out of memory)"; name and description may be null (no driver).
std::string describe_result(int result, const char* name, const char* description);
// "cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)".
std::string format_failure(const char* call, int result, const char* name, const char* description);
// Errors after which the context is unusable until it is reset (a kernel fault).
bool is_sticky(CUresult result);
// "13.0" from cuDriverGetVersion's 13000.
std::string version_string(int cuda_version);

// ---- Policies that need no device: pure functions, unit-tested without a GPU. ----

// What NVRTC is asked to emit for a device.
struct Target {
  std::string arch;    // "sm_90": a cubin; "compute_90": PTX the driver JIT-compiles
  bool cubin = false;  // arch is a real architecture
};

// Picks the target for a device of compute capability device_cc (90 for 9.0) given the
// architectures NVRTC supports, cuDriverGetVersion's value and NVRTC's version (13000 for 13.0).
//  - The driver must support NVRTC's major CUDA version: nothing a newer major emits loads.
//  - The newest NVRTC architecture not above the device: a cubin when it has the device's
//    major (SASS runs on later minor revisions of its major), else PTX of that virtual
//    architecture, which the driver JIT-compiles for the newer device.
//  - A driver older than NVRTC (same major) gets a cubin, never PTX: the driver's JIT rejects
//    PTX from a newer toolkit (CUDA_ERROR_UNSUPPORTED_PTX_VERSION) while cubins load under CUDA's
//    minor version compatibility; CuPy makes the same choice.
// Returns false with *error filled when no target can work.
bool choose_target(int device_cc, std::vector<int> nvrtc_archs, int driver_version,
                   int nvrtc_version, Target* target, std::string* error);

// The outcome of checking a launch against a device's limits.
struct LaunchCheck {
  std::string error;  // empty: the launch is valid
  bool needs_optin =
      false;  // dynamic shared memory needs CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
};
// Checks grid, block and shared memory of a launch of `kernel` before the driver sees it.
LaunchCheck check_launch(const DeviceInfo& device, const LaunchConfig& config,
                         const KernelAttributes& kernel_attributes, const std::string& kernel);

// "16.00 GB" (decimal units, as nvidia-smi and device specifications count).
std::string format_bytes(std::uint64_t bytes, int decimals);
// "out of device memory: cannot allocate 16.00 GB (16000000000 bytes); 79.1 GB free of 79.6 GB
// on NVIDIA H100".
std::string format_out_of_memory(std::uint64_t requested, std::uint64_t free, std::uint64_t total,
                                 const std::string& device_name);
// "the GPU context is broken by an earlier fault in kernel 'k' (CUDA_ERROR_ILLEGAL_ADDRESS):
// call cuda.reset() ...".
std::string format_sticky(const std::string& kernel, const std::string& error_name);
// "vec_add<float>" from "_Z7vec_addIfEvPT_i"; extern "C" names come back unchanged.
std::string display_name(const std::string& lowered_name);

// The loaded driver: the function pointers above, and what failures mean.
class Driver {
 public:
  // dlopens library (normally "libcuda.so.1"), resolves the entry points and calls cuInit.
  // nullptr with why filled when there is no usable driver ("no CUDA driver (libcuda.so.1 not
  // found)", "no CUDA device", the stub library, a driver too old for an entry point).
  static std::shared_ptr<Driver> load(std::string* why,
                                      const std::string& library = "libcuda.so.1");
  ~Driver();
  Driver(const Driver&) = delete;
  Driver& operator=(const Driver&) = delete;

  int version() const { return version_; }  // cuDriverGetVersion: 12040 for CUDA 12.4
  const std::string& library() const { return library_; }

  // "CUDA_ERROR_OUT_OF_MEMORY (out of memory)" for result, in the driver's own words.
  std::string describe(CUresult result) const;
  std::string error_name(CUresult result) const;  // "CUDA_ERROR_OUT_OF_MEMORY"
  // Throws kiln::Error "<call> failed: <name> (<description>)" unless result is CUDA_SUCCESS.
  void check(CUresult result, const char* call) const;

#define KILN_CUDA_DECLARE(name, version) PFN_##name##_v##version name = nullptr;
  KILN_CUDA_REQUIRED(KILN_CUDA_DECLARE)
  KILN_CUDA_OPTIONAL(KILN_CUDA_DECLARE)
#undef KILN_CUDA_DECLARE
  // Resolved at 12.8's version when the driver has it (same signature as 2000's).
  PFN_cuEventElapsedTime_v2000 cuEventElapsedTime = nullptr;

 private:
  Driver() = default;
  void* handle_ = nullptr;
  std::string library_;
  int version_ = 0;
};

// Everything kiln asks of a device: cuDeviceGetName and the attributes behind DeviceInfo.
DeviceInfo query_device(const Driver& driver, int ordinal);

// A retained primary context of one device (cuDevicePrimaryCtxRetain / Release).
class PrimaryContext {
 public:
  PrimaryContext(std::shared_ptr<const Driver> driver, CUdevice device);
  ~PrimaryContext();
  PrimaryContext(const PrimaryContext&) = delete;
  PrimaryContext& operator=(const PrimaryContext&) = delete;
  CUcontext get() const { return ctx_; }
  CUdevice device() const { return device_; }
  // Makes this context current on the calling thread.
  void make_current() const;

 private:
  std::shared_ptr<const Driver> driver_;
  CUdevice device_;
  CUcontext ctx_ = nullptr;
};

// Owns one driver handle; Destroy is called with the driver and the handle unless released.
template <typename Handle, CUresult (*Destroy)(const Driver&, Handle)>
class Owned {
 public:
  Owned() = default;
  Owned(std::shared_ptr<const Driver> driver, Handle handle)
      : driver_(std::move(driver)), handle_(handle) {}
  ~Owned() { reset(); }
  Owned(Owned&& other) noexcept
      : driver_(std::move(other.driver_)), handle_(std::exchange(other.handle_, Handle{})) {}
  Owned& operator=(Owned&& other) noexcept {
    if (this != &other) {
      reset();
      driver_ = std::move(other.driver_);
      handle_ = std::exchange(other.handle_, Handle{});
    }
    return *this;
  }
  Handle get() const { return handle_; }
  explicit operator bool() const { return handle_ != Handle{}; }
  // Forgets the handle without destroying it (its context is gone already).
  Handle release() { return std::exchange(handle_, Handle{}); }
  // Destroys the handle now; errors are ignored (a destructor cannot report them).
  void reset() {
    if (handle_ != Handle{} && driver_) Destroy(*driver_, handle_);
    handle_ = Handle{};
  }

 private:
  std::shared_ptr<const Driver> driver_;
  Handle handle_{};
};

inline CUresult destroy_module(const Driver& d, CUmodule m) {
  return d.cuModuleUnload(m);
}
inline CUresult destroy_stream(const Driver& d, CUstream s) {
  return d.cuStreamDestroy(s);
}
inline CUresult destroy_event(const Driver& d, CUevent e) {
  return d.cuEventDestroy(e);
}

using ModuleHandle = Owned<CUmodule, destroy_module>;
using StreamHandle = Owned<CUstream, destroy_stream>;
using EventHandle = Owned<CUevent, destroy_event>;

// Page-locked host memory: ordinary aligned memory registered with the driver
// (cuMemHostRegister), so that it stays valid, if no longer pinned, after a context reset.
class PinnedHost {
 public:
  PinnedHost(std::shared_ptr<const Driver> driver, std::size_t bytes);
  ~PinnedHost();
  PinnedHost(const PinnedHost&) = delete;
  PinnedHost& operator=(const PinnedHost&) = delete;
  void* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }
  // The context it was registered with is gone: registers it with the current one instead
  // (the memory stays valid, pageable, if that fails).
  void register_again() noexcept;

 private:
  std::shared_ptr<const Driver> driver_;
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
  std::size_t rounded_ = 0;  // bytes rounded up to whole pages, as registered
  bool registered_ = false;
};

}  // namespace kiln::cuda
