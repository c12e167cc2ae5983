// The dlopen'd CUDA driver: loading, entry points, error text, RAII wrappers.
#include "runtime/cuda/driver.h"

#include <cxxabi.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <new>

#include "runtime/error.h"

namespace kiln::cuda {

std::string describe_result(int result, const char* name, const char* description) {
  std::string text = name ? name : "CUresult " + std::to_string(result);
  if (description && *description) text += std::string(" (") + description + ")";
  return text;
}

std::string format_failure(const char* call, int result, const char* name,
                           const char* description) {
  return std::string(call) + " failed: " + describe_result(result, name, description);
}

bool is_sticky(CUresult result) {
  switch (result) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
      return true;
    default:
      return false;
  }
}

std::string version_string(int cuda_version) {
  return std::to_string(cuda_version / 1000) + "." + std::to_string(cuda_version % 1000 / 10);
}

bool choose_target(int device_cc, std::vector<int> nvrtc_archs, int driver_version,
                   int nvrtc_version, Target* target, std::string* error) {
  auto arch_name = [](int cc) { return "sm_" + std::to_string(cc); };
  if (driver_version / 1000 < nvrtc_version / 1000) {
    *error = "the CUDA driver supports CUDA " + version_string(driver_version) +
             " but this NVRTC is " + version_string(nvrtc_version) +
             "; kernels it compiles need a driver for CUDA " +
             std::to_string(nvrtc_version / 1000) +
             ".0 or newer: update the NVIDIA driver, or point CUDA_HOME at a CUDA " +
             std::to_string(driver_version / 1000) + " toolkit";
    return false;
  }
  std::sort(nvrtc_archs.begin(), nvrtc_archs.end());
  if (nvrtc_archs.empty()) {
    *error = "this NVRTC reports no supported GPU architectures";
    return false;
  }
  if (device_cc < nvrtc_archs.front()) {
    *error = "the device is " + arch_name(device_cc) + " but the oldest architecture this NVRTC (" +
             version_string(nvrtc_version) + ") supports is " + arch_name(nvrtc_archs.front()) +
             ": use an older CUDA toolkit (CUDA_HOME)";
    return false;
  }
  int best = *std::prev(std::upper_bound(nvrtc_archs.begin(), nvrtc_archs.end(), device_cc));
  target->cubin = best / 10 == device_cc / 10;
  target->arch = (target->cubin ? "sm_" : "compute_") + std::to_string(best);
  return true;
}

namespace {

// "(64, 32, 1)".
std::string dims_string(std::int64_t x, std::int64_t y, std::int64_t z) {
  char text[80];
  std::snprintf(text, sizeof text, "(%lld, %lld, %lld)", static_cast<long long>(x),
                static_cast<long long>(y), static_cast<long long>(z));
  return text;
}

// An error about one dimension of a grid or block, or "" when every one is within limits.
std::string check_dims(const char* what, const Dim3& dims, const std::int64_t limits[3],
                       const std::string& kernel) {
  const std::uint32_t value[3] = {dims.x, dims.y, dims.z};
  const char* axis[3] = {"x", "y", "z"};
  for (int i = 0; i < 3; ++i) {
    if (value[i] != 0 && value[i] <= limits[i]) continue;  // (every launch: no strings made)
    std::string prefix = "kernel '" + kernel + "': " + what + " " +
                         dims_string(dims.x, dims.y, dims.z) + ": dimension " + axis[i] + " is " +
                         std::to_string(value[i]);
    if (value[i] == 0) return prefix + "; every dimension must be at least 1";
    return prefix + "; the device allows at most " + std::to_string(limits[i]);
  }
  return "";
}

}  // namespace

