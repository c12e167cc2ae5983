// The cuda backend: device memory from the stream-ordered pool, streams and events, modules
// loaded once per context, launches checked against the device before the driver sees them,
// and recovery from kernel faults through reset().
#include "runtime/cuda/backend.h"

#include <xxhash.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <unordered_map>

#include "runtime/error.h"

namespace kiln {
namespace cuda {

// One device's context and everything that lives in it. Streams, events, modules and programs
// hold it too, and compare their generation with its own to learn of a reset.
struct State {
  std::shared_ptr<const Driver> driver;
  DeviceInfo info;
  CUdevice device = 0;
  std::unique_ptr<PrimaryContext> context;
  CUmemoryPool pool = nullptr;  // the device's default pool; null: plain cuMemAlloc
  std::uint64_t generation = 1;
  std::string last_kernel;  // display name of the last kernel launched
  std::string broken;       // error name of a sticky fault; empty while the context works
  std::string lost = "the CUDA context is gone; restart kiln";  // why, once reset() failed
  std::unordered_map<CUdeviceptr, std::size_t> live;  // this generation's allocations
  // Modules loaded in this context, by image hash: each is loaded once and kept.
  std::unordered_map<std::string, std::shared_ptr<ModuleHandle>> modules;
  // Modules loaded with globals of their own (unloaded when their last user goes).
  std::vector<std::weak_ptr<ModuleHandle>> own_modules;

  // Makes the context current; throws when a fault has broken it.
  void enter() const {
    if (!broken.empty()) throw Error(format_sticky(last_kernel, broken));
    if (!context) throw Error(lost);
    context->make_current();
  }

  // Throws for a failed call; a kernel fault also marks the context broken.
  void check(CUresult result, const std::string& call) {
    if (result == CUDA_SUCCESS) return;
    if (is_sticky(result)) {
      broken = driver->error_name(result);
      throw Error(call + " failed: " + format_sticky(last_kernel, broken));
    }
    throw Error(call + " failed: " + driver->describe(result));
  }

  // Uses the device's default memory pool, keeping freed memory cached in it (release
  // threshold UINT64_MAX), where the device and driver have pools.
  void set_up_pool() {
    pool = nullptr;
    int supported = 0;
    if (!driver->cuMemAllocAsync || !driver->cuMemFreeAsync || !driver->cuDeviceGetDefaultMemPool ||
        !driver->cuMemPoolSetAttribute || !driver->cuMemPoolTrimTo)
      return;
    if (driver->cuDeviceGetAttribute(&supported, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED,
                                     device) != CUDA_SUCCESS ||
        !supported)
      return;
    CUmemoryPool candidate = nullptr;
    check(driver->cuDeviceGetDefaultMemPool(&candidate, device), "cuDeviceGetDefaultMemPool");
    cuuint64_t threshold = std::numeric_limits<cuuint64_t>::max();
    check(driver->cuMemPoolSetAttribute(candidate, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold),
          "cuMemPoolSetAttribute");
    pool = candidate;
  }

  CUstream stream_of(Stream* stream) const;
  std::shared_ptr<ModuleHandle> module(const CompileResult& compiled, bool own_globals);
};

namespace {

// A key naming a compiled image: its kind and a 128-bit hash of its bytes.
std::string image_key(const CompileResult& compiled) {
  XXH128_hash_t hash = XXH3_128bits(compiled.image.data(), compiled.image.size());
  char text[48];
  std::snprintf(text, sizeof text, "%016llx%016llx", static_cast<unsigned long long>(hash.high64),
                static_cast<unsigned long long>(hash.low64));
  return compiled.image_kind + ":" + text;
}

class CudaStream final : public Stream {
 public:
  explicit CudaStream(std::shared_ptr<State> state) : state_(std::move(state)) {
    state_->enter();
    generation_ = state_->generation;
    CUstream stream = nullptr;
    // A blocking stream: it synchronises with the default stream, on which memory is allocated
    // and freed, so pool memory is never used before its allocation or after its free.
    state_->check(state_->driver->cuStreamCreate(&stream, CU_STREAM_DEFAULT), "cuStreamCreate");
    handle_ = StreamHandle(state_->driver, stream);
  }
  ~CudaStream() override {
    if (generation_ != state_->generation) handle_.release();  // died with its context
  }

