// The one interface every backend implements (tinygrad's allocator / program split; the
// compilers live apart, in jit/):
//   Backend   — device facts, memory, copies, streams, events; load() of a compiled image
//   Module    — one loaded compilation: kernels by lowered name, globals by name
//   Program   — one loaded kernel: launch(config, args)
// A backend is one folder (runtime/cpu/, runtime/cuda/); jit/backends.cpp pairs each with its
// compiler.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kiln {

struct Dim3 {
  std::uint32_t x = 1, y = 1, z = 1;
  std::uint64_t count() const { return std::uint64_t(x) * y * z; }
};

// What a kernel launch may use, as cudaDeviceProp says it.
struct DeviceInfo {
  int id = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;  // compute capability (0.0 on the cpu backend)
  std::size_t total_memory = 0;    // bytes
  int multiprocessors = 0;         // SMs, or worker threads on the cpu backend
  int max_threads_per_block = 1024;
  int max_block_dim[3] = {1024, 1024, 64};
  std::int64_t max_grid_dim[3] = {2147483647, 65535, 65535};
  std::size_t max_shared_per_block = 48 * 1024;        // static + dynamic without opt-in
  std::size_t max_shared_per_block_optin = 48 * 1024;  // dynamic with opt-in
  int warp_size = 32;
};

class Stream {
 public:
  virtual ~Stream() = default;
  virtual void synchronize() = 0;  // waits for all work queued on this stream
};

class Event {
 public:
  virtual ~Event() = default;
  virtual void record(Stream* stream) = 0;  // nullptr: the default stream
  virtual void synchronize() = 0;
  virtual bool query() = 0;               // whether the work it records is done (or none)
  virtual void wait(Stream* stream) = 0;  // later work on stream waits for that work
  virtual double elapsed_ms_since(const Event& start) const = 0;
};

struct LaunchConfig {
  Dim3 grid, block;
  std::size_t shared_bytes = 0;  // dynamic shared memory
  Stream* stream = nullptr;      // nullptr: the default stream
  // Every block at once, so that the kernel may synchronise its whole grid
  // (cooperative_groups::this_grid().sync()); an error when they cannot all be resident.
  bool cooperative = false;
  // Every block at once where the backend can, so that a block spinning on global memory lets
  // the block that sets it run (a hand-made grid barrier over a small grid); never an error.
  bool resident = false;
};

// What the loaded kernel says of itself; -1 where the backend cannot tell.
struct KernelAttributes {
  int registers = -1;
  long shared_bytes = -1;  // static shared memory
  long local_bytes = -1;
  int max_threads_per_block = -1;
  // How a block's threads run (cpu: "loop", "regions", "fibers", ...; cuda: "hardware"), and
  // why they run so ("warp or group operation __shfl_sync at k.cu:9").
  std::string threads;
  std::string why;
};

// What a compiler produced and load() takes; the JIT caches it whole, on disk and in memory.
struct CompileResult {
  std::string image_kind;                  // "cubin", "ptx", "so"
  std::vector<char> image;                 // what load() takes
  std::string ptx;                         // PTX text where there is one
  std::vector<std::string> lowered_names;  // one per name expression
  std::vector<std::string> signatures;     // one per name expression: "void (float*, int)"
  // One per name expression where known (a host build beside NVRTC's check): the most threads
  // its blocks may have, from __launch_bounds__ as NVRTC read it; 0 where it sets none.
  std::vector<int> max_threads;
  std::string log;                         // compiler warnings
};

class Program {
 public:
  virtual ~Program() = default;
  // args[i] points at the i-th parameter's value, exactly as cuLaunchKernel takes them.
  virtual void launch(const LaunchConfig& config, void** args) = 0;
  virtual KernelAttributes attributes() const = 0;
  // What its launches so far did that a GPU leaves undefined and this backend answered its own
  // way (the cpu backend: a shuffle read a lane not taking part), once: a sentence, then "".
  virtual std::string take_note() { return ""; }
};

class Module {
 public:
  virtual ~Module() = default;
  virtual std::unique_ptr<Program> kernel(const std::string& lowered_name) = 0;
  // Copies bytes into a __constant__ or __device__ global; throws kiln::Error when there is none.
  virtual void set_global(const std::string& name, const void* data, std::size_t bytes) = 0;
  // Copies bytes out of a global (the first bytes of it); throws kiln::Error when there is none
  // or it is smaller.
  virtual void get_global(const std::string& name, void* out, std::size_t bytes) = 0;
};

// What a backend's memory holds now, in bytes (cuda.memory_info()).
struct MemoryInfo {
  std::uint64_t free = 0;   // what an allocation may still take (cpu: the host's available)
  std::uint64_t total = 0;  // the device's (cpu: the host's RAM)
  // A memory pool's (the cuda backend's, where the driver has one): what it holds from the
  // device, free or not, and what of that live arrays use. 0 without a pool.
  std::uint64_t pool_reserved = 0;
  std::uint64_t pool_used = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;  // "cpu" or "cuda"
  virtual const DeviceInfo& device() const = 0;
  virtual std::string describe() const = 0;  // one line for kiln --info
  // Whether the host may read and write this backend's memory through its pointers (the cpu
  // backend's is host memory; a GPU's is not), once synchronize() has returned.
  virtual bool host_addressable() const { return false; }

  // Memory. alloc throws kiln::Error naming the bytes asked for and free on exhaustion.
  virtual void* alloc(std::size_t bytes) = 0;
  virtual void free(void* ptr) noexcept = 0;
  virtual void copy_to_device(void* dst, const void* src, std::size_t bytes, Stream* s) = 0;
  virtual void copy_to_host(void* dst, const void* src, std::size_t bytes, Stream* s) = 0;
  virtual void copy_on_device(void* dst, const void* src, std::size_t bytes, Stream* s) = 0;
  virtual void memset(void* dst, int byte, std::size_t bytes, Stream* s) = 0;
  virtual MemoryInfo memory_info() = 0;

  virtual std::unique_ptr<Stream> create_stream() = 0;
  virtual std::unique_ptr<Event> create_event() = 0;
  virtual void synchronize() = 0;

  // Loads what a compiler made for this backend (jit/compiler.h); throws kiln::Error when the
  // image cannot be loaded here. With own_globals, the module's __device__ and __constant__
  // globals are its own, shared with no other load of the same image (a kiln module whose
  // globals Lua sets); without, a backend may hand out one loaded image to every such load.
  virtual std::unique_ptr<Module> load(const CompileResult& compiled, bool own_globals = false) = 0;

  // Bumped when the device context is recreated (cuda.reset()): memory allocated under an older
  // generation is gone, and must be neither used nor freed.
  virtual std::uint64_t generation() const { return 0; }
};

}  // namespace kiln
