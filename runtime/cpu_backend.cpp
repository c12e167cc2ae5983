// The cpu backend: compile (prelude + user source + entry points -> .so by the host compiler),
// load (memfd + dlopen), launch (validated, then run by the worker pool), memory and streams.
#include "runtime/cpu_backend.h"

#include <cxxabi.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "jit/host_compiler.h"
#include "jit/kernel_decl.h"
#include "runtime/cpu_executor.h"
#include "runtime/cpu_regions.h"
#include "runtime/error.h"
#include "runtime/interrupt.h"

#ifndef KILN_KERNELS_DIR
#define KILN_KERNELS_DIR ""
#endif
#ifndef KILN_CXX_COMPILER
#define KILN_CXX_COMPILER "c++"
#endif

namespace kiln {

namespace {


namespace fs = std::filesystem;

// ---- Small helpers ---------------------------------------------------------------------------

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// "model name : Intel(R) ..." from /proc/cpuinfo, or "host CPU".
std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) {
        auto start = line.find_first_not_of(' ', colon + 1);
        return start == std::string::npos ? "host CPU" : line.substr(start);
      }
    }
  }
  return "host CPU";
}

std::string demangle_type(const char* mangled) {
  int status = 0;
  char* d = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  std::string out = status == 0 && d ? d : mangled;
  std::free(d);
  return out;
}

// A dlopen handle, closed when the last module or program using it goes. A module loaded from a
// memfd keeps the fd open as long as the handle: dlopen finds an already-loaded object by its
// path, so a reused "/proc/self/fd/N" would return the previous module instead of this one.
struct SharedObject {
  void* handle = nullptr;
  int fd = -1;
  explicit SharedObject(void* h, int memfd = -1) : handle(h), fd(memfd) {}
  ~SharedObject() {
    if (handle) ::dlclose(handle);
    if (fd >= 0 && !still_loaded()) ::close(fd);
  }
  // Whether the loader kept the object after dlclose (C++ inline statics are STB_GNU_UNIQUE
  // symbols, which make dlclose a no-op). Its "/proc/self/fd/N" name then stays bound, so the
  // fd must stay open: a reused N would make a later dlopen return this old module.
  bool still_loaded() const {
    std::string path = "/proc/self/fd/" + std::to_string(fd);
    void* again = ::dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD);
    if (again) ::dlclose(again);
    return again != nullptr;
  }
  SharedObject(const SharedObject&) = delete;
  SharedObject& operator=(const SharedObject&) = delete;
  // The address of an exported symbol, or nullptr.
  void* symbol(const std::string& name) const { return ::dlsym(handle, name.c_str()); }
};

std::shared_ptr<SharedObject> open_object(const std::string& path, int memfd = -1) {
  void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) throw Error(std::string("cpu backend: cannot load a kernel module: ") + ::dlerror());
  return std::make_shared<SharedObject>(h, memfd);
}

// Whether an object loaded under path is still in the process (one dlclose could not unload).
bool still_loaded(const std::string& path) {
  void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (h) ::dlclose(h);
  return h != nullptr;
}

// dlopens the module in memfd (taking ownership of fd). dlopen returns an already-loaded object
// whose name matches, and "/proc/self/fd/N" names a new module after an earlier one's fd N was
// closed; if that earlier object is still loaded (something kept it resident), the module is
// opened through a duplicate fd whose name is not taken.
std::shared_ptr<SharedObject> open_memfd_object(int fd) {
  std::vector<int> taken;  // numbers whose names are held by stale objects, closed at the end
  auto close_taken = [&] {
    for (int t : taken) ::close(t);
  };
  while (still_loaded("/proc/self/fd/" + std::to_string(fd))) {
    int dup = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (dup < 0 || taken.size() > 64) {
      ::close(fd);
      if (dup >= 0) ::close(dup);
      close_taken();
      throw Error("cpu backend: cannot find an unused name to load a kernel module under");
    }
    taken.push_back(fd);
    fd = dup;
  }
  try {
    auto so = open_object("/proc/self/fd/" + std::to_string(fd), fd);  // so owns fd from here
    close_taken();
    return so;
  } catch (...) {
    ::close(fd);
    close_taken();
    throw;
  }
}

template <class F>
F required_symbol(const SharedObject& so, const std::string& name) {
  void* p = so.symbol(name);
  if (!p) throw Error("cpu backend: kernel module lacks '" + name + "' (not built by this kiln?)");
  return reinterpret_cast<F>(p);
}

