// NVRTC through dlopen: the library is found at run time, each entry point resolved by name, and
// the handle closed with the Nvrtc object. Nothing links against libnvrtc.
#include "jit/cuda/nvrtc.h"

#include <dlfcn.h>
#include <link.h>
#include <nvrtc.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <system_error>

#include "jit/kernel_decl.h"
#include "jit/signature.h"
#include "runtime/error.h"

namespace kiln::jit {
namespace fs = std::filesystem;

// The entry points kiln uses. The optional ones are nullptr on NVRTCs that lack them.
struct Nvrtc::Api {
  decltype(&::nvrtcGetErrorString) GetErrorString = nullptr;
  decltype(&::nvrtcVersion) Version = nullptr;
  decltype(&::nvrtcCreateProgram) CreateProgram = nullptr;
  decltype(&::nvrtcDestroyProgram) DestroyProgram = nullptr;
  decltype(&::nvrtcCompileProgram) CompileProgram = nullptr;
  decltype(&::nvrtcGetPTXSize) GetPTXSize = nullptr;
  decltype(&::nvrtcGetPTX) GetPTX = nullptr;
  decltype(&::nvrtcGetProgramLogSize) GetProgramLogSize = nullptr;
  decltype(&::nvrtcGetProgramLog) GetProgramLog = nullptr;
  decltype(&::nvrtcAddNameExpression) AddNameExpression = nullptr;
  decltype(&::nvrtcGetLoweredName) GetLoweredName = nullptr;
  // Optional.
  decltype(&::nvrtcGetNumSupportedArchs) GetNumSupportedArchs = nullptr;
  decltype(&::nvrtcGetSupportedArchs) GetSupportedArchs = nullptr;
  decltype(&::nvrtcGetCUBINSize) GetCUBINSize = nullptr;
  decltype(&::nvrtcGetCUBIN) GetCUBIN = nullptr;
};

namespace {

// Where libnvrtc may be, most specific first; "" means the dynamic loader's own search.
std::vector<std::string> search_dirs(const std::vector<std::string>& toolkits) {
  std::vector<std::string> dirs;
  for (const std::string& home : toolkits) dirs.push_back(home + "/lib64");
  dirs.push_back("/usr/local/cuda/lib64");
  dirs.push_back("");
  return dirs;
}

constexpr const char* kNames[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11",
                                  "libnvrtc.so"};

// Resolves name in handle into *fn; false when missing.
template <typename F>
bool resolve(void* handle, const char* name, F* fn) {
  *fn = reinterpret_cast<F>(::dlsym(handle, name));
  return *fn != nullptr;
}

// The file a dlopen handle was loaded from.
std::string loaded_path(void* handle, const std::string& fallback) {
  link_map* map = nullptr;
  if (::dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && *map->l_name)
    return map->l_name;
  return fallback;
}

// The toolkit include folders that belong with the library: <libdir>/../include, else
// <toolkit>/include or /usr/local/cuda/include; and its cccl/ subfolder where there is one.
std::vector<std::string> find_include_dirs(const std::string& library,
                                           const std::vector<std::string>& toolkits) {
  std::vector<fs::path> candidates;
  std::error_code ec;
  fs::path real = fs::canonical(library, ec);
  if (!ec) candidates.push_back(real.parent_path().parent_path() / "include");
  candidates.push_back(fs::path(library).parent_path().parent_path() / "include");
  for (const std::string& home : toolkits) candidates.push_back(fs::path(home) / "include");
  candidates.push_back("/usr/local/cuda/include");
  for (const fs::path& c : candidates) {
    if (!fs::exists(c / "cuda_fp16.h", ec) && !fs::exists(c / "cooperative_groups.h", ec)) continue;
    std::vector<std::string> dirs = {c.string()};
    if (fs::exists(c / "cccl" / "cuda" / "std", ec)) dirs.push_back((c / "cccl").string());
    return dirs;
  }
  return {};
}

// SIGINT ignored for a scope, its handler restored after. NVRTC's front end installs a SIGINT
// handler of its own for the length of a compile unless SIGINT is ignored when it starts, and
// that handler ends the process (exit status 4): a Ctrl-C meant for kiln, or for the host
// compile running beside the NVRTC check, killed the session. The host compiler, in kiln's
// process group, still dies of a terminal's Ctrl-C meanwhile, and run_process reports that as
// the interrupt. (NVRTC compiles one program at a time here: the check waits for each.)
class SigintIgnored {
 public:
  SigintIgnored() {
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    ::sigaction(SIGINT, &ignore, &previous_);
  }
  ~SigintIgnored() { ::sigaction(SIGINT, &previous_, nullptr); }
  SigintIgnored(const SigintIgnored&) = delete;
  SigintIgnored& operator=(const SigintIgnored&) = delete;