LaunchCheck check_launch(const DeviceInfo& device, const LaunchConfig& config,
                         const KernelAttributes& attributes, const std::string& kernel) {
  LaunchCheck check;
  const std::int64_t block_limits[3] = {device.max_block_dim[0], device.max_block_dim[1],
                                        device.max_block_dim[2]};
  check.error = check_dims("grid", config.grid, device.max_grid_dim, kernel);
  if (check.error.empty()) check.error = check_dims("block", config.block, block_limits, kernel);
  if (!check.error.empty()) return check;

  const std::uint64_t threads = config.block.count();
  auto block = [&] {
    return "kernel '" + kernel + "': block " +
           dims_string(config.block.x, config.block.y, config.block.z) + " has " +
           std::to_string(threads) + " threads";
  };
  if (threads > std::uint64_t(device.max_threads_per_block)) {
    check.error = block() + "; " + device.name + " allows at most " +
                  std::to_string(device.max_threads_per_block) + " per block";
    return check;
  }
  if (attributes.max_threads_per_block > 0 &&
      threads > std::uint64_t(attributes.max_threads_per_block)) {
    check.error = block() + "; this kernel allows at most " +
                  std::to_string(attributes.max_threads_per_block) + " per block" +
                  (attributes.registers > 0 ? " (it uses " + std::to_string(attributes.registers) +
                                                  " registers per thread)"
                                            : "");
    return check;
  }

  const std::uint64_t static_bytes = attributes.shared_bytes > 0 ? attributes.shared_bytes : 0;
  const std::uint64_t total = static_bytes + config.shared_bytes;
  if (total > device.max_shared_per_block_optin) {
    check.error = "kernel '" + kernel + "': " + std::to_string(config.shared_bytes) +
                  " bytes of dynamic shared memory" +
                  (static_bytes ? " plus " + std::to_string(static_bytes) + " static" : "") +
                  " exceed the " + std::to_string(device.max_shared_per_block_optin) +
                  " bytes per block that " + device.name + " allows";
    return check;
  }
  check.needs_optin = total > device.max_shared_per_block;
  return check;
}

std::string format_bytes(std::uint64_t bytes, int decimals) {
  static const char* units[] = {"bytes", "kB", "MB", "GB", "TB"};
  double value = double(bytes);
  int unit = 0;
  while (value >= 1000 && unit < 4) value /= 1000, ++unit;
  if (unit == 0) return std::to_string(bytes) + " bytes";
  char text[64];
  std::snprintf(text, sizeof text, "%.*f %s", decimals, value, units[unit]);
  return text;
}

std::string format_out_of_memory(std::uint64_t requested, std::uint64_t free, std::uint64_t total,
                                 const std::string& device_name) {
  return "out of device memory: cannot allocate " + format_bytes(requested, 2) + " (" +
         std::to_string(requested) + " bytes); " + format_bytes(free, 1) + " free of " +
         format_bytes(total, 1) + " on " + device_name;
}

std::string format_sticky(const std::string& kernel, const std::string& error_name) {
  return "the GPU context is broken by an earlier fault" +
         (kernel.empty() ? std::string() : " in kernel '" + kernel + "'") + " (" + error_name +
         "): call cuda.reset() to recreate it (device arrays, streams and events from before "
         "the reset are invalid afterwards), or restart kiln where the driver refuses";
}

std::string display_name(const std::string& lowered_name) {
  int status = 0;
  char* demangled = abi::__cxa_demangle(lowered_name.c_str(), nullptr, nullptr, &status);
  if (status != 0 || !demangled) return lowered_name;
  std::string name = demangled;
  std::free(demangled);
  // "void vec_add<float>(float*, int)" -> "vec_add<float>": drop the return type of a template
  // instance, then the parameter list (the first '(' outside template brackets).
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    if (c == '<') ++depth;
    if (c == '>') --depth;
    if (c == ' ' && depth == 0) start = i + 1;
    if (c == '(' && depth == 0) return name.substr(start, i - start);
  }
  return name;
}

namespace {

using GetProcAddressV2 = PFN_cuGetProcAddress_v12000;  // exported as cuGetProcAddress_v2
using GetProcAddressV1 = PFN_cuGetProcAddress_v11030;  // exported as cuGetProcAddress

// Resolves entry points through whichever cuGetProcAddress the driver exports.
struct Resolver {
  GetProcAddressV2 v2 = nullptr;
  GetProcAddressV1 v1 = nullptr;