// Bytes of the module's thread-local segment (its static __shared__ arrays live there).
long tls_segment_bytes(const SharedObject& so) {
  Dl_info info{};
  void* sym = so.symbol("kiln_set_launch");
  if (!sym || !::dladdr(sym, &info)) return -1;
  struct Query {
    void* base;
    long bytes = -1;
  } q{info.dli_fbase};
  ::dl_iterate_phdr(
      [](dl_phdr_info* i, std::size_t, void* data) {
        auto* q = static_cast<Query*>(data);
        for (int k = 0; k < i->dlpi_phnum; ++k) {
          if (i->dlpi_phdr[k].p_type == PT_LOAD && i->dlpi_phdr[k].p_offset == 0 &&
              reinterpret_cast<void*>(i->dlpi_addr + i->dlpi_phdr[k].p_vaddr) != q->base)
            return 0;
        }
        for (int k = 0; k < i->dlpi_phnum; ++k)
          if (i->dlpi_phdr[k].p_type == PT_TLS) q->bytes = long(i->dlpi_phdr[k].p_memsz);
        return q->bytes >= 0 ? 1 : 0;
      },
      &q);
  return q.bytes;
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
  double elapsed_ms_since(const Event& start) const override {
    const auto& s = dynamic_cast<const CpuEvent&>(start);
    return std::chrono::duration<double, std::milli>(time_ - s.time_).count();
  }

 private:
  std::chrono::steady_clock::time_point time_ = std::chrono::steady_clock::now();
};

class CpuBackend;
using Mode = kiln_cpu::ThreadMode;

// ---- Programs and modules --------------------------------------------------------------------

class CpuProgram final : public Program {
 public:
  CpuProgram(std::shared_ptr<CpuBackend> backend, std::shared_ptr<SharedObject> so,
             cpu::KernelEntry entry, long static_shared)
      : backend_(std::move(backend)),
        so_(std::move(so)),
        entry_(std::move(entry)),
        static_shared_(static_shared) {}
  void launch(const LaunchConfig& config, void** args) override;
  KernelAttributes attributes() const override {
    KernelAttributes a;
    a.shared_bytes = static_shared_;
    a.max_threads_per_block = 1024;
    a.threads = entry_.mode == kiln_cpu::mode_loop         ? "loop"
                : entry_.mode == kiln_cpu::mode_fibers     ? "fibers"
                : entry_.mode == kiln_cpu::mode_regions    ? "regions"
                                                           : "coroutines";
    return a;
  }

 private:
  std::shared_ptr<CpuBackend> backend_;
  std::shared_ptr<SharedObject> so_;
  cpu::KernelEntry entry_;
  long static_shared_;
};

class CpuModule final : public Module {
 public:
  CpuModule(std::shared_ptr<CpuBackend> backend, std::shared_ptr<SharedObject> so,
            const cpu::Allocations* allocations, std::uint64_t id)
      : backend_(std::move(backend)),
        so_(std::move(so)),
        allocations_(allocations),
        id_(id) {
    auto version = required_symbol<unsigned (*)()>(*so_, "kiln_abi_version");
    if (version() != KILN_CPU_ABI_VERSION)
      throw Error("cpu backend: kernel module built for ABI " + std::to_string(version()) +
                  ", this kiln uses " + std::to_string(KILN_CPU_ABI_VERSION) + " (stale cache?)");
    tls_bytes_ = tls_segment_bytes(*so_);
    static_shared_ =
        tls_bytes_ < 0 ? -1 : std::max(0L, tls_bytes_ - long(sizeof(kiln_cpu::Tls)));
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
    if (e.mode == kiln_cpu::mode_coroutines) {
      e.start = required_symbol<kiln_cpu::StartFn>(*so_, "kiln_start_" + lowered_name.substr(11));
      e.round = required_symbol<kiln_cpu::RoundFn>(*so_, "kiln_round");
    }
    e.allocations = allocations_;
    return std::make_unique<CpuProgram>(backend_, so_, std::move(e), static_shared_);
  }

  void set_global(const std::string& name, const void* data, std::size_t bytes) override {
    void* p = so_->symbol(name);
    Dl_info info{};
    void* entry = nullptr;
    const bool found = p && ::dladdr1(p, &info, &entry, RTLD_DL_SYMENT) && entry;
    const auto* sym = static_cast<const ElfW(Sym)*>(entry);
    if (!found || ELF64_ST_TYPE(sym->st_info) != STT_OBJECT)
      throw Error("set_global: the module has no __constant__ or __device__ variable '" + name +
                  "' (at namespace scope, not static)");
    if (bytes > sym->st_size)
      throw Error("set_global: " + std::to_string(bytes) + " bytes given for '" + name +
                  "', which holds " + std::to_string(sym->st_size));
    std::memcpy(p, data, bytes);
  }