 private:
  struct sigaction previous_ {};
};

// An nvrtcProgram destroyed on scope exit.
class ProgramGuard {
 public:
  using Destroy = decltype(&::nvrtcDestroyProgram);
  ProgramGuard(Destroy destroy, nvrtcProgram p) : destroy_(destroy), p_(p) {}
  ~ProgramGuard() {
    if (p_) destroy_(&p_);
  }
  ProgramGuard(const ProgramGuard&) = delete;
  ProgramGuard& operator=(const ProgramGuard&) = delete;

 private:
  Destroy destroy_;
  nvrtcProgram p_;
};

// nvcc's options that NVRTC does not know, as NVRTC takes what they ask for: extended lambdas
// need no option (plain_lambdas), and a constexpr function NVRTC calls from device code only as
// device code (-default-device, which NVRTC's own error suggests). The others as they are.
std::string nvrtc_option(const std::string& o) {
  if (o == "--extended-lambda" || o == "-extended-lambda" || o == "--expt-extended-lambda" ||
      o == "-expt-extended-lambda")
    return "";
  if (o == "--expt-relaxed-constexpr" || o == "-expt-relaxed-constexpr") return "-default-device";
  return o;
}

// Whether options already choose a language standard.
bool has_std_option(const std::vector<std::string>& options) {
  for (const std::string& o : options)
    if (o.starts_with("-std") || o.starts_with("--std")) return true;
  return false;
}

// Whether options already choose a target.
bool has_arch_option(const std::vector<std::string>& options) {
  for (const std::string& o : options)
    if (o.starts_with("-arch") || o.starts_with("--gpu-architecture")) return true;
  return false;
}

// Whether a source or one of its headers names __int128, which NVRTC (unlike nvcc, since CUDA
// 11.5) compiles only with --device-int128.
bool names_int128(const CompileRequest& request,
                  const std::map<std::string, std::string>& headers) {
  if (request.source.find("__int128") != std::string::npos) return true;
  return std::any_of(headers.begin(), headers.end(),
                     [](const auto& h) { return h.second.find("__int128") != std::string::npos; });
}

// Drops NUL terminators and trailing blank lines from an NVRTC log.
std::string trim_log(std::string log) {
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n' || log.back() == ' '))
    log.pop_back();
  return log;
}

// log without NVRTC's warnings that libcu++ redefines a macro kiln's pre-included math.h or
// limits.h defined (`INFINITY`, which <cuda/std/cmath> spells its own way under NVRTC): each
// such warning is its line, the source line and caret after it, up to a blank line. What is
// left of the log is the user's.
std::string without_own_redefinitions(const std::string& log) {
  std::istringstream lines(log);
  std::string out, line;
  bool skipping = false, kept_warning = false;
  while (std::getline(lines, line)) {
    if (line.find("incompatible redefinition of macro") != std::string::npos &&
        (line.find("of math.h)") != std::string::npos ||
         line.find("of limits.h)") != std::string::npos)) {
      skipping = true;
      continue;
    }
    if (skipping) {
      skipping = !line.empty();
      continue;
    }
    if (line.starts_with("Remark: The warnings can be suppressed") && !kept_warning) continue;
    kept_warning = kept_warning || line.find(": warning") != std::string::npos;
    out += line + "\n";
  }
  // (blank lines the dropped warnings left at the start)
  while (!out.empty() && out.front() == '\n') out.erase(0, 1);
  return trim_log(std::move(out));
}

// "void (float*, int)" from a mangled lowered name; "" when the name is not mangled (extern "C").
std::string signature_of(const std::string& lowered) {
  if (!lowered.starts_with("_Z")) return "";
  std::string demangled = demangle(lowered);
  if (demangled == lowered) return "";
  std::string sig = "void (";
  std::vector<std::string> types = parameter_types(demangled);
  for (std::size_t i = 0; i < types.size(); ++i) sig += (i ? ", " : "") + types[i];
  return sig + ")";
}

}  // namespace

std::shared_ptr<Nvrtc> Nvrtc::load(std::string* why, const std::vector<std::string>& toolkits) {
  std::string tried, last_error;
  for (const std::string& dir : search_dirs(toolkits)) {
    for (const char* name : kNames) {
      std::string path = dir.empty() ? name : dir + "/" + name;
      std::error_code ec;
      if (!dir.empty() && !fs::exists(path, ec)) continue;
      // RTLD_NODELETE: libnvrtc links its own libstdc++, whose startup allocations would be
      // orphaned (LeakSanitizer reports them) if dlclose unmapped it; it stays until exit.
      void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
      tried += (tried.empty() ? "" : ", ") + path;
      if (!handle) {
        if (const char* e = ::dlerror()) last_error = e;
        continue;
      }
      std::shared_ptr<Nvrtc> n(new Nvrtc());
      n->handle_ = handle;  // closed by ~Nvrtc from here on
      n->api_ = std::make_unique<Api>();
      Api& a = *n->api_;
      bool ok = resolve(handle, "nvrtcGetErrorString", &a.GetErrorString) &&
                resolve(handle, "nvrtcVersion", &a.Version) &&
                resolve(handle, "nvrtcCreateProgram", &a.CreateProgram) &&
                resolve(handle, "nvrtcDestroyProgram", &a.DestroyProgram) &&
                resolve(handle, "nvrtcCompileProgram", &a.CompileProgram) &&
                resolve(handle, "nvrtcGetPTXSize", &a.GetPTXSize) &&
                resolve(handle, "nvrtcGetPTX", &a.GetPTX) &&
                resolve(handle, "nvrtcGetProgramLogSize", &a.GetProgramLogSize) &&
                resolve(handle, "nvrtcGetProgramLog", &a.GetProgramLog) &&
                resolve(handle, "nvrtcAddNameExpression", &a.AddNameExpression) &&
                resolve(handle, "nvrtcGetLoweredName", &a.GetLoweredName);
      if (!ok) {
        const char* e = ::dlerror();
        last_error = path + " lacks NVRTC entry points (" + std::string(e ? e : "") + ")";
        continue;  // n's destructor closes the handle
      }
      resolve(handle, "nvrtcGetNumSupportedArchs", &a.GetNumSupportedArchs);
      resolve(handle, "nvrtcGetSupportedArchs", &a.GetSupportedArchs);
      resolve(handle, "nvrtcGetCUBINSize", &a.GetCUBINSize);
      resolve(handle, "nvrtcGetCUBIN", &a.GetCUBIN);
      if (a.Version(&n->major_, &n->minor_) != NVRTC_SUCCESS) {
        last_error = path + ": nvrtcVersion failed";
        continue;
      }
      n->path_ = loaded_path(handle, path);
      n->include_dirs_ = find_include_dirs(n->path_, toolkits);
      return n;
    }
  }
  if (why) {
    *why =
        "libnvrtc (libnvrtc.so.13, .12 or .11) not found in $CUDA_HOME/lib64, "
        "/usr/local/cuda/lib64 or the loader path";
    if (!tried.empty()) *why += "; tried " + tried;
    if (!last_error.empty()) *why += ": " + last_error;
  }
  return nullptr;
}

Nvrtc::~Nvrtc() {
  if (handle_) ::dlclose(handle_);
}

std::string Nvrtc::version() const {
  return std::to_string(major_) + "." + std::to_string(minor_);
}

std::vector<int> Nvrtc::supported_archs() const {
  int n = 0;
  if (!api_->GetNumSupportedArchs || !api_->GetSupportedArchs ||
      api_->GetNumSupportedArchs(&n) != NVRTC_SUCCESS || n <= 0)
    return {};
  std::vector<int> archs(static_cast<std::size_t>(n));
  if (api_->GetSupportedArchs(archs.data()) != NVRTC_SUCCESS) return {};
  return archs;
}

std::string Nvrtc::cap_arch(const std::string& arch) const {
  // A device newer than this NVRTC gets PTX for the newest arch it knows (compute_NN): the
  // driver JIT-compiles PTX for newer devices, whereas a cubin for an older sm would not load.
  std::size_t us = arch.find('_');
  if (us == std::string::npos) return arch;
  std::string digits = arch.substr(us + 1);
  std::size_t used = 0;
  int number = 0;
  try {
    number = std::stoi(digits, &used);
  } catch (const std::exception&) {
    return arch;
  }
  std::vector<int> archs = supported_archs();
  if (archs.empty()) return arch;
  int newest = *std::max_element(archs.begin(), archs.end());
  if (number <= newest) return arch;
  return "compute_" + std::to_string(newest);
}

CompileResult Nvrtc::compile(const CompileRequest& request,
                             const std::map<std::string, std::string>& headers) const {
  const Api& a = *api_;
  std::string filename = request.file();
  std::vector<const char*> header_names, header_sources;
  std::vector<std::string> plain_headers;  // (their lambdas too: plain_lambdas)
  plain_headers.reserve(headers.size());
  for (const auto& [name, text] : headers) {
    header_names.push_back(name.c_str());
    header_sources.push_back(plain_headers.emplace_back(plain_lambdas(text)).c_str());
  }
  std::vector<std::string> options;
  if (!has_std_option(request.options))
    options.push_back(major_ >= 12 ? "-std=c++20" : "-std=c++17");
  if (!request.arch.empty() && !has_arch_option(request.options))
    options.push_back("--gpu-architecture=" + request.arch);
  for (const std::string& dir : include_dirs_) options.push_back("-I" + dir);
  // What nvcc's implicit cuda_runtime.h brings (its driver_types.h includes <limits.h>, its
  // math_functions.h <math.h>): INT_MAX, INFINITY, M_PI without an #include, as code written
  // for nvcc assumes. (kiln's shims of them for NVRTC, kernels_src/kiln/nvrtc_include.)
  if (headers.count("limits.h") && headers.count("math.h"))
    for (const char* implicit : {"--pre-include=limits.h", "--pre-include=math.h"})
      options.push_back(implicit);
  // A template argument kiln deduced from a float16, bfloat16 or fp8 array (`scale<__half>`):
  // its header, which the source, written for any T, need not include.
  for (const std::string& header : deduced_type_headers(request.name_expressions))
    options.push_back("--pre-include=" + header);
  const bool int128_given =
      std::any_of(request.options.begin(), request.options.end(),
                  [](const std::string& o) { return o.ends_with("device-int128"); });
  if ((major_ > 11 || (major_ == 11 && minor_ >= 5)) && !int128_given &&
      names_int128(request, headers))
    options.push_back("--device-int128");
  for (const std::string& o : request.options)
    if (std::string as_nvrtc = nvrtc_option(o); !as_nvrtc.empty())
      options.push_back(std::move(as_nvrtc));
  std::string option_text;
  for (const std::string& o : options) option_text += (option_text.empty() ? "" : " ") + o;
  std::string kernels;
  for (const std::string& n : request.name_expressions)
    kernels += (kernels.empty() ? "" : ", ") + n;
  std::string what = "kernel source " + filename + " (kernels: " + kernels +
                     ") did not compile (NVRTC " + version() + ", options: " + option_text + ")";

  nvrtcProgram prog = nullptr;
  // (`[=] __device__ (...)`, which nvcc takes with --extended-lambda, as a plain lambda)
  const std::string source = plain_lambdas(request.source);
  nvrtcResult r =
      a.CreateProgram(&prog, source.c_str(), filename.c_str(), static_cast<int>(headers.size()),
                      header_sources.data(), header_names.data());
  if (r != NVRTC_SUCCESS) throw CompileError(what + ": " + a.GetErrorString(r), "");
  ProgramGuard guard(a.DestroyProgram, prog);
  for (const std::string& expr : request.name_expressions) {
    r = a.AddNameExpression(prog, expr.c_str());
    if (r != NVRTC_SUCCESS)
      throw CompileError(what + ": name expression '" + expr + "': " + a.GetErrorString(r), "");
  }
  std::vector<const char*> option_ptrs;
  for (const std::string& o : options) option_ptrs.push_back(o.c_str());
  nvrtcResult compiled;
  {
    SigintIgnored quiet;
    compiled = a.CompileProgram(prog, static_cast<int>(option_ptrs.size()), option_ptrs.data());
  }

  CompileResult out;
  std::size_t size = 0;
  if (a.GetProgramLogSize(prog, &size) == NVRTC_SUCCESS && size > 1) {
    std::string log(size, '\0');
    if (a.GetProgramLog(prog, log.data()) == NVRTC_SUCCESS) out.log = trim_log(std::move(log));
  }
  if (compiled != NVRTC_SUCCESS) {
    if (compiled == NVRTC_ERROR_COMPILATION)
      throw CompileError(what, without_own_redefinitions(out.log));
    throw CompileError(what + ": " + a.GetErrorString(compiled), out.log);
  }
  if (a.GetPTXSize(prog, &size) == NVRTC_SUCCESS && size > 0) {
    std::string ptx(size, '\0');
    if (a.GetPTX(prog, ptx.data()) == NVRTC_SUCCESS) {
      while (!ptx.empty() && ptx.back() == '\0') ptx.pop_back();
      out.ptx = std::move(ptx);
    }
  }
  bool real_arch = request.arch.starts_with("sm_");
  if (real_arch && a.GetCUBINSize && a.GetCUBIN && a.GetCUBINSize(prog, &size) == NVRTC_SUCCESS &&
      size > 0) {
    out.image.resize(size);
    if (a.GetCUBIN(prog, out.image.data()) != NVRTC_SUCCESS) out.image.clear();
  }
  if (!out.image.empty()) {
    out.image_kind = "cubin";
  } else {
    out.image_kind = "ptx";
    out.image.assign(out.ptx.begin(), out.ptx.end());
    out.image.push_back('\0');  // cuModuleLoadData takes PTX as a C string
  }
  for (const std::string& expr : request.name_expressions) {
    const char* lowered = nullptr;
    r = a.GetLoweredName(prog, expr.c_str(), &lowered);
    if (r != NVRTC_SUCCESS || !lowered)
      throw CompileError(what + ": no kernel for name expression '" + expr + "'", out.log);
    out.lowered_names.emplace_back(lowered);
    out.signatures.push_back(signature_of(lowered));
  }
  resolve_dependent_signatures(request, header_sources, header_names, option_ptrs, &out);
  return out;
}

void Nvrtc::resolve_dependent_signatures(const CompileRequest& request,
                                         const std::vector<const char*>& header_sources,
                                         const std::vector<const char*>& header_names,
                                         const std::vector<const char*>& options,
                                         CompileResult* out) const {
  // A template's mangled name keeps its parameters as declared: `vec4<float>::Type*` where the
  // source says `typename vec4<T>::Type*` (cuda-samples' nbody). The type of the same
  // specialisation, as a template argument, mangles as what it stands for (`float4*`).
  std::vector<std::size_t> dependent;
  std::vector<std::string> probes;
  for (std::size_t i = 0; i < out->signatures.size(); ++i)
    if (out->signatures[i].find(">::") != std::string::npos) {
      dependent.push_back(i);
      probes.push_back("&kiln_signature_of<decltype(" + request.name_expressions[i] + ")>");
    }
  if (dependent.empty()) return;
  const Api& a = *api_;
  const std::string source = plain_lambdas(request.source) +
                             "\ntemplate <class F> __device__ char kiln_signature_of = 0;\n";
  nvrtcProgram prog = nullptr;
  const std::string filename = request.file();
  if (a.CreateProgram(&prog, source.c_str(), filename.c_str(),
                      static_cast<int>(header_sources.size()), header_sources.data(),
                      header_names.data()) != NVRTC_SUCCESS)
    return;
  ProgramGuard guard(a.DestroyProgram, prog);
  for (const std::string& probe : probes)
    if (a.AddNameExpression(prog, probe.c_str()) != NVRTC_SUCCESS) return;
  {
    SigintIgnored quiet;
    // (Where it does not compile, an overloaded template say, the signatures stay as they are.)
    if (a.CompileProgram(prog, static_cast<int>(options.size()), options.data()) != NVRTC_SUCCESS)
      return;
  }
  for (std::size_t j = 0; j < dependent.size(); ++j) {
    const char* lowered = nullptr;
    if (a.GetLoweredName(prog, probes[j].c_str(), &lowered) != NVRTC_SUCCESS || !lowered) continue;
    // "kiln_signature_of<void (float4*, int)>" -> "void (float4*, int)"
    const std::string demangled = demangle(lowered);
    const std::size_t open = demangled.find('<'), close = demangled.rfind('>');
    if (open == std::string::npos || close == std::string::npos || close <= open) continue;
    std::string signature = demangled.substr(open + 1, close - open - 1);
    if (signature.starts_with("void (")) out->signatures[dependent[j]] = std::move(signature);
  }
}

}  // namespace kiln::jit