  // The driver's stream; throws when it was created before a reset.
  CUstream get() const {
    if (generation_ != state_->generation)
      throw Error("this stream was created before cuda.reset() and is no longer valid");
    return handle_.get();
  }

  void synchronize() override {
    state_->enter();
    state_->check(state_->driver->cuStreamSynchronize(get()), "cuStreamSynchronize");
  }

 private:
  std::shared_ptr<State> state_;
  std::uint64_t generation_ = 0;
  StreamHandle handle_;
};

class CudaEvent final : public Event {
 public:
  explicit CudaEvent(std::shared_ptr<State> state) : state_(std::move(state)) {
    state_->enter();
    generation_ = state_->generation;
    CUevent event = nullptr;
    state_->check(state_->driver->cuEventCreate(&event, CU_EVENT_DEFAULT), "cuEventCreate");
    handle_ = EventHandle(state_->driver, event);
  }
  ~CudaEvent() override {
    if (generation_ != state_->generation) handle_.release();
  }

  // The driver's event; throws when it was created before a reset.
  CUevent get() const {
    if (generation_ != state_->generation)
      throw Error("this event was created before cuda.reset() and is no longer valid");
    return handle_.get();
  }

  void record(Stream* stream) override {
    state_->enter();
    state_->check(state_->driver->cuEventRecord(get(), state_->stream_of(stream)), "cuEventRecord");
    recorded_ = true;
  }

  void synchronize() override {
    state_->enter();
    state_->check(state_->driver->cuEventSynchronize(get()), "cuEventSynchronize");
  }

  bool query() override {
    state_->enter();
    const CUresult r = state_->driver->cuEventQuery(get());
    if (r == CUDA_ERROR_NOT_READY) return false;
    state_->check(r, "cuEventQuery");
    return true;
  }

  void wait(Stream* stream) override {
    state_->enter();
    state_->check(state_->driver->cuStreamWaitEvent(state_->stream_of(stream), get(), 0),
                  "cuStreamWaitEvent");
  }

  // Waits for this event, then measures from start to it.
  double elapsed_ms_since(const Event& start) const override {
    const auto* begin = dynamic_cast<const CudaEvent*>(&start);
    if (!begin) throw Error("event_elapsed_time: the start event is not a cuda event");
    if (!begin->recorded_ || !recorded_)
      throw Error("event_elapsed_time: both events must be recorded first (e:record())");
    state_->enter();
    state_->check(state_->driver->cuEventSynchronize(get()), "cuEventSynchronize");
    float ms = 0;
    state_->check(state_->driver->cuEventElapsedTime(&ms, begin->get(), get()),
                  "cuEventElapsedTime");
    return ms;
  }

 private:
  std::shared_ptr<State> state_;
  std::uint64_t generation_ = 0;
  EventHandle handle_;
  bool recorded_ = false;
};

// A compiled image and its module in the current context, reloaded after a reset.
struct LoadedImage {
  std::shared_ptr<State> state;
  CompileResult compiled;
  std::shared_ptr<ModuleHandle> handle;
  std::uint64_t generation = 0;
  bool own_globals = false;  // (Backend::load)

  // The module in the current context (loading it after a reset).
  CUmodule get() {
    if (!handle || generation != state->generation) {
      handle = state->module(compiled, own_globals);
      generation = state->generation;
    }
    return handle->get();
  }
};

class CudaProgram final : public Program {
 public:
  CudaProgram(std::shared_ptr<LoadedImage> image, std::string lowered_name)
      : image_(std::move(image)), lowered_(std::move(lowered_name)), name_(display_name(lowered_)) {
    function();
  }