 private:
  std::shared_ptr<CpuBackend> backend_;
  std::shared_ptr<SharedObject> so_;
  const cpu::Allocations* allocations_;  // owned by the backend, which outlives the module
  long tls_bytes_ = -1;                  // its TLS block; -1: unknown
  std::uint64_t id_;                     // unique among this backend's modules
  long static_shared_ = -1;
};

// ---- The backend -----------------------------------------------------------------------------

class CpuBackend final : public Backend, public std::enable_shared_from_this<CpuBackend> {
 public:
  explicit CpuBackend(const CpuBackendOptions& options);

  std::string name() const override { return "cpu"; }
  const DeviceInfo& device() const override { return info_; }
  std::string describe() const override {
    return "cpu: " + info_.name + ", " + std::to_string(workers_) +
           " worker thread(s), kernels built by " + compiler_ + " (" + compiler_version() + ")";
  }

  void* alloc(std::size_t bytes) override {
    std::size_t rounded = (std::max<std::size_t>(bytes, 1) + 63) / 64 * 64;
    void* p = std::aligned_alloc(64, rounded);
    if (!p)
      throw Error("cpu backend: out of memory allocating " + std::to_string(bytes) + " bytes");
    if (check_) {
      try {
        allocations_.add(p, bytes);
      } catch (...) {
        std::free(p);
        throw;
      }
    }
    return p;
  }
  void free(void* ptr) noexcept override {
    if (check_ && ptr) allocations_.remove(ptr);
    std::free(ptr);
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
  std::unique_ptr<Stream> create_stream() override { return std::make_unique<CpuStream>(); }
  std::unique_ptr<Event> create_event() override { return std::make_unique<CpuEvent>(); }
  void synchronize() override {}

  // The compiler is named by its binary's identity (path, size, mtime) rather than by its
  // --version line: running it costs milliseconds that a cached kernel's first launch must not.
  std::string compiler_identity(const std::string&) const override {
    return "cpu:" + jit::compiler_fingerprint(compiler_) + ":" + info_.name + ":abi" +
           std::to_string(KILN_CPU_ABI_VERSION) + ":prelude" + prelude_hash_ + ":" + joined_flags() +
           (regions_ ? ":regions" + std::to_string(cpu::kRegionsVersion) : ":no-regions");
  }
  std::string default_arch() const override { return "native"; }
  CompileResult compile(const CompileRequest& request) override;
  CompileResult compile_once(const CompileRequest& request, const std::vector<Mode>& modes,
                             const std::vector<std::string>& user, bool checked_pointers);
  std::unique_ptr<Module> load(const CompileResult& compiled) override;

  cpu::WorkerPool& pool() {
    std::call_once(pool_once_, [this] { pool_ = std::make_unique<cpu::WorkerPool>(workers_); });
    return *pool_;
  }

 private:
  std::string compiler_version() const {
    std::call_once(version_once_, [this] { version_ = jit::compiler_version(compiler_); });
    return version_;
  }
  std::vector<std::string> code_flags() const;
  std::string joined_flags() const {
    std::string out;
    for (const auto& f : code_flags()) out += (out.empty() ? "" : " ") + f;
    return out;
  }
  std::string translation_unit(const CompileRequest& request, const std::vector<Mode>& modes,
                               bool checked_pointers) const;

  std::string kernels_dir_, compiler_, prelude_hash_;
  int workers_ = 1;
  DeviceInfo info_;
  mutable std::once_flag version_once_;
  mutable std::string version_;
  std::once_flag pool_once_;
  std::unique_ptr<cpu::WorkerPool> pool_;
  bool check_ = false;
  bool regions_ = true;  // part of the compiler identity: it decides how modules are built
  cpu::Allocations allocations_;
  std::atomic<std::uint64_t> modules_loaded_{0};  // numbers each loaded module
};

CpuBackend::CpuBackend(const CpuBackendOptions& options) {
  kernels_dir_ = options.kernels_dir;
  if (kernels_dir_.empty()) {
    const char* home = std::getenv("KILN_HOME");
    kernels_dir_ =
        home && *home ? std::string(home) + "/kernels_src" : std::string(KILN_KERNELS_DIR);
  }
  compiler_ = !options.compiler.empty() ? options.compiler : env_or("KILN_CXX", KILN_CXX_COMPILER);
  if (compiler_.empty()) compiler_ = "c++";
  const std::string check = env_or("KILN_CHECK", "");
  check_ = options.check || (!check.empty() && check != "0");
  regions_ = options.regions && env_or("KILN_REGIONS", "1") != "0";
  workers_ = options.workers;
  if (workers_ <= 0) {
    std::string env = env_or("KILN_CPU_THREADS", "");
    if (!env.empty()) {
      char* end = nullptr;
      long n = std::strtol(env.c_str(), &end, 10);
      if (*end || n < 1 || n > 4096)
        throw Error("KILN_CPU_THREADS='" + env + "': expected a worker count from 1 to 4096");
      workers_ = int(n);
    } else {
      workers_ = int(std::max(1u, std::thread::hardware_concurrency()));
    }
  }
  if (!fs::exists(fs::path(kernels_dir_) / "kiln" / "cpu_prelude.h"))
    throw Error("cpu backend: no kiln/cpu_prelude.h in the kernels folder '" + kernels_dir_ +
                "' (set KILN_HOME to kiln's source folder)");
  // Every kernel-side header of the cpu backend (the prelude's topics, cpu_include/), by path:
  // an edit to any of them builds modules anew.
  std::vector<fs::path> headers;
  for (const auto& e : fs::recursive_directory_iterator(fs::path(kernels_dir_) / "kiln"))
    if (e.is_regular_file()) headers.push_back(e.path());
  std::sort(headers.begin(), headers.end());
  std::string prelude;
  for (const auto& h : headers)
    prelude += fs::relative(h, kernels_dir_).string() + '\n' + read_text(h);
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx",
                (unsigned long long)XXH64(prelude.data(), prelude.size(), 0));
  prelude_hash_ = hex;

