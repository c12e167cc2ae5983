#include "runtime/cpu/block_runner.h"

#include <algorithm>
#include <coroutine>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <thread>

#include "runtime/error.h"
#include "runtime/interrupt.h"

namespace kiln::cpu {

namespace {

// Ends a block left at the second Ctrl-C: the Ctrl-C is answered by this error (the flag is
// lowered, so the Lua VM's own "interrupted!" does not replace it).
[[noreturn]] void abandoned(const std::string& who) {
  interrupt_flag().store(false, std::memory_order_relaxed);
  throw Interrupted(who + ": abandoned at the second Ctrl-C (it did not stop at the first: a "
                          "block that never ends?)");
}

// What a kernel's fault (outside any guard page) is reported as: an invalid access, or an
// integer division by zero (or INT_MIN / -1, which x86 traps alike; a GPU gives some value).
// checking: whether the kernel was built for check mode, which then missed the access.
std::string fault_text(int sig, const void* addr, bool checking) {
  if (sig == SIGFPE)
    return "integer division by zero (or INT_MIN / -1, which overflows): a GPU gives an "
           "undefined value, the cpu backend stops the launch";
  char hex[32];
  std::snprintf(hex, sizeof hex, "0x%llx",
                static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(addr)));
  return std::string("invalid memory access at address ") + hex +
         (reinterpret_cast<std::uintptr_t>(addr) < 4096 ? " (a null pointer)" : "") +
         (checking ? "; check mode follows a kernel's pointer parameters into device arrays, and "
                     "this access was through none (a pointer from elsewhere, or a build without "
                     "checks: k:info().why says)"
                   : "; `kiln --check` names the source line of an access outside an array");
}

}  // namespace
namespace {

// The kernel API (cpu_abi.h) of a block run by the block runner: exec is the BlockRunner.
int api_barrier(void* exec, int op, int pred) {
  return static_cast<BlockRunner*>(exec)->barrier(op, pred);
}
unsigned long long api_warp(void* exec, int op, unsigned mask, unsigned long long v, int param,
                            int width) {
  return static_cast<BlockRunner*>(exec)->warp(
      op, mask, v, param, width, __builtin_extract_return_addr(__builtin_return_address(0)));
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
int api_bounds(void* exec, const void* p, const void** lo, const void** hi) {
  const KernelEntry& k = static_cast<BlockRunner*>(exec)->kernel();
  return k.allocations && k.allocations->find(p, lo, hi) ? 1 : 0;
}
void api_out_of_bounds(void* exec, const char* message, const void* code) {
  static_cast<BlockRunner*>(exec)->out_of_bounds(message, code);
}
void api_note(void* exec, int what) {
  static_cast<BlockRunner*>(exec)->kernel().note(what);
}
const kiln_cpu::Api kFiberApi{
    KILN_CPU_ABI_VERSION, api_barrier,     api_warp,         api_trap,           api_bounds,
    api_out_of_bounds,    api_frame_alloc, api_barrier_vote, api_barrier_result, api_note};

}  // namespace

std::string dims(kiln_cpu::uint3 v) {
  char buf[48];  // snprintf: GCC 12 warns falsely on the string-concatenation form
  std::snprintf(buf, sizeof buf, "(%u,%u,%u)", v.x, v.y, v.z);
  return buf;
}

std::string BlockRunner::where(unsigned fiber) const {
  // fiber == n_: the scheduler ran, between two threads (the second Ctrl-C can land there).
  if (fiber >= fibers_.size())
    return "kernel '" + kernel_->name + "': block " + dims(launch_.block_idx);
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
    std::fill(std::begin(warps_[w].completed), std::end(warps_[w].completed), 0u);
    warps_[w].waiting = 0;
  }
  live_ = n_;
  done_ = arrived_ = gen_ = 0;
  phase_exits_ = first_exit_ = 0;
  acc_count_ = acc_or_ = 0;
  acc_and_ = 1;
  aborted_ = false;
  error_ = nullptr;
  launch_.block_idx = block;
  launch_.exec = this;
  launch_.api = &kFiberApi;
  k.set_launch(&launch_);
  if (coroutines_) start_coroutines();

