// Barrier macros expanded for the cpu backend's plan. Code written for old GPUs names its
// barriers through macros (`#define SYNC() __syncthreads()`, cuda-samples' EMUSYNC): the plan,
// which reads tokens, then saw a barrier outside every kernel body (the #define) and sent every
// barrier kernel of the source to fibers, while the kernel using the macro seemed to have none.
// Expanded where they are used, those barriers are the kernel's own again, as the region rewrite
// needs them to be.
//
// A macro is expanded when its replacement names a barrier or warp operation (jit::scan_sync),
// directly or through another such macro, it is defined once at file level and never #undef'd,
// its replacement has no `#` or `##`, a function-like one has named parameters only (no `...`),
// and no quoted #include follows its definition (a header of the user's might use it). Each use
// after the definition, outside directives, becomes the replacement (arguments substituted), on
// the use's own line (a use spanning lines keeps its line breaks after it); the #define itself is
// blanked, lines kept, so that nothing outside the kernels names a barrier.
#pragma once
#include <string>
#include <string_view>

namespace kiln::cpu {

// source with its barrier macros expanded (lines kept), or source itself when it has none.
std::string expand_barrier_macros(std::string_view source);

}  // namespace kiln::cpu