  info_.name = cpu_model_name();
  info_.multiprocessors = workers_;
  info_.total_memory =
      std::size_t(::sysconf(_SC_PHYS_PAGES)) * std::size_t(::sysconf(_SC_PAGESIZE));
  info_.max_shared_per_block_optin = cpu::kDynamicSharedBytes;
}

// The compiler flags every kernel module is built with (part of the compiler identity).
std::vector<std::string> CpuBackend::code_flags() const {
  std::vector<std::string> flags{"-std=c++17",
                                 "-O3",
                                 "-march=native",
                                 // threadIdx & co. are thread-locals of a dlopen'd library:
                                 // one __tls_get_addr per function for all of them, not one per
                                 // read. (TLS descriptors, -mtls-dialect=gnu2, would be cheaper
                                 // still, but glibc before 2.40 clobbers vector registers in
                                 // them: wrong sums.)
                                 "-ftls-model=local-dynamic",
                                 "-fPIC",
                                 "-shared",
                                 "-fno-semantic-interposition",
                                 "-fno-math-errno",
                                 "-fno-trapping-math",
                                 "-ffp-contract=fast",  // GPUs fuse a*b+c too (nvcc --fmad=true)
                                 "-fstack-clash-protection"};  // large frames still hit the guard
  // GCC gives static locals of templates and inline functions (a template kernel's __shared__
  // arrays) STB_GNU_UNIQUE binding: glibc then ignores dlclose for the module (a later module
  // loaded under the same /proc/self/fd name got the stale one), and binds the same-named array
  // of every later module to the first one's, whatever its size. Clang never emits it.
  // (Told from the binary's resolved path, so that no subprocess runs for a cached kernel.)
  if (jit::compiler_fingerprint(compiler_).find("clang") == std::string::npos)
    flags.push_back("-fno-gnu-unique");
  // Check mode: bounds checks, and line tables to name the source line of a bad access.
  if (check_) flags.insert(flags.end(), {"-DKILN_CHECK=1", "-g"});
  return flags;
}

