// Worker pool, fiber stacks with guard pages, and the per-block scheduler that gives a block's
// threads CUDA's barrier and warp semantics (cooperative, round-robin, one OS thread), the
// threads being fibers or coroutines.
#include "runtime/cpu/executor.h"

#include <dlfcn.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <boost/context/detail/fcontext.hpp>
#include <cerrno>
#include <coroutine>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "runtime/error.h"
#include "runtime/interrupt.h"
#include "runtime/process.h"

// AddressSanitizer must be told of every stack switch (fiber switches, the overflow jump back to
// the scheduler): otherwise an exception thrown on a fiber stack makes it warn "ignoring
// __asan_handle_no_return", and false reports may follow.
#if defined(__SANITIZE_ADDRESS__)
#define KILN_ASAN_FIBERS 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KILN_ASAN_FIBERS 1
#endif
#endif
#ifdef KILN_ASAN_FIBERS
#include <sanitizer/common_interface_defs.h>
#endif

namespace kiln::cpu {

namespace ctx = boost::context::detail;

namespace {

constexpr std::size_t kGuardBytes = 4096;

// Tells ASan (when built with it) the running code moves to the stack [bottom, bottom + size);
// fake is null when the stack being left is finished with.
inline void asan_start_switch([[maybe_unused]] void** fake, [[maybe_unused]] const void* bottom,
                              [[maybe_unused]] std::size_t size) {
#ifdef KILN_ASAN_FIBERS
  __sanitizer_start_switch_fiber(fake, bottom, size);
#endif
}

// Tells ASan the switch completed; stores the stack that was left in *bottom and *size.
inline void asan_finish_switch([[maybe_unused]] void* fake, [[maybe_unused]] const void** bottom,
                               [[maybe_unused]] std::size_t* size) {
#ifdef KILN_ASAN_FIBERS
  __sanitizer_finish_switch_fiber(fake, bottom, size);
#endif
}
constexpr std::size_t kAltStackBytes = 64 * 1024;

// "(x,y,z)" (snprintf: GCC 12 warns falsely on the string-concatenation form).
std::string dims(kiln_cpu::uint3 v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "(%u,%u,%u)", v.x, v.y, v.z);
  return buf;
}

}  // namespace

// ---- Check mode ------------------------------------------------------------------------------

void Allocations::add(const void* base, std::size_t bytes) {
  std::lock_guard lock(mutex_);
  ranges_[reinterpret_cast<std::uintptr_t>(base)] = bytes;
}

void Allocations::remove(const void* base) {
  std::lock_guard lock(mutex_);
  ranges_.erase(reinterpret_cast<std::uintptr_t>(base));
}

bool Allocations::find(const void* p, const void** lo, const void** hi) const {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  std::lock_guard lock(mutex_);
  auto it = ranges_.upper_bound(a);
  if (it == ranges_.begin()) return false;
  --it;
  if (a > it->first + it->second) return false;  // one past the end still belongs to it
  *lo = reinterpret_cast<const void*>(it->first);
  *hi = reinterpret_cast<const void*>(it->first + it->second);
  return true;
}

std::string OutOfBounds::with_source_line() const {
  Dl_info info{};
  if (!code_ || !::dladdr(code_, &info) || !info.dli_fname) return where_ + ": " + what_;
  std::string path = info.dli_fname;
  if (path.rfind("/proc/self/", 0) == 0)  // addr2line runs in its own process
    path = "/proc/" + std::to_string(::getpid()) + path.substr(10);
  char offset[32];
  // The return address is just after the call: step back into the access's instruction.
  std::snprintf(
      offset, sizeof offset, "0x%zx",
      std::size_t(static_cast<const char*>(code_) - static_cast<const char*>(info.dli_fbase) - 1));
  std::string line;
  try {
    ProcessResult r = run_process({"addr2line", "-i", "-e", path, offset});
    // Innermost first: the first position outside kiln's own headers is the kernel's line.
    std::istringstream lines(r.exit_code == 0 ? r.output : "");
    for (std::string l; std::getline(lines, l);) {
      if (l.empty() || l[0] == '?' || l.find("kiln/cpu_") != std::string::npos ||
          l.find("kiln.cuh") != std::string::npos || l.find("<kiln ") != std::string::npos ||
          l.find("<kernel ") != std::string::npos || l.find("/usr/") == 0 ||
          (l.find("/kiln-") != std::string::npos && l.find("/kernel.cpp:") != std::string::npos))
        continue;
      line = l.substr(0, l.find(" ("));
      // addr2line joins a relative #line name with the compiler's folder, this process's.
      std::error_code ec;
      std::string cwd = std::filesystem::current_path(ec).string() + "/";
      if (!ec && line.rfind(cwd, 0) == 0) line = line.substr(cwd.size());
      break;
    }
  } catch (const Error&) {
  }
  return where_ + ": " + what_ + (line.empty() ? "" : " at " + line);
}

// ---- Fiber stacks ----------------------------------------------------------------------------

FiberStacks::~FiberStacks() {
  for (char* base : bases_) ::munmap(base, kGuardBytes + bytes_);
}

