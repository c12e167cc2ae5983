// The cpu backend's device side: memory (host memory), streams and events (work runs at the
// call), loading a compiled module (memfd + dlopen) and launching its kernels on the worker pool.
// Its compiler is jit/cpu/compiler.cpp.
#include "runtime/cpu/backend.h"

#include <link.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include "runtime/cpu/executor.h"
#include "runtime/cpu/guarded_memory.h"
#include "runtime/cpu/shared_object.h"
#include "runtime/process.h"
#include "runtime/error.h"

namespace kiln {

// The processor's brand string, as /proc/cpuinfo's "model name" shows it, or "host CPU". On x86
// it comes from cpuid: /proc/cpuinfo asks every core for its clock, which cost a cached kernel's
// first launch a quarter of a millisecond.
std::string cpu::cpu_model_name() {
  std::string name;
#if defined(__x86_64__) || defined(__i386__)
  unsigned regs[12] = {};
  if (__get_cpuid_max(0x80000000u, nullptr) >= 0x80000004u) {
    for (unsigned leaf = 0; leaf < 3; ++leaf)
      __get_cpuid(0x80000002u + leaf, &regs[4 * leaf], &regs[4 * leaf + 1], &regs[4 * leaf + 2],
                  &regs[4 * leaf + 3]);
    name.assign(reinterpret_cast<const char*>(regs), sizeof regs);
  }
#else
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; name.empty() && std::getline(in, line);)
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos)
      name = line.substr(line.find(':') + 1);
#endif
  name.resize(std::strlen(name.c_str()));  // cpuid pads with NULs
  const auto first = name.find_first_not_of(' '), last = name.find_last_not_of(' ');
  return first == std::string::npos ? "host CPU" : name.substr(first, last - first + 1);
}

namespace {

using cpu::required_symbol;
using cpu::SharedObject;

// The host's memory: MemAvailable and MemTotal from /proc/meminfo (what Linux could give a
// program without swapping, and the RAM), in bytes; zeros where it cannot be read.
MemoryInfo host_memory() {
  MemoryInfo info;
  std::ifstream meminfo("/proc/meminfo");
  std::string key, unit;
  std::uint64_t kib = 0;
  while (meminfo >> key >> kib) {
    std::getline(meminfo, unit);  // " kB"
    if (key == "MemTotal:") info.total = kib * 1024;
    if (key == "MemAvailable:") info.free = kib * 1024;
  }
  return info;
}

// ---- Streams and events ----------------------------------------------------------------------

// Work on the cpu backend runs at the call, in order, so a stream is always idle.
class CpuStream final : public Stream {
 public:
  void synchronize() override {}
};

// Records wall-clock time when recorded (all earlier work has finished by then).
class CpuEvent final : public Event {
 public:
  void record(Stream*) override { time_ = std::chrono::steady_clock::now(); }
  void synchronize() override {}
  bool query() override { return true; }  // (every launch has returned)
  void wait(Stream*) override {}
  double elapsed_ms_since(const Event& start) const override {
    const auto& s = dynamic_cast<const CpuEvent&>(start);
    return std::chrono::duration<double, std::milli>(time_ - s.time_).count();
  }

 private:
  std::chrono::steady_clock::time_point time_ = std::chrono::steady_clock::now();
};

class CpuBackend;

// ---- Programs and modules --------------------------------------------------------------------

class CpuProgram final : public Program {
 public:
  CpuProgram(std::shared_ptr<CpuBackend> backend, std::shared_ptr<SharedObject> so,
             cpu::KernelEntry entry, long static_shared, int max_threads)
      : backend_(std::move(backend)),
        so_(std::move(so)),
        entry_(std::move(entry)),
        static_shared_(static_shared),
        max_threads_(max_threads) {
    entry_.notes = &notes_;
  }
  void launch(const LaunchConfig& config, void** args) override;
  KernelAttributes attributes() const override {
    KernelAttributes a;
    a.shared_bytes = static_shared_;
    a.max_threads_per_block = max_threads_ > 0 ? std::min(max_threads_, 1024) : 1024;
    a.threads = entry_.mode == kiln_cpu::mode_loop      ? "loop"
                : entry_.mode == kiln_cpu::mode_fibers  ? "fibers"
                : entry_.mode == kiln_cpu::mode_regions ? "regions"
                                                        : "coroutines";
    a.why = entry_.why;
    return a;
  }
  std::string take_note() override {
    if (noted_ || !(notes_.load(std::memory_order_relaxed) & kiln_cpu::note_unjoined_shuffle))
      return "";
    noted_ = true;
    return "read a lane that was not taking part in a shuffle (outside the mask given, or "
           "returned, or beyond a partial warp): a GPU gives an undefined value there (an H200 "
           "gave 0, as kiln does); "
           "`kiln --check` names the line";
  }