  set_overflow_catcher(this);
  if (int jumped = sigsetjmp(overflow_jmp_, 0); jumped != 0) {  // a guard page, or a bad access
    asan_finish_switch(nullptr, nullptr, nullptr);
    asan_unpoison_below(sched_bottom_);
    in_fibers_ = false;
    set_overflow_catcher(nullptr);
    frames_.clear();  // a frame that was running cannot be destroyed; the arena is reused
    if (jumped == 2)
      throw Error(where(cur_) + ": " + fault_text(fault_signal_, fault_addr_, kernel_checked()));
    if (jumped == 3) abandoned(where(cur_));
    throw Error(where(cur_) + ": overflowed its " + std::to_string(kFiberStackBytes / 1024) +
                " KiB fiber stack (deep recursion or large local arrays)");
  }
  in_fibers_ = true;
  if (coroutines_) {
    // The sweeps run on a guarded stack too, so that deep recursion is an error, not a crash.
    call_on_stack(worker_.stacks.top(0), kFiberStackBytes, [](BlockRunner& r) { r.sweep(); });
  } else {
    run_fibers();
  }
  in_fibers_ = false;
  set_overflow_catcher(nullptr);
  if (coroutines_) destroy_coroutines();
  if (error_) std::rethrow_exception(error_);
  if (done_ < n_ && !aborted_) throw Error(deadlock_message());
}