  void launch(const LaunchConfig& config, void** args) override {
    State& state = *image_->state;
    state.enter();
    CUfunction fn = function();
    LaunchCheck check = check_launch(state.info, config, attributes_, name_);
    if (!check.error.empty()) throw Error(check.error);
    if (check.needs_optin && config.shared_bytes > optin_bytes_) {
      state.check(
          state.driver->cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                           static_cast<int>(config.shared_bytes)),
          "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES) for kernel '" + name_ + "'");
      optin_bytes_ = config.shared_bytes;
    }
    CUstream stream = state.stream_of(config.stream);
    if (config.cooperative) check_coresident(config);
    state.last_kernel = name_;
    const unsigned shared = static_cast<unsigned>(config.shared_bytes);
    CUresult result = config.cooperative
                          ? state.driver->cuLaunchCooperativeKernel(
                                fn, config.grid.x, config.grid.y, config.grid.z, config.block.x,
                                config.block.y, config.block.z, shared, stream, args)
                          : state.driver->cuLaunchKernel(
                                fn, config.grid.x, config.grid.y, config.grid.z, config.block.x,
                                config.block.y, config.block.z, shared, stream, args, nullptr);
    if (result != CUDA_SUCCESS)  // the message is made only then: launches are microseconds
      state.check(result,
                  std::string(config.cooperative ? "cuLaunchCooperativeKernel" : "cuLaunchKernel") +
                      " of kernel '" + name_ + "'");
  }

  // A cooperative launch's grid must fit on the device at once (blocks per multiprocessor, from
  // the occupancy calculator, times multiprocessors); a clear error before the driver's.
  void check_coresident(const LaunchConfig& config) {
    State& state = *image_->state;
    int per_sm = 0;
    state.check(state.driver->cuOccupancyMaxActiveBlocksPerMultiprocessor(
                    &per_sm, function(), static_cast<int>(config.block.count()),
                    config.shared_bytes),
                "cuOccupancyMaxActiveBlocksPerMultiprocessor for kernel '" + name_ + "'");
    const std::uint64_t most = std::uint64_t(per_sm) * std::uint64_t(state.info.multiprocessors);
    if (config.grid.count() > most)
      throw Error("kernel '" + name_ + "' synchronises its grid (this_grid().sync()), so all of "
                  "its blocks must be resident at once: " + std::to_string(config.grid.count()) +
                  " blocks is more than the " + std::to_string(most) + " this GPU holds (" +
                  std::to_string(per_sm) + " per multiprocessor x " +
                  std::to_string(state.info.multiprocessors) + " multiprocessors, blocks of " +
                  std::to_string(config.block.count()) + " threads)");
  }

  KernelAttributes attributes() const override { return attributes_; }

  // cuOccupancyMaxPotentialBlockSize for this kernel.
  int occupancy_block_size(std::size_t dynamic_shared_bytes) {
    State& state = *image_->state;
    state.enter();
    int min_grid = 0, block = 0;
    state.check(state.driver->cuOccupancyMaxPotentialBlockSize(&min_grid, &block, function(),
                                                               nullptr, dynamic_shared_bytes, 0),
                "cuOccupancyMaxPotentialBlockSize for kernel '" + name_ + "'");
    return block;
  }