 private:
  std::shared_ptr<CpuBackend> backend_;
  std::shared_ptr<SharedObject> so_;
  cpu::KernelEntry entry_;
  long static_shared_;
  int max_threads_;            // its __launch_bounds__ (as NVRTC read them), 0: none known
  std::atomic<int> notes_{0};  // kiln_cpu::Note bits of the launches (entry_.notes)
  bool noted_ = false;         // take_note has told of them
};

class CpuModule final : public Module {
 public:
  CpuModule(std::shared_ptr<CpuBackend> backend, std::shared_ptr<SharedObject> so,
            const cpu::Allocations* allocations, std::uint64_t id, const CompileResult& compiled)
      : backend_(std::move(backend)), so_(std::move(so)), allocations_(allocations), id_(id) {
    for (std::size_t i = 0; i < compiled.max_threads.size() && i < compiled.lowered_names.size();
         ++i)
      max_threads_[compiled.lowered_names[i]] = compiled.max_threads[i];
    auto version = required_symbol<unsigned (*)()>(*so_, "kiln_abi_version");
    if (version() != KILN_CPU_ABI_VERSION)
      throw Error("cpu backend: kernel module built for ABI " + std::to_string(version()) +
                  ", this kiln uses " + std::to_string(KILN_CPU_ABI_VERSION) + " (stale cache?)");
    tls_bytes_ = cpu::tls_segment_bytes(*so_);
    static_shared_ = tls_bytes_ < 0 ? -1 : std::max(0L, tls_bytes_ - long(sizeof(kiln_cpu::Tls)));
  }

  std::unique_ptr<Program> kernel(const std::string& lowered_name) override {
    cpu::KernelEntry e;
    e.entry = reinterpret_cast<kiln_cpu::EntryFn>(so_->symbol(lowered_name));
    e.run = reinterpret_cast<kiln_cpu::RunFn>(
        so_->symbol("kiln_run_" + lowered_name.substr(lowered_name.rfind('_') + 1)));
    auto name = reinterpret_cast<const char* (*)()>(so_->symbol(lowered_name + "_name"));
    auto mode = reinterpret_cast<int (*)()>(so_->symbol(lowered_name + "_mode"));
    if (!e.entry || !e.run || !name || !mode || lowered_name.rfind("kiln_entry_", 0) != 0)
      throw Error("cpu backend: the module has no kernel '" + lowered_name + "'");
    e.name = name();
    e.module = so_->handle;
    e.module_id = id_;
    e.tls_bytes = std::size_t(std::max(0L, tls_bytes_));
    e.set_launch = required_symbol<void (*)(const kiln_cpu::Tls*)>(*so_, "kiln_set_launch");
    e.set_thread = required_symbol<void (*)(kiln_cpu::uint3)>(*so_, "kiln_set_thread");
    e.get_launch = required_symbol<void (*)(kiln_cpu::Tls*)>(*so_, "kiln_get_launch");
    e.mode = kiln_cpu::ThreadMode(mode());
    if (auto why = reinterpret_cast<const char* (*)()>(so_->symbol(lowered_name + "_why")))
      e.why = why();
    if (e.mode == kiln_cpu::mode_coroutines) {
      e.start = required_symbol<kiln_cpu::StartFn>(*so_, "kiln_start_" + lowered_name.substr(11));
      e.round = required_symbol<kiln_cpu::RoundFn>(*so_, "kiln_round");
    }
    e.allocations = allocations_;
    auto bound = max_threads_.find(lowered_name);
    return std::make_unique<CpuProgram>(backend_, so_, std::move(e), static_shared_,
                                        bound == max_threads_.end() ? 0 : bound->second);
  }

  void set_global(const std::string& name, const void* data, std::size_t bytes) override {
    std::memcpy(global(name, bytes), data, bytes);
  }
  void get_global(const std::string& name, void* out, std::size_t bytes) override {
    std::memcpy(out, global(name, bytes), bytes);
  }

