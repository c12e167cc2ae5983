// The binary interface between the cpu backend's runtime (runtime/cpu/) and a kernel
// module it compiled (kernels_src/kiln/cpu_prelude.h + the user's source, built into a .so).
// Both sides include this header; bump KILN_CPU_ABI_VERSION whenever a struct here changes so a
// stale cached module is refused instead of misread.
#pragma once

#define KILN_CPU_ABI_VERSION 11

namespace kiln_cpu {

// CUDA's uint3 and dim3, layout-compatible with the GPU's; the prelude exports them globally.
struct uint3 {
  unsigned x, y, z;
};
struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned vx = 1, unsigned vy = 1, unsigned vz = 1) : x(vx), y(vy), z(vz) {}
  constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
  constexpr operator uint3() const { return uint3{x, y, z}; }
};

// How a kernel's threads run (kiln_entry_<i>_mode): one after another in a loop (no barriers or
// warp operations), as fibers (each with its own stack), or as C++20 coroutines that suspend at
// each __syncthreads (the host compiler splits the kernel at its barriers; far cheaper than a
// fiber switch), or as regions: the block is one call in which the code between barriers loops
// over the threads (jit/cpu/regions.h; the runtime runs it as it runs loop mode).
enum ThreadMode { mode_loop = 0, mode_fibers = 1, mode_coroutines = 2, mode_regions = 3 };

// Operations a kernel thread asks of the runtime's block scheduler.
// barrier_grid: the block's barrier, then every block's (a cooperative launch's grid.sync()).
// barrier_yield: no barrier; a spin-wait's turn, which lets the block's other ready threads run
// first (fibers; elsewhere nothing).
enum BarrierOp {
  barrier_plain = 0,
  barrier_count = 1,
  barrier_and = 2,
  barrier_or = 3,
  barrier_grid = 4,
  barrier_yield = 5
};
enum WarpOp {
  warp_shfl_idx = 0,
  warp_shfl_up = 1,
  warp_shfl_down = 2,
  warp_shfl_xor = 3,
  warp_ballot = 4,
  warp_any = 5,
  warp_all = 6,
  warp_sync = 7,
  warp_activemask = 8,
  warp_match_any = 9,
  warp_match_all = 10,
  // __reduce_*_sync, which only region mode's warp steps take (fibers run cpu_sync.h's)
  warp_reduce_add = 11,
  warp_reduce_min = 12,
  warp_reduce_max = 13,
  warp_reduce_and = 14,
  warp_reduce_or = 15,
  warp_reduce_xor = 16,
};
// The param of a warp_activemask that a lockstep pointer's read waits at (cpu_sync.h
// lockstep_ref): the lanes of the warp waiting at another warp operation (a lockstep store's)
// complete theirs first, the readers after them.
enum { activemask_after_stores = 1 };

// What a launch did that a GPU leaves undefined and kiln answered some way, for a note to the
// user (Api::note; bits).
enum Note {
  note_unjoined_shuffle = 1,  // a shuffle read a lane not taking part: kiln gave the caller's own
};

// Runtime entry points the module calls; exec is Tls::exec of the calling thread.
struct Api {
  unsigned abi_version;
  int (*barrier)(void* exec, int op, int predicate);
  unsigned long long (*warp)(void* exec, int op, unsigned mask, unsigned long long value, int param,
                             int width);
  void (*trap)(void* exec, const char* message);  // does not return
  // Check mode: the device allocation holding p as [*lo, *hi); 0 when p is in none.
  int (*bounds)(void* exec, const void* p, const void** lo, const void** hi);
  // Check mode: an out-of-bounds access; code is an address in the module at the access, which
  // the runtime maps to a source line. Does not return.
  void (*out_of_bounds)(void* exec, const char* message, const void* code);
  // Coroutine mode: memory for a thread's coroutine frame, valid until the block ends.
  void* (*frame_alloc)(void* exec, unsigned long bytes);
  // Coroutine mode: adds the running thread's predicate to the barrier it arrives at
  // (__syncthreads_count/and/or), and reads that barrier's value once it is released.
  void (*barrier_vote)(void* exec, int predicate);
  int (*barrier_result)(void* exec, int op);
  // Region mode: records a Note (bits) for the kernel's launch.
  void (*note)(void* exec, int what);
};

// One per OS thread per module: who the running CUDA thread is. The runtime writes it (per block,
// and per fiber switch); kernel code reads it through threadIdx, blockIdx, ...
struct Tls {
  uint3 thread_idx;
  uint3 block_idx;
  dim3 block_dim;
  dim3 grid_dim;
  unsigned char* dyn_smem;  // this worker's dynamic shared memory; never moves for a thread
  const Api* api;
  void* exec;  // the runtime's block executor for the running block
  void* coroutine;  // coroutine mode: the frame of the thread kiln_start_<i> just created
  unsigned long dyn_smem_bytes;  // the dynamic shared memory the launch asked for
  unsigned long smem_lo, smem_bytes;  // the module's thread-local block: static shared memory
};

// Exported by every module (extern "C"):
//   unsigned     kiln_abi_version();
//   void         kiln_set_launch(const Tls* t);  the calling thread's Tls = *t
//   void         kiln_set_thread(uint3 t);      its threadIdx = t (a fiber switch)
//   void         kiln_get_launch(Tls* t);       *t = the calling thread's Tls
//                 The runtime reads and writes a module's Tls only through these: no function
//                 hands out its address, so the compiler knows every write (none are hidden
//                 from it, so it folds none away) and keeps thread identity in registers: it
//                 vectorises loop-mode kernels across threads.
//   unsigned     kiln_round(void* const* frames, const uint3* tids, unsigned* live,
//                           unsigned count, unsigned* running);
//                 coroutine modules: one round of a block. Resumes threads live[0..count) in
//                 turn (thread i: frames[i], threadIdx = tids[i], *running = i while it runs)
//                 and keeps, in order at the front of live, those that have not returned;
//                 returns how many. The loop is the module's so that a resume is one call.
//   unsigned     kiln_entry_count();
//   void         kiln_entry_<i>(void** args);    one thread of kernel i (fiber mode)
//   void*        kiln_start_<i>(void** args);    coroutine mode: creates one thread of kernel i,
//                 suspended before its first statement; returns its coroutine frame address
//   void         kiln_run_<i>(void** args, unsigned long long first, unsigned long long last);
//                 blocks [first, last) of kernel i, threads as a loop (loop mode)
//   const char*  kiln_entry_<i>_type();         typeid(decltype(&kernel)).name()
//   const char*  kiln_entry_<i>_name();         the name expression
//   int          kiln_entry_<i>_mode();         its ThreadMode
//   const char*  kiln_entry_<i>_why();          why it runs so (k:info().why)
using EntryFn = void (*)(void** args);
using StartFn = void* (*)(void** args);
using RunFn = void (*)(void** args, unsigned long long first, unsigned long long last);
using RoundFn = unsigned (*)(void* const* frames, const uint3* tids, unsigned* live,
                             unsigned count, unsigned* running);

}  // namespace kiln_cpu