  // The entry point `name` at ABI version `version`, or nullptr with the CUresult in *status.
  void* find(const char* name, int version, CUresult* status) const {
    void* fn = nullptr;
    // Legacy default stream semantics: kiln's stream 0 is the context's NULL stream.
    const cuuint64_t flags = CU_GET_PROC_ADDRESS_LEGACY_STREAM;
    CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SUCCESS;
    *status = v2 ? v2(name, &fn, version, flags, &found) : v1(name, &fn, version, flags);
    if (*status == CUDA_SUCCESS && found != CU_GET_PROC_ADDRESS_SUCCESS)
      *status = CUDA_ERROR_NOT_FOUND;
    return *status == CUDA_SUCCESS ? fn : nullptr;
  }
};

}  // namespace

std::shared_ptr<Driver> Driver::load(std::string* why, const std::string& library) {
  auto fail = [&](std::string message) {
    if (why) *why = std::move(message);
    return std::shared_ptr<Driver>();
  };
  std::shared_ptr<Driver> driver(new Driver());
  driver->library_ = library;
  driver->handle_ = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!driver->handle_) return fail("no CUDA driver (" + library + " not found)");

  Resolver resolve;
  resolve.v2 = reinterpret_cast<GetProcAddressV2>(dlsym(driver->handle_, "cuGetProcAddress_v2"));
  if (!resolve.v2)
    resolve.v1 = reinterpret_cast<GetProcAddressV1>(dlsym(driver->handle_, "cuGetProcAddress"));
  if (!resolve.v2 && !resolve.v1)
    return fail("the CUDA driver " + library +
                " is older than CUDA 11.3 (it has no cuGetProcAddress): update the NVIDIA driver");

  CUresult status = CUDA_SUCCESS;
  std::string missing;
#define KILN_CUDA_RESOLVE_REQUIRED(name, version)                                                  \
  driver->name = reinterpret_cast<PFN_##name##_v##version>(resolve.find(#name, version, &status)); \
  if (!driver->name && status == CUDA_ERROR_STUB_LIBRARY)                                          \
    return fail("no CUDA driver (" + library +                                                     \
                " is the CUDA toolkit's stub library: no NVIDIA driver is installed)");            \
  if (!driver->name) missing += std::string(missing.empty() ? "" : ", ") + #name;
  KILN_CUDA_REQUIRED(KILN_CUDA_RESOLVE_REQUIRED)
#undef KILN_CUDA_RESOLVE_REQUIRED
#define KILN_CUDA_RESOLVE_OPTIONAL(name, version) \
  driver->name = reinterpret_cast<PFN_##name##_v##version>(resolve.find(#name, version, &status));
  KILN_CUDA_OPTIONAL(KILN_CUDA_RESOLVE_OPTIONAL)
#undef KILN_CUDA_RESOLVE_OPTIONAL
  driver->cuEventElapsedTime = reinterpret_cast<PFN_cuEventElapsedTime_v2000>(
      resolve.find("cuEventElapsedTime", 12080, &status));
  if (!driver->cuEventElapsedTime)
    driver->cuEventElapsedTime = reinterpret_cast<PFN_cuEventElapsedTime_v2000>(
        resolve.find("cuEventElapsedTime", 2000, &status));
  if (!driver->cuEventElapsedTime)
    missing += std::string(missing.empty() ? "" : ", ") + "cuEventElapsedTime";
  if (!missing.empty())
    return fail("the CUDA driver " + library + " lacks " + missing + ": update the NVIDIA driver");

  // Each kiln module holds one kernel's specialisations, so CUDA's lazy loading (the default
  // since 12.2) saves nothing, and costs much: loading a kernel's code at its first launch waits
  // for the kernels running on every stream. On an H200 a kernel spinning on s1 until a kernel
  // on s2 raises its flag waited its full second when the raiser was compiled after it, and
  // not with eager loading. A user's own setting wins (read by cuInit, so set before it).
  setenv("CUDA_MODULE_LOADING", "EAGER", /*overwrite=*/0);
  CUresult init = driver->cuInit(0);
  if (init == CUDA_ERROR_NO_DEVICE) return fail("no CUDA device");
  if (init == CUDA_ERROR_STUB_LIBRARY)
    return fail("no CUDA driver (" + library + " is the CUDA toolkit's stub library)");
  if (init != CUDA_SUCCESS)
    return fail("the CUDA driver did not initialise: cuInit failed: " + driver->describe(init));
  driver->check(driver->cuDriverGetVersion(&driver->version_), "cuDriverGetVersion");
  return driver;
}

