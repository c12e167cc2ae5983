// The cuda backend's compiler: NVRTC for one device's target (a cubin for its architecture, or
// PTX the driver compiles), with kiln's kernel-side headers available by name.
#pragma once
#include <map>
#include <memory>
#include <string>

#include "jit/compiler.h"

namespace kiln::jit {

class Nvrtc;

// Compiles request for a device whose default target is default_arch (used when request.arch
// is empty; an explicit arch is capped at what NVRTC supports). No device is needed.
CompileResult compile_for_target(const Nvrtc& nvrtc, CompileRequest request,
                                 const std::string& default_arch,
                                 const std::map<std::string, std::string>& headers);

// NVRTC as the compiler of a device whose target is arch ("sm_90", or "compute_90" for PTX);
// headers are kiln.cuh & co. by include name.
std::unique_ptr<Compiler> make_nvrtc_compiler(std::shared_ptr<const Nvrtc> nvrtc, std::string arch,
                                              std::map<std::string, std::string> headers);

}  // namespace kiln::jit
