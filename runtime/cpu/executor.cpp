// The worker pool, and the loop-mode kernel API: a launch's blocks split in chunks that every
// worker claims in turn, each block run by the module's loop or by the worker's block runner.
#include "runtime/cpu/executor.h"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <system_error>
#include <thread>

#include "runtime/cpu/block_runner.h"
#include "runtime/error.h"
#include "runtime/interrupt.h"

namespace kiln::cpu {
namespace {

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
int loop_barrier(void* exec, int op, int pred) {
  if (op == kiln_cpu::barrier_yield) {    // (a spin-wait's turn: nothing else of its block runs)
    if (pred) std::this_thread::yield();  // (on global memory: another block may set it)
    return 0;
  }
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
  auto& k = *static_cast<const KernelEntry*>(exec);
  return k.allocations && k.allocations->find(p, lo, hi) ? 1 : 0;
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
void loop_note(void* exec, int what) {
  static_cast<const KernelEntry*>(exec)->note(what);
}
const kiln_cpu::Api kLoopApi{
    KILN_CPU_ABI_VERSION, loop_barrier,     loop_warp,         loop_trap,           loop_bounds,
    loop_out_of_bounds,   loop_frame_alloc, loop_barrier_vote, loop_barrier_result, loop_note};

// Whether the module's own loops run k's blocks (loop and region modes), not a block runner.
bool runs_as_loops(const KernelEntry& k) {
  return k.mode == kiln_cpu::mode_loop || k.mode == kiln_cpu::mode_regions;
}

}  // namespace

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
  static_assert(kDynamicSharedBytes % 128 == 0, "the guard page follows a 128-aligned buffer");
  dyn_smem = static_cast<unsigned char*>(dyn_memory.allocate(kDynamicSharedBytes));
  altstack = std::malloc(kAltStackBytes);
  if (!dyn_smem || !altstack) throw Error("cpu backend: cannot allocate a worker's memory");
  runner = std::make_unique<BlockRunner>(*this);
}

Worker::~Worker() {
  release_altstack(altstack);
  std::free(altstack);  // dyn_memory unmaps dyn_smem
}

void run_blocks(Worker& worker, const KernelEntry& k, const LaunchConfig& cfg, void** args,
                std::uint64_t first, std::uint64_t last) {
  kiln_cpu::Tls launch{};
  launch.block_dim = kiln_cpu::dim3(cfg.block.x, cfg.block.y, cfg.block.z);
  launch.grid_dim = kiln_cpu::dim3(cfg.grid.x, cfg.grid.y, cfg.grid.z);
  launch.dyn_smem = worker.dyn_smem;
  launch.dyn_smem_bytes = cfg.shared_bytes;  // what the launch asked for (check mode checks it)
  launch.api = &kLoopApi;
  launch.exec = const_cast<KernelEntry*>(&k);
  launch.smem_lo = worker.static_shared_of(k);
  launch.smem_bytes = k.tls_bytes;
  if (runs_as_loops(k)) {
    worker.runner->run_on_block_stack(k, launch, args, first, last);
    return;
  }
  const std::uint64_t gx = cfg.grid.x, gy = cfg.grid.y;
  for (std::uint64_t b = first; b < last; ++b)
    worker.runner->run(
        k, launch, args,
        kiln_cpu::uint3{unsigned(b % gx), unsigned(b / gx % gy), unsigned(b / (gx * gy))});
}

void GridBarrier::release_locked() {
  arrived_ = 0;
  ++generation_;
  cv_.notify_all();
}

void GridBarrier::arrive_and_wait() {
  std::unique_lock lock(mutex_);
  if (aborted_) throw Error("another block of the cooperative launch failed");
  const std::uint64_t generation = generation_;
  if (++arrived_ == expected_) return release_locked();
  cv_.wait(lock, [&] { return generation_ != generation || aborted_; });
  if (generation_ == generation) throw Error("another block of the cooperative launch failed");
}

void GridBarrier::leave() {
  std::lock_guard lock(mutex_);
  --expected_;
  if (expected_ > 0 && arrived_ == expected_) release_locked();
}

void GridBarrier::abort() {
  std::lock_guard lock(mutex_);
  aborted_ = true;
  aborted_flag_.store(true, std::memory_order_relaxed);
  cv_.notify_all();
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
    {
      KernelThreadScope kernel_thread;  // the second Ctrl-C reaches this helper's blocks
      work(*workers_[std::size_t(index)], *job_);
    }
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

// The blocks a worker claims at a time: small enough to balance the workers and to stop soon
// on Ctrl-C, large enough to amortise the claim and the chunk's start.
std::uint64_t WorkerPool::chunk_blocks(const KernelEntry& k, std::uint64_t threads_per_block,
                                       std::uint64_t blocks) const {
  const bool loop = runs_as_loops(k);
  const std::uint64_t workers = std::uint64_t(size()), per_worker_chunks = loop ? 8 : 16;
  std::uint64_t chunk = std::max<std::uint64_t>(1, blocks / (workers * per_worker_chunks));
  if (!loop) return chunk;
  if (k.block_ns == 0) {  // not measured yet: at least 256 threads a chunk
    if (threads_per_block * chunk < 256)
      chunk = std::min<std::uint64_t>(blocks, (256 + threads_per_block - 1) / threads_per_block);
    return chunk;
  }
  // Measured: chunks of at least kMinChunkNs, and at least 4 a worker where that allows.
  const std::uint64_t lasting = (kMinChunkNs + k.block_ns - 1) / k.block_ns;
  return std::max(chunk, std::min(lasting, std::max<std::uint64_t>(1, blocks / (workers * 4))));
}

// Whether the launch's work pays for waking the helpers (microseconds each): by the kernel's
// last launch, or before it has run, by the grid's threads (tiny loop-mode grids run alone).
bool WorkerPool::worth_helpers(const KernelEntry& k, std::uint64_t threads_per_block,
                               std::uint64_t blocks) const {
  if (k.block_ns != 0) return blocks * k.block_ns >= kHelpersWorthNs;
  return !runs_as_loops(k) || blocks * threads_per_block > 4096;
}

void WorkerPool::launch(const KernelEntry& k, const LaunchConfig& cfg, void** args,
                        std::uint64_t blocks) {
  std::lock_guard lock(launch_mutex_);
  Job job;
  job.kernel = &k;
  job.config = &cfg;
  job.args = args;
  job.blocks = blocks;
  const auto started = std::chrono::steady_clock::now();
  job.chunk = chunk_blocks(k, cfg.block.count(), blocks);
  int helpers = int(
      std::min<std::uint64_t>(std::uint64_t(size() - 1), (blocks + job.chunk - 1) / job.chunk - 1));
  if (!worth_helpers(k, cfg.block.count(), blocks)) helpers = 0;
  // Every block runs on a guarded stack: an overflow is reported, not a crash.
  install_fault_handler();
  use_altstack(workers_[0]->altstack);
  KernelThreadScope kernel_thread;  // the second Ctrl-C reaches this thread's blocks
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
  const auto took = std::chrono::steady_clock::now() - started;
  k.block_ns = std::max<std::uint64_t>(1, std::uint64_t(std::chrono::nanoseconds(took).count()) *
                                              std::uint64_t(helpers + 1) /
                                              std::max<std::uint64_t>(1, blocks));
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

void WorkerPool::launch_cooperative(const KernelEntry& k, const LaunchConfig& cfg, void** args,
                                    std::uint64_t blocks) {
  std::lock_guard lock(launch_mutex_);
  install_fault_handler();
  GridBarrier grid(blocks);
  std::vector<std::unique_ptr<Worker>>& workers = cooperative_workers_;
  while (workers.size() < blocks) workers.push_back(std::make_unique<Worker>());
  std::mutex error_mutex;
  std::exception_ptr error;
  auto run = [&](std::uint64_t b) {
    Worker& worker = *workers[b];
    worker.moved_to_another_thread();
    ScopedAltStack alt(worker.altstack);
    KernelThreadScope kernel_thread;
    worker.grid = &grid;
    try {
      run_blocks(worker, k, cfg, args, b, b + 1);
      grid.leave();
    } catch (...) {
      {
        std::lock_guard guard(error_mutex);
        if (!error) error = std::current_exception();
      }
      grid.abort();
    }
  };
  std::vector<std::thread> threads;
  try {
    for (std::uint64_t b = 1; b < blocks; ++b) threads.emplace_back(run, b);
  } catch (const std::system_error& e) {  // (no thread for a block: the others must not wait)
    grid.abort();
    for (auto& t : threads) t.join();
    workers.clear();
    throw Error("kernel '" + k.name + "': cannot start a thread for each of its " +
                std::to_string(blocks) + " blocks, which must run at once: " + e.what());
  }
  run(0);
  for (auto& t : threads) t.join();
  std::size_t stacks = 0;
  for (const std::unique_ptr<Worker>& w : workers) stacks += w->stacks.count(), w->grid = nullptr;
  if (stacks > kKeptFiberStacks) workers.clear();
  std::fflush(stdout);
  if (error) {
    try {
      std::rethrow_exception(error);
    } catch (const OutOfBounds& e) {
      throw Error(e.with_source_line());
    }
  }
}

}  // namespace kiln::cpu