// prelude, #line 1 "<file>", the user's source, then the exported entry points.
std::string CpuBackend::translation_unit(const CompileRequest& request,
                                         const std::vector<Mode>& modes,
                                         bool checked_pointers) const {
  std::string filename = request.filename.empty() ? "kernel.cu" : request.filename;
  std::string quoted;
  for (char c : filename) {
    if (c == '"' || c == '\\') quoted += '\\';
    quoted += c;
  }
  const bool coroutines =
      std::find(modes.begin(), modes.end(), kiln_cpu::mode_coroutines) != modes.end();
  std::string tu = coroutines ? "#define KILN_COROUTINES 1\n" : "";
  tu += "#include <kiln/cpu_prelude.h>\n#line 1 \"" + quoted + "\"\n";
  std::string source = cpu::rewrite_extern_shared(request.source);
  if (coroutines) source = cpu::rewrite_coroutine_returns(source);
  tu += checked_pointers ? cpu::rewrite_pointer_params(source) : source;
  tu +=
      "\n#line 1 \"<kiln entry points>\"\n#define KILN_EXPORT extern \"C\" "
      "__attribute__((visibility(\"default\")))\n";
  tu += "KILN_EXPORT unsigned kiln_abi_version() { return KILN_CPU_ABI_VERSION; }\n";
  tu += "KILN_EXPORT void kiln_set_launch(const kiln_cpu::Tls* t) { kiln_cpu::tls = *t; }\n";
  tu += "KILN_EXPORT void kiln_set_thread(kiln_cpu::uint3 t) { kiln_cpu::tls.thread_idx = t; }\n";
  tu += "KILN_EXPORT void kiln_get_launch(kiln_cpu::Tls* t) { *t = kiln_cpu::tls; }\n";
  if (coroutines)
    tu += "KILN_EXPORT unsigned kiln_round(void* const* f, const kiln_cpu::uint3* t, unsigned* l, "
          "unsigned c, unsigned* r) { return kiln_cpu::round(f, t, l, c, r); }\n";
  tu += "KILN_EXPORT unsigned kiln_entry_count() { return " +
        std::to_string(request.name_expressions.size()) + "; }\n";
  for (std::size_t i = 0; i < request.name_expressions.size(); ++i) {
    const std::string& expr = request.name_expressions[i];
    std::string id = std::to_string(i);
    std::string escaped;
    for (char c : expr) {
      if (c == '"' || c == '\\') escaped += '\\';
      escaped += c;
    }
    tu += "#line 1 \"<kernel " + escaped + ">\"\n";
    tu += "KILN_EXPORT void kiln_entry_" + id + "(void** a) { kiln_cpu::invoke< &" + expr +
          " >(a); }\n";
    tu += "KILN_EXPORT void kiln_run_" + id +
          "(void** a, unsigned long long f, unsigned long long l) { kiln_cpu::" +
          (modes[i] == kiln_cpu::mode_regions ? "run_regions" : "run") + "< &" + expr +
          " >(a, f, l); }\n";
    tu += "KILN_EXPORT const char* kiln_entry_" + id +
          "_type() { return typeid(kiln_cpu::RawKernel<decltype(&" + expr + ")>::type).name(); }\n";
    tu += "KILN_EXPORT const char* kiln_entry_" + id + "_name() { return \"" + escaped + "\"; }\n";
    tu += "KILN_EXPORT int kiln_entry_" + id + "_mode() { return " + std::to_string(int(modes[i])) +
          "; }\n";
    if (modes[i] == kiln_cpu::mode_coroutines)
      tu += "KILN_EXPORT void* kiln_start_" + id + "(void** a) { return kiln_cpu::start< &" + expr +
            " >(a); }\n";
  }
  return tu;
}

// Replaces every occurrence of from in s with to.
void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (std::size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size()))
    s.replace(p, from.size(), to);
}

CompileResult CpuBackend::compile(const CompileRequest& request) {
  std::vector<std::string> user = cpu::translate_options(request.options);
  std::vector<std::string> include_dirs{kernels_dir_};
  for (const auto& o : user)
    if (o.rfind("-I", 0) == 0) include_dirs.push_back(o.substr(2));
  std::vector<Mode> modes =
      cpu::thread_modes(request.source, request.filename, include_dirs, request.name_expressions);
  // The scan cannot see everything a compiler does (a `return` from a macro, say): a module
  // that fails to build as coroutines is built again with fibers, which run any kernel.
  auto build = [&](bool checked_pointers) {
    try {
      return compile_once(request, modes, user, checked_pointers);
    } catch (const CompileError& e) {
      const bool coroutine_trouble = e.log().find("coroutine") != std::string::npos ||
                                     e.log().find("co_return") != std::string::npos ||
                                     e.log().find("co_await") != std::string::npos;
      if (!coroutine_trouble) throw;
      for (auto& m : modes)
        if (m == kiln_cpu::mode_coroutines) m = kiln_cpu::mode_fibers;
      return compile_once(request, modes, user, checked_pointers);
    }
  };
  // Kernels that can run as coroutines run as regions when the rewrite takes them (not in check
  // mode, which must see every thread reach each barrier); any compile failure of the rewritten
  // module builds it again as coroutines, where the user's own mistakes are reported.
  const bool coroutines =
      std::find(modes.begin(), modes.end(), kiln_cpu::mode_coroutines) != modes.end();
  if (coroutines && regions_ && !check_) {
    if (auto rewritten = cpu::form_regions(request.source)) {
      CompileRequest regions = request;
      regions.source = std::move(*rewritten);
      std::vector<Mode> region_modes = modes;
      for (auto& m : region_modes)
        if (m == kiln_cpu::mode_coroutines) m = kiln_cpu::mode_regions;
      try {
        return compile_once(regions, region_modes, user, false);
      } catch (const CompileError&) {
      }
    }
  }
  if (check_) {
    // Kernels whose pointer parameters cannot be wrapped (e.g. reinterpret_cast of one) still
    // build in check mode, with kiln::Array accesses checked but not their raw pointers.
    try {
      return build(true);
    } catch (const CompileError&) {
    }
  }
  return build(false);
}