void FiberStacks::reserve(unsigned count) {
  while (bases_.size() < count) {
    void* p = ::mmap(nullptr, kGuardBytes + bytes_, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
      throw Error("cpu backend: cannot map a fiber stack: " + std::string(std::strerror(errno)));
    if (::mprotect(p, kGuardBytes, PROT_NONE) != 0) {
      ::munmap(p, kGuardBytes + bytes_);
      throw Error("cpu backend: cannot protect a fiber stack's guard page");
    }
    bases_.push_back(static_cast<char*>(p));
  }
}

void* FiberStacks::top(unsigned i) const {
  return bases_[i] + kGuardBytes + bytes_ - (i % 64) * 64;
}

bool FiberStacks::is_guard(const void* addr) const {
  auto a = reinterpret_cast<std::uintptr_t>(addr);
  for (char* base : bases_) {
    auto b = reinterpret_cast<std::uintptr_t>(base);
    if (a >= b && a < b + kGuardBytes) return true;
  }
  return false;
}

// ---- The block runner (fiber mode) -----------------------------------------------------------

// Runs one block's threads as fibers on the calling worker thread.
class BlockRunner {
 public:
  explicit BlockRunner(Worker& worker) : worker_(worker) {}
  // Runs one block; launch holds the launch's thread identity record (block_idx is set here).
  void run(const KernelEntry& k, const kiln_cpu::Tls& launch, void** args, kiln_cpu::uint3 block);
  void barrier_vote(int predicate);
  int barrier_value(int op) const;

  int barrier(int op, int predicate);
  void* frame_alloc(std::size_t bytes);
  unsigned long long warp(int op, unsigned mask, unsigned long long value, int param, int width);
  [[noreturn]] void trap(const char* message);
  [[noreturn]] void out_of_bounds(const char* message, const void* code) {
    throw OutOfBounds(where(cur_), message, code);
  }
  const KernelEntry& kernel() const { return *kernel_; }
  // Loop and region modes: blocks [first, last) on the worker's block stack.
  void run_on_block_stack(const KernelEntry& k, const kiln_cpu::Tls& launch, void** args,
                          std::uint64_t first, std::uint64_t last);
  bool stack_overflowed(const void* addr) const {
    return (in_fibers_ && worker_.stacks.is_guard(addr)) ||
           (on_block_stack_ && worker_.block_stack.is_guard(addr));
  }
  [[noreturn]] void overflow_jump() {
    asan_start_switch(nullptr, sched_bottom_, sched_size_);
    siglongjmp(overflow_jmp_, 1);
  }

 private:
  enum class State : unsigned char { ready, running, barrier, warp, done };
  struct Fiber {
    ctx::fcontext_t ctx;
    kiln_cpu::uint3 tid;
    State state;
    unsigned gen;  // the barrier generation it waits for to pass
  };
  struct Warp {
    unsigned live = 0, waiting = 0;
    unsigned mask[32];
    int op[32], param[32], width[32];
    unsigned long long value[32], result[32];
  };

  static void fiber_main(ctx::transfer_t t);
  static void on_stack_main(ctx::transfer_t t);
  void call_on_stack(void* top, std::size_t bytes, void (BlockRunner::*body)());
  void run_kernel_blocks();
  void run_fibers();
  void start_coroutines();
  void sweep();
  void destroy_coroutines();
  [[noreturn]] void not_in_coroutines(const char* what);
  bool ready(unsigned i) const;
  unsigned find_ready(unsigned from) const;
  void switch_to(ctx::fcontext_t* save, unsigned next, bool finishing = false);
  void arrived(void* fake);
  void wait();
  void finish_current();
  void release_barrier();
  bool try_complete(Warp& w, unsigned mask);
  void complete(Warp& w, unsigned group);
  std::string where(unsigned fiber) const;
  std::string deadlock_message() const;

  Worker& worker_;
  const KernelEntry* kernel_ = nullptr;
  kiln_cpu::Tls launch_{};  // what the module's Tls holds for this block
  void** args_ = nullptr;
  std::vector<Fiber> fibers_;
  std::vector<Warp> warps_;
  unsigned n_ = 0, cur_ = 0, live_ = 0, done_ = 0;
  ctx::fcontext_t sched_ctx_ = nullptr;
  ctx::fcontext_t* from_slot_ = nullptr;  // where the context that jumped last gets saved
  const void* sched_bottom_ = nullptr;    // the scheduler's (worker thread's) stack, for ASan
  std::size_t sched_size_ = 0;
  // __syncthreads state
  unsigned arrived_ = 0, gen_ = 0;
  int acc_count_ = 0, acc_and_ = 1, acc_or_ = 0;
  int res_count_ = 0, res_and_ = 1, res_or_ = 0;
  bool aborted_ = false;
  bool in_fibers_ = false;
  bool on_block_stack_ = false;
  std::uint64_t first_ = 0, last_ = 0;              // loop and region modes: the blocks to run
  void (BlockRunner::*on_stack_body_)() = nullptr;  // what call_on_stack runs
  bool coroutines_ = false;
  std::vector<void*> frames_;          // coroutine mode: each thread's coroutine frame
  std::vector<kiln_cpu::uint3> tids_;  // coroutine mode: each thread's threadIdx
  std::vector<unsigned> live_list_;    // coroutine mode: the threads not yet returned
  // Coroutine mode: the frames' memory, chunks reused block after block.
  std::vector<std::vector<std::max_align_t>> arena_;
  std::size_t arena_chunk_ = 0, arena_used_ = 0;
  std::exception_ptr error_;
  sigjmp_buf overflow_jmp_;
};

namespace {

thread_local BlockRunner* t_runner = nullptr;  // the runner executing fibers on this thread
thread_local void* t_altstack = nullptr;       // the alternate signal stack use_altstack set
struct sigaction g_previous_segv;              // chained to for faults that are not ours

// SIGSEGV/SIGBUS on the alternate stack: a fault in a fiber's guard page aborts the block.
void on_fault(int sig, siginfo_t* info, void* uctx) {
  BlockRunner* r = t_runner;
  if (r && r->stack_overflowed(info->si_addr)) r->overflow_jump();
  const struct sigaction& prev = g_previous_segv;
  if ((prev.sa_flags & SA_SIGINFO) && prev.sa_sigaction) {
    prev.sa_sigaction(sig, info, uctx);
  } else if (prev.sa_handler != SIG_IGN && prev.sa_handler != SIG_DFL && prev.sa_handler) {
    prev.sa_handler(sig);
  } else {
    ::signal(sig, SIG_DFL);  // returning re-executes the fault under the default action
  }
}

// Installs on_fault once per process (chaining to the handler that was there).
void install_fault_handler() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa {};
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGSEGV, &sa, &g_previous_segv);
  });
}

