// Finding __global__ kernels in CUDA C++ source text: names, linkage, template and function
// parameters, and the line they start on. A light lexer (comments, strings, preprocessor lines
// skipped; balanced brackets), not a C++ parser: enough for kernel declarations.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace kiln::jit {

struct TemplateParam {
  std::string kind;           // "typename" (also for "class"), or the type of a non-type one: "int"
  std::string name;           // "T", "TPB"
  std::string default_value;  // "" when none
};

struct ParamDecl {
  std::string type;  // as written, whitespace collapsed: "const float *", "kiln::Array<float, 2>"
  std::string name;  // "" when unnamed
};

struct KernelDecl {
  std::string name;
  bool extern_c = false;
  std::vector<TemplateParam> template_params;  // empty for a plain kernel
  std::vector<ParamDecl> params;
  int line = 0;  // 1-based line of the __global__ keyword in the source
};

// Every __global__ function defined or declared in source, in order of appearance (a kernel
// declared and later defined is listed once).
std::vector<KernelDecl> find_kernels(std::string_view source);

// Whether the source (and the headers it includes) needs block barriers or warp operations:
// __syncthreads*, __syncwarp, __shfl*, __ballot/any/all_sync, __activemask, __match*,
// cooperative_groups. The cpu backend runs such kernels' threads as fibers.
bool uses_barriers(std::string_view source);

}  // namespace kiln::jit