CompileResult CpuBackend::compile_once(const CompileRequest& request,
                                       const std::vector<Mode>& modes,
                                       const std::vector<std::string>& user,
                                       bool checked_pointers) {
  jit::TempDir dir;
  const std::string tu_path = dir.path() + "/kernel.cpp", so_path = dir.path() + "/kernel.so";
  jit::write_file(tu_path, translation_unit(request, modes, checked_pointers));
  std::vector<std::string> argv{compiler_};
  for (const auto& f : code_flags()) argv.push_back(f);
  // Coroutines need C++20, whose headers cost every other module ~15% more compile time. (The
  // source decides the mode, and the source is in the cache key.)
  if (std::find(modes.begin(), modes.end(), kiln_cpu::mode_coroutines) != modes.end())
    argv.push_back("-std=c++20");
  argv.insert(argv.end(), {"-isystem", kernels_dir_ + "/kiln/cpu_include", "-I" + kernels_dir_});
  if (!request.filename.empty()) {
    fs::path parent = fs::path(request.filename).parent_path();
    if (!parent.empty() && fs::is_directory(parent)) argv.push_back("-I" + parent.string());
  }
  argv.insert(argv.end(), user.begin(), user.end());
  argv.insert(argv.end(), {"-o", so_path, tu_path});
  std::string names;
  for (const auto& n : request.name_expressions) names += (names.empty() ? "" : ", ") + n;
  jit::ProcessResult r;
  try {
    r = jit::run_process(argv, dir.path());
  } catch (const Interrupted&) {  // Ctrl-C: run_process killed the compiler
    throw Interrupted("cpu backend: compile of " +
                      (request.filename.empty() ? std::string("kernel source") : request.filename) +
                      " (kernels: " + names +
                      ") interrupted by Ctrl-C; it compiles again at the next launch");
  }
  std::string log = r.output;
  replace_all(log, tu_path, "<kiln translation unit>");
  replace_all(log, dir.path() + "/", "");

  if (r.exit_code != 0)
    throw CompileError(
        "cpu backend: cannot compile " +
            (request.filename.empty() ? std::string("kernel source") : request.filename) +
            " (kernels: " + names + ") with " + compiler_,
        log);

  CompileResult result;
  result.image_kind = "so";
  result.image = jit::read_file(so_path);
  result.log = log;
  auto so = open_object(so_path);
  for (std::size_t i = 0; i < request.name_expressions.size(); ++i) {
    std::string id = std::to_string(i);
    auto type = required_symbol<const char* (*)()>(*so, "kiln_entry_" + id + "_type");
    result.lowered_names.push_back("kiln_entry_" + id);
    result.signatures.push_back(demangle_type(type()));
  }
  return result;
}

std::unique_ptr<Module> CpuBackend::load(const CompileResult& compiled) {
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
  return std::make_unique<CpuModule>(shared_from_this(), open_memfd_object(fd), allocations(),
                                     ++modules_loaded_);
}

// Checks a launch against a GPU's limits; the message names the kernel and the bad value.
void validate_launch(const std::string& kernel, const LaunchConfig& c, const DeviceInfo& info) {
  auto d = [](const Dim3& v) {
    return "(" + std::to_string(v.x) + "," + std::to_string(v.y) + "," + std::to_string(v.z) + ")";
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
  if (static_shared_ > long(48 * 1024))
    throw Error("kernel '" + entry_.name + "': its module uses " + std::to_string(static_shared_) +
                " bytes of static shared memory, more than the limit of 49152");
  backend_->pool().launch(entry_, config, args, config.grid.count());
}

// Text with comments replaced by spaces (newlines kept); strings and chars left as they are.
std::string strip_comments(std::string_view s) {
  std::string out(s);
  for (std::size_t i = 0; i < out.size(); ++i) {
    char c = out[i];
    if (c == '"' || c == '\'') {
      for (++i; i < out.size() && out[i] != c && out[i] != '\n'; ++i)
        if (out[i] == '\\') ++i;
    } else if (c == '/' && i + 1 < out.size() && out[i + 1] == '/') {
      for (; i < out.size() && out[i] != '\n'; ++i) out[i] = ' ';
    } else if (c == '/' && i + 1 < out.size() && out[i + 1] == '*') {
      for (; i + 1 < out.size() && !(out[i] == '*' && out[i + 1] == '/'); ++i)
        if (out[i] != '\n') out[i] = ' ';
      if (i + 1 < out.size()) out[i] = out[i + 1] = ' ';
      ++i;
    }
  }
  return out;
}

bool scan_for_barriers(std::string_view source, const fs::path& dir,
                       const std::vector<std::string>& include_dirs, std::set<std::string>& seen,
                       int depth) {
  if (jit::uses_barriers(source)) return true;
  if (depth > 8) return false;
  const std::string text = strip_comments(source);  // for the #include lines
  static const std::regex include(R"(^\s*#\s*include\s*([<"])([^>"]+)[>"])", std::regex::multiline);
  for (auto it = std::sregex_iterator(text.begin(), text.end(), include);
       it != std::sregex_iterator(); ++it) {
    const bool quoted = (*it)[1] == "\"";
    const std::string name = (*it)[2];
    if (!quoted && name.rfind("kiln", 0) != 0) continue;  // system headers cannot sync
    std::vector<fs::path> candidates;
    if (quoted) candidates.push_back(dir / name);
    for (const auto& d : include_dirs) candidates.push_back(fs::path(d) / name);
    for (const auto& c : candidates) {
      std::error_code ec;
      if (!fs::is_regular_file(c, ec)) continue;
      std::string key = fs::weakly_canonical(c, ec).string();
      if (!seen.insert(key).second) break;
      if (scan_for_barriers(read_text(c), c.parent_path(), include_dirs, seen, depth + 1))
        return true;
      break;
    }
  }
  return false;
}

}  // namespace