// The calling thread uses mem as its alternate signal stack from now on: set once per thread, as
// the system calls would cost more than a small launch. (~Worker takes it back.)
void use_altstack(void* mem) {
  if (t_altstack == mem) return;
  stack_t ss{};
  ss.ss_sp = mem;
  ss.ss_size = kAltStackBytes;
  if (::sigaltstack(&ss, nullptr) == 0) t_altstack = mem;
}

// Uses the worker's alternate signal stack on this thread while alive.
class ScopedAltStack {
 public:
  explicit ScopedAltStack(void* mem) {
    stack_t ss{};
    ss.ss_sp = mem;
    ss.ss_size = kAltStackBytes;
    active_ = ::sigaltstack(&ss, &old_) == 0;
  }
  ~ScopedAltStack() {
    if (active_) ::sigaltstack(&old_, nullptr);
  }

 private:
  stack_t old_{};
  bool active_ = false;
};

int api_barrier(void* exec, int op, int pred) {
  return static_cast<BlockRunner*>(exec)->barrier(op, pred);
}
unsigned long long api_warp(void* exec, int op, unsigned mask, unsigned long long v, int param,
                            int width) {
  return static_cast<BlockRunner*>(exec)->warp(op, mask, v, param, width);
}
void* api_frame_alloc(void* exec, unsigned long bytes) {
  return static_cast<BlockRunner*>(exec)->frame_alloc(bytes);
}
void api_barrier_vote(void* exec, int predicate) {
  static_cast<BlockRunner*>(exec)->barrier_vote(predicate);
}
int api_barrier_result(void* exec, int op) {
  return static_cast<BlockRunner*>(exec)->barrier_value(op);
}
void api_trap(void* exec, const char* message) {
  static_cast<BlockRunner*>(exec)->trap(message);
}
int bounds_of(const KernelEntry& k, const void* p, const void** lo, const void** hi) {
  return k.allocations && k.allocations->find(p, lo, hi) ? 1 : 0;
}
int api_bounds(void* exec, const void* p, const void** lo, const void** hi) {
  return bounds_of(static_cast<BlockRunner*>(exec)->kernel(), p, lo, hi);
}
void api_out_of_bounds(void* exec, const char* message, const void* code) {
  static_cast<BlockRunner*>(exec)->out_of_bounds(message, code);
}
const kiln_cpu::Api kFiberApi{
    KILN_CPU_ABI_VERSION, api_barrier,     api_warp,         api_trap,          api_bounds,
    api_out_of_bounds,    api_frame_alloc, api_barrier_vote, api_barrier_result};

