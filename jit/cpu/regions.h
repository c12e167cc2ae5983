// Region formation for the cpu backend (MCUDA's "thread loops", POCL's work-item loops): a kernel
// whose only synchronisation is `__syncthreads();` statements runs each block as one call, in
// which every stretch of code between barriers (a region) is a loop over the block's threads.
// The host compiler then sees the threads of a region side by side: it keeps their work in
// registers, overlaps their dependency chains and can vectorise across them, which it cannot do
// across the resumes of coroutines. docs/cpu-backend.md says what qualifies and why.
#pragma once
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace kiln::cpu {

// Part of the cpu backend's compiler identity (the cache key): bump it whenever the rewrite
// changes what it produces, so that no module built by an older rewrite is loaded.
inline constexpr int kRegionsVersion = 87;

// source with every __global__ body that names __syncthreads rewritten into regions (lines
// kept, so compiler messages and check-mode reports name the user's lines), or nullopt, with
// *why saying what stopped it, when some such body does not fit the pattern (the kernel then
// runs as coroutines). The rewrite relies on CUDA's rule that a barrier is reached by all the
// block's threads or by none: a loop or `if` containing a barrier is evaluated once per block,
// with the values of the first thread that has not returned.
std::optional<std::string> form_regions(std::string_view source, std::string* why = nullptr);

// The same, kernel by kernel: source with every synchronising body the rewrite takes rewritten
// (lines kept), and for each kernel name whose body (any of its overloads) it declines, why.
// Declined bodies are left as written, so they can run as coroutines or fibers beside the
// others.
// Kernels named in loops (those without barriers, which run as thread loops) whose body has a
// grid-stride loop at its top level are rewritten too, that loop run in lockstep (see
// docs/cpu-backend.md), and listed in lockstep; any other of them is left as written.
// Kernels named in fibers (whose plan runs them as fibers: legacy warp-synchronous code) are
// left as written and listed as declined.
struct RegionRewrite {
  std::string source;
  std::map<std::string, std::string> declined;  // kernel name -> why
  std::set<std::string> lockstep;  // of loops: the kernels rewritten for their grid-stride loops
  bool chosen_loads = false;  // a read through an index chosen by a condition was rewritten
};
RegionRewrite form_regions_by_kernel(std::string_view source,
                                     const std::set<std::string>& loops = {},
                                     const std::set<std::string>& fibers = {});

// Whether name is a warp operation the rewrite runs in lockstep: a shuffle, vote, __activemask
// or __match_any_sync (a step between regions), or __syncwarp (the end of a region).
bool region_warp_operation(std::string_view name);

}  // namespace kiln::cpu