namespace cpu {

std::vector<Mode> thread_modes(std::string_view source, const std::string& filename,
                               const std::vector<std::string>& include_dirs,
                               const std::vector<std::string>& name_expressions) {
  std::vector<jit::KernelBody> bodies = jit::find_kernel_bodies(source);
  std::vector<jit::SyncUse> uses;
  for (const auto& k : bodies)
    uses.push_back(jit::scan_sync(source.substr(k.open, k.close - k.open)));
  // Everything but the kernel bodies: device functions, globals, includes.
  std::string outside(source);
  for (const auto& k : bodies)
    for (std::size_t i = k.open; i < k.close; ++i)
      if (outside[i] != '\n') outside[i] = ' ';
  std::set<std::string> seen;
  fs::path dir = filename.empty() ? fs::path(".") : fs::path(filename).parent_path();
  const bool anywhere = scan_for_barriers(outside, dir, include_dirs, seen, 0);
  // Coroutines only when every synchronising body qualifies: its only such calls are
  // __syncthreads*, and it has no lambda (whose `return` must stay a return).
  bool coroutines = !anywhere;
  for (const auto& use : uses)
    if (use.other_sync || (use.block_barriers && use.lambda)) coroutines = false;
  const Mode sync_mode = coroutines ? kiln_cpu::mode_coroutines : kiln_cpu::mode_fibers;
  std::vector<Mode> result;
  for (const auto& expr : name_expressions) {
    std::string base = expr.substr(0, expr.find('<'));
    base.erase(base.find_last_not_of(" \t") + 1);
    if (auto colons = base.rfind("::"); colons != std::string::npos) base = base.substr(colons + 2);
    bool found = false, sync = anywhere;
    for (std::size_t i = 0; i < bodies.size(); ++i) {
      if (bodies[i].name != base) continue;
      found = true;
      sync = sync || uses[i].any();
    }
    if (!found && jit::uses_barriers(source))
      result.push_back(kiln_cpu::mode_fibers);  // a body the scan did not find
    else
      result.push_back(sync ? sync_mode : kiln_cpu::mode_loop);
  }
  return result;
}

std::string rewrite_coroutine_returns(std::string_view source) {
  std::string out(source);
  std::vector<jit::KernelBody> bodies = jit::find_kernel_bodies(source);
  for (auto k = bodies.rbegin(); k != bodies.rend(); ++k) {  // last first: offsets stay valid
    std::string_view body = source.substr(k->open, k->close - k->open);
    if (!jit::uses_barriers(body)) continue;
    std::vector<std::size_t> at = jit::find_identifier(body, "return");
    for (auto p = at.rbegin(); p != at.rend(); ++p) out.insert(k->open + *p, "co_");
  }
  return out;
}

std::string rewrite_extern_shared(std::string_view source) {
  static const std::regex decl(
      R"(extern\s+__shared__\s+((?:[A-Za-z_:<>,\s\*]|__align__\s*\(\s*\d+\s*\)|alignas\s*\(\s*\d+\s*\))+?)\s*\b([A-Za-z_]\w*)\s*\[\s*\]\s*;)");
  static const std::regex align(R"(__align__\s*\(\s*\d+\s*\)|alignas\s*\(\s*\d+\s*\))");
  std::string in(source), out;
  auto last = in.cbegin();
  for (auto it = std::sregex_iterator(in.begin(), in.end(), decl); it != std::sregex_iterator();
       ++it) {
    const std::smatch& m = *it;
    out.append(last, m[0].first);
    std::string type = std::regex_replace(m[1].str(), align, "");
    type.erase(0, type.find_first_not_of(" \t\n"));
    std::string whole = m[0].str();
    out += "static thread_local " + type + "* const " + m[2].str() + " = reinterpret_cast<" + type +
           "*>(::kiln_cpu::tls.dyn_smem);";
    out.append(std::size_t(std::count(whole.begin(), whole.end(), '\n')), '\n');
    last = m[0].second;
  }
  out.append(last, in.cend());
  return out;
}

std::string rewrite_pointer_params(std::string_view source) {
  std::string text = strip_comments(source), out(source);
  static const std::regex pointer(
      R"(^(\s*)((?:const\s+|volatile\s+)*[A-Za-z_][\w:]*(?:\s*<[^()]*>)?(?:\s+const)?)\s*\*\s*(?:__restrict__|__restrict)?\s*([A-Za-z_]\w*)(\s*)$)");
  // Kernels from last to first, so earlier positions stay valid.
  std::vector<jit::KernelBody> bodies = jit::find_kernel_bodies(source);
  for (auto k = bodies.rbegin(); k != bodies.rend(); ++k) {
    std::size_t open = text.rfind('(', k->open), close = text.rfind(')', k->open);
    if (open == std::string::npos || close == std::string::npos || close < open) continue;
    // Top-level parameters: split at commas outside <>, (), [].
    std::vector<std::pair<std::size_t, std::size_t>> params;
    int depth = 0;
    std::size_t start = open + 1;
    for (std::size_t i = open + 1; i <= close; ++i) {
      char c = text[i];
      if (c == '<' || c == '(' || c == '[') ++depth;
      if ((c == '>' || c == ')' || c == ']') && i != close) --depth;
      if ((c == ',' && depth == 0) || i == close) {
        params.emplace_back(start, i);
        start = i + 1;
      }
    }
    for (auto p = params.rbegin(); p != params.rend(); ++p) {
      std::string param = text.substr(p->first, p->second - p->first);
      std::smatch m;
      if (param.find('\n') != std::string::npos || !std::regex_match(param, m, pointer)) continue;
      out.replace(
          p->first, p->second - p->first,
          m[1].str() + "::kiln_cpu::checked_ptr<" + m[2].str() + "> " + m[3].str() + m[4].str());
    }
  }
  return out;
}

std::vector<std::string> translate_options(const std::vector<std::string>& options) {
  std::vector<std::string> out;
  auto starts = [](const std::string& s, const char* p) { return s.rfind(p, 0) == 0; };
  for (std::size_t i = 0; i < options.size(); ++i) {
    const std::string& o = options[i];
    if (o == "-D" || o == "-U" || o == "-I") {
      if (i + 1 == options.size()) throw Error("compiler option '" + o + "' needs a value");
      out.push_back(o + options[++i]);
    } else if (starts(o, "-D") || starts(o, "-U") || starts(o, "-I") || o == "-w" || o == "-g" ||
               std::regex_match(o, std::regex("-O[0-3s]|-g[0-3]|-std=c\\+\\+(14|17|20|23)")) ||
               (starts(o, "-W") && !starts(o, "-Wl,") && !starts(o, "-Wa,") &&
                !starts(o, "-Wp,"))) {
      out.push_back(o);
    } else if (starts(o, "--std=c++")) {
      out.push_back(o.substr(1));
    } else if (o == "--fmad=false" || o == "-fmad=false") {
      out.push_back("-ffp-contract=off");
    } else if (o == "-lineinfo" || o == "--generate-line-info" || o == "-G" ||
               o == "--device-debug" || o == "--use_fast_math" || o == "-use_fast_math" ||
               o == "-default-device" || o == "--fmad=true" || o == "-fmad=true" ||
               starts(o, "-arch") || starts(o, "--gpu-architecture") || starts(o, "-rdc") ||
               starts(o, "--relocatable-device-code") || o == "--extra-device-vectorization" ||
               starts(o, "-maxrregcount") || starts(o, "--maxrregcount") || o == "-dopt=on") {
      // GPU code generation options: nothing to do on the host.
    } else {
      throw Error("compiler option '" + o +
                  "' is not accepted by the cpu backend (accepted: -D -U -I -O -g -W -std= and the "
                  "NVRTC code-generation options, which it ignores)");
    }
  }
  return out;
}

}  // namespace cpu

std::shared_ptr<Backend> make_cpu_backend(const CpuBackendOptions& options) {
  return std::make_shared<CpuBackend>(options);
}

}  // namespace kiln