// Loop mode: the kernel was judged free of barriers; exec is the KernelEntry.
std::string loop_where(const KernelEntry& k, const kiln_cpu::Tls& t) {
  return "kernel '" + k.name + "': thread " + dims(t.thread_idx) + " of block " + dims(t.block_idx);
}
bool single_thread(const kiln_cpu::Tls& t) {
  return t.block_dim.x * t.block_dim.y * t.block_dim.z == 1;
}
// Loop mode: the module's Tls (who the running thread is, the launch's shape).
kiln_cpu::Tls loop_tls(void* exec) {
  kiln_cpu::Tls t{};
  static_cast<const KernelEntry*>(exec)->get_launch(&t);
  return t;
}
[[noreturn]] void loop_unsupported(void* exec, const char* what) {
  auto& k = *static_cast<const KernelEntry*>(exec);
  throw Error(loop_where(k, loop_tls(exec)) + ": " + what +
              " reached, but the cpu backend found no barrier or warp operation in the kernel's "
              "source and runs its threads one after another; write the call in the kernel's own "
              "source (or a header it includes with quotes)");
}
int loop_barrier(void* exec, int, int pred) {
  if (!single_thread(loop_tls(exec))) loop_unsupported(exec, "__syncthreads");
  return pred;
}
unsigned long long loop_warp(void* exec, int op, unsigned, unsigned long long v, int, int) {
  if (!single_thread(loop_tls(exec))) loop_unsupported(exec, "a warp operation");
  switch (op) {
    case kiln_cpu::warp_ballot:
      return v != 0;
    case kiln_cpu::warp_any:
    case kiln_cpu::warp_all:
      return v != 0;
    case kiln_cpu::warp_activemask:
    case kiln_cpu::warp_match_any:
    case kiln_cpu::warp_match_all:
      return 1;
    default:
      return v;
  }
}
void loop_trap(void* exec, const char* message) {
  auto& k = *static_cast<const KernelEntry*>(exec);
  throw Error(loop_where(k, loop_tls(exec)) + ": " + message);
}
int loop_bounds(void* exec, const void* p, const void** lo, const void** hi) {
  return bounds_of(*static_cast<const KernelEntry*>(exec), p, lo, hi);
}
void loop_out_of_bounds(void* exec, const char* message, const void* code) {
  auto& k = *static_cast<const KernelEntry*>(exec);
  throw OutOfBounds(loop_where(k, loop_tls(exec)), message, code);
}
void* loop_frame_alloc(void* exec, unsigned long) {
  loop_unsupported(exec, "a coroutine");
}
void loop_barrier_vote(void* exec, int) {
  loop_unsupported(exec, "a coroutine's barrier");
}
int loop_barrier_result(void* exec, int) {
  loop_unsupported(exec, "a coroutine's barrier");
}
const kiln_cpu::Api kLoopApi{
    KILN_CPU_ABI_VERSION, loop_barrier,     loop_warp,         loop_trap,          loop_bounds,
    loop_out_of_bounds,   loop_frame_alloc, loop_barrier_vote, loop_barrier_result};

}  // namespace

std::string BlockRunner::where(unsigned fiber) const {
  return "kernel '" + kernel_->name + "': thread " + dims(fibers_[fiber].tid) + " of block " +
         dims(launch_.block_idx);
}

void BlockRunner::run(const KernelEntry& k, const kiln_cpu::Tls& launch, void** args,
                      kiln_cpu::uint3 block) {
  kernel_ = &k;
  args_ = args;
  launch_ = launch;
  const kiln_cpu::dim3 b = launch.block_dim;
  n_ = b.x * b.y * b.z;
  coroutines_ = k.mode == kiln_cpu::mode_coroutines;
  worker_.stacks.reserve(coroutines_ ? 1 : n_);
  fibers_.resize(n_);
  for (unsigned i = 0; i < n_; ++i)
    fibers_[i] = Fiber{nullptr, {i % b.x, (i / b.x) % b.y, i / (b.x * b.y)}, State::ready, 0};
  warps_.resize((n_ + 31) / 32);
  for (unsigned w = 0; w < warps_.size(); ++w) {
    unsigned lanes = n_ - w * 32 >= 32 ? 32 : n_ - w * 32;
    warps_[w].live = lanes == 32 ? 0xffffffffu : (1u << lanes) - 1u;
    warps_[w].waiting = 0;
  }
  live_ = n_;
  done_ = arrived_ = gen_ = 0;
  acc_count_ = acc_or_ = 0;
  acc_and_ = 1;
  aborted_ = false;
  error_ = nullptr;
  launch_.block_idx = block;
  launch_.exec = this;
  launch_.api = &kFiberApi;
  k.set_launch(&launch_);
  if (coroutines_) start_coroutines();

  t_runner = this;
  if (sigsetjmp(overflow_jmp_, 0) != 0) {  // a thread ran into its stack's guard page
    asan_finish_switch(nullptr, nullptr, nullptr);
    in_fibers_ = false;
    t_runner = nullptr;
    frames_.clear();  // a frame that was running cannot be destroyed; the arena is reused
    throw Error(where(cur_) + ": overflowed its " + std::to_string(kFiberStackBytes / 1024) +
                " KiB fiber stack (deep recursion or large local arrays)");
  }
  in_fibers_ = true;
  if (coroutines_) {
    // The sweeps run on a guarded stack too, so that deep recursion is an error, not a crash.
    call_on_stack(worker_.stacks.top(0), kFiberStackBytes, &BlockRunner::sweep);
  } else {
    run_fibers();
  }
  in_fibers_ = false;
  t_runner = nullptr;
  if (coroutines_) destroy_coroutines();
  if (error_) std::rethrow_exception(error_);
  if (done_ < n_ && !aborted_) throw Error(deadlock_message());
}

// Fiber mode: runs ready fibers until all are done or none can go on.
void BlockRunner::run_fibers() {
  while (done_ < n_ && !aborted_) {
    unsigned next = find_ready(0);
    if (next == n_) return;  // deadlock
    switch_to(&sched_ctx_, next);
  }
}

// Coroutine mode: creates every thread of the block, each suspended before its first statement.
void BlockRunner::start_coroutines() {
  arena_chunk_ = arena_used_ = 0;
  frames_.resize(n_);
  tids_.resize(n_);
  for (unsigned i = 0; i < n_; ++i) {
    cur_ = i;
    tids_[i] = fibers_[i].tid;
    frames_[i] = kernel_->start(args_);
  }
}

