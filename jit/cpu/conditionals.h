// Conditional directives inside kernel bodies, resolved for the cpu backend's region rewrite.
// Code written for GPUs switches parts of a kernel with the preprocessor (Rodinia's kmeans:
// `#ifdef GPU_DELTA_REDUCTION`; CUDA's samples: `#if __CUDA_ARCH__ >= 800`), and the region
// rewrite declines a kernel with a directive in its body. Where every macro a group of
// #if/#ifdef/#ifndef/#elif/#else/#endif tests is known, the group's directives and the lines the
// preprocessor would skip are blanked (lines kept), so that the rewrite reads the code the
// compiler will compile. Known: a value macro defined at file level outside any conditional
// before the kernel, a -D option, __CUDACC__ and __CUDA_ARCH__. A group with a condition on
// anything else (a macro a header may define, an undefined name) is left as written.
#pragma once
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::cpu {

// The macros known before any source line: the -D and -U options of a compile (options as the
// host compiler takes them), __CUDACC__, and __CUDA_ARCH__ as cuda_arch.
std::map<std::string, std::string> known_macros(const std::vector<std::string>& options,
                                                int cuda_arch);

// source with the conditional groups inside its kernel bodies resolved where known (and the
// file's own value macros) says how; source itself when none is.
std::string resolve_kernel_conditionals(std::string_view source,
                                        std::map<std::string, std::string> known);

}  // namespace kiln::cpu
