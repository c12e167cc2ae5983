// Inlining of synchronising device functions for the cpu backend's region rewrite. A kernel that
// calls `v = warp_sum(v);`, a __device__ function with warp shuffles or barriers, cannot be cut
// into regions at those operations: they are in another function. COX (Han et al., CGO 2022)
// collapses such functions by inlining them first; this does the same on tokens, for the calls
// a rewrite can take whole: a statement `f(args);`, `lhs = f(args);` (or `+=` ...), or
// `T name = f(args);`, where f is a __device__ function of the source, not overloaded, whose
// `return`s (if any) end its body or the branches of an if/else that does (each becomes an
// assignment of the value). The call becomes a block on the call's line:
//
//   { using kiln_i1_T = <T deduced from its argument>; kiln_i1_T kiln_i1_v = (s);
//     <f's body, its parameters and template parameters renamed>  s = (<returned value>); }
//
// A call inside an expression first becomes a statement of its own before it (hoist_call,
// where moving it changes nothing: `int kiln_h1_; kiln_h1_ = f(v); x = 1 + kiln_h1_;`, in
// braces with its statement where that is an unbraced if's, else's or loop's body).
//
// Functions no kernel calls any more are blanked (lines kept), so that the plan no longer sees
// synchronisation outside the kernels. What cannot be inlined stays a call, and the kernel runs
// as fibers as before.
#pragma once
#include <set>
#include <string>
#include <string_view>

namespace kiln::cpu {

// source with the calls of synchronising device functions in kernel bodies inlined (lines
// kept), or source itself when there are none it can take.
std::string inline_sync_functions(std::string_view source);

// The __device__ functions of source (defined once, at namespace scope) that read no thread or
// block index (their bodies name no threadIdx, blockIdx, blockDim, gridDim, warpSize nor one of
// thread_macros, and call only such functions or common math functions), and those math
// functions (sqrtf, fminf, min, ...) where the source defines none of their names. A region that
// calls only those need not write the module's threadIdx for each thread (which keeps the compiler
// from vectorising its loop).
std::set<std::string> identity_free_functions(std::string_view source,
                                              const std::set<std::string>& thread_macros);

}  // namespace kiln::cpu