 private:
  // The address of the module's global `name`, checked to hold at least bytes.
  void* global(const std::string& name, std::size_t bytes) {
    void* p = so_->symbol(name);
    Dl_info info{};
    void* entry = nullptr;
    const bool found = p && ::dladdr1(p, &info, &entry, RTLD_DL_SYMENT) && entry;
    const auto* sym = static_cast<const ElfW(Sym)*>(entry);
    if (!found || ELF64_ST_TYPE(sym->st_info) != STT_OBJECT)
      throw Error("set_constant: no __constant__ or __device__ variable '" + name +
                  "' in the module (at namespace scope)");
    if (bytes > sym->st_size)
      throw Error("set_constant: '" + name + "' holds " + std::to_string(sym->st_size) +
                  " bytes; " + std::to_string(bytes) + " bytes do not fit");
    return p;
  }

  std::shared_ptr<CpuBackend> backend_;
  std::shared_ptr<SharedObject> so_;
  const cpu::Allocations* allocations_;  // owned by the backend, which outlives the module
  long tls_bytes_ = -1;                  // its TLS block; -1: unknown
  std::uint64_t id_;                     // unique among this backend's modules
  std::map<std::string, int> max_threads_;  // lowered name → its __launch_bounds__ (0: none)
  long static_shared_ = -1;
};

// ---- The backend -----------------------------------------------------------------------------

class CpuBackend final : public Backend, public std::enable_shared_from_this<CpuBackend> {
 public:
  explicit CpuBackend(const CpuBackendOptions& options);

  std::string name() const override { return "cpu"; }
  bool host_addressable() const override { return true; }
  const DeviceInfo& device() const override { return info_; }
  std::string describe() const override {
    return "cpu: " + info_.name + ", " + std::to_string(workers_) + " worker thread(s)";
  }

  void* alloc(std::size_t bytes) override {
    void* p = memory_.allocate(bytes);
    if (check_) {
      try {
        allocations_.add(p, bytes);
      } catch (...) {
        memory_.release(p);
        throw;
      }
    }
    return p;
  }
  void free(void* ptr) noexcept override {
    if (check_ && ptr) allocations_.remove(ptr);
    memory_.release(ptr);
  }
  // Check mode: kernels get bounds-checked pointers and report out-of-bounds accesses.
  bool check() const { return check_; }
  const cpu::Allocations* allocations() const { return check_ ? &allocations_ : nullptr; }
  void copy_to_device(void* dst, const void* src, std::size_t bytes, Stream*) override {
    if (bytes) std::memmove(dst, src, bytes);
  }
  void copy_to_host(void* dst, const void* src, std::size_t bytes, Stream*) override {
    if (bytes) std::memmove(dst, src, bytes);
  }
  void copy_on_device(void* dst, const void* src, std::size_t bytes, Stream*) override {
    if (bytes) std::memmove(dst, src, bytes);
  }
  void memset(void* dst, int byte, std::size_t bytes, Stream*) override {
    if (bytes) std::memset(dst, byte, bytes);
  }
  MemoryInfo memory_info() override { return host_memory(); }
  std::unique_ptr<Stream> create_stream() override { return std::make_unique<CpuStream>(); }
  std::unique_ptr<Event> create_event() override { return std::make_unique<CpuEvent>(); }
  void synchronize() override {}

  // (every load has globals of its own: each dlopens its own copy of the library)
  std::unique_ptr<Module> load(const CompileResult& compiled, bool own_globals = false) override;

  cpu::WorkerPool& pool() {
    std::call_once(pool_once_, [this] { pool_ = std::make_unique<cpu::WorkerPool>(workers_); });
    return *pool_;
  }

