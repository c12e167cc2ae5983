// The compiler interface (tinygrad's compilers, apart from the devices that load their output):
// source text and name expressions in, an image that a runtime backend's load() takes out.
// One compiler per target: jit/cpu/ (the host C++ compiler), jit/cuda/ (NVRTC).
#pragma once
#include <string>
#include <vector>

#include "runtime/backend.h"

namespace kiln::jit {

// What a compiler compiles: one translation unit and the kernels to instantiate in it.
struct CompileRequest {
  std::string source;                         // the user's text, defines not yet applied
  std::string filename;                       // for messages and #line ("kernel.cu", a path)
  std::vector<std::string> name_expressions;  // "k<float>", "vec_add" (extern "C")
  std::vector<std::string> options;           // -D..., -I..., user options
  std::string arch;                           // "sm_90", "compute_90"; empty: the compiler's own
};

class Compiler {
 public:
  virtual ~Compiler() = default;
  // What decides the output besides the request (compiler, version, flags, target): part of
  // every cache key.
  virtual std::string identity(const std::string& arch) const = 0;
  virtual std::string default_arch() const = 0;  // "sm_90", "native"
  virtual std::string describe() const = 0;      // one line for kiln --info
  // Throws CompileError carrying the log, its lines those of request.filename.
  virtual CompileResult compile(const CompileRequest& request) = 0;
};

}  // namespace kiln::jit
