// Block-level cooperative groups lowered to plain CUDA for the cpu backend's region rewrite.
// Much CUDA code (NVIDIA's samples among it) names the block through cooperative groups only
// to synchronise it and number its threads:
//
//   namespace cg = cooperative_groups;
//   cg::thread_block cta = cg::this_thread_block();
//   ... cg::sync(cta); ... cta.sync(); ... cta.thread_rank() ...
//
// Those are __syncthreads() and the thread's linear index, which the region rewrite runs as
// thread loops; named through cooperative groups, the plan sends the kernel to fibers. So are a
// tile's operations (`auto tile = cg::tiled_partition<32>(cta);`, also 16, 8, 4 or 2 lanes):
// its shuffles are the warp's within segments of its width (`__shfl_down_sync(0xffffffffu, v,
// d, W)`), which the region rewrite runs as warp steps, its votes the warp's (masked to its
// lanes), its sync __syncwarp(), its ranks indices; a statement `[T] r = cg::reduce(tile, v,
// cg::plus<U>());` (or less, greater, bit_and, bit_or, bit_xor) a loop of xor shuffles in U
// that leaves every lane the tile's result, `[T] r = cg::inclusive_scan(tile, v[, op]);` (or
// exclusive_scan) steps of up-shuffles in the op's type or v's declared one; a coalesced group
// (`auto g = cg::coalesced_threads();`) its lane mask `const unsigned g = __activemask();`,
// whose ranks, shuffles, votes, reductions and scans read it; `cg::memcpy_async(block, ...)` a copy
// by the block's threads' strided shares (done at once), and `cg::wait(block)` /
// `wait_prior<N>(block)`
// __syncthreads().
// In each kernel body whose every use of cooperative groups is of those kinds (`thread_block`
// or `auto` variables initialised from this_thread_block(), `thread_block_tile<W>` or `auto`
// ones from tiled_partition<W>, their members, such reductions), they are rewritten, lines
// kept; so is the code outside the bodies, function by function. A block passed to a device
// function of the source (`reduceBlock(sdata, v, tid, cta)`, NVIDIA's samples) goes as an empty
// kiln_cpu::block_group, the function's `cg::thread_block [&] b` parameter becoming one too,
// its uses lowered with the rest outside the bodies (and the function then inlined). A tile
// passed to a device function goes the same way where every call of the function passes a tile
// of one width there, the parameter `NS::thread_block_tile<W> [&] t` or `G [&] t` (G a template
// type parameter) becoming a by-value tile of the body (`return NS::reduce(t, v, op);` too);
// a function other calls give something else first gets a copy for the tile-passing calls
// (`f_kiln_tile32`, on the line of its '}'). A `NS::thread_group [&] g` parameter is lowered as
// a block parameter where every call passes a block, and as a tile parameter (with the same copy)
// for calls passing a tile. Each function outside the bodies is lowered or
// kept on its own. Any other use (other members, grids, a reduce within an expression or with
// a lambda) leaves its body or function as it is, with the kernels passing groups to a kept
// function: the plan then runs those kernels as fibers, and the kernels beside them as their
// own code allows (cuda-samples' reduction: reduce0-7 and cg_reduce as regions, beside
// multi_warp_cg_reduce).
// Only when every use is rewritten do the headers' #includes and namespace aliases go too. After
// `using namespace cooperative_groups;`, the unqualified names the lowering knows are written out
// in full first (the directive then goes with the #includes).
#pragma once
#include <set>
#include <string>
#include <string_view>

namespace kiln::cpu {

// source with its block-level cooperative groups lowered, or source itself.
std::string lower_block_groups(std::string_view source);

// The names of the namespace the lowering takes (thread_block, tiled_partition, reduce and its
// ops, ...): written out in full after `using namespace`, and not blamed first for fibers.
const std::set<std::string>& lowered_group_names();

}  // namespace kiln::cpu
