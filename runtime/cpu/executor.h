// The cpu backend's executor: a pool of worker threads that run a grid's blocks. Kernels without
// barriers or warp operations run as the module's own loop over a block's threads (loop and
// region modes); the others go through each worker's block runner (block_runner.h), which runs a
// block's threads as fibers or coroutines with GPU barrier and warp semantics. Every block runs
// on a guarded stack (stacks.h).
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "kiln/cpu_abi.h"
#include "runtime/backend.h"
#include "runtime/cpu/check.h"
#include "runtime/cpu/guarded_memory.h"
#include "runtime/cpu/stacks.h"
#include "runtime/error.h"

namespace kiln::cpu {

// One kernel of a loaded module, as the executor calls it.
struct KernelEntry {
  std::string name;                   // the name expression, for messages
  kiln_cpu::EntryFn entry = nullptr;  // one thread (fiber mode)
  kiln_cpu::RunFn run = nullptr;      // a range of blocks (loop mode)
  kiln_cpu::StartFn start = nullptr;  // creates one thread (coroutine mode)
  void* module = nullptr;             // the module's dlopen handle
  std::uint64_t module_id = 0;        // unique per loaded module (worker caches' key)
  std::size_t tls_bytes = 0;          // the module's TLS block (static shared memory)
  // The module's thread identity record (kiln_cpu::Tls) for the calling thread, reached only
  // through these (cpu_abi.h says why).
  void (*set_launch)(const kiln_cpu::Tls*) = nullptr;
  void (*set_thread)(kiln_cpu::uint3) = nullptr;
  void (*get_launch)(kiln_cpu::Tls*) = nullptr;
  kiln_cpu::RoundFn round = nullptr;  // one round of a block (coroutine mode)
  kiln_cpu::ThreadMode mode = kiln_cpu::mode_loop;
  std::string why;                           // the compiler's reason for mode
  const Allocations* allocations = nullptr;  // check mode: the backend's live allocations
  // What one block took in the kernel's last launch, in ns (0: not launched yet): whether
  // waking helpers pays depends on the work, which neither the grid's nor the block's size
  // tells (a 16-thread block of a wavefront kernel runs 31 regions). Launches are one at a
  // time (WorkerPool's launch mutex), so the pool reads and writes it without a race.
  mutable std::uint64_t block_ns = 0;
  // Its launches' kiln_cpu::Note bits, set by any worker (the program's, which outlives them).
  std::atomic<int>* notes = nullptr;
  void note(int what) const {
    // (read first: a kernel may hit it in a hot loop, on every worker; one cache line)
    if (notes && (notes->load(std::memory_order_relaxed) & what) != what)
      notes->fetch_or(what, std::memory_order_relaxed);
  }
};

inline constexpr std::size_t kDynamicSharedBytes = 227 * 1024;  // the opt-in limit we offer

class BlockRunner;

// The grid-wide barrier of a cooperative launch: each block's OS thread waits in it once all of
// the block's threads have reached grid.sync(). A block that ends leaves it (so the others do not
// wait for it forever); a block that fails aborts it, and every waiting block then fails too.
class GridBarrier {
 public:
  explicit GridBarrier(std::uint64_t blocks) : expected_(blocks) {}
  void arrive_and_wait();
  void leave();
  void abort();
  // Whether a block failed: a block spinning on global memory another block sets (a resident
  // launch's) stops then, as one waiting in the barrier does.
  bool aborted() const { return aborted_flag_.load(std::memory_order_relaxed); }