 private:
  // The function in the current context, looked up again (with its attributes) after a reset.
  CUfunction function() {
    State& state = *image_->state;
    if (fn_ && generation_ == state.generation) return fn_;
    CUmodule module = image_->get();
    CUresult result = state.driver->cuModuleGetFunction(&fn_, module, lowered_.c_str());
    if (result == CUDA_ERROR_NOT_FOUND)
      throw Error("no kernel '" + name_ + "' in the compiled module (lowered name " + lowered_ +
                  ")");
    state.check(result, "cuModuleGetFunction");
    auto attribute = [&](CUfunction_attribute which) {
      int value = -1;
      state.check(state.driver->cuFuncGetAttribute(&value, which, fn_), "cuFuncGetAttribute");
      return value;
    };
    attributes_.registers = attribute(CU_FUNC_ATTRIBUTE_NUM_REGS);
    attributes_.shared_bytes = attribute(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
    attributes_.local_bytes = attribute(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES);
    attributes_.max_threads_per_block = attribute(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    // The field the cpu backend fills with its plan, so that a script printing it runs on both.
    attributes_.threads = "hardware";
    attributes_.why = "a GPU runs every thread of a block on its own";
    optin_bytes_ = 0;
    generation_ = state.generation;
    return fn_;
  }

  std::shared_ptr<LoadedImage> image_;
  std::string lowered_, name_;
  CUfunction fn_ = nullptr;
  std::uint64_t generation_ = 0;
  KernelAttributes attributes_;
  std::size_t optin_bytes_ = 0;  // dynamic shared memory the function is opted in to
};

class CudaModule final : public Module {
 public:
  explicit CudaModule(std::shared_ptr<LoadedImage> image) : image_(std::move(image)) {}

  std::unique_ptr<Program> kernel(const std::string& lowered_name) override {
    image_->state->enter();
    return std::make_unique<CudaProgram>(image_, lowered_name);
  }

  void set_global(const std::string& name, const void* data, std::size_t bytes) override {
    State& state = *image_->state;
    CUdeviceptr ptr = global(name, bytes);
    state.check(state.driver->cuMemcpyHtoDAsync(ptr, data, bytes, nullptr), "cuMemcpyHtoDAsync");
    state.check(state.driver->cuStreamSynchronize(nullptr), "cuStreamSynchronize");
  }
  void get_global(const std::string& name, void* out, std::size_t bytes) override {
    State& state = *image_->state;
    CUdeviceptr ptr = global(name, bytes);
    state.check(state.driver->cuMemcpyDtoHAsync(out, ptr, bytes, nullptr), "cuMemcpyDtoHAsync");
    state.check(state.driver->cuStreamSynchronize(nullptr), "cuStreamSynchronize");
  }

 private:
  // The device address of the module's global `name`, checked to hold at least bytes.
  CUdeviceptr global(const std::string& name, std::size_t bytes) {
    State& state = *image_->state;
    state.enter();
    CUdeviceptr ptr = 0;
    std::size_t size = 0;
    CUresult result = state.driver->cuModuleGetGlobal(&ptr, &size, image_->get(), name.c_str());
    if (result == CUDA_ERROR_NOT_FOUND)
      throw Error("set_constant: no __constant__ or __device__ variable '" + name +
                  "' in the module");
    state.check(result, "cuModuleGetGlobal('" + name + "')");
    if (bytes > size)
      throw Error("set_constant: '" + name + "' holds " + std::to_string(size) + " bytes; " +
                  std::to_string(bytes) + " bytes do not fit");
    return ptr;
  }

  std::shared_ptr<LoadedImage> image_;
};

}  // namespace

CUstream State::stream_of(Stream* stream) const {
  if (!stream) return nullptr;  // the legacy default stream
  auto* cuda_stream = dynamic_cast<CudaStream*>(stream);
  if (!cuda_stream) throw Error("a stream of another backend was passed to the cuda backend");
  return cuda_stream->get();
}

std::shared_ptr<ModuleHandle> State::module(const CompileResult& compiled, bool own_globals) {
  std::string key = image_key(compiled);
  if (auto found = modules.find(key); !own_globals && found != modules.end()) return found->second;

  // Load the cubin when there is one; PTX (the image itself, or the PTX a cubin came with when
  // the cubin does not suit the device) goes through the driver's JIT, whose log we keep.
  auto try_load = [&](const void* image, std::string* log, CUmodule* module) {
    static constexpr std::size_t log_size = 16384;
    std::string error_log(log_size, '\0');
    CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void* values[] = {error_log.data(), reinterpret_cast<void*>(log_size)};
    CUresult result = driver->cuModuleLoadDataEx(module, image, 2, options, values);
    *log = error_log.c_str();
    return result;
  };
  CUmodule module = nullptr;
  std::string log;
  CUresult result = CUDA_ERROR_INVALID_IMAGE;
  std::string kind = compiled.image_kind;
  if (kind == "cubin") {
    result = try_load(compiled.image.data(), &log, &module);
    if (result != CUDA_SUCCESS && !is_sticky(result) && !compiled.ptx.empty()) {
      kind = "ptx (the cubin failed to load: " + driver->error_name(result) + ")";
      result = try_load(compiled.ptx.c_str(), &log, &module);
    }
  } else if (kind == "ptx") {
    std::string text(compiled.image.begin(), compiled.image.end());
    if (text.empty()) text = compiled.ptx;
    result = try_load(text.c_str(), &log, &module);
  } else {
    throw Error("the cuda backend cannot load a '" + compiled.image_kind + "' image");
  }
  if (result != CUDA_SUCCESS) {
    std::string message = "cuModuleLoadDataEx (" + kind + ")";
    if (result == CUDA_ERROR_UNSUPPORTED_PTX_VERSION)
      message += " [the driver (CUDA " + version_string(driver->version()) +
                 ") is older than the NVRTC that wrote this PTX]";
    try {
      check(result, message);
    } catch (const Error& e) {
      throw Error(std::string(e.what()) + (log.empty() ? "" : "\n" + log));
    }
  }
  auto handle = std::make_shared<ModuleHandle>(driver, module);
  if (own_globals) {
    std::erase_if(own_modules, [](const auto& m) { return m.expired(); });
    own_modules.push_back(handle);
  } else {
    modules.emplace(std::move(key), handle);
  }
  return handle;
}

}  // namespace cuda

using cuda::State;

CudaBackend::CudaBackend(std::shared_ptr<const cuda::Driver> driver, int device_id)
    : state_(std::make_shared<State>()) {
  State& state = *state_;
  state.driver = std::move(driver);
  state.info = cuda::query_device(*state.driver, device_id);
  state.driver->check(state.driver->cuDeviceGet(&state.device, device_id), "cuDeviceGet");
  state.context = std::make_unique<cuda::PrimaryContext>(state.driver, state.device);
  state.context->make_current();
  state.set_up_pool();
}

CudaBackend::~CudaBackend() {
  pinned_.clear();  // unregisters while the context is still retained
}

const DeviceInfo& CudaBackend::device() const {
  return state_->info;
}

std::string CudaBackend::describe() const {
  const DeviceInfo& info = state_->info;
  return "cuda: " + info.name + " (device " + std::to_string(info.id) + ", compute capability " +
         std::to_string(info.cc_major) + "." + std::to_string(info.cc_minor) + ", " +
         std::to_string(info.multiprocessors) + " SMs, " +
         cuda::format_bytes(info.total_memory, 1) + "), driver CUDA " +
         cuda::version_string(state_->driver->version()) + (state_->pool ? ", memory pool" : "");
}

void* CudaBackend::alloc(std::size_t bytes) {
  State& state = *state_;
  state.enter();
  CUdeviceptr ptr = 0;
  auto attempt = [&] {
    return state.pool ? state.driver->cuMemAllocAsync(&ptr, bytes, nullptr)
                      : state.driver->cuMemAlloc(&ptr, bytes);
  };
  CUresult result = attempt();
  if (result == CUDA_ERROR_OUT_OF_MEMORY) {
    trim_memory();  // memory the pool keeps for reuse goes back to the device first
    result = attempt();
  }
  if (result == CUDA_ERROR_OUT_OF_MEMORY) {
    std::size_t free = 0, total = 0;
    state.driver->cuMemGetInfo(&free, &total);
    throw Error(cuda::format_out_of_memory(bytes, free, total, state.info.name));
  }
  state.check(result, state.pool ? "cuMemAllocAsync" : "cuMemAlloc");
  state.live.emplace(ptr, bytes);
  return reinterpret_cast<void*>(ptr);
}

void CudaBackend::free(void* ptr) noexcept {
  State& state = *state_;
  auto found = state.live.find(reinterpret_cast<CUdeviceptr>(ptr));
  if (found == state.live.end()) return;  // from before a reset, or freed already
  state.live.erase(found);
  if (!state.broken.empty() || !state.context) return;  // the fault took it; reset() reclaims it
  if (state.driver->cuCtxSetCurrent(state.context->get()) != CUDA_SUCCESS) return;
  CUdeviceptr dptr = reinterpret_cast<CUdeviceptr>(ptr);
  CUresult result =
      state.pool ? state.driver->cuMemFreeAsync(dptr, nullptr) : state.driver->cuMemFree(dptr);
  if (cuda::is_sticky(result)) state.broken = state.driver->error_name(result);
}

void CudaBackend::copy_to_device(void* dst, const void* src, std::size_t bytes, Stream* s) {
  State& state = *state_;
  state.enter();
  CUstream stream = state.stream_of(s);
  state.check(
      state.driver->cuMemcpyHtoDAsync(reinterpret_cast<CUdeviceptr>(dst), src, bytes, stream),
      "cuMemcpyHtoDAsync");
  // Without a stream the copy is synchronous, as Numba's to_device is.
  if (!s) state.check(state.driver->cuStreamSynchronize(nullptr), "cuStreamSynchronize");
}

void CudaBackend::copy_to_host(void* dst, const void* src, std::size_t bytes, Stream* s) {
  State& state = *state_;
  state.enter();
  CUstream stream = state.stream_of(s);
  state.check(
      state.driver->cuMemcpyDtoHAsync(dst, reinterpret_cast<CUdeviceptr>(src), bytes, stream),
      "cuMemcpyDtoHAsync");
  if (!s) state.check(state.driver->cuStreamSynchronize(nullptr), "cuStreamSynchronize");
}

void CudaBackend::copy_on_device(void* dst, const void* src, std::size_t bytes, Stream* s) {
  State& state = *state_;
  state.enter();
  state.check(state.driver->cuMemcpyDtoDAsync(reinterpret_cast<CUdeviceptr>(dst),
                                              reinterpret_cast<CUdeviceptr>(src), bytes,
                                              state.stream_of(s)),
              "cuMemcpyDtoDAsync");
}

void CudaBackend::memset(void* dst, int byte, std::size_t bytes, Stream* s) {
  State& state = *state_;
  state.enter();
  state.check(
      state.driver->cuMemsetD8Async(reinterpret_cast<CUdeviceptr>(dst),
                                    static_cast<unsigned char>(byte), bytes, state.stream_of(s)),
      "cuMemsetD8Async");
}

std::unique_ptr<Stream> CudaBackend::create_stream() {
  return std::make_unique<cuda::CudaStream>(state_);
}

std::unique_ptr<Event> CudaBackend::create_event() {
  return std::make_unique<cuda::CudaEvent>(state_);
}

void CudaBackend::synchronize() {
  state_->enter();
  state_->check(state_->driver->cuCtxSynchronize(), "cuCtxSynchronize");
}

std::unique_ptr<Module> CudaBackend::load(const CompileResult& compiled, bool own_globals) {
  state_->enter();
  auto image = std::make_shared<cuda::LoadedImage>();
  image->state = state_;
  image->compiled = compiled;
  image->own_globals = own_globals;
  image->get();  // load now, so that a bad image is reported here
  return std::make_unique<cuda::CudaModule>(std::move(image));
}

std::uint64_t CudaBackend::generation() const {
  return state_->generation;
}

std::vector<DeviceInfo> CudaBackend::list_devices() const {
  int count = 0;
  state_->driver->check(state_->driver->cuDeviceGetCount(&count), "cuDeviceGetCount");
  std::vector<DeviceInfo> devices;
  for (int i = 0; i < count; ++i) devices.push_back(cuda::query_device(*state_->driver, i));
  return devices;
}

void* CudaBackend::pinned_alloc(std::size_t bytes) {
  state_->enter();
  auto pinned = std::make_unique<cuda::PinnedHost>(state_->driver, bytes);
  void* data = pinned->data();
  pinned_.emplace(data, std::move(pinned));
  return data;
}

void CudaBackend::pinned_free(void* ptr) noexcept {
  if (state_->context) state_->driver->cuCtxSetCurrent(state_->context->get());
  pinned_.erase(ptr);
}

int CudaBackend::occupancy_block_size(Program& program, std::size_t dynamic_shared_bytes) {
  auto* cuda_program = dynamic_cast<cuda::CudaProgram*>(&program);
  if (!cuda_program)
    throw Error("occupancy_block_size: the kernel was not loaded by the cuda backend");
  return cuda_program->occupancy_block_size(dynamic_shared_bytes);
}

void CudaBackend::reset() {
  State& state = *state_;
  // Everything made in the old context dies with it: forget those handles without freeing
  // them, so that nothing is ever freed in (or unloaded from) the new context by mistake.
  for (auto& [key, module] : state.modules) module->release();
  state.modules.clear();
  for (const auto& own : state.own_modules)
    if (auto module = own.lock()) module->release();
  state.own_modules.clear();
  state.live.clear();
  ++state.generation;
  state.last_kernel.clear();
  state.pool = nullptr;
  std::string fault = state.broken.empty() ? std::string("a reset") : state.broken;
  state.broken.clear();
  CUdevice device = state.device;
  // Our retain goes first, and the old context stops being current here, so that the reset
  // leaves nothing of it behind; then a new primary context is made.
  state.context.reset();
  state.driver->cuCtxSetCurrent(nullptr);
  try {
    state.driver->check(state.driver->cuDevicePrimaryCtxReset(device), "cuDevicePrimaryCtxReset");
    state.context = std::make_unique<cuda::PrimaryContext>(state.driver, device);
    state.context->make_current();
  } catch (const Error& e) {
    // CUDA documents some faults (an illegal address) as ending the process's use of the GPU.
    state.context.reset();
    state.lost = "the CUDA driver did not recreate the context after " + fault + " (" + e.what() +
                 "): this process cannot use the GPU again; save what you need from host " +
                 "arrays and restart kiln";
    throw Error("cuda.reset(): " + state.lost);
  }
  state.set_up_pool();
  for (auto& [data, pinned] : pinned_) pinned->register_again();
}

const std::string& CudaBackend::last_kernel() const {
  return state_->last_kernel;
}

bool CudaBackend::broken() const {
  return !state_->broken.empty();
}

MemoryInfo CudaBackend::memory_info() {
  State& state = *state_;
  state.enter();
  MemoryInfo info;
  std::size_t free = 0, total = 0;
  state.check(state.driver->cuMemGetInfo(&free, &total), "cuMemGetInfo");
  info.free = free;
  info.total = total;
  if (state.pool && state.driver->cuMemPoolGetAttribute) {
    cuuint64_t reserved = 0, used = 0;
    state.check(state.driver->cuMemPoolGetAttribute(
                    state.pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &reserved),
                "cuMemPoolGetAttribute");
    state.check(
        state.driver->cuMemPoolGetAttribute(state.pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &used),
        "cuMemPoolGetAttribute");
    info.pool_reserved = reserved;
    info.pool_used = used;
  }
  return info;
}

void CudaBackend::trim_memory() {
  State& state = *state_;
  state.enter();
  if (!state.pool) return;
  // Frees still queued on streams return their memory to the pool only when they complete.
  state.check(state.driver->cuCtxSynchronize(), "cuCtxSynchronize");
  state.check(state.driver->cuMemPoolTrimTo(state.pool, 0), "cuMemPoolTrimTo");
}

bool CudaBackend::uses_memory_pool() const {
  return state_->pool != nullptr;
}

int CudaBackend::driver_version() const {
  return state_->driver->version();
}

const cuda::Driver& CudaBackend::driver() const {
  return *state_->driver;
}

std::shared_ptr<Backend> make_cuda_backend(int device_id, std::string* why, bool wrap) {
  std::string reason;
  auto fail = [&](std::string message) {
    if (why) *why = std::move(message);
    return std::shared_ptr<Backend>();
  };
  auto driver = cuda::Driver::load(&reason);
  if (!driver) return fail(reason);
  try {
    int count = 0;
    if (driver->cuDeviceGetCount(&count) != CUDA_SUCCESS || count == 0)
      return fail("no CUDA device");
    if (wrap && device_id >= 0) device_id %= count;
    if (device_id < 0 || device_id >= count)
      return fail("no CUDA device " + std::to_string(device_id) + " (there " +
                  (count == 1 ? "is 1 device" : "are " + std::to_string(count) + " devices") +
                  ", numbered from 0)");
    return std::make_shared<CudaBackend>(driver, device_id);
  } catch (const Error& e) {
    return fail(e.what());
  }
}

}  // namespace kiln
