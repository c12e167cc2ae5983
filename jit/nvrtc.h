// NVRTC loaded with dlopen (libnvrtc.so.<major> from $CUDA_HOME, /usr/local/cuda, then the
// loader path), as jitify2 and CuPy do: kiln runs without it and says why.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/backend.h"

namespace kiln::jit {

class Nvrtc {
 public:
  // Loads libnvrtc; nullptr with why filled ("libnvrtc.so.13 not found in ...") when it cannot.
  static std::shared_ptr<Nvrtc> load(std::string* why);
  ~Nvrtc();

  int major() const { return major_; }
  int minor() const { return minor_; }
  std::string version() const;           // "13.0"
  const std::string& library() const { return path_; }
  std::vector<int> supported_archs() const;  // {75, 80, ..., 120}
  // Caps a requested "sm_NN"/"compute_NN" at the newest this NVRTC supports.
  std::string cap_arch(const std::string& arch) const;

  // Compiles request.source (with headers available to #include by name: "kiln.cuh" and
  // any the caller adds) to PTX, and a cubin when arch is "sm_NN". Lowered names and demangled
  // signatures are filled per name expression. Throws CompileError carrying the log, its line
  // numbers those of request.filename.
  CompileResult compile(const CompileRequest& request,
                        const std::map<std::string, std::string>& headers) const;

 private:
  struct Api;
  Nvrtc() = default;
  void* handle_ = nullptr;
  std::unique_ptr<Api> api_;
  std::string path_;
  int major_ = 0, minor_ = 0;
};

}  // namespace kiln::jit
