// NVRTC loaded with dlopen (libnvrtc.so.<major> from the given toolkit folders ($CUDA_HOME,
// $CUDA_PATH, read by repl/settings), /usr/local/cuda, then the loader path), as jitify2 and CuPy
// do: kiln runs without it and says why.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "jit/compiler.h"

namespace kiln::jit {

class Nvrtc {
 public:
  // Loads libnvrtc, looking in each toolkit folder's lib64 first; nullptr with why filled
  // ("libnvrtc.so.13 not found in ...") when it cannot.
  static std::shared_ptr<Nvrtc> load(std::string* why,
                                     const std::vector<std::string>& toolkits = {});
  ~Nvrtc();

  int major() const { return major_; }
  int minor() const { return minor_; }
  std::string version() const;  // "13.0"
  const std::string& library() const { return path_; }
  std::vector<int> supported_archs() const;  // {75, 80, ..., 120}
  // Caps a requested "sm_NN"/"compute_NN" at the newest this NVRTC supports: an arch newer
  // than that becomes "compute_<newest>" (PTX, which the driver compiles for newer devices).
  std::string cap_arch(const std::string& arch) const;

  // The toolkit include folders passed as -I: <toolkit>/include (for <cooperative_groups.h>,
  // <cuda_fp16.h>) and, from CUDA 13, <toolkit>/include/cccl (<cuda/std/...>, which
  // cooperative_groups needs). NVRTC finds neither by itself. Empty when no toolkit include
  // folder was found next to the library, in a toolkit folder or in /usr/local/cuda.
  const std::vector<std::string>& include_dirs() const { return include_dirs_; }

  // Compiles request.source (with headers available to #include by name: "kiln.cuh" and
  // any the caller adds) to PTX, and a cubin when arch is "sm_NN". Lowered names and demangled
  // signatures are filled per name expression. Throws CompileError carrying the log, its line
  // numbers those of request.filename.
  // Options: -std=c++20 (c++17 before NVRTC 12) unless request.options has a -std, then
  // --gpu-architecture=<arch> when arch is set, -I<each include_dirs()>, --pre-include of
  // limits.h and math.h where headers has them (what nvcc's cuda_runtime.h brings), then
  // request.options.
  // The result: image_kind "cubin" (image = the cubin) or "ptx" (image = the PTX text with its
  // terminating NUL, as cuModuleLoadData takes it); ptx always; signatures "void (float*, int)"
  // for C++ kernels and "" for extern "C" ones (whose lowered name is not mangled).
  CompileResult compile(const CompileRequest& request,
                        const std::map<std::string, std::string>& headers) const;

 private:
  struct Api;
  Nvrtc() = default;
  // Replaces out's signatures that name a template's dependent type (`vec4<float>::Type*`) with
  // the types they stand for, by a second compile of the source; keeps them where that fails.
  void resolve_dependent_signatures(const CompileRequest& request,
                                    const std::vector<const char*>& header_sources,
                                    const std::vector<const char*>& header_names,
                                    const std::vector<const char*>& options,
                                    CompileResult* out) const;
  void* handle_ = nullptr;
  std::unique_ptr<Api> api_;
  std::string path_;
  std::vector<std::string> include_dirs_;
  int major_ = 0, minor_ = 0;
};

}  // namespace kiln::jit