 private:
  void release_locked();
  std::mutex mutex_;
  std::condition_variable cv_;
  std::uint64_t expected_, arrived_ = 0, generation_ = 0;
  bool aborted_ = false;
  std::atomic<bool> aborted_flag_{false};
};

// Everything a worker thread owns: its fiber stacks, its dynamic shared memory, its runner.
struct Worker {
  Worker();
  ~Worker();
  FiberStacks stacks;
  FiberStacks block_stack{kBlockStackBytes};  // loop- and region-mode blocks run on it
  // kDynamicSharedBytes, 128-aligned, fixed for life, ending at a guard page: a kernel writing
  // past the most dynamic shared memory a launch may have faults instead of corrupting the heap.
  GuardedMemory dyn_memory;
  unsigned char* dyn_smem = nullptr;
  std::unique_ptr<BlockRunner> runner;
  void* altstack = nullptr;     // the signal stack used when a fiber overflows
  GridBarrier* grid = nullptr;  // a cooperative launch's, while one runs on this worker
  // Where k's module keeps this worker's thread-locals (its static shared memory), remembered
  // for the last module the worker ran.
  std::uintptr_t static_shared_of(const KernelEntry& k);
  // The worker now runs on another thread (a cooperative launch's): its thread-locals are others.
  void moved_to_another_thread() { smem_module_ = 0; }

 private:
  std::uint64_t smem_module_ = 0;
  std::uintptr_t smem_ = 0;
};

// Runs the blocks of one launch on the worker: blocks [first, last) of kernel k.
void run_blocks(Worker& worker, const KernelEntry& k, const LaunchConfig& cfg, void** args,
                std::uint64_t first, std::uint64_t last);

// A fixed set of threads, one per core; the launching thread is worker 0 and takes part.
class WorkerPool {
 public:
  explicit WorkerPool(int workers);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;
  int size() const { return int(workers_.size()); }

  // Runs blocks [0, blocks) of kernel k on all workers; returns when all are done. Rethrows the
  // first error a block raised; throws kiln::Interrupted when Ctrl-C stopped it.
  void launch(const KernelEntry& k, const LaunchConfig& cfg, void** args, std::uint64_t blocks);
  // A cooperative launch: every block at once, each on a thread of its own (the pool's workers
  // cannot hold them all), meeting at grid.sync(). At most kMaxCooperativeBlocks blocks.
  void launch_cooperative(const KernelEntry& k, const LaunchConfig& cfg, void** args,
                          std::uint64_t blocks);
  static constexpr std::uint64_t kMaxCooperativeBlocks = 256;

 private:
  struct Job {
    const KernelEntry* kernel = nullptr;
    const LaunchConfig* config = nullptr;
    void** args = nullptr;
    std::uint64_t blocks = 0, chunk = 1;
    std::atomic<std::uint64_t> next{0};
    std::atomic<bool> abort{false};
    bool interrupted = false;
    std::exception_ptr error;
    std::mutex error_mutex;
  };
  void helper_main(int index);
  void work(Worker& worker, Job& job);
  std::uint64_t chunk_blocks(const KernelEntry& k, std::uint64_t threads_per_block,
                             std::uint64_t blocks) const;
  bool worth_helpers(const KernelEntry& k, std::uint64_t threads_per_block,
                     std::uint64_t blocks) const;
  // A launch whose blocks take less in all runs on the caller alone; a claimed chunk lasts at
  // least about this long.
  static constexpr std::uint64_t kHelpersWorthNs = 20'000, kMinChunkNs = 2'000;

  std::vector<std::unique_ptr<Worker>> workers_;
  // A cooperative launch's workers, one per block, kept for the next with their fiber stacks
  // (made anew, a block cost 1-2 ms of mappings per launch: 64 blocks of 128 threads, 124 ms a
  // launch, 3.8 ms so), while they hold at most kKeptFiberStacks: each is two of the
  // vm.max_map_count mappings the process may have, and the pages its fiber touched.
  std::vector<std::unique_ptr<Worker>> cooperative_workers_;
  static constexpr std::size_t kKeptFiberStacks = 8192;
  std::vector<std::thread> threads_;
  std::mutex launch_mutex_;  // one launch at a time
  Job* job_ = nullptr;
  std::atomic<std::uint64_t> epoch_{0};
  std::atomic<int> busy_{0};
  std::atomic<bool> stopping_{false};
};

}  // namespace kiln::cpu