void BlockRunner::run_on_block_stack(const KernelEntry& k, const kiln_cpu::Tls& launch, void** args,
                                     std::uint64_t first, std::uint64_t last) {
  kernel_ = &k;
  args_ = args;
  first_ = first;
  last_ = last;
  error_ = nullptr;
  worker_.block_stack.reserve(1);
  k.set_launch(&launch);
  t_runner = this;
  if (sigsetjmp(overflow_jmp_, 0) != 0) {  // the block ran into the stack's guard page
    asan_finish_switch(nullptr, nullptr, nullptr);
    on_block_stack_ = false;
    t_runner = nullptr;
    kiln_cpu::Tls now{};
    k.get_launch(&now);
    throw Error("kernel '" + k.name + "': thread " + dims(now.thread_idx) + " of block " +
                dims(now.block_idx) + ": overflowed its block's " +
                std::to_string(kBlockStackBytes >> 20) +
                " MiB stack (deep recursion or large local arrays)");
  }
  on_block_stack_ = true;
  call_on_stack(worker_.block_stack.top(0), kBlockStackBytes, &BlockRunner::run_kernel_blocks);
  on_block_stack_ = false;
  t_runner = nullptr;
  if (error_) std::rethrow_exception(error_);
}

// Loop and region modes, on the block stack: runs the blocks (an exception never crosses the
// context switch: it waits in error_).
void BlockRunner::run_kernel_blocks() {
  try {
    kernel_->run(args_, first_, last_);
  } catch (...) {
    error_ = std::current_exception();
  }
}

// Runs (this->*body)() on the guarded stack whose top is given; returns when it has.
void BlockRunner::call_on_stack(void* top, std::size_t bytes, void (BlockRunner::*body)()) {
  on_stack_body_ = body;
  void* fake = nullptr;
  asan_start_switch(&fake, static_cast<char*>(top) - bytes, bytes);
  ctx::jump_fcontext(ctx::make_fcontext(top, bytes, on_stack_main), this);
  asan_finish_switch(fake, nullptr, nullptr);
}

// On the stack call_on_stack chose: runs its body and jumps back.
void BlockRunner::on_stack_main(ctx::transfer_t t) {
  auto* self = static_cast<BlockRunner*>(t.data);
  asan_finish_switch(nullptr, &self->sched_bottom_, &self->sched_size_);
  self->sched_ctx_ = t.fctx;
  (self->*self->on_stack_body_)();
  asan_start_switch(nullptr, self->sched_bottom_, self->sched_size_);  // this stack is done
  ctx::jump_fcontext(self->sched_ctx_, nullptr);
  std::abort();  // never resumed
}

// Coroutine mode: rounds in which every live thread runs to its next barrier or its end, until
// none is left or one failed. A round ends with every live thread at a barrier (those that
// returned count as arrived, as on a GPU): the barrier is released, its values published.
// Barriers alone cannot deadlock here; warp operations, which could, run as fibers.
void BlockRunner::sweep() {
  live_list_.resize(n_);
  for (unsigned i = 0; i < n_; ++i) live_list_[i] = i;
  for (unsigned live = n_; live > 0;) {
    try {
      live = kernel_->round(frames_.data(), tids_.data(), live_list_.data(), live, &cur_);
    } catch (...) {
      error_ = std::current_exception();
      aborted_ = true;
      return;
    }
    release_barrier();
  }
  done_ = n_;
}

// Coroutine mode: the running thread's predicate at the barrier it arrives at.
void BlockRunner::barrier_vote(int predicate) {
  acc_count_ += predicate;
  acc_and_ &= predicate;
  acc_or_ |= predicate;
}

// The value of the barrier passed last (op: a kiln_cpu::BarrierOp).
int BlockRunner::barrier_value(int op) const {
  switch (op) {
    case kiln_cpu::barrier_count:
      return res_count_;
    case kiln_cpu::barrier_and:
      return res_and_;
    case kiln_cpu::barrier_or:
      return res_or_;
    default:
      return 0;
  }
}

// Coroutine mode: destroys every thread's frame (finished or suspended at a barrier).
void BlockRunner::destroy_coroutines() {
  for (void* frame : frames_) std::coroutine_handle<>::from_address(frame).destroy();
  frames_.clear();
}

void* BlockRunner::frame_alloc(std::size_t bytes) {
  const std::size_t units = (bytes + sizeof(std::max_align_t) - 1) / sizeof(std::max_align_t);
  constexpr std::size_t kChunkUnits = (64 * 1024) / sizeof(std::max_align_t);
  for (;; ++arena_chunk_, arena_used_ = 0) {
    if (arena_chunk_ == arena_.size()) arena_.emplace_back(std::max(units, kChunkUnits));
    auto& chunk = arena_[arena_chunk_];
    if (arena_used_ == 0 && chunk.size() < units) chunk.resize(units);
    if (arena_used_ + units <= chunk.size()) {
      void* p = chunk.data() + arena_used_;
      arena_used_ += units;
      return p;
    }
  }
}

[[noreturn]] void BlockRunner::not_in_coroutines(const char* what) {
  throw Error(where(cur_) + ": " + what +
              " reached outside the kernel's own body, but the cpu backend compiled the kernel "
              "as coroutines that suspend only at the __syncthreads in __global__ bodies");
}

