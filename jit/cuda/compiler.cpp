// NVRTC behind the Compiler interface, for the cuda backend.
#include "jit/cuda/compiler.h"

#include "jit/cuda/nvrtc.h"

namespace kiln::jit {
namespace {

class NvrtcCompiler final : public Compiler {
 public:
  NvrtcCompiler(std::shared_ptr<const Nvrtc> nvrtc, std::string arch,
                std::map<std::string, std::string> headers)
      : nvrtc_(std::move(nvrtc)), arch_(std::move(arch)), headers_(std::move(headers)) {}

  std::string identity(const std::string& arch) const override {
    // ("signatures 2": a template's dependent parameter types are resolved; entries cached
    // before kept `vec4<float>::Type*`, which no argument matches.)
    return "nvrtc " + nvrtc_->version() + " " + (arch.empty() ? arch_ : nvrtc_->cap_arch(arch)) +
           " signatures 2";
  }
  std::string default_arch() const override { return arch_; }
  std::string describe() const override {
    return "NVRTC " + nvrtc_->version() + " -> " + arch_ +
           (arch_.rfind("sm_", 0) == 0 ? " cubin" : " PTX");
  }
  CompileResult compile(const CompileRequest& request) override {
    return compile_for_target(*nvrtc_, request, arch_, headers_);
  }

 private:
  std::shared_ptr<const Nvrtc> nvrtc_;
  std::string arch_;
  std::map<std::string, std::string> headers_;
};

}  // namespace

CompileResult compile_for_target(const Nvrtc& nvrtc, CompileRequest request,
                                 const std::string& default_arch,
                                 const std::map<std::string, std::string>& headers) {
  request.arch = request.arch.empty() ? default_arch : nvrtc.cap_arch(request.arch);
  return nvrtc.compile(request, headers);
}

std::unique_ptr<Compiler> make_nvrtc_compiler(std::shared_ptr<const Nvrtc> nvrtc, std::string arch,
                                              std::map<std::string, std::string> headers) {
  return std::make_unique<NvrtcCompiler>(std::move(nvrtc), std::move(arch), std::move(headers));
}

}  // namespace kiln::jit
