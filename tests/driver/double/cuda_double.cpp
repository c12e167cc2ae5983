// A libcuda stand-in for tests (label `driver`): kiln loads it through cuda::Driver::load, as it
// loads libcuda.so.1, and runs its cuda backend's host code against it. It checks each call
// against the CUDA Driver API's rules (a current context; live allocations, streams, events and
// modules; launch limits; each parameter of cuLaunchKernel against the cubin's parameter table),
// records calls and broken rules, and fails calls on request (tests/driver/double/control.h).
// It runs no kernel. "Device" memory is host memory, so copies really copy.
//
// A fake driver is process-wide state by nature (the real one is too): one State, behind a mutex.
#include <cuda.h>
#include <cudaTypedefs.h>

#include <cstdint>
#include <cstdio>
#include <iterator>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "runtime/cuda/cubin.h"
#include "tests/driver/double/control.h"

namespace {

struct Module {
  kiln::cuda::Cubin cubin;  // empty for PTX (no parameter table to check against)
  std::map<std::string, std::vector<unsigned char>> globals;
};
struct Function {
  CUmodule module;
  std::string name;
  int max_dynamic_shared = 48 * 1024;
};
struct Injection {
  CUresult result;
  int after;
};

struct State {
  std::mutex mutex;
  std::ostringstream log, violations;
  std::map<std::string, std::vector<Injection>> fail;
  CUresult sticky = CUDA_SUCCESS;
  std::size_t total = std::size_t(1) << 30, used = 0;
  int pools = 0;
  int retains = 0;
  CUcontext current = nullptr;
  std::map<CUdeviceptr, std::size_t> allocations;
  std::set<CUstream> streams;
  std::map<CUevent, double> events;  // recorded time in ms (-1: never recorded)
  std::map<CUmodule, Module> modules;
  std::map<CUfunction, Function> functions;
  std::map<void*, std::size_t> registered;
  std::uintptr_t next_handle = 0x1000;
  double clock_ms = 0;
  std::vector<unsigned char> last_params;
  std::string log_text, violation_text;
};

State& state() {
  static State s;
  return s;
}

const CUcontext kContext = reinterpret_cast<CUcontext>(std::uintptr_t(0xc0));
const CUmemoryPool kPool = reinterpret_cast<CUmemoryPool>(std::uintptr_t(0x9001));

// Whether an injected failure or a broken context answers this call, and with what.
CUresult injected(State& s, const char* call) {
  if (s.sticky != CUDA_SUCCESS) return s.sticky;
  auto it = s.fail.find(call);
  if (it == s.fail.end()) return CUDA_SUCCESS;
  for (auto f = it->second.begin(); f != it->second.end(); ++f) {
    if (f->after-- > 0) continue;
    CUresult r = f->result;
    it->second.erase(f);
    if (r == CUDA_ERROR_ILLEGAL_ADDRESS || r == CUDA_ERROR_LAUNCH_FAILED ||
        r == CUDA_ERROR_ILLEGAL_INSTRUCTION || r == CUDA_ERROR_MISALIGNED_ADDRESS)
      s.sticky = r;
    return r;
  }
  return CUDA_SUCCESS;
}

// Records a broken rule and returns result (what the real driver would say, where it says so).
CUresult violation(State& s, const std::string& what, CUresult result = CUDA_ERROR_INVALID_VALUE) {
  s.violations << what << "\n";
  return result;
}

// The common prologue: the lock, a log line, injected failures, a current context.
#define ENTER(call, needs_context, ...)                                                 \
  State& s = state();                                                                  \
  std::lock_guard<std::mutex> lock(s.mutex);                                           \
  s.log << call << " " << __VA_ARGS__ << "\n";                                         \
  if (CUresult failure = injected(s, call); failure != CUDA_SUCCESS) return failure;   \
  if ((needs_context) && s.current != kContext)                                        \
    return violation(s, std::string(call) + ": no current context", CUDA_ERROR_INVALID_CONTEXT)

std::uintptr_t new_handle(State& s) { return s.next_handle += 0x10; }

// Whether [ptr, ptr + bytes) lies inside one live allocation or one loaded module's global.
bool inside(const State& s, CUdeviceptr ptr, std::size_t bytes) {
  auto it = s.allocations.upper_bound(ptr);
  if (it != s.allocations.begin() && ptr >= std::prev(it)->first &&
      ptr + bytes <= std::prev(it)->first + std::prev(it)->second)
    return true;
  for (const auto& [handle, m] : s.modules)
    for (const auto& [name, g] : m.globals) {
      const auto start = reinterpret_cast<CUdeviceptr>(g.data());
      if (ptr >= start && ptr + bytes <= start + g.size()) return true;
    }
  return false;
}

// ---- the entry points kiln resolves ----

CUresult d_cuInit(unsigned int) { ENTER("cuInit", false, ""); return CUDA_SUCCESS; }
CUresult d_cuDriverGetVersion(int* v) { ENTER("cuDriverGetVersion", false, ""); *v = 13000; return CUDA_SUCCESS; }
CUresult d_cuGetErrorName(CUresult r, const char** name) {
  static const std::map<int, const char*> names = {
      {CUDA_SUCCESS, "CUDA_SUCCESS"}, {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE"},
      {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY"},
      {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT"},
      {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE"},
      {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND"},
      {CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS"},
      {CUDA_ERROR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED"},
      {CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"},
      {CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE"}};
  auto it = names.find(r);
  *name = it == names.end() ? "CUDA_ERROR_UNKNOWN" : it->second;
  return CUDA_SUCCESS;
}
CUresult d_cuGetErrorString(CUresult r, const char** text) {
  *text = r == CUDA_ERROR_OUT_OF_MEMORY     ? "out of memory"
          : r == CUDA_ERROR_ILLEGAL_ADDRESS ? "an illegal memory access was encountered"
                                            : "an error the driver double was told to report";
  return CUDA_SUCCESS;
}
CUresult d_cuDeviceGetCount(int* n) { ENTER("cuDeviceGetCount", false, ""); *n = 1; return CUDA_SUCCESS; }
CUresult d_cuDeviceGet(CUdevice* d, int ordinal) {
  ENTER("cuDeviceGet", false, ordinal);
  if (ordinal != 0) return violation(s, "cuDeviceGet: no device " + std::to_string(ordinal), CUDA_ERROR_INVALID_DEVICE);
  *d = 0;
  return CUDA_SUCCESS;
}
CUresult d_cuDeviceGetName(char* name, int len, CUdevice) {
  ENTER("cuDeviceGetName", false, "");
  std::snprintf(name, std::size_t(len), "%s", "kiln driver double");
  return CUDA_SUCCESS;
}
CUresult d_cuDeviceGetAttribute(int* v, CUdevice_attribute a, CUdevice) {
  ENTER("cuDeviceGetAttribute", false, int(a));
  switch (a) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = 8; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = 0; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = 108; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X: case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: *v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: *v = 64; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: *v = 2147483647; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: *v = 65535; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: *v = 48 * 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *v = 163 * 1024; break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: *v = 32; break;
    case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED: *v = s.pools; break;
    default: *v = 0;
  }
  return CUDA_SUCCESS;
}
CUresult d_cuDeviceTotalMem(std::size_t* bytes, CUdevice) { ENTER("cuDeviceTotalMem", false, ""); *bytes = s.total; return CUDA_SUCCESS; }
CUresult d_cuDevicePrimaryCtxRetain(CUcontext* ctx, CUdevice) {
  ENTER("cuDevicePrimaryCtxRetain", false, "");
  ++s.retains;
  *ctx = kContext;
  return CUDA_SUCCESS;
}
CUresult d_cuDevicePrimaryCtxRelease(CUdevice) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.log << "cuDevicePrimaryCtxRelease\n";
  if (s.retains <= 0) return violation(s, "cuDevicePrimaryCtxRelease without a retain", CUDA_ERROR_INVALID_CONTEXT);
  if (--s.retains == 0) s.current = nullptr;
  return CUDA_SUCCESS;
}
CUresult d_cuDevicePrimaryCtxReset(CUdevice) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.log << "cuDevicePrimaryCtxReset\n";
  // Everything in the context goes; a broken context is usable again.
  for (auto& [ptr, bytes] : s.allocations) std::free(reinterpret_cast<void*>(ptr));
  s.allocations.clear(), s.streams.clear(), s.events.clear(), s.modules.clear(), s.functions.clear();
  s.used = 0, s.sticky = CUDA_SUCCESS, s.current = nullptr;
  return CUDA_SUCCESS;
}
CUresult d_cuCtxSetCurrent(CUcontext ctx) {
  ENTER("cuCtxSetCurrent", false, "");
  if (ctx && (ctx != kContext || s.retains == 0))
    return violation(s, "cuCtxSetCurrent: not a retained context", CUDA_ERROR_INVALID_CONTEXT);
  s.current = ctx;
  return CUDA_SUCCESS;
}
CUresult d_cuCtxSynchronize() { ENTER("cuCtxSynchronize", true, ""); return CUDA_SUCCESS; }
CUresult d_cuMemGetInfo(std::size_t* free, std::size_t* total) {
  ENTER("cuMemGetInfo", true, "");
  *free = s.total - s.used, *total = s.total;
  return CUDA_SUCCESS;
}

CUresult allocate(State& s, CUdeviceptr* ptr, std::size_t bytes) {
  if (bytes == 0) return violation(s, "cuMemAlloc of 0 bytes");
  if (bytes > s.total - s.used) return CUDA_ERROR_OUT_OF_MEMORY;
  void* p = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
  if (!p) return CUDA_ERROR_OUT_OF_MEMORY;
  *ptr = reinterpret_cast<CUdeviceptr>(p);
  s.allocations[*ptr] = bytes;
  s.used += bytes;
  return CUDA_SUCCESS;
}
CUresult release(State& s, CUdeviceptr ptr, const char* call) {
  auto it = s.allocations.find(ptr);
  if (it == s.allocations.end())
    return violation(s, std::string(call) + ": " + std::to_string(ptr) + " is not a live allocation");
  s.used -= it->second;
  std::free(reinterpret_cast<void*>(ptr));
  s.allocations.erase(it);
  return CUDA_SUCCESS;
}
CUresult d_cuMemAlloc(CUdeviceptr* ptr, std::size_t bytes) {
  ENTER("cuMemAlloc", true, bytes);
  return allocate(s, ptr, bytes);
}
CUresult d_cuMemFree(CUdeviceptr ptr) {
  ENTER("cuMemFree", true, "");
  return release(s, ptr, "cuMemFree");
}
CUresult check_stream(State& s, CUstream stream, const char* call) {
  if (stream && !s.streams.count(stream))
    return violation(s, std::string(call) + ": not a live stream", CUDA_ERROR_INVALID_HANDLE);
  return CUDA_SUCCESS;
}
CUresult d_cuMemAllocAsync(CUdeviceptr* ptr, std::size_t bytes, CUstream stream) {
  ENTER("cuMemAllocAsync", true, bytes);
  if (!s.pools) return violation(s, "cuMemAllocAsync: the device has no memory pools", CUDA_ERROR_NOT_SUPPORTED);
  if (CUresult r = check_stream(s, stream, "cuMemAllocAsync")) return r;
  return allocate(s, ptr, bytes);
}
CUresult d_cuMemFreeAsync(CUdeviceptr ptr, CUstream stream) {
  ENTER("cuMemFreeAsync", true, "");
  if (CUresult r = check_stream(s, stream, "cuMemFreeAsync")) return r;
  return release(s, ptr, "cuMemFreeAsync");
}
CUresult d_cuDeviceGetDefaultMemPool(CUmemoryPool* pool, CUdevice) { ENTER("cuDeviceGetDefaultMemPool", false, ""); *pool = kPool; return CUDA_SUCCESS; }
CUresult d_cuMemPoolSetAttribute(CUmemoryPool, CUmemPool_attribute, void*) { ENTER("cuMemPoolSetAttribute", false, ""); return CUDA_SUCCESS; }
CUresult d_cuMemPoolTrimTo(CUmemoryPool, std::size_t) { ENTER("cuMemPoolTrimTo", true, ""); return CUDA_SUCCESS; }
// (The double's pool keeps nothing for reuse: it holds what arrays use.)
CUresult d_cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attribute, void* value) {
  ENTER("cuMemPoolGetAttribute", true, "");
  if (pool != kPool)
    return violation(s, "cuMemPoolGetAttribute: not the device's pool", CUDA_ERROR_INVALID_VALUE);
  if (attribute != CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT &&
      attribute != CU_MEMPOOL_ATTR_USED_MEM_CURRENT)
    return violation(s, "cuMemPoolGetAttribute: an attribute kiln does not read",
                     CUDA_ERROR_INVALID_VALUE);
  *static_cast<cuuint64_t*>(value) = s.used;
  return CUDA_SUCCESS;
}

CUresult d_cuMemHostRegister(void* p, std::size_t bytes, unsigned int) {
  ENTER("cuMemHostRegister", true, bytes);
  if (s.registered.count(p)) return violation(s, "cuMemHostRegister: registered twice", CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
  s.registered[p] = bytes;
  return CUDA_SUCCESS;
}
CUresult d_cuMemHostUnregister(void* p) {
  ENTER("cuMemHostUnregister", true, "");
  if (!s.registered.erase(p)) return violation(s, "cuMemHostUnregister: not registered", CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
  return CUDA_SUCCESS;
}

CUresult d_cuMemcpyHtoDAsync(CUdeviceptr dst, const void* src, std::size_t bytes, CUstream stream) {
  ENTER("cuMemcpyHtoDAsync", true, bytes);
  if (CUresult r = check_stream(s, stream, "cuMemcpyHtoDAsync")) return r;
  if (!inside(s, dst, bytes)) return violation(s, "cuMemcpyHtoDAsync: the destination is not inside one live allocation");
  std::memcpy(reinterpret_cast<void*>(dst), src, bytes);
  return CUDA_SUCCESS;
}
CUresult d_cuMemcpyDtoHAsync(void* dst, CUdeviceptr src, std::size_t bytes, CUstream stream) {
  ENTER("cuMemcpyDtoHAsync", true, bytes);
  if (CUresult r = check_stream(s, stream, "cuMemcpyDtoHAsync")) return r;
  if (!inside(s, src, bytes)) return violation(s, "cuMemcpyDtoHAsync: the source is not inside one live allocation");
  std::memcpy(dst, reinterpret_cast<void*>(src), bytes);
  return CUDA_SUCCESS;
}
CUresult d_cuMemcpyDtoDAsync(CUdeviceptr dst, CUdeviceptr src, std::size_t bytes, CUstream stream) {
  ENTER("cuMemcpyDtoDAsync", true, bytes);
  if (CUresult r = check_stream(s, stream, "cuMemcpyDtoDAsync")) return r;
  if (!inside(s, dst, bytes) || !inside(s, src, bytes))
    return violation(s, "cuMemcpyDtoDAsync: a range is not inside one live allocation");
  std::memmove(reinterpret_cast<void*>(dst), reinterpret_cast<void*>(src), bytes);
  return CUDA_SUCCESS;
}
CUresult d_cuMemsetD8Async(CUdeviceptr dst, unsigned char byte, std::size_t n, CUstream stream) {
  ENTER("cuMemsetD8Async", true, n);
  if (CUresult r = check_stream(s, stream, "cuMemsetD8Async")) return r;
  if (!inside(s, dst, n)) return violation(s, "cuMemsetD8Async: the range is not inside one live allocation");
  std::memset(reinterpret_cast<void*>(dst), byte, n);
  return CUDA_SUCCESS;
}

CUresult d_cuStreamCreate(CUstream* stream, unsigned int) {
  ENTER("cuStreamCreate", true, "");
  *stream = reinterpret_cast<CUstream>(new_handle(s));
  s.streams.insert(*stream);
  return CUDA_SUCCESS;
}
CUresult d_cuStreamDestroy(CUstream stream) {
  ENTER("cuStreamDestroy", true, "");
  if (!s.streams.erase(stream)) return violation(s, "cuStreamDestroy: not a live stream", CUDA_ERROR_INVALID_HANDLE);
  return CUDA_SUCCESS;
}
CUresult d_cuStreamSynchronize(CUstream stream) {
  ENTER("cuStreamSynchronize", true, "");
  return check_stream(s, stream, "cuStreamSynchronize");
}
CUresult d_cuEventCreate(CUevent* event, unsigned int) {
  ENTER("cuEventCreate", true, "");
  *event = reinterpret_cast<CUevent>(new_handle(s));
  s.events[*event] = -1;
  return CUDA_SUCCESS;
}
CUresult d_cuEventRecord(CUevent event, CUstream stream) {
  ENTER("cuEventRecord", true, "");
  if (CUresult r = check_stream(s, stream, "cuEventRecord")) return r;
  auto it = s.events.find(event);
  if (it == s.events.end()) return violation(s, "cuEventRecord: not a live event", CUDA_ERROR_INVALID_HANDLE);
  it->second = s.clock_ms += 0.25;  // each record a quarter millisecond after the last
  return CUDA_SUCCESS;
}
CUresult d_cuEventQuery(CUevent event) {
  ENTER("cuEventQuery", true, "");
  if (!s.events.count(event))
    return violation(s, "cuEventQuery: not a live event", CUDA_ERROR_INVALID_HANDLE);
  return CUDA_SUCCESS;  // (the double runs nothing: all work is done)
}
CUresult d_cuStreamWaitEvent(CUstream stream, CUevent event, unsigned int) {
  ENTER("cuStreamWaitEvent", true, "");
  if (CUresult r = check_stream(s, stream, "cuStreamWaitEvent")) return r;
  if (!s.events.count(event))
    return violation(s, "cuStreamWaitEvent: not a live event", CUDA_ERROR_INVALID_HANDLE);
  return CUDA_SUCCESS;
}
CUresult d_cuEventSynchronize(CUevent event) {
  ENTER("cuEventSynchronize", true, "");
  if (!s.events.count(event)) return violation(s, "cuEventSynchronize: not a live event", CUDA_ERROR_INVALID_HANDLE);
  return CUDA_SUCCESS;
}
CUresult d_cuEventDestroy(CUevent event) {
  ENTER("cuEventDestroy", true, "");
  if (!s.events.erase(event)) return violation(s, "cuEventDestroy: not a live event", CUDA_ERROR_INVALID_HANDLE);
  return CUDA_SUCCESS;
}
CUresult d_cuEventElapsedTime(float* ms, CUevent start, CUevent end) {
  ENTER("cuEventElapsedTime", true, "");
  auto a = s.events.find(start), b = s.events.find(end);
  if (a == s.events.end() || b == s.events.end())
    return violation(s, "cuEventElapsedTime: not a live event", CUDA_ERROR_INVALID_HANDLE);
  if (a->second < 0 || b->second < 0) return CUDA_ERROR_INVALID_HANDLE;  // never recorded
  *ms = float(b->second - a->second);
  return CUDA_SUCCESS;
}

CUresult d_cuModuleLoadDataEx(CUmodule* module, const void* image, unsigned int, CUjit_option*, void**) {
  ENTER("cuModuleLoadDataEx", true, "");
  Module m;
  const auto* bytes = static_cast<const unsigned char*>(image);
  if (bytes[0] == 0x7f && bytes[1] == 'E') {
    // The ELF's size: its section headers end it.
    std::uint64_t shoff = 0;
    std::uint16_t shentsize = 0, shnum = 0;
    std::memcpy(&shoff, bytes + 40, 8), std::memcpy(&shentsize, bytes + 58, 2), std::memcpy(&shnum, bytes + 60, 2);
    std::string why;
    auto cubin = kiln::cuda::read_cubin(image, shoff + std::uint64_t(shentsize) * shnum, &why);
    if (!cubin) return violation(s, "cuModuleLoadDataEx: " + why, CUDA_ERROR_INVALID_IMAGE);
    m.cubin = *cubin;
    if (m.cubin.arch != 80) return CUDA_ERROR_NO_BINARY_FOR_GPU;
    for (const auto& [name, size] : m.cubin.globals) m.globals[name].assign(size, 0);
  } else if (std::strncmp(static_cast<const char*>(image), "//", 2) != 0 &&
             !std::strstr(static_cast<const char*>(image), ".version")) {
    return violation(s, "cuModuleLoadDataEx: neither a cubin nor PTX", CUDA_ERROR_INVALID_IMAGE);
  }
  *module = reinterpret_cast<CUmodule>(new_handle(s));
  s.modules[*module] = std::move(m);
  return CUDA_SUCCESS;
}
CUresult d_cuModuleUnload(CUmodule module) {
  ENTER("cuModuleUnload", true, "");
  if (!s.modules.erase(module)) return violation(s, "cuModuleUnload: not a loaded module", CUDA_ERROR_INVALID_HANDLE);
  std::erase_if(s.functions, [&](const auto& f) { return f.second.module == module; });
  return CUDA_SUCCESS;
}
CUresult d_cuModuleGetFunction(CUfunction* fn, CUmodule module, const char* name) {
  ENTER("cuModuleGetFunction", true, name);
  auto m = s.modules.find(module);
  if (m == s.modules.end()) return violation(s, "cuModuleGetFunction: not a loaded module", CUDA_ERROR_INVALID_HANDLE);
  if (!m->second.cubin.kernels.count(name)) return CUDA_ERROR_NOT_FOUND;
  *fn = reinterpret_cast<CUfunction>(new_handle(s));
  s.functions[*fn] = Function{module, name};
  return CUDA_SUCCESS;
}
CUresult d_cuModuleGetGlobal(CUdeviceptr* ptr, std::size_t* bytes, CUmodule module, const char* name) {
  ENTER("cuModuleGetGlobal", true, name);
  auto m = s.modules.find(module);
  if (m == s.modules.end()) return violation(s, "cuModuleGetGlobal: not a loaded module", CUDA_ERROR_INVALID_HANDLE);
  auto g = m->second.globals.find(name);
  if (g == m->second.globals.end()) return CUDA_ERROR_NOT_FOUND;
  *ptr = reinterpret_cast<CUdeviceptr>(g->second.data());  // lives as long as its module
  *bytes = g->second.size();
  return CUDA_SUCCESS;
}

// The kernel a function names, or nullptr (a violation recorded).
const kiln::cuda::CubinKernel* kernel_of(State& s, CUfunction fn, const char* call) {
  auto f = s.functions.find(fn);
  if (f == s.functions.end()) {
    violation(s, std::string(call) + ": not a live function");
    return nullptr;
  }
  return &s.modules.at(f->second.module).cubin.kernels.at(f->second.name);
}
CUresult d_cuFuncGetAttribute(int* v, CUfunction_attribute a, CUfunction fn) {
  ENTER("cuFuncGetAttribute", true, int(a));
  const kiln::cuda::CubinKernel* k = kernel_of(s, fn, "cuFuncGetAttribute");
  if (!k) return CUDA_ERROR_INVALID_HANDLE;
  switch (a) {
    case CU_FUNC_ATTRIBUTE_NUM_REGS: *v = k->registers; break;
    case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *v = int(k->shared_bytes); break;
    case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: *v = int(k->local_bytes); break;
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = k->max_threads_per_block ? k->max_threads_per_block : 1024; break;
    default: *v = 0;
  }
  return CUDA_SUCCESS;
}
CUresult d_cuFuncSetAttribute(CUfunction fn, CUfunction_attribute a, int value) {
  ENTER("cuFuncSetAttribute", true, int(a) << " " << value);
  if (!kernel_of(s, fn, "cuFuncSetAttribute")) return CUDA_ERROR_INVALID_HANDLE;
  if (a == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) {
    if (value > 163 * 1024) return violation(s, "cuFuncSetAttribute: more dynamic shared memory than the device has");
    s.functions[fn].max_dynamic_shared = value;
  }
  return CUDA_SUCCESS;
}

// A launch's checks: limits, stream, and every parameter against the cubin's table (each
// kernelParams[i] must point at its value; the bytes are gathered at the table's offsets).
CUresult launch(State& s, const char* call, CUfunction fn, unsigned gx, unsigned gy, unsigned gz,
                unsigned bx, unsigned by, unsigned bz, unsigned shared, CUstream stream,
                void** params, void** extra) {
  const kiln::cuda::CubinKernel* k = kernel_of(s, fn, call);
  if (!k) return CUDA_ERROR_INVALID_HANDLE;
  const std::string who = std::string(call) + " of " + k->name;
  const unsigned long long threads = 1ull * bx * by * bz;
  const unsigned limit = k->max_threads_per_block ? unsigned(k->max_threads_per_block) : 1024u;
  if (!gx || !gy || !gz || !bx || !by || !bz || bx > 1024 || by > 1024 || bz > 64 || gy > 65535 ||
      gz > 65535 || threads > limit)
    return violation(s, who + ": grid or block out of the device's limits", CUDA_ERROR_INVALID_VALUE);
  if (shared > unsigned(s.functions[fn].max_dynamic_shared))
    return violation(s, who + ": " + std::to_string(shared) +
                            " bytes of dynamic shared memory without opting in (cuFuncSetAttribute)",
                     CUDA_ERROR_INVALID_VALUE);
  if (CUresult r = check_stream(s, stream, call)) return r;
  if (extra) return violation(s, who + ": kiln passes kernelParams, not extra");
  if (!params && !k->params.empty()) return violation(s, who + ": no kernelParams for " + std::to_string(k->params.size()) + " parameters");
  s.last_params.assign(k->param_bytes, 0);
  for (const kiln::cuda::CubinParam& p : k->params) {
    if (!params[p.ordinal])
      return violation(s, who + ": kernelParams[" + std::to_string(p.ordinal) + "] is null");
    if (p.offset + p.size > s.last_params.size())
      return violation(s, who + ": parameter table past the buffer");
    std::memcpy(s.last_params.data() + p.offset, params[p.ordinal], p.size);
  }
  return CUDA_SUCCESS;
}
CUresult d_cuLaunchKernel(CUfunction fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                          unsigned by, unsigned bz, unsigned shared, CUstream stream,
                          void** params, void** extra) {
  ENTER("cuLaunchKernel", true, gx << "x" << gy << "x" << gz << " " << bx << "x" << by << "x" << bz << " " << shared);
  return launch(s, "cuLaunchKernel", fn, gx, gy, gz, bx, by, bz, shared, stream, params, extra);
}
CUresult d_cuLaunchCooperativeKernel(CUfunction fn, unsigned gx, unsigned gy, unsigned gz,
                                     unsigned bx, unsigned by, unsigned bz, unsigned shared,
                                     CUstream stream, void** params) {
  ENTER("cuLaunchCooperativeKernel", true, gx << "x" << gy << "x" << gz);
  return launch(s, "cuLaunchCooperativeKernel", fn, gx, gy, gz, bx, by, bz, shared, stream, params, nullptr);
}
CUresult d_cuOccupancyMaxPotentialBlockSize(int* min_grid, int* block, CUfunction fn,
                                            CUoccupancyB2DSize, std::size_t, int) {
  ENTER("cuOccupancyMaxPotentialBlockSize", true, "");
  if (!kernel_of(s, fn, "cuOccupancyMaxPotentialBlockSize")) return CUDA_ERROR_INVALID_HANDLE;
  *min_grid = 216, *block = 512;
  return CUDA_SUCCESS;
}
CUresult d_cuOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, CUfunction fn, int block, std::size_t shared) {
  ENTER("cuOccupancyMaxActiveBlocksPerMultiprocessor", true, block);
  const kiln::cuda::CubinKernel* k = kernel_of(s, fn, "cuOccupancyMaxActiveBlocksPerMultiprocessor");
  if (!k) return CUDA_ERROR_INVALID_HANDLE;
  *blocks = kiln::cuda::occupancy(*kiln::cuda::arch_limits(80), *k, block, shared).blocks_per_sm;
  return CUDA_SUCCESS;
}

// Name → entry point, each checked against the typedef kiln calls it through.
const std::map<std::string, void*>& entry_points() {
#define KILN_DOUBLE_ENTRY(name, version) \
  {#name, reinterpret_cast<void*>(static_cast<PFN_##name##_v##version>(d_##name))},
  static const std::map<std::string, void*> table = {
      KILN_DOUBLE_ENTRY(cuInit, 2000) KILN_DOUBLE_ENTRY(cuDriverGetVersion, 2020) KILN_DOUBLE_ENTRY(
          cuGetErrorName, 6000) KILN_DOUBLE_ENTRY(cuGetErrorString,
                                                  6000) KILN_DOUBLE_ENTRY(cuDeviceGetCount, 2000)
          KILN_DOUBLE_ENTRY(cuDeviceGet, 2000) KILN_DOUBLE_ENTRY(
              cuDeviceGetName, 2000) KILN_DOUBLE_ENTRY(cuDeviceGetAttribute, 2000)
              KILN_DOUBLE_ENTRY(cuDeviceTotalMem, 3020) KILN_DOUBLE_ENTRY(
                  cuDevicePrimaryCtxRetain,
                  7000) KILN_DOUBLE_ENTRY(cuDevicePrimaryCtxRelease,
                                          11000) KILN_DOUBLE_ENTRY(cuDevicePrimaryCtxReset, 11000)
                  KILN_DOUBLE_ENTRY(cuCtxSetCurrent, 4000) KILN_DOUBLE_ENTRY(
                      cuCtxSynchronize, 2000) KILN_DOUBLE_ENTRY(cuMemGetInfo, 3020)
                      KILN_DOUBLE_ENTRY(cuMemAlloc, 3020) KILN_DOUBLE_ENTRY(
                          cuMemFree,
                          3020) KILN_DOUBLE_ENTRY(cuMemHostRegister,
                                                  6050) KILN_DOUBLE_ENTRY(cuMemHostUnregister, 4000)
                          KILN_DOUBLE_ENTRY(cuMemcpyHtoDAsync, 3020) KILN_DOUBLE_ENTRY(
                              cuMemcpyDtoHAsync, 3020) KILN_DOUBLE_ENTRY(cuMemcpyDtoDAsync, 3020)
                              KILN_DOUBLE_ENTRY(cuMemsetD8Async, 3020) KILN_DOUBLE_ENTRY(
                                  cuStreamCreate,
                                  2000) KILN_DOUBLE_ENTRY(cuStreamDestroy, 4000)
                                  KILN_DOUBLE_ENTRY(cuStreamSynchronize, 2000) KILN_DOUBLE_ENTRY(
                                      cuEventCreate, 2000) KILN_DOUBLE_ENTRY(cuEventRecord, 2000)
                                      KILN_DOUBLE_ENTRY(cuEventQuery, 2000) KILN_DOUBLE_ENTRY(
                                          cuStreamWaitEvent,
                                          3020) KILN_DOUBLE_ENTRY(cuEventSynchronize, 2000)
                                          KILN_DOUBLE_ENTRY(cuEventDestroy, 4000) KILN_DOUBLE_ENTRY(
                                              cuEventElapsedTime,
                                              2000) KILN_DOUBLE_ENTRY(cuModuleLoadDataEx, 2010)
                                              KILN_DOUBLE_ENTRY(cuModuleUnload, 2000) KILN_DOUBLE_ENTRY(
                                                  cuModuleGetFunction,
                                                  2000) KILN_DOUBLE_ENTRY(cuModuleGetGlobal, 3020)
                                                  KILN_DOUBLE_ENTRY(cuLaunchKernel, 4000) KILN_DOUBLE_ENTRY(
                                                      cuLaunchCooperativeKernel,
                                                      9000) KILN_DOUBLE_ENTRY(cuFuncGetAttribute, 2020)
                                                      KILN_DOUBLE_ENTRY(cuFuncSetAttribute, 9000)
                                                          KILN_DOUBLE_ENTRY(
                                                              cuOccupancyMaxPotentialBlockSize,
                                                              6050)
                                                              KILN_DOUBLE_ENTRY(
                                                                  cuOccupancyMaxActiveBlocksPerMultiprocessor,
                                                                  6050) KILN_DOUBLE_ENTRY(cuMemAllocAsync,
                                                                                          11020)
                                                                  KILN_DOUBLE_ENTRY(cuMemFreeAsync,
                                                                                    11020)
                                                                      KILN_DOUBLE_ENTRY(
                                                                          cuDeviceGetDefaultMemPool,
                                                                          11020)
                                                                          KILN_DOUBLE_ENTRY(
                                                                              cuMemPoolSetAttribute,
                                                                              11020)
                                                                              KILN_DOUBLE_ENTRY(
                                                                                  cuMemPoolTrimTo,
                                                                                  11020)
                                                                                  KILN_DOUBLE_ENTRY(
                                                                                      cuMemPoolGetAttribute,
                                                                                      11020)};
#undef KILN_DOUBLE_ENTRY
  return table;
}

}  // namespace

extern "C" {

CUresult cuGetProcAddress_v2(const char* symbol, void** fn, int, cuuint64_t,
                             CUdriverProcAddressQueryResult* status) {
  auto it = entry_points().find(symbol);
  *fn = it == entry_points().end() ? nullptr : it->second;
  if (status) *status = *fn ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  return *fn ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

void kiln_double_reset() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  for (auto& [ptr, bytes] : s.allocations) std::free(reinterpret_cast<void*>(ptr));
  s.allocations.clear(), s.streams.clear(), s.events.clear(), s.modules.clear();
  s.functions.clear(), s.registered.clear(), s.fail.clear();
  s.log.str(""), s.violations.str("");
  s.sticky = CUDA_SUCCESS, s.total = std::size_t(1) << 30, s.used = 0, s.pools = 0;
  s.retains = 0, s.current = nullptr, s.last_params.clear();
}

void kiln_double_fail(const char* call, int result, int after) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.fail[call].push_back({CUresult(result), after});
}

void kiln_double_set_memory(std::size_t total_bytes) { state().total = total_bytes; }
void kiln_double_set_pools(int supported) { state().pools = supported; }

const char* kiln_double_log() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.log_text = s.log.str();
  return s.log_text.c_str();
}

const char* kiln_double_violations() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.violation_text = s.violations.str();
  return s.violation_text.c_str();
}

std::size_t kiln_double_live_bytes() { return state().used; }

int kiln_double_live_handles() {
  State& s = state();
  return int(s.streams.size() + s.events.size() + s.modules.size() + s.registered.size());
}

const unsigned char* kiln_double_last_params(std::size_t* size) {
  *size = state().last_params.size();
  return state().last_params.data();
}

}  // extern "C"