std::string BlockRunner::deadlock_message() const {
  unsigned at_barrier = 0, at_warp = 0, first_barrier = n_, first_warp = n_;
  for (unsigned i = 0; i < n_; ++i) {
    if (fibers_[i].state == State::barrier && at_barrier++ == 0) first_barrier = i;
    if (fibers_[i].state == State::warp && at_warp++ == 0) first_warp = i;
  }
  std::string m = "kernel '" + kernel_->name + "': deadlock in block " + dims(launch_.block_idx) +
                  ": " + std::to_string(at_barrier) + " thread(s) wait at __syncthreads";
  if (first_barrier < n_) m += " (first: thread " + dims(fibers_[first_barrier].tid) + ")";
  m += ", " + std::to_string(at_warp) + " at a warp operation";
  if (first_warp < n_) m += " (first: thread " + dims(fibers_[first_warp].tid) + ")";
  m += ", " + std::to_string(done_) + " exited; a barrier or warp operation in divergent code?";
  return m;
}

bool BlockRunner::ready(unsigned i) const {
  const Fiber& f = fibers_[i];
  switch (f.state) {
    case State::ready:
      return true;
    case State::barrier:
      return f.gen != gen_;
    case State::warp:
      return !(warps_[i / 32].waiting & (1u << (i % 32)));
    default:
      return false;
  }
}

unsigned BlockRunner::find_ready(unsigned from) const {
  for (unsigned i = from; i < n_; ++i)
    if (ready(i)) return i;
  return n_;
}

// Saves the running context into *save and resumes fiber next (or the scheduler when next == n).
// A finishing fiber is never resumed: ASan may drop what it keeps for its stack.
void BlockRunner::switch_to(ctx::fcontext_t* save, unsigned next, bool finishing) {
  ctx::fcontext_t target;
  void* fake = nullptr;
  if (next == n_) {
    target = sched_ctx_;
    asan_start_switch(finishing ? nullptr : &fake, sched_bottom_, sched_size_);
  } else {
    Fiber& f = fibers_[next];
    if (!f.ctx) f.ctx = ctx::make_fcontext(worker_.stacks.top(next), kFiberStackBytes, fiber_main);
    f.state = State::running;
    kernel_->set_thread(f.tid);
    target = f.ctx;
    asan_start_switch(finishing ? nullptr : &fake,
                      static_cast<char*>(worker_.stacks.top(next)) - kFiberStackBytes,
                      kFiberStackBytes);
  }
  cur_ = next;
  from_slot_ = save;
  ctx::transfer_t t = ctx::jump_fcontext(target, this);
  auto* self = static_cast<BlockRunner*>(t.data);
  self->arrived(fake);
  *self->from_slot_ = t.fctx;
}

// After a jump landed here: completes ASan's switch and, when the scheduler jumped, remembers
// its stack (the first jump of every block comes from it).
void BlockRunner::arrived(void* fake) {
  const void* bottom = nullptr;
  std::size_t size = 0;
  asan_finish_switch(fake, &bottom, &size);
  if (from_slot_ == &sched_ctx_) sched_bottom_ = bottom, sched_size_ = size;
}

// The running fiber waits (its state already says for what) until the scheduler resumes it.
void BlockRunner::wait() {
  unsigned me = cur_;
  switch_to(&fibers_[me].ctx, find_ready(me + 1));
}

void BlockRunner::fiber_main(ctx::transfer_t t) {
  auto* self = static_cast<BlockRunner*>(t.data);
  self->arrived(nullptr);
  *self->from_slot_ = t.fctx;
  try {
    self->kernel_->entry(self->args_);
  } catch (...) {
    if (!self->error_) self->error_ = std::current_exception();
    self->aborted_ = true;
  }
  self->finish_current();
  ctx::fcontext_t discard;
  self->switch_to(&discard, self->aborted_ ? self->n_ : self->find_ready(self->cur_ + 1), true);
  std::abort();  // a finished fiber is never resumed
}

// The running thread returned: it counts as arrived at every later barrier.
void BlockRunner::finish_current() {
  unsigned me = cur_;
  fibers_[me].state = State::done;
  ++done_;
  --live_;
  if (arrived_ > 0 && arrived_ == live_) release_barrier();
  Warp& w = warps_[me / 32];
  w.live &= ~(1u << (me % 32));
  for (unsigned lane = 0; w.waiting && lane < 32; ++lane)
    if (w.waiting & (1u << lane)) try_complete(w, w.mask[lane]);
}

void BlockRunner::release_barrier() {
  res_count_ = acc_count_;
  res_and_ = acc_and_;
  res_or_ = acc_or_;
  acc_count_ = acc_or_ = 0;
  acc_and_ = 1;
  arrived_ = 0;
  ++gen_;
}

int BlockRunner::barrier(int op, int predicate) {
  if (coroutines_) not_in_coroutines("__syncthreads");
  acc_count_ += predicate;
  acc_and_ &= predicate;
  acc_or_ |= predicate;
  if (++arrived_ == live_) {
    release_barrier();
  } else {
    Fiber& f = fibers_[cur_];
    f.state = State::barrier;
    f.gen = gen_;
    wait();
  }
  return barrier_value(op);
}

