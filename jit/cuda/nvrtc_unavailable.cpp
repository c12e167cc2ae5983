// NVRTC for a kiln built without the CUDA toolkit headers: load() says why it cannot, and no
// Nvrtc object ever exists, so the other members are never called.
#ifndef KILN_HAVE_CUDA
#include "jit/cuda/nvrtc.h"

#include "runtime/error.h"

namespace kiln::jit {

struct Nvrtc::Api {};

std::shared_ptr<Nvrtc> Nvrtc::load(std::string* why, const std::vector<std::string>&) {
  if (why) *why = "kiln was built without the CUDA toolkit headers (cuda.h, nvrtc.h)";
  return nullptr;
}

Nvrtc::~Nvrtc() = default;
std::string Nvrtc::version() const {
  return "unavailable";
}
std::vector<int> Nvrtc::supported_archs() const {
  return {};
}
std::string Nvrtc::cap_arch(const std::string& arch) const {
  return arch;
}
CompileResult Nvrtc::compile(const CompileRequest&,
                             const std::map<std::string, std::string>&) const {
  throw Error("kiln was built without NVRTC support");
}

}  // namespace kiln::jit
#endif
