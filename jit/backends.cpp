#include "jit/backends.h"

#include "jit/cuda/nvrtc.h"
#include "jit/headers.h"
#include "runtime/error.h"
#ifdef KILN_HAVE_CUDA
#include "jit/cuda/compiler.h"
#include "runtime/cuda/backend.h"
#endif

namespace kiln::jit {

namespace {

// The cuda backend with NVRTC for its device, or an empty platform with why.
Platform try_cuda(const PlatformOptions& options, std::string* why) {
#ifdef KILN_HAVE_CUDA
  std::shared_ptr<Backend> backend = make_cuda_backend(options.local_rank, why, /*wrap=*/true);
  if (!backend) return {};
  auto& cuda = dynamic_cast<CudaBackend&>(*backend);
  std::shared_ptr<Nvrtc> nvrtc = Nvrtc::load(why, options.cuda_toolkits);
  if (!nvrtc) return {};
  const DeviceInfo& info = cuda.device();
  cuda::Target target;
  if (!cuda::choose_target(info.cc_major * 10 + info.cc_minor, nvrtc->supported_archs(),
                           cuda.driver_version(), nvrtc->major() * 1000 + nvrtc->minor() * 10,
                           &target, why))
    return {};
  return {backend, make_nvrtc_compiler(nvrtc, target.arch, builtin_headers(options.kernels_dir)),
          ""};
#else
  (void)options;
  *why = "kiln was built without the CUDA toolkit headers";
  return {};
#endif
}

// The cpu backend and the host C++ compiler.
Platform open_cpu(const PlatformOptions& options, std::string note) {
  CpuCompilerOptions compiler{options.kernels_dir.string(),
                              options.host_compiler,
                              options.cpu.check,
                              options.regions,
                              options.precompiled_prelude,
                              find_curand_include(options.cuda_toolkits)};
  return {make_cpu_backend(options.cpu), make_cpu_compiler(compiler), std::move(note)};
}

}  // namespace

bool cuda_available(const PlatformOptions& options, std::string* why) {
  std::string reason;
  bool ok = try_cuda(options, &reason).backend != nullptr;
  if (why) *why = reason;
  return ok;
}

Platform open_platform(const PlatformOptions& options) {
  const std::string& which = options.backend.empty() ? std::string("auto") : options.backend;
  std::string why;
  if (which == "cuda") {
    Platform p = try_cuda(options, &why);
    if (!p.backend)
      throw Error("backend 'cuda' was asked for, but the cuda backend cannot run: " + why);
    p.note = "cuda (asked for)";
    return p;
  }
  if (which == "auto") {
    Platform p = try_cuda(options, &why);
    if (p.backend) return p.note = "cuda (auto: a CUDA device is present)", p;
    return open_cpu(options, "cpu (auto: " + why + ")");
  }
  if (which == "cpu") return open_cpu(options, "cpu (KILN_BACKEND=cpu)");
  throw Error("KILN_BACKEND='" + which + "' is not one of auto, cuda, cpu");
}

}  // namespace kiln::jit