unsigned long long BlockRunner::warp(int op, unsigned mask, unsigned long long value, int param,
                                     int width) {
  if (coroutines_) not_in_coroutines("a warp operation");
  unsigned me = cur_, lane = me % 32;
  Warp& w = warps_[me / 32];
  if (op == kiln_cpu::warp_activemask) mask = 0xffffffffu;
  mask |= 1u << lane;
  if (width < 1 || width > 32 || (width & (width - 1))) width = 32;
  w.mask[lane] = mask;
  w.op[lane] = op;
  w.param[lane] = param;
  w.width[lane] = width;
  w.value[lane] = value;
  w.waiting |= 1u << lane;
  if (!try_complete(w, mask)) {
    fibers_[me].state = State::warp;
    wait();
  }
  return w.result[lane];
}

// Completes the warp operation of the lanes named by mask once all its live lanes are waiting
// at one with the same mask (lanes that exited do not count).
bool BlockRunner::try_complete(Warp& w, unsigned mask) {
  unsigned group = mask & w.live;
  if ((w.waiting & group) != group) return false;
  for (unsigned j = 0; j < 32; ++j)
    if ((group >> j & 1) && (w.mask[j] & w.live) != group) return false;
  complete(w, group);
  return true;
}

void BlockRunner::complete(Warp& w, unsigned group) {
  unsigned ballot = 0;
  for (unsigned j = 0; j < 32; ++j)
    if ((group >> j & 1) && w.value[j]) ballot |= 1u << j;
  for (int j = 0; j < 32; ++j) {
    if (!(group >> j & 1)) continue;
    const int width = w.width[j], p = w.param[j];
    const int lo = j & ~(width - 1), hi = lo + width - 1;
    int src = j;
    switch (w.op[j]) {
      case kiln_cpu::warp_shfl_idx:
        src = lo + (p & (width - 1));
        break;
      case kiln_cpu::warp_shfl_up:
        src = j - p >= lo && p >= 0 ? j - p : j;
        break;
      case kiln_cpu::warp_shfl_down:
        src = p >= 0 && j + p <= hi ? j + p : j;
        break;
      case kiln_cpu::warp_shfl_xor:
        src = (j ^ p) <= hi && (j ^ p) >= 0 ? j ^ p : j;
        break;
      default:
        break;
    }
    unsigned long long r = 0;
    switch (w.op[j]) {
      case kiln_cpu::warp_shfl_idx:
      case kiln_cpu::warp_shfl_up:
      case kiln_cpu::warp_shfl_down:
      case kiln_cpu::warp_shfl_xor:
        r = (group >> src & 1) ? w.value[src] : w.value[j];
        break;
      case kiln_cpu::warp_ballot:
        r = ballot;
        break;
      case kiln_cpu::warp_any:
        r = ballot != 0;
        break;
      case kiln_cpu::warp_all:
        r = ballot == group;
        break;
      case kiln_cpu::warp_activemask:
        r = group;
        break;
      case kiln_cpu::warp_match_any:
        for (unsigned k = 0; k < 32; ++k)
          if ((group >> k & 1) && w.value[k] == w.value[j]) r |= 1u << k;
        break;
      case kiln_cpu::warp_match_all: {
        r = group;
        for (unsigned k = 0; k < 32; ++k)
          if ((group >> k & 1) && w.value[k] != w.value[j]) r = 0;
        break;
      }
      default:
        break;
    }
    w.result[j] = r;
  }
  w.waiting &= ~group;
}

void BlockRunner::trap(const char* message) {
  throw Error(where(cur_) + ": " + message);
}

// ---- Workers and the pool --------------------------------------------------------------------

std::uintptr_t Worker::static_shared_of(const KernelEntry& k) {
  if (k.module_id != smem_module_) {
    const kiln_cpu::Tls blank{};
    k.set_launch(&blank);  // the module's thread-locals exist for this thread once it has run
    void* block = nullptr;
    if (::dlinfo(k.module, RTLD_DI_TLS_DATA, &block) != 0 || !block)
      throw Error("cpu backend: cannot find the kernel module's thread-local data");
    smem_ = reinterpret_cast<std::uintptr_t>(block);
    smem_module_ = k.module_id;
  }
  return smem_;
}

Worker::Worker() {
  dyn_smem = static_cast<unsigned char*>(std::aligned_alloc(128, kDynamicSharedBytes));
  altstack = std::malloc(kAltStackBytes);
  if (!dyn_smem || !altstack) throw Error("cpu backend: cannot allocate a worker's memory");
  runner = std::make_unique<BlockRunner>(*this);
}

Worker::~Worker() {
  stack_t current{};
  if (::sigaltstack(nullptr, &current) == 0 && current.ss_sp == altstack &&
      !(current.ss_flags & SS_DISABLE)) {  // this thread's signals must not use freed memory
    stack_t off{};
    off.ss_flags = SS_DISABLE;
    ::sigaltstack(&off, nullptr);
  }
  if (t_altstack == altstack) t_altstack = nullptr;
  std::free(dyn_smem);
  std::free(altstack);
}

