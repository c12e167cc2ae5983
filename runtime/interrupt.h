// Ctrl-C: the REPL's SIGINT handler raises the flag; long-running work (cpu backend kernels at
// block boundaries, compiles, :time loops) polls it and stops with kiln::Interrupted. The flag
// is a lock-free atomic, the one thing a signal handler may touch, so it lives outside the Lua
// state (as lua.c's globalL does).
#pragma once
#include <pthread.h>

#include <atomic>
#include <csignal>

#include "runtime/error.h"

namespace kiln {

class Interrupted : public Error {
 public:
  Interrupted() : Error("interrupted") {}
  // What was interrupted, for the message ("cpu backend: compile of ... interrupted").
  explicit Interrupted(const std::string& what) : Error(what) {}
};

inline std::atomic<bool>& interrupt_flag() {
  static std::atomic<bool> flag{false};
  static_assert(std::atomic<bool>::is_always_lock_free);
  return flag;
}

// The second Ctrl-C, from a signal handler (async-signal-safe): every thread running a cpu-backend
// kernel jumps out of it, and the launch fails with Interrupted, whatever the kernel was doing
// (a block spinning for ever never polls the flag). Returns false when no launch runs: the
// caller then ends the process, as a second Ctrl-C does elsewhere. (runtime/cpu/stacks.cpp)
bool abandon_running_kernels() noexcept;

// For a helper thread (the NVRTC check, the prelude's precompile, each beside a compile): blocks
// SIGINT in the calling thread, so that Ctrl-C is handled by the thread that answers it, and no
// library call of the helper's (NVRTC's) is cut short by a signal it does not expect.
inline void block_interrupts_in_this_thread() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

// Throws Interrupted (and lowers the flag) when Ctrl-C was pressed.
inline void check_interrupt() {
  if (interrupt_flag().exchange(false, std::memory_order_relaxed)) throw Interrupted();
}

}  // namespace kiln
