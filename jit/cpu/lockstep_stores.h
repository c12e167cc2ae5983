// Legacy warp-synchronous code made explicit, as NVIDIA's Volta guide tells its users to make it,
// so that the region rewrite can run it as thread loops. Code written for warps that run in
// lockstep stores through a volatile pointer and reads its neighbours' stores with no barrier
// between (jit::lockstep_pointers):
//
//   if (tid < 32) { volatile float* v = s; v[tid] += v[tid + 16]; v[tid] += v[tid + 8]; ... }
//
// Each such store, a statement of its own, becomes the lanes' reads, a __syncwarp(), the store
// and another __syncwarp() (lines kept):
//
//   { float kiln_ls0_ = v[tid] + (v[tid + 16]); __syncwarp(); v[tid] = kiln_ls0_; __syncwarp(); }
//
// which gives every lane's reads before any lane's store and every store before the next
// statement's reads: what lockstep gave. The regions then loop over the block's threads, where
// the lockstep pointers' fibers (plan.h: rewrite_lockstep_pointers) stop at every access (30x
// slower on a sum reduction's last warp).
// A pointer is rewritten only where every store through it is such a statement (`P[i] = v;`,
// `P[i] op= v;`, its subscripts free of side effects, calls and reads of P, no comma) under blocks,
// `if`s and `for` loops whose headers are the same in every lane (the loop's own variables,
// numbers, blockDim, gridDim, warpSize and names the function does not declare: template
// parameters, macros); any other store (in a `while`, a `switch`, an expression, `P[i]++`) leaves
// that pointer as written, and its kernel to the lockstep pointers. The split is exact only in
// regions, whose every barrier all the block's threads pass together (the lanes that skip a store
// too).
#pragma once
#include <string>
#include <string_view>

namespace kiln::cpu {

// source with the stores of its legacy warp-synchronous pointers split as above, or source.
std::string split_lockstep_stores(std::string_view source);

// Whether source (as the region rewrite left it) still holds a split store's __syncwarp(): in a
// kernel it declined, or a device function it did not inline, whose threads would then run one
// by one (fibers, coroutines), where a lane that skips a store does not wait for it. The split
// is then undone.
bool keeps_split_stores(std::string_view source);

}  // namespace kiln::cpu
