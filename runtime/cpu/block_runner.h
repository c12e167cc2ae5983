// The block runner: one block's threads on one worker thread, with CUDA's barrier and warp
// semantics (cooperative, round-robin), the threads being fibers (each on its own guarded stack)
// or coroutines (the kernel rewritten so each thread suspends at a barrier). Loop- and region-mode
// blocks only borrow its guarded block stack.
#pragma once
#include <setjmp.h>

#include <boost/context/detail/fcontext.hpp>
#include <cstdint>
#include <exception>
#include <string>
#include <vector>

#include "runtime/cpu/executor.h"
#include "runtime/cpu/stacks.h"

namespace kiln::cpu {

namespace ctx = boost::context::detail;

// "(x,y,z)", as messages name threads and blocks.
std::string dims(kiln_cpu::uint3 v);

// Runs one block's threads as fibers on the calling worker thread.
class BlockRunner final : public OverflowCatcher {
 public:
  explicit BlockRunner(Worker& worker) : worker_(worker) {}
  // Runs one block; launch holds the launch's thread identity record (block_idx is set here).
  void run(const KernelEntry& k, const kiln_cpu::Tls& launch, void** args, kiln_cpu::uint3 block);
  void barrier_vote(int predicate);
  int barrier_value(int op) const;

  int barrier(int op, int predicate);
  void* frame_alloc(std::size_t bytes);
  // code: the caller's address in the kernel module, for check mode's report of a shuffle that
  // reads a lane not taking part.
  unsigned long long warp(int op, unsigned mask, unsigned long long value, int param, int width,
                          const void* code);
  [[noreturn]] void trap(const char* message);
  [[noreturn]] void out_of_bounds(const char* message, const void* code) {
    throw OutOfBounds(where(cur_), message, code);
  }
  const KernelEntry& kernel() const { return *kernel_; }
  // Whether the running kernel was built for check mode (its backend tracks allocations).
  bool kernel_checked() const { return kernel_ && kernel_->allocations; }
  // Loop and region modes: blocks [first, last) on the worker's block stack.
  void run_on_block_stack(const KernelEntry& k, const kiln_cpu::Tls& launch, void** args,
                          std::uint64_t first, std::uint64_t last);
  bool stack_overflowed(const void* addr) const override {
    return (in_fibers_ && worker_.stacks.is_guard(addr)) ||
           (on_block_stack_ && worker_.block_stack.is_guard(addr));
  }
  [[noreturn]] void overflow_jump() override {
    asan_start_switch(nullptr, sched_bottom_, sched_size_);
    siglongjmp(overflow_jmp_, 1);
  }
  bool running_kernel() const override { return in_fibers_ || on_block_stack_; }
  [[noreturn]] void fault_jump(int sig, const void* addr) override {
    fault_addr_ = addr;
    fault_signal_ = sig;
    asan_start_switch(nullptr, sched_bottom_, sched_size_);
    siglongjmp(overflow_jmp_, 2);
  }
  [[noreturn]] void abandon_jump() override {
    asan_start_switch(nullptr, sched_bottom_, sched_size_);
    siglongjmp(overflow_jmp_, 3);
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
    const void* code[32];
    unsigned completed[32];  // how many warp operations each lane has completed
    unsigned unjoined[32];  // the lane a shuffle read that was not taking part, or 32
    unsigned group[32];     // with unjoined: the lanes its operation completed with
  };

  static void fiber_main(ctx::transfer_t t);
  static void on_stack_main(ctx::transfer_t t);
  // A plain function, not a member pointer: GCC's UBSan misreads member-pointer calls on a
  // polymorphic class as misaligned accesses.
  void call_on_stack(void* top, std::size_t bytes, void (*body)(BlockRunner&));
  void run_kernel_blocks();
  void run_fibers();
  void start_coroutines();
  void sweep();
  void destroy_coroutines();
  [[noreturn]] void not_in_coroutines(const char* what);
  bool ready(unsigned i) const;
  void spin_yield(bool global);
  unsigned find_ready(unsigned from) const;
  void switch_to(ctx::fcontext_t* save, unsigned next, bool finishing = false);
  void arrived(void* fake);
  void wait();
  void finish_current();
  void release_barrier();
  bool try_complete(Warp& w, unsigned mask);
  static unsigned after_stores(const Warp& w, unsigned group);
  static unsigned first_call(const Warp& w, unsigned lanes);
  void complete(Warp& w, unsigned group);
  bool release_divergent_activemask();
  std::string where(unsigned fiber) const;
  std::string deadlock_message() const;
  // Check mode: the error of lane of w, whose shuffle read a lane not taking part.
  [[noreturn]] void unjoined_source(const Warp& w, unsigned lane) const;
  // Check mode's report of threads that returned while others reached a barrier.
  std::string divergence_message(unsigned returned, unsigned first_returned, unsigned waiting,
                                 unsigned first_waiting) const;

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
  unsigned phase_exits_ = 0, first_exit_ = 0;  // threads returned since the last barrier
  int acc_count_ = 0, acc_and_ = 1, acc_or_ = 0;
  int res_count_ = 0, res_and_ = 1, res_or_ = 0;
  bool aborted_ = false;
  bool in_fibers_ = false;
  bool on_block_stack_ = false;
  std::uint64_t first_ = 0, last_ = 0;             // loop and region modes: the blocks to run
  void (*on_stack_body_)(BlockRunner&) = nullptr;  // what call_on_stack runs
  bool coroutines_ = false;
  std::vector<void*> frames_;          // coroutine mode: each thread's coroutine frame
  std::vector<kiln_cpu::uint3> tids_;  // coroutine mode: each thread's threadIdx
  std::vector<unsigned> live_list_;    // coroutine mode: the threads not yet returned
  // Coroutine mode: the frames' memory, chunks reused block after block.
  std::vector<std::vector<std::max_align_t>> arena_;
  std::size_t arena_chunk_ = 0, arena_used_ = 0;
  std::exception_ptr error_;
  sigjmp_buf overflow_jmp_;
  const void* volatile fault_addr_ = nullptr;  // fault_jump's address and signal, for the message
  volatile int fault_signal_ = 0;
};

}  // namespace kiln::cpu