void run_blocks(Worker& worker, const KernelEntry& k, const LaunchConfig& cfg, void** args,
                std::uint64_t first, std::uint64_t last) {
  kiln_cpu::Tls launch{};
  launch.block_dim = kiln_cpu::dim3(cfg.block.x, cfg.block.y, cfg.block.z);
  launch.grid_dim = kiln_cpu::dim3(cfg.grid.x, cfg.grid.y, cfg.grid.z);
  launch.dyn_smem = worker.dyn_smem;
  launch.dyn_smem_bytes = kDynamicSharedBytes;
  launch.api = &kLoopApi;
  launch.exec = const_cast<KernelEntry*>(&k);
  launch.smem_lo = worker.static_shared_of(k);
  launch.smem_bytes = k.tls_bytes;
  if (k.mode == kiln_cpu::mode_loop || k.mode == kiln_cpu::mode_regions) {
    worker.runner->run_on_block_stack(k, launch, args, first, last);
    return;
  }
  const std::uint64_t gx = cfg.grid.x, gy = cfg.grid.y;
  for (std::uint64_t b = first; b < last; ++b)
    worker.runner->run(
        k, launch, args,
        kiln_cpu::uint3{unsigned(b % gx), unsigned(b / gx % gy), unsigned(b / (gx * gy))});
}

WorkerPool::WorkerPool(int workers) {
  if (workers < 1) workers = 1;
  for (int i = 0; i < workers; ++i) workers_.push_back(std::make_unique<Worker>());
  for (int i = 1; i < workers; ++i) threads_.emplace_back([this, i] { helper_main(i); });
}

WorkerPool::~WorkerPool() {
  stopping_.store(true);
  epoch_.fetch_add(1);
  epoch_.notify_all();
  for (auto& t : threads_) t.join();
}

void WorkerPool::helper_main(int index) {
  ScopedAltStack alt(workers_[std::size_t(index)]->altstack);
  std::uint64_t seen = 0;
  for (;;) {
    // Back-to-back launches are common: spin briefly before sleeping in the kernel.
    for (int spin = 0; spin < 4000 && epoch_.load(std::memory_order_acquire) == seen; ++spin) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    }
    epoch_.wait(seen, std::memory_order_acquire);
    seen = epoch_.load(std::memory_order_acquire);
    if (stopping_.load()) return;
    work(*workers_[std::size_t(index)], *job_);
    if (busy_.fetch_sub(1, std::memory_order_acq_rel) == 1) busy_.notify_all();
  }
}

// Claims chunks of blocks until none are left or the launch is aborted.
void WorkerPool::work(Worker& worker, Job& job) {
  for (;;) {
    if (job.abort.load(std::memory_order_relaxed)) return;
    if (interrupt_flag().load(std::memory_order_relaxed)) {
      job.abort.store(true);
      std::lock_guard lock(job.error_mutex);
      job.interrupted = true;
      return;
    }
    std::uint64_t first = job.next.fetch_add(job.chunk, std::memory_order_relaxed);
    if (first >= job.blocks) return;
    std::uint64_t last = std::min(job.blocks, first + job.chunk);
    try {
      run_blocks(worker, *job.kernel, *job.config, job.args, first, last);
    } catch (...) {
      std::lock_guard lock(job.error_mutex);
      if (!job.error) job.error = std::current_exception();
      job.abort.store(true);
      return;
    }
  }
}

void WorkerPool::launch(const KernelEntry& k, const LaunchConfig& cfg, void** args,
                        std::uint64_t blocks) {
  std::lock_guard lock(launch_mutex_);
  Job job;
  job.kernel = &k;
  job.config = &cfg;
  job.args = args;
  job.blocks = blocks;
  const std::uint64_t threads_per_block = cfg.block.count();
  // Chunks: small enough to balance and to stop soon on Ctrl-C, large enough to amortise.
  const bool loop = k.mode == kiln_cpu::mode_loop || k.mode == kiln_cpu::mode_regions;
  std::uint64_t per_worker_chunks = loop ? 8 : 16;
  job.chunk = std::max<std::uint64_t>(1, blocks / (std::uint64_t(size()) * per_worker_chunks));
  if (loop && threads_per_block * job.chunk < 256)
    job.chunk = std::min<std::uint64_t>(blocks, (256 + threads_per_block - 1) / threads_per_block);
  int helpers = int(
      std::min<std::uint64_t>(std::uint64_t(size() - 1), (blocks + job.chunk - 1) / job.chunk - 1));
  // Waking a helper costs microseconds: tiny loop-mode grids run on the caller alone.
  if (loop && blocks * threads_per_block <= 4096) helpers = 0;
  // Every block runs on a guarded stack: an overflow is reported, not a crash.
  install_fault_handler();
  use_altstack(workers_[0]->altstack);
  if (helpers > 0) {
    job_ = &job;
    busy_.store(int(threads_.size()), std::memory_order_release);
    epoch_.fetch_add(1, std::memory_order_acq_rel);
    epoch_.notify_all();
  }
  work(*workers_[0], job);
  if (helpers > 0) {
    for (int b = busy_.load(std::memory_order_acquire); b != 0;
         b = busy_.load(std::memory_order_acquire))
      busy_.wait(b, std::memory_order_acquire);
    job_ = nullptr;
  }
  std::fflush(stdout);  // device printf output appears by the time the launch returns
  if (job.error) {
    try {
      std::rethrow_exception(job.error);
    } catch (const OutOfBounds& e) {
      throw Error(e.with_source_line());
    }
  }
  if (job.interrupted) {
    check_interrupt();
    throw Interrupted();
  }
}

}  // namespace kiln::cpu