Driver::~Driver() {
  // libcuda is never unloaded: its own atexit handlers and other loaded libraries (NVRTC's
  // builtins, profilers) may still refer to it, and dlclose of the driver is known to crash.
}

std::string Driver::error_name(CUresult result) const {
  const char* name = nullptr;
  if (cuGetErrorName && cuGetErrorName(result, &name) == CUDA_SUCCESS && name) return name;
  return "CUresult " + std::to_string(static_cast<int>(result));
}

std::string Driver::describe(CUresult result) const {
  const char* name = nullptr;
  const char* description = nullptr;
  if (cuGetErrorName && cuGetErrorName(result, &name) != CUDA_SUCCESS) name = nullptr;
  if (cuGetErrorString && cuGetErrorString(result, &description) != CUDA_SUCCESS)
    description = nullptr;
  return describe_result(result, name, description);
}

void Driver::check(CUresult result, const char* call) const {
  if (result != CUDA_SUCCESS) throw Error(std::string(call) + " failed: " + describe(result));
}

DeviceInfo query_device(const Driver& driver, int ordinal) {
  CUdevice device = 0;
  driver.check(driver.cuDeviceGet(&device, ordinal), "cuDeviceGet");
  auto attribute = [&](CUdevice_attribute which) {
    int value = 0;
    driver.check(driver.cuDeviceGetAttribute(&value, which, device), "cuDeviceGetAttribute");
    return value;
  };
  DeviceInfo info;
  info.id = ordinal;
  char name[256] = {};
  driver.check(driver.cuDeviceGetName(name, sizeof name - 1, device), "cuDeviceGetName");
  info.name = name;
  info.cc_major = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  info.cc_minor = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  driver.check(driver.cuDeviceTotalMem(&info.total_memory, device), "cuDeviceTotalMem");
  info.multiprocessors = attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  info.max_threads_per_block = attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  info.max_block_dim[0] = attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X);
  info.max_block_dim[1] = attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y);
  info.max_block_dim[2] = attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z);
  info.max_grid_dim[0] = attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X);
  info.max_grid_dim[1] = attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y);
  info.max_grid_dim[2] = attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z);
  info.max_shared_per_block = attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
  info.max_shared_per_block_optin =
      attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  if (info.max_shared_per_block_optin < info.max_shared_per_block)
    info.max_shared_per_block_optin = info.max_shared_per_block;
  info.warp_size = attribute(CU_DEVICE_ATTRIBUTE_WARP_SIZE);
  return info;
}

PrimaryContext::PrimaryContext(std::shared_ptr<const Driver> driver, CUdevice device)
    : driver_(std::move(driver)), device_(device) {
  driver_->check(driver_->cuDevicePrimaryCtxRetain(&ctx_, device_), "cuDevicePrimaryCtxRetain");
}

PrimaryContext::~PrimaryContext() {
  if (ctx_) driver_->cuDevicePrimaryCtxRelease(device_);
}

void PrimaryContext::make_current() const {
  driver_->check(driver_->cuCtxSetCurrent(ctx_), "cuCtxSetCurrent");
}

PinnedHost::PinnedHost(std::shared_ptr<const Driver> driver, std::size_t bytes)
    : driver_(std::move(driver)), bytes_(bytes) {
  constexpr std::size_t page = 4096;
  rounded_ = bytes == 0 ? page : (bytes + page - 1) / page * page;
  data_ = std::aligned_alloc(page, rounded_);
  if (!data_)
    throw Error("out of host memory: cannot allocate " + std::to_string(bytes) + " pinned bytes");
  CUresult r = driver_->cuMemHostRegister(data_, rounded_, CU_MEMHOSTREGISTER_PORTABLE);
  if (r != CUDA_SUCCESS) {
    std::free(data_);
    data_ = nullptr;
    driver_->check(r, "cuMemHostRegister");
  }
  registered_ = true;
}

void PinnedHost::register_again() noexcept {
  registered_ =
      driver_->cuMemHostRegister(data_, rounded_, CU_MEMHOSTREGISTER_PORTABLE) == CUDA_SUCCESS;
}

PinnedHost::~PinnedHost() {
  if (registered_) driver_->cuMemHostUnregister(data_);
  std::free(data_);
}

}  // namespace kiln::cuda
