// Guarded stacks: the fiber and block stacks the cpu backend runs kernel threads on, each with a
// guard page below it, and the SIGSEGV handler that turns a fault in a guard page into a jump
// back to the code that owns the stack (a reported stack overflow, not a crash), and any other
// fault of kernel code (a null or wild pointer) into a reported invalid access. Also ASan's
// stack-switch annotations, which every switch onto or off such a stack must make.
#pragma once
#include <pthread.h>
#include <signal.h>

#include <cstddef>
#include <vector>

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
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

namespace kiln::cpu {

// A GPU thread may use up to 512 KiB of local memory (a solver's per-thread work arrays): each
// fiber gets as much, reserved (MAP_NORESERVE) and only backed where the kernel touches it.
inline constexpr std::size_t kFiberStackBytes = 512 * 1024;
// Loop and region modes: a block's threads share one stack (in region mode their barrier-level
// variables too, one array each), guarded like the fiber stacks.
inline constexpr std::size_t kBlockStackBytes = 8 * 1024 * 1024;
inline constexpr std::size_t kAltStackBytes = 64 * 1024;  // a worker's signal stack

// One worker's fiber stacks, each with a guard page below it; made on first need and reused for
// every later block (no system calls per block).
class FiberStacks {
 public:
  explicit FiberStacks(std::size_t bytes = kFiberStackBytes) : bytes_(bytes) {}
  ~FiberStacks();
  FiberStacks(const FiberStacks&) = delete;
  FiberStacks& operator=(const FiberStacks&) = delete;
  void reserve(unsigned count);           // throws kiln::Error when the memory cannot be mapped
  void* top(unsigned i) const;            // the initial stack pointer of stack i
  std::size_t count() const { return bases_.size(); }  // the stacks made so far
  bool is_guard(const void* addr) const;  // async-signal-safe

 private:
  std::size_t bytes_;
  std::vector<char*> bases_;  // each: guard page, then bytes_ of stack
};

// What runs on guarded stacks on one thread: the fault handler asks it whether a fault address is
// in one of its guard pages and, when it is, lets it jump back to safety (it never returns).
class OverflowCatcher {
 public:
  virtual bool stack_overflowed(const void* addr) const = 0;  // async-signal-safe
  [[noreturn]] virtual void overflow_jump() = 0;
  // Whether kernel code runs on this thread now (async-signal-safe): any other fault there is a
  // kernel's bad access (SIGSEGV, SIGBUS) or integer division by zero (SIGFPE), which fault_jump
  // turns into an error for its launch.
  virtual bool running_kernel() const = 0;
  [[noreturn]] virtual void fault_jump(int sig, const void* addr) = 0;
  // Leaves the kernel code running on this thread at the second Ctrl-C (abandon_running_kernels).
  [[noreturn]] virtual void abandon_jump() = 0;

 protected:
  ~OverflowCatcher() = default;
};

// Sets the calling thread's catcher (nullptr: none; a fault is then not ours).
void set_overflow_catcher(OverflowCatcher* catcher);

// Installs the SIGSEGV handler once per process, chaining to the handler that was there, and
// the SIGURG handler by which abandon_running_kernels reaches other threads' kernels.
void install_fault_handler();

// While alive: a launch runs, and the calling thread may run its kernel code (the second
// Ctrl-C then reaches it). Cheap: an atomic counter and a slot in a fixed table.
class KernelThreadScope {
 public:
  KernelThreadScope();
  ~KernelThreadScope();
  KernelThreadScope(const KernelThreadScope&) = delete;
  KernelThreadScope& operator=(const KernelThreadScope&) = delete;

 private:
  int slot_ = -1;
};

// The calling thread uses mem (kAltStackBytes) as its signal stack from now on: set once per
// thread, as the system calls would cost more than a small launch.
void use_altstack(void* mem);

// Stops the calling thread's use of mem as its signal stack (before mem is freed).
void release_altstack(void* mem);

// Uses mem as the calling thread's signal stack while alive.
class ScopedAltStack {
 public:
  explicit ScopedAltStack(void* mem);
  ~ScopedAltStack();
  ScopedAltStack(const ScopedAltStack&) = delete;
  ScopedAltStack& operator=(const ScopedAltStack&) = delete;

 private:
  stack_t old_{};  // the signal stack in use before
  bool active_ = false;
};

// Tells ASan (when built with it) the running code moves to the stack [bottom, bottom + size);
// fake is null when the stack being left is finished with. Inline: ASan wants the call in the
// frame that switches.
// Under ASan a switch is also closed to SIGINT and SIGURG until it finishes: the second Ctrl-C
// jumps out of a kernel with a switch of its own, which must not land inside another.
// (The sets live off the stack: a fiber stack ASan has half switched away from is no place for
// a local that an intercepted call writes.)
#ifdef KILN_ASAN_FIBERS
inline thread_local sigset_t t_mask_before_switch;
// SIGINT and SIGURG; filled by install_fault_handler, before any kernel runs.
inline sigset_t g_interrupt_signals;
#endif
inline void asan_start_switch([[maybe_unused]] void** fake, [[maybe_unused]] const void* bottom,
                              [[maybe_unused]] std::size_t size) {
#ifdef KILN_ASAN_FIBERS
  pthread_sigmask(SIG_BLOCK, &g_interrupt_signals, &t_mask_before_switch);
  __sanitizer_start_switch_fiber(fake, bottom, size);
#endif
}

// Tells ASan the switch completed; stores the stack that was left in *bottom and *size.
inline void asan_finish_switch([[maybe_unused]] void* fake, [[maybe_unused]] const void** bottom,
                               [[maybe_unused]] std::size_t* size) {
#ifdef KILN_ASAN_FIBERS
  __sanitizer_finish_switch_fiber(fake, bottom, size);
  pthread_sigmask(SIG_SETMASK, &t_mask_before_switch, nullptr);
#endif
}

// A stack about to be used afresh (a new fiber on a stack an earlier launch's fibers used): the
// redzones their frames left, which they never returned through, are cleared, so that ASan's
// own checks on the new frames (an intercepted call's) do not find them.
inline void asan_unpoison_stack([[maybe_unused]] const void* top,
                                [[maybe_unused]] std::size_t size) {
#ifdef KILN_ASAN_FIBERS
  __asan_unpoison_memory_region(static_cast<const char*>(top) - size, size);
#endif
}

// After a jump back onto a stack from a signal handler (a fault, the second Ctrl-C): the frames
// the jump skipped, from bottom up to the caller's frame, keep ASan's redzone poisoning, which
// later calls would trip on. Clears it, as ASan's own longjmp handling does for plain stacks.
inline void asan_unpoison_below([[maybe_unused]] const void* bottom) {
#ifdef KILN_ASAN_FIBERS
  char here;
  if (bottom && static_cast<const void*>(&here) > bottom)
    __asan_unpoison_memory_region(bottom, std::size_t(&here - static_cast<const char*>(bottom)));
#endif
}

}  // namespace kiln::cpu