// Fiber mode: runs ready fibers until all are done or none can go on.
void BlockRunner::run_fibers() {
  while (done_ < n_ && !aborted_) {
    unsigned next = find_ready(0);
    if (next == n_ && release_divergent_activemask()) next = find_ready(0);
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
  set_overflow_catcher(this);
  if (int jumped = sigsetjmp(overflow_jmp_, 0); jumped != 0) {  // a guard page, or a bad access
    asan_finish_switch(nullptr, nullptr, nullptr);
    asan_unpoison_below(sched_bottom_);
    on_block_stack_ = false;
    set_overflow_catcher(nullptr);
    kiln_cpu::Tls now{};
    k.get_launch(&now);
    // Loop and region modes run a block's threads as the module's own loops, whose index the
    // compiler need not have stored when the access faults: the thread is not named.
    if (jumped == 2)
      throw Error("kernel '" + k.name + "': one of its threads: " +
                  fault_text(fault_signal_, fault_addr_, kernel_checked()));
    if (jumped == 3) abandoned("kernel '" + k.name + "'");
    throw Error("kernel '" + k.name + "': thread " + dims(now.thread_idx) + " of block " +
                dims(now.block_idx) + ": overflowed its block's " +
                std::to_string(kBlockStackBytes >> 20) +
                " MiB stack (deep recursion or large local arrays)");
  }
  on_block_stack_ = true;
  call_on_stack(worker_.block_stack.top(0), kBlockStackBytes,
                [](BlockRunner& r) { r.run_kernel_blocks(); });
  on_block_stack_ = false;
  set_overflow_catcher(nullptr);
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

// Runs body(*this) on the guarded stack whose top is given; returns when it has.
void BlockRunner::call_on_stack(void* top, std::size_t bytes, void (*body)(BlockRunner&)) {
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
  self->on_stack_body_(*self);
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
  const bool check = kernel_->allocations != nullptr;
  std::vector<unsigned> before;
  for (unsigned live = n_; live > 0;) {
    if (check) before.assign(live_list_.begin(), live_list_.begin() + live);
    try {
      live = kernel_->round(frames_.data(), tids_.data(), live_list_.data(), live, &cur_);
    } catch (...) {
      error_ = std::current_exception();
      aborted_ = true;
      return;
    }
    if (check && live > 0 && live < before.size()) {  // some returned, the rest wait at a barrier
      unsigned first_done = n_;
      for (unsigned i : before)
        if (std::find(live_list_.begin(), live_list_.begin() + live, i) == live_list_.begin() + live) {
          first_done = i;
          break;
        }
      error_ = std::make_exception_ptr(
          Error(divergence_message(unsigned(before.size()) - live, first_done, live, live_list_[0])));
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

std::string BlockRunner::divergence_message(unsigned returned, unsigned first_returned,
                                            unsigned waiting, unsigned first_waiting) const {
  return "kernel '" + kernel_->name + "': barrier divergence in block " + dims(launch_.block_idx) +
         ": thread " + dims(fibers_[first_returned].tid) +
         " returned without reaching the __syncthreads that thread " +
         dims(fibers_[first_waiting].tid) + " reached (when found: " + std::to_string(returned) +
         " thread(s) returned, " + std::to_string(waiting) +
         " at the barrier); every thread of a block must reach each barrier (check mode; a GPU "
         "may hang or release it early)";
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
    if (!f.ctx) {
      asan_unpoison_stack(worker_.stacks.top(next), kFiberStackBytes);
      f.ctx = ctx::make_fcontext(worker_.stacks.top(next), kFiberStackBytes, fiber_main);
    }
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

// The running thread returned: it counts as arrived at every later barrier (check mode: it
// must not return while others wait at one, nor before one the others reach; see divergence).
void BlockRunner::finish_current() {
  unsigned me = cur_;
  fibers_[me].state = State::done;
  ++done_;
  --live_;
  if (phase_exits_++ == 0) first_exit_ = me;
  if (kernel_->allocations && arrived_ > 0 && !error_) {
    unsigned waiting = 0;
    for (unsigned i = 0; i < n_ && !waiting; ++i)
      if (fibers_[i].state == State::barrier) waiting = i + 1;
    error_ = std::make_exception_ptr(Error(divergence_message(1, me, arrived_, waiting - 1)));
    aborted_ = true;
  }
  if (arrived_ > 0 && arrived_ == live_) release_barrier();
  Warp& w = warps_[me / 32];
  w.live &= ~(1u << (me % 32));
  for (unsigned lane = 0; w.waiting && lane < 32; ++lane)
    if (w.waiting & (1u << lane)) try_complete(w, w.mask[lane]);
}

void BlockRunner::release_barrier() {
  phase_exits_ = 0;
  res_count_ = acc_count_;
  res_and_ = acc_and_;
  res_or_ = acc_or_;
  acc_count_ = acc_or_ = 0;
  acc_and_ = 1;
  arrived_ = 0;
  ++gen_;
}

int BlockRunner::barrier(int op, int predicate) {
  if (op == kiln_cpu::barrier_yield) {
    spin_yield(predicate != 0);
    return 0;
  }
  if (coroutines_) not_in_coroutines("__syncthreads");
  acc_count_ += predicate;
  acc_and_ &= predicate;
  acc_or_ |= predicate;
  // Check mode: a thread that returned in this phase never reaches this barrier.
  if (kernel_->allocations && phase_exits_ > 0)
    throw Error(divergence_message(phase_exits_, first_exit_, arrived_ + 1, cur_));
  if (++arrived_ == live_) {
    // The block is together; for grid.sync() the whole grid must be too (a cooperative launch
    // runs each block on an OS thread of its own, so this thread may block).
    if (op == kiln_cpu::barrier_grid) {
      if (!worker_.grid)
        throw Error(where(cur_) +
                    ": this_grid().sync() needs a cooperative launch (kiln chooses one for a "
                    "kernel whose source names this_grid)");
      worker_.grid->arrive_and_wait();
    }
    release_barrier();
  } else {
    Fiber& f = fibers_[cur_];
    f.state = State::barrier;
    f.gen = gen_;
    wait();
  }
  return barrier_value(op);
}

// A spin-wait's turn: the fiber stays ready and the others that are run first, in order. When
// no other thread of the block can run, nothing can set shared memory it waits for: a deadlock,
// on a GPU too, which is an error rather than a hang; global memory another block may set,
// which runs on another OS thread meanwhile.
void BlockRunner::spin_yield(bool global) {
  if (global && worker_.grid && worker_.grid->aborted())
    throw Error(where(cur_) +
                ": spins on memory that another block sets, and another block failed");
  if (!in_fibers_ || coroutines_) return std::this_thread::yield();
  const unsigned me = cur_, next = find_ready(me + 1);
  if (next == n_ && find_ready(0) == n_) {
    if (global) return std::this_thread::yield();
    throw Error(where(me) +
                ": spins on shared memory that no other thread of its block can set (each is "
                "at a barrier, at a warp operation or done): a deadlock on a GPU too");
  }
  fibers_[me].state = State::ready;
  switch_to(&fibers_[me].ctx, next);
}

unsigned long long BlockRunner::warp(int op, unsigned mask, unsigned long long value, int param,
                                     int width, const void* code) {
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
  w.code[lane] = code;
  w.unjoined[lane] = 32;
  w.waiting |= 1u << lane;
  try_complete(w, mask);
  if (w.waiting >> lane & 1) {  // (not complete, or others, at stores, complete before it)
    fibers_[me].state = State::warp;
    wait();
  } else if (const unsigned group = mask & w.live; (group & ((1u << lane) - 1)) != 0) {
    // The last lane to arrive hands over to the lowest: the lanes then run on in lane order
    // (each, at its next wait, hands over to the next ready fiber), as region mode runs them,
    // so that warp-synchronous code that reads a higher lane's element before that lane
    // stores it (`s[t] += s[t + 16]; __syncwarp();`) reads it as a GPU's warp in step does,
    // whichever lane arrived last.
    // (A lane at a lockstep pointer's read may wait on while the stores complete: the lowest
    // lane that can run, which may be none below this one; a fiber never switches to itself.)
    unsigned first = me - lane;
    while (first < me && !ready(first)) ++first;
    if (first != me) {
      fibers_[me].state = State::ready;
      switch_to(&fibers_[me].ctx, first);
    }
  }
  // A shuffle from a lane outside the mask, or one that returned: the GPU's value is undefined,
  // kiln's the caller's own. An error in check mode, else a note (once, by the JIT).
  if (w.unjoined[lane] < 32) {
    if (kernel_->allocations) unjoined_source(w, lane);
    kernel_->note(kiln_cpu::note_unjoined_shuffle);
  }
  return w.result[lane];
}

void BlockRunner::unjoined_source(const Warp& w, unsigned lane) const {
  static constexpr const char* names[] = {"__shfl_sync", "__shfl_up_sync", "__shfl_down_sync",
                                          "__shfl_xor_sync"};
  const unsigned thread = 32 * unsigned(&w - warps_.data()) + lane;
  char what[200];
  std::snprintf(what, sizeof what,
                "%s reads lane %u, which is not taking part (the lanes taking part: 0x%08x, the "
                "mask given and not returned): its value is undefined on a GPU",
                names[w.op[lane] - kiln_cpu::warp_shfl_idx], w.unjoined[lane], w.group[lane]);
  throw OutOfBounds(where(thread), what, w.code[lane]);
}

// Completes the warp operation of the lanes named by mask once all its live lanes are waiting
// at one with the same mask (lanes that exited do not count). Lanes at __activemask go first,
// one call's lanes at a time: a GPU's converged lanes, those of one branch of divergent code
// (`if (v & 1) r = __ballot_sync(__activemask(), p); else ...`), the others waiting on. The
// call of the lane furthest behind goes first (first_call: a branch's before the one after the
// join, which the branch's lanes then reach too, as a GPU's warp reconverges there). Lanes at a
// lockstep pointer's read (after_stores) wait on while others at __activemask (a lockstep
// store's steps) complete: the warp's stores come first. Lanes at any other operation wait for
// them instead: a read needs no other lane, and those lanes' operation needs the readers (a
// look-back's `s = j >= 0 ? status[j] : 2u; if (__any_sync(~0u, s == 0)) continue;`, where
// lane 0 alone reads: the vote ran without it).
bool BlockRunner::try_complete(Warp& w, unsigned mask) {
  unsigned group = mask & w.live;
  if ((w.waiting & group) != group) return false;
  for (unsigned j = 0; j < 32; ++j)
    if ((group >> j & 1) && (w.mask[j] & w.live) != group) return false;
  const unsigned readers = after_stores(w, group), others = group & ~readers;
  unsigned at_activemask = 0;
  for (unsigned j = 0; j < 32; ++j)
    if ((others >> j & 1) && w.op[j] == kiln_cpu::warp_activemask) at_activemask |= 1u << j;
  complete(w, at_activemask ? first_call(w, at_activemask) : readers ? readers : group);
  return true;
}

// Of lanes, those waiting at the call (by its return address) of the lane furthest behind: the
// fewest warp operations completed, then the lowest lane. So the lanes of a branch complete
// their call before the lanes that ran the other branch's complete the one after the join
// (which the first then reach too), as a GPU's warp runs each branch before it reconverges.
unsigned BlockRunner::first_call(const Warp& w, unsigned lanes) {
  const void* call = nullptr;
  unsigned behind = ~0u;
  for (unsigned j = 0; j < 32; ++j)
    if ((lanes >> j & 1) && w.completed[j] < behind) behind = w.completed[j], call = w.code[j];
  unsigned same = 0;
  for (unsigned j = 0; j < 32; ++j)
    if ((lanes >> j & 1) && w.code[j] == call) same |= 1u << j;
  return same;
}

// The lanes of group waiting at a lockstep pointer's read (cpu_sync.h lockstep_ref).
unsigned BlockRunner::after_stores(const Warp& w, unsigned group) {
  unsigned readers = 0;
  for (unsigned j = 0; j < 32; ++j)
    if ((group >> j & 1) && w.op[j] == kiln_cpu::warp_activemask &&
        w.param[j] == kiln_cpu::activemask_after_stores)
      readers |= 1u << j;
  return readers;
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
        // (a lane not taking part: undefined on a GPU, where an H200 gave 0 from one that
        // returned or does not exist (a partial warp); reported when lane j resumes)
        r = (group >> src & 1) ? w.value[src] : 0;
        if (!(group >> src & 1)) {
          w.unjoined[j] = unsigned(src);
          w.group[j] = group;
        }
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
  for (unsigned j = 0; j < 32; ++j) w.completed[j] += group >> j & 1;
}

// When no fiber can go on: the lanes of each warp waiting at __activemask while the warp's other
// lanes wait elsewhere (another warp operation, a barrier) get their own mask, as the lanes
// that reached it in divergent code (`if (x) { auto g = coalesced_threads(); g.sync(); }`).
// __activemask waits for the whole warp first because the fibers cannot tell which lanes are
// still on their way to it. Returns whether it released any lane.
bool BlockRunner::release_divergent_activemask() {
  bool released = false;
  for (Warp& w : warps_) {
    unsigned group = 0;
    for (unsigned j = 0; j < 32; ++j)
      if ((w.waiting >> j & 1) && w.op[j] == kiln_cpu::warp_activemask) group |= 1u << j;
    if (group == 0) continue;
    const unsigned stores = group & ~after_stores(w, group);  // (the stores first, as above)
    complete(w, stores ? first_call(w, stores) : group);
    released = true;
  }
  return released;
}

void BlockRunner::trap(const char* message) {
  throw Error(where(cur_) + ": " + message);
}

}  // namespace kiln::cpu
