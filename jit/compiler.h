// The compiler interface (tinygrad's compilers, apart from the devices that load their output):
// source text and name expressions in, an image that a runtime backend's load() takes out.
// One compiler per target: jit/cpu/ (the host C++ compiler), jit/cuda/ (NVRTC).
#pragma once
#include <functional>
#include <optional>
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
  // Whether the source as written compiles as CUDA, when something checks it beside this
  // compile (the Jit's NVRTC check on the cpu backend): true, false, or nullopt when unknown.
  // It may wait for that check. A compiler whose own rewrite of the source failed asks it
  // whose fault that is. Not part of any cache key.
  std::function<std::optional<bool>()> compiles_as_cuda;

  // The name compilers and messages give the source: filename, "kernel.cu" for a string's.
  std::string file() const { return filename.empty() ? "kernel.cu" : filename; }
};

// Where a compiler keeps what it builds for its own use from one process to the next (the cpu
// compiler's precompiled prelude): the Jit's disk cache, under keys the compiler makes with
// hash_key. Either function may be empty (no disk cache); both may be called from any thread.
struct CompilerStore {
  std::function<std::optional<CompileResult>(const std::string& key)> load;
  std::function<void(const std::string& key, const CompileResult& value)> store;
  std::function<bool()> persistent;  // whether what is stored outlives this process
};

class Compiler {
 public:
  virtual ~Compiler() = default;
  // The store to use from now on (the Jit sets it, and clears it before it goes).
  virtual void use_store(CompilerStore) {}
  // What decides the output besides the request (compiler, version, flags, target): part of
  // every cache key.
  virtual std::string identity(const std::string& arch) const = 0;
  virtual std::string default_arch() const = 0;  // "sm_90", "native"
  virtual std::string describe() const = 0;      // one line for kiln --info
  // Throws CompileError carrying the log, its lines those of request.filename.
  virtual CompileResult compile(const CompileRequest& request) = 0;
};

}  // namespace kiln::jit
