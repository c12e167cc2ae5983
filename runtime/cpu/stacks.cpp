#include "runtime/cpu/stacks.h"

#include <sys/mman.h>

#include <pthread.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <mutex>
#include <string>

#include "runtime/error.h"
#include "runtime/interrupt.h"

namespace kiln::cpu {
namespace {

constexpr std::size_t kGuardBytes = 4096;

thread_local OverflowCatcher* t_catcher = nullptr;  // what runs on guarded stacks on this thread
thread_local void* t_altstack = nullptr;            // the alternate signal stack use_altstack set
// The faults kernel code may raise, and the handlers that were there before kiln's (chained to
// for faults that are not ours).
constexpr int kFaultSignals[] = {SIGSEGV, SIGBUS, SIGFPE};
struct sigaction g_previous[std::size(kFaultSignals)];

// SIGSEGV/SIGBUS/SIGFPE on the alternate stack: a fault in a fiber's guard page, or any fault of
// kernel code (a bad access, an integer division by zero), aborts the block with an error;
// other faults go to the handler that was there before.
void on_fault(int sig, siginfo_t* info, void* uctx) {
  OverflowCatcher* r = t_catcher;
  if (r && sig != SIGFPE && r->stack_overflowed(info->si_addr)) r->overflow_jump();
  if (r && r->running_kernel()) r->fault_jump(sig, info->si_addr);
  std::size_t which = 0;
  while (which + 1 < std::size(kFaultSignals) && kFaultSignals[which] != sig) ++which;
  const struct sigaction& prev = g_previous[which];
  if ((prev.sa_flags & SA_SIGINFO) && prev.sa_sigaction) {
    prev.sa_sigaction(sig, info, uctx);
  } else if (prev.sa_handler != SIG_IGN && prev.sa_handler != SIG_DFL && prev.sa_handler) {
    prev.sa_handler(sig);
  } else {
    ::signal(sig, SIG_DFL);  // returning re-executes the fault under the default action
  }
}

// Threads that may be running kernel code now (pthread_t, 0 for a free slot), and how many
// launches run: what the second Ctrl-C reaches. Fixed-size and lock-free, as a signal handler
// reads them; like the Ctrl-C flag, process-wide by nature.
constexpr int kMaxKernelThreads = 8192;
std::atomic<pthread_t> g_kernel_threads[kMaxKernelThreads];
std::atomic<int> g_launches{0};
static_assert(std::atomic<pthread_t>::is_always_lock_free);

// SIGURG from abandon_running_kernels: leaves this thread's kernel code, if it runs any.
void on_abandon(int) {
  OverflowCatcher* r = t_catcher;
  if (r && r->running_kernel()) r->abandon_jump();
}

}  // namespace

KernelThreadScope::KernelThreadScope() {
  g_launches.fetch_add(1);
  const pthread_t self = ::pthread_self();
  for (int i = 0; i < kMaxKernelThreads; ++i) {
    pthread_t free_slot{};
    if (g_kernel_threads[i].compare_exchange_strong(free_slot, self)) {
      slot_ = i;
      break;
    }
  }
}

KernelThreadScope::~KernelThreadScope() {
  if (slot_ >= 0) g_kernel_threads[slot_].store(pthread_t{});
  g_launches.fetch_sub(1);
}

FiberStacks::~FiberStacks() {
  for (char* base : bases_) {
#ifdef KILN_ASAN_FIBERS
    // Fibers end by switching away, so ASan never cleans their frames' redzones: the shadow
    // would outlive the mapping and flag whatever is mapped here next (a cooperative launch's
    // per-block workers come and go).
    __asan_unpoison_memory_region(base, kGuardBytes + bytes_);
#endif
    ::munmap(base, kGuardBytes + bytes_);
  }
}

void FiberStacks::reserve(unsigned count) {
  while (bases_.size() < count) {
    void* p = ::mmap(nullptr, kGuardBytes + bytes_, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
      throw Error("cpu backend: cannot map a fiber stack: " + std::string(std::strerror(errno)));
    if (::mprotect(p, kGuardBytes, PROT_NONE) != 0) {
      const int error = errno;
      ::munmap(p, kGuardBytes + bytes_);
      throw Error("cpu backend: cannot protect a fiber stack's guard page (" +
                  std::string(std::strerror(error)) +
                  "): each fiber stack is two memory mappings, and a grid whose blocks all run at "
                  "once (grid.sync) needs one per thread of every block; the system allows "
                  "vm.max_map_count of them");
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

void set_overflow_catcher(OverflowCatcher* catcher) {
  t_catcher = catcher;
}

void install_fault_handler() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa {};
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    for (std::size_t i = 0; i < std::size(kFaultSignals); ++i)
      ::sigaction(kFaultSignals[i], &sa, &g_previous[i]);
#ifdef KILN_ASAN_FIBERS
    sigemptyset(&g_interrupt_signals);
    sigaddset(&g_interrupt_signals, SIGINT);
    sigaddset(&g_interrupt_signals, SIGURG);
#endif
    struct sigaction abandon {};
    abandon.sa_handler = on_abandon;
    abandon.sa_flags = SA_ONSTACK | SA_RESTART | SA_NODEFER;  // left by a jump: keep it unblocked
    sigemptyset(&abandon.sa_mask);
    ::sigaction(SIGURG, &abandon, nullptr);
  });
}

void use_altstack(void* mem) {
  if (t_altstack == mem) return;
  stack_t ss{};
  ss.ss_sp = mem;
  ss.ss_size = kAltStackBytes;
  if (::sigaltstack(&ss, nullptr) == 0) t_altstack = mem;
}

void release_altstack(void* mem) {
  stack_t current{};
  if (::sigaltstack(nullptr, &current) == 0 && current.ss_sp == mem &&
      !(current.ss_flags & SS_DISABLE)) {  // this thread's signals must not use freed memory
    stack_t off{};
    off.ss_flags = SS_DISABLE;
    ::sigaltstack(&off, nullptr);
  }
  if (t_altstack == mem) t_altstack = nullptr;
}

ScopedAltStack::ScopedAltStack(void* mem) {
  stack_t ss{};
  ss.ss_sp = mem;
  ss.ss_size = kAltStackBytes;
  active_ = ::sigaltstack(&ss, &old_) == 0;
}

ScopedAltStack::~ScopedAltStack() {
  if (active_) ::sigaltstack(&old_, nullptr);
}

}  // namespace kiln::cpu

namespace kiln {

bool abandon_running_kernels() noexcept {
  using namespace cpu;
  if (g_launches.load() == 0) return false;
  const pthread_t self = ::pthread_self();
  for (auto& slot : g_kernel_threads) {
    const pthread_t t = slot.load();
    if (t != pthread_t{} && !::pthread_equal(t, self)) ::pthread_kill(t, SIGURG);
  }
  on_abandon(SIGURG);  // this thread's own kernel, if it runs one: does not return then
  return true;
}

}  // namespace kiln
