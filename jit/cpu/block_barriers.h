// libcu++'s block barrier lowered to __syncthreads() for the cpu backend's region rewrite. The
// CUDA Programming Guide's asynchronous-barrier examples, and code written from them, keep a
// `cuda::barrier<cuda::thread_scope_block>` in shared memory for the whole block:
//
//   using barrier = cuda::barrier<cuda::thread_scope_block>;
//   __shared__ barrier bar;
//   if (block.thread_rank() == 0) init(&bar, block.size());
//   block.sync();
//   ... bar.arrive_and_wait(); ...
//   barrier::arrival_token token = bar.arrive(); compute(); bar.wait(std::move(token));
//
// The cpu backend's cuda::barrier (kernels_src/kiln/cpu_libcudacxx.h) is the block's barrier,
// exact when every thread of the block takes part; its members wait inside, so the plan ran
// such kernels as fibers. Where every use of a shared barrier variable is one of those forms
// (`init(&bar, n);`, `bar.arrive_and_wait();`, `T token = bar.arrive();`, `bar.wait(...);`
// as statements), the waits become `{ bar.kiln_whole_block(); __syncthreads(); }` (the first
// stops the kernel with an error where init's count is not the block's size), the barrier's
// type `::kiln_cpu::block_barrier` (lines kept), and the kernel runs as regions. An arrival's
// wait is then where all the block's threads meet: every store before an arrive is seen after
// the wait, as CUDA promises. Any other use, or a barrier of another scope, leaves the source
// as written.
#pragma once
#include <string>
#include <string_view>

namespace kiln::cpu {

// source with its block barriers lowered as above, or source.
std::string lower_block_barriers(std::string_view source);

}  // namespace kiln::cpu