 private:
  int workers_ = 1;
  DeviceInfo info_;
  std::once_flag pool_once_;
  std::unique_ptr<cpu::WorkerPool> pool_;
  bool check_ = false;
  cpu::GuardedMemory memory_;  // device arrays, each between guard pages
  cpu::Allocations allocations_;
  std::atomic<std::uint64_t> modules_loaded_{0};  // numbers each loaded module
};

CpuBackend::CpuBackend(const CpuBackendOptions& options) {
  check_ = options.check;
  workers_ = options.workers > 0 ? options.workers : usable_cores();
  info_.name = cpu::cpu_model_name();
  info_.multiprocessors = workers_;
  info_.total_memory =
      std::size_t(::sysconf(_SC_PHYS_PAGES)) * std::size_t(::sysconf(_SC_PAGESIZE));
  info_.max_shared_per_block_optin = cpu::kDynamicSharedBytes;
}

std::unique_ptr<Module> CpuBackend::load(const CompileResult& compiled, bool) {
  if (compiled.image_kind != "so")
    throw Error("cpu backend: cannot load a '" + compiled.image_kind + "' image");
  int fd = ::memfd_create("kiln-kernel", MFD_CLOEXEC);
  if (fd < 0) throw Error(std::string("cpu backend: memfd_create: ") + std::strerror(errno));
  std::size_t done = 0;
  while (done < compiled.image.size()) {
    ssize_t n = ::write(fd, compiled.image.data() + done, compiled.image.size() - done);
    if (n <= 0) {
      ::close(fd);
      throw Error("cpu backend: cannot write a kernel module to memory");
    }
    done += std::size_t(n);
  }
  return std::make_unique<CpuModule>(shared_from_this(), cpu::open_memfd_object(fd), allocations(),
                                     ++modules_loaded_, compiled);
}

// Checks a launch against a GPU's limits; the message names the kernel and the bad value.
void validate_launch(const std::string& kernel, const LaunchConfig& c, const DeviceInfo& info) {
  auto d = [](const Dim3& v) {
    char buf[48];  // snprintf: GCC 12 warns falsely (-Wrestrict) on the concatenation form
    std::snprintf(buf, sizeof buf, "(%u,%u,%u)", v.x, v.y, v.z);
    return std::string(buf);
  };
  auto fail = [&](const std::string& what) { throw Error("kernel '" + kernel + "': " + what); };
  if (c.block.x == 0 || c.block.y == 0 || c.block.z == 0)
    fail("block size " + d(c.block) + " has a zero dimension");
  if (c.grid.x == 0 || c.grid.y == 0 || c.grid.z == 0)
    fail("grid size " + d(c.grid) + " has a zero dimension");
  for (int i = 0; i < 3; ++i) {
    std::uint32_t b = i == 0 ? c.block.x : i == 1 ? c.block.y : c.block.z;
    std::uint32_t g = i == 0 ? c.grid.x : i == 1 ? c.grid.y : c.grid.z;
    if (b > std::uint32_t(info.max_block_dim[i]))
      fail("block size " + d(c.block) + " exceeds the limit (1024, 1024, 64)");
    if (std::int64_t(g) > info.max_grid_dim[i])
      fail("grid size " + d(c.grid) + " exceeds the limit (2147483647, 65535, 65535)");
  }
  if (c.block.count() > std::uint64_t(info.max_threads_per_block))
    fail("block size " + d(c.block) + " has " + std::to_string(c.block.count()) +
         " threads, more than the limit of " + std::to_string(info.max_threads_per_block));
  if (c.shared_bytes > info.max_shared_per_block_optin)
    fail(std::to_string(c.shared_bytes) +
         " bytes of dynamic shared memory requested, more than the limit of " +
         std::to_string(info.max_shared_per_block_optin));
}

void CpuProgram::launch(const LaunchConfig& config, void** args) {
  validate_launch(entry_.name, config, backend_->device());
  if (max_threads_ > 0 && config.block.count() > std::uint64_t(max_threads_))
    throw Error("kernel '" + entry_.name + "': block (" + std::to_string(config.block.x) + "," +
                std::to_string(config.block.y) + "," + std::to_string(config.block.z) + ") has " +
                std::to_string(config.block.count()) + " threads; this kernel allows at most " +
                std::to_string(max_threads_) + " per block (its __launch_bounds__)");
  if (static_shared_ > long(48 * 1024))
    throw Error("kernel '" + entry_.name + "': its module uses " + std::to_string(static_shared_) +
                " bytes of static shared memory, more than the limit of 49152");
  const std::uint64_t blocks = config.grid.count();
  if (config.resident && !config.cooperative && blocks > 1 &&
      blocks <= cpu::WorkerPool::kMaxCooperativeBlocks)
    return backend_->pool().launch_cooperative(entry_, config, args, blocks);
  if (!config.cooperative) return backend_->pool().launch(entry_, config, args, blocks);
  if (config.grid.count() > cpu::WorkerPool::kMaxCooperativeBlocks)
    throw Error("kernel '" + entry_.name + "' synchronises its grid (this_grid().sync()), so all of "
                "its blocks must run at once: " + std::to_string(config.grid.count()) +
                " blocks is more than the cpu backend's " +
                std::to_string(cpu::WorkerPool::kMaxCooperativeBlocks) +
                " (a grid-stride loop over fewer blocks covers any size)");
  backend_->pool().launch_cooperative(entry_, config, args, config.grid.count());
}

}  // namespace

std::shared_ptr<Backend> make_cpu_backend(const CpuBackendOptions& options) {
  return std::make_shared<CpuBackend>(options);
}

}  // namespace kiln
