// Block-level cooperative groups lowered to plain CUDA for the cpu backend's region rewrite.
// Much CUDA code (NVIDIA's samples among it) names the block through cooperative groups only
// to synchronise it and number its threads:
//
//   namespace cg = cooperative_groups;
//   cg::thread_block cta = cg::this_thread_block();
//   ... cg::sync(cta); ... cta.sync(); ... cta.thread_rank() ...
//
// Those are __syncthreads() and the thread's linear index, which the region rewrite runs as
// thread loops; named through cooperative groups, the plan sends the kernel to fibers. When
// every use of cooperative groups in the source is of that kind (the header's #include, a
// namespace alias, `thread_block` or `auto` variables initialised from this_thread_block(), and
// their sync, thread_rank, size and num_threads), the source is rewritten without them, lines
// kept. Anything else (tiles, grids, cg::reduce, a block passed to a function) leaves the source
// as it is.
#pragma once
#include <string>
#include <string_view>

namespace kiln::cpu {

// source with its block-level cooperative groups lowered, or source itself.
std::string lower_block_groups(std::string_view source);

}  // namespace kiln::cpu
