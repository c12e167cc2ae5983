// The cpu compiler: flags, the plan (each kernel's thread mode and why, the rewritten source),
// the translation unit, and one compile (a second only when kiln's rewrite may be what failed).
#include "jit/cpu/compiler.h"

#include <cxxabi.h>
#include <xxhash.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <utility>

#include "jit/cpu/barrier_macros.h"
#include "jit/cpu/block_barriers.h"
#include "jit/cpu/block_groups.h"
#include "jit/cpu/conditionals.h"
#include "jit/cpu/gpu_casts.h"
#include "jit/cpu/header_votes.h"
#include "jit/cpu/host_compiler.h"
#include "jit/cpu/inline_ptx.h"
#include "jit/cpu/inline_sync.h"
#include "jit/cpu/lockstep_stores.h"
#include "jit/cpu/plan.h"
#include "jit/cpu/prelude_pch.h"
#include "jit/cpu/regions.h"
#include "jit/cpu/signed_indices.h"
#include "jit/cpu/template_args.h"
#include "jit/cpu/wide_subscripts.h"
#include "jit/kernel_decl.h"
#include "jit/lexer.h"
#include "jit/source.h"
#include "kiln/cpu_abi.h"
#include "runtime/cpu/backend.h"
#include "runtime/cpu/shared_object.h"
#include "runtime/error.h"
#include "runtime/interrupt.h"
#include "runtime/process.h"

namespace kiln::jit {

namespace {

namespace fs = std::filesystem;
using Mode = kiln_cpu::ThreadMode;

// XXH64 of every kernel-side header of the cpu backend under kernels_dir/kiln (the prelude's
// topics, cpu_include/), each as its path below kernels_dir and its bytes, in path order: an
// edit to any of them builds modules anew. A cached kernel's first launch waits for it.
std::string hash_headers(const std::string& kernels_dir) {
  std::unique_ptr<XXH64_state_t, XXH_errorcode (*)(XXH64_state_t*)> state(XXH64_createState(),
                                                                          XXH64_freeState);
  if (!state) throw std::bad_alloc();
  XXH64_reset(state.get(), 0);
  read_folder(kernels_dir + "/kiln", true, [&](const std::string& name, std::string_view text) {
    const std::string path = "/kiln/" + name + '\n';
    XXH64_update(state.get(), path.data(), path.size());
    XXH64_update(state.get(), text.data(), text.size());
  });
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx",
                static_cast<unsigned long long>(XXH64_digest(state.get())));
  return hex;
}

// A kernel's type as the demangler spells it, with the prelude's 16-bit floats under their CUDA
// names (kiln_cpu::narrow<kiln_cpu::binary16> is __half), as NVRTC's lowered names spell them.
std::string demangle_type(const char* mangled) {
  int status = 0;
  char* d = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  std::string out = status == 0 && d ? d : mangled;
  std::free(d);
  static constexpr std::pair<std::string_view, std::string_view> kCudaNames[] = {
      {"kiln_cpu::narrow<kiln_cpu::binary16>", "__half"},
      {"kiln_cpu::narrow<kiln_cpu::bfloat16>", "__nv_bfloat16"},
      {"kiln_cpu::narrow2<kiln_cpu::binary16>", "__half2"},
      {"kiln_cpu::narrow2<kiln_cpu::bfloat16>", "__nv_bfloat162"}};
  for (const auto& [ours, cuda] : kCudaNames)
    for (std::size_t at; (at = out.find(ours)) != std::string::npos;)
      out.replace(at, ours.size(), cuda);
  return out;
}

// The line of the innermost '{' in source that no '}' closes, if any (comments, strings and
// preprocessor lines skipped).
std::optional<int> unclosed_brace_line(std::string_view source) {
  std::vector<int> open;
  for (const Token& t : lex(source)) {
    if (t.directive) continue;
    if (is_punct(t, "{")) open.push_back(t.line);
    if (is_punct(t, "}") && !open.empty()) open.pop_back();
  }
  if (open.empty()) return std::nullopt;
  return open.back();  // the innermost, as NVRTC reports it
}

// The kernel's address for the entry points: a name expression that is a cast already is one;
// a plain name that one kernel body of source (as compiled) has is cast to that kernel's type,
// since the host's C library may declare a function of that name too (`rand`, `time`, `index`),
// which makes `&rand` an overload set that no template argument can take (NVRTC, whose headers
// declare device functions only, builds it); any other name ("k<float>") has its address taken.
std::string kernel_address(const std::string& expr, const std::vector<KernelBody>& bodies) {
  if (expr[0] == '(') return expr;
  const bool plain = std::all_of(expr.begin(), expr.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
  const KernelBody* only = nullptr;
  for (const KernelBody& b : bodies) {
    if (b.name != expr) continue;
    if (only) return "&" + expr;  // (overloads: the name expression must pick one)
    only = &b;
  }
  if (!plain || !only || only->param_types.size() != only->params.size()) return "&" + expr;
  std::string types;
  for (const std::string& t : only->param_types) types += (types.empty() ? "" : ", ") + t;
  // (a static_cast resolves the overload or fails: it never reinterprets a pointer)
  return "static_cast<void(*)(" + types + ")>(" + expr + ")";
}

// text as the body of a C string literal: quotes and backslashes escaped, control characters
// as octal escapes.
std::string c_string_body(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\%03o", unsigned(static_cast<unsigned char>(c)));
      out += esc;
      continue;
    }
    out += c;
  }
  return out;
}

// Part of the compiler identity: bump it whenever translation_unit() or the plan (plan.cpp's
// thread_plans, the scans it rests on) changes what it generates, so that modules cached by an
// older kiln are built anew.
constexpr int kTranslationUnitVersion = 43;

// The GPU architecture device code sees as __CUDA_ARCH__: the one asked for ("sm_90",
// "compute_86", "90" -> 900, 860, 900), else sm_80's 800 (NVRTC's check compiles for sm_80 too).
int cuda_arch_value(const std::string& arch) {
  std::string digits = arch;
  for (const char* prefix : {"sm_", "compute_"})
    if (digits.rfind(prefix, 0) == 0) digits = digits.substr(std::string(prefix).size());
  while (!digits.empty() && std::isalpha(static_cast<unsigned char>(digits.back())))
    digits.pop_back();  // sm_90a
  if (digits.empty() || digits.size() > 4 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return std::isdigit(c); }))
    return 800;
  return std::stoi(digits) * 10;
}

class CpuCompiler final : public Compiler {
 public:
  explicit CpuCompiler(const CpuCompilerOptions& options);

  // The compiler is named by its binary's identity (path, size, mtime) rather than by its
  // --version line: running it costs milliseconds that a cached kernel's first launch must not.
  std::string identity(const std::string&) const override {
    return "cpu:" + compiler_fingerprint(compiler_) + ":" + cpu_model_ + ":abi" +
           std::to_string(KILN_CPU_ABI_VERSION) + ":tu" + std::to_string(kTranslationUnitVersion) +
           ":prelude" + prelude_hash() + ":" + joined_flags() +
           (regions_ ? ":regions" + std::to_string(cpu::kRegionsVersion) : ":no-regions") +
           (curand_header_.empty() ? "" : ":curand" + curand_header_);
  }
  std::string default_arch() const override { return "native"; }
  std::string describe() const override {
    return "kernels built by " + compiler_ + " (" + compiler_version() + ")";
  }
  CompileResult compile(const CompileRequest& request) override;
  void use_store(CompilerStore store) override {
    if (pch_) pch_->use_store(std::move(store));
  }

 private:
  // What one compile builds: each kernel's plan, and the source as the compiler gets it.
  struct Plan {
    const CompileRequest& request;
    std::vector<cpu::ThreadPlan> kernels;  // one per name expression
    std::string source;                    // request.source, or its region rewrite
    bool checked_pointers = false;         // check mode: pointer parameters bounds-checked
    std::vector<std::string> user;         // the user's options, as the host compiler takes them
    std::string pch_dir;                   // first on the include path: the prelude precompiled
    bool inlined = false;                  // synchronising device functions inlined
    bool lowered = false;       // block groups lowered, index arithmetic read as int (make_plan)
    bool widened = false;       // subscripts computed in 64 bits (make_plan)
    bool chosen_loads = false;  // the region rewrite read through chosen indices
    bool lockstep = false;      // warp-synchronous volatile pointers made lockstep pointers
    bool pointer_casts = false;  // the source casts pointers: -fno-strict-aliasing (plan.h)
    bool checked_shared = true;  // with checked_pointers: static __shared__ arrays checked too
    bool spliced = false;        // quoted headers spliced into the source (spliced_source)
    // With plain functions given internal linkage (make_plan): source as it was before.
    std::string external_source;
    bool internal() const { return !external_source.empty(); }
    bool has(Mode m) const {
      return std::any_of(kernels.begin(), kernels.end(),
                         [m](const cpu::ThreadPlan& k) { return k.mode == m; });
    }
    // Whether kiln rewrote the source (beyond extern __shared__), and which rewrite.
    bool rewritten() const {
      return checked_pointers || inlined || lowered || widened || lockstep || internal() ||
             has(kiln_cpu::mode_regions) || has(kiln_cpu::mode_coroutines);
    }
    std::string rewrite_name() const {
      return has(kiln_cpu::mode_regions)      ? "regions"
             : has(kiln_cpu::mode_coroutines) ? "coroutine"
             : inlined                        ? "inlining"
             : lowered                        ? "lowering"
             : widened                        ? "wide-subscript"
             : checked_pointers               ? "checked-pointer"
             : lockstep                       ? "lockstep-pointer"
                                              : "internal-linkage";
    }
  };
  // failed: kernels whose region rewrite did not compile (name -> the compiler's error), run
  // as fibers beside the others.
  // splice: quoted headers spliced in where one synchronises (spliced_source).
  Plan make_plan(const CompileRequest& request, std::vector<std::string> user,
                 const std::map<std::string, std::string>& failed = {}, bool splice = true) const;
  // Compiles plan, and as written where a rewrite did not compile (compile's steps after the
  // plan).
  CompileResult compile_plan(Plan& plan);
  Plan plan_source(const CompileRequest& request, const std::string& source,
                   std::vector<std::string> user,
                   const std::map<std::string, std::string>& failed = {}) const;
  // The flags a compile of plan passes that a precompiled prelude must have been made with
  // (GCC checks the macros itself; include folders are the same for every compile).
  std::vector<std::string> prelude_flags(const Plan& plan) const;
  // What a compile of plan passes beyond code_flags().
  std::vector<std::string> mode_flags(const Plan& plan) const;
  // The folder of the precompiled prelude for plan, or "" (see PrecompiledPrelude::folder).
  std::string prelude_folder(const Plan& plan, std::future<void>* build) {
    return pch_ ? pch_->folder(prelude_flags(plan), identity(""), build) : "";
  }
  CompileResult compile_once(const Plan& plan);
  CompileResult compile_as_written(Plan& plan, const CompileError& e);
  // named: give up the checks only where the compiler's error names them (the plan's first
  // compile: another error is a rewrite's or the user's, not the checks').
  CompileResult compile_checked(Plan& plan, bool named = false);
  std::string compiler_version() const {
    std::call_once(version_once_, [this] { version_ = jit::compiler_version(compiler_); });
    return version_;
  }
  // The headers' hash, read when a kernel is first built or looked up (not when the backend
  // opens: a script that only moves arrays never reads them).
  const std::string& prelude_hash() const {
    std::call_once(prelude_once_, [this] { prelude_hash_ = hash_headers(kernels_dir_); });
    return prelude_hash_;
  }
  std::vector<std::string> code_flags() const;
  std::string joined_flags() const {
    std::string out;
    for (const auto& f : code_flags()) out += (out.empty() ? "" : " ") + f;
    return out;
  }
  std::string translation_unit(const Plan& plan) const;

  std::string kernels_dir_, compiler_;
  mutable std::once_flag prelude_once_;
  mutable std::string prelude_hash_;
  std::string cpu_model_ = cpu::cpu_model_name();  // -march=native builds for this CPU only
  mutable std::once_flag version_once_;
  mutable std::string version_;
  bool check_ = false;
  bool regions_ = true;  // part of the identity: it decides how modules are built
  std::string curand_header_;                     // the toolkit's curand_kernel.h, or empty
  std::unique_ptr<cpu::PrecompiledPrelude> pch_;  // null: not used (clang, or turned off)
};

CpuCompiler::CpuCompiler(const CpuCompilerOptions& options)
    : kernels_dir_(options.kernels_dir),
      compiler_(options.compiler.empty() ? "c++" : options.compiler),
      check_(options.check),
      regions_(options.regions),
      curand_header_(options.cuda_include.empty() ? ""
                                                  : options.cuda_include + "/curand_kernel.h") {
  if (!fs::exists(fs::path(kernels_dir_) / "kiln" / "cpu_prelude.h"))
    throw Error("cpu backend: no kiln/cpu_prelude.h in the kernels folder '" + kernels_dir_ +
                "' (set KILN_HOME to kiln's source folder)");
  // clang's precompiled headers are not silently skipped when they do not fit: GCC only.
  if (options.precompiled_prelude &&
      compiler_fingerprint(compiler_).find("clang") == std::string::npos)
    pch_ = std::make_unique<cpu::PrecompiledPrelude>(
        compiler_, kernels_dir_ + "/kiln/cpu_prelude.h",
        std::vector<std::string>{"-isystem", kernels_dir_ + "/kiln/cpu_include",
                                 "-I" + kernels_dir_});
}

// The compiler flags every kernel module is built with (part of the compiler identity).
std::vector<std::string> CpuCompiler::code_flags() const {
  std::vector<std::string> flags{"-std=c++17", "-O3", "-march=native",
                                 // threadIdx & co. are thread-locals of a dlopen'd library:
                                 // one __tls_get_addr per function for all of them, not one per
                                 // read. (TLS descriptors, -mtls-dialect=gnu2, would be cheaper
                                 // still, but glibc before 2.40 clobbers vector registers in
                                 // them: wrong sums.)
                                 "-ftls-model=local-dynamic", "-fPIC", "-shared",
                                 "-fno-semantic-interposition", "-fno-math-errno",
                                 "-fno-trapping-math",
                                 "-ffp-contract=fast",  // GPUs fuse a*b+c too (nvcc --fmad=true)
                                 "-fstack-clash-protection",  // large frames still hit the guard
                                 // A symbol nothing defines (a __device__ function only
                                 // declared) is a link error naming it, not a crash at launch.
                                 "-Wl,-z,defs"};
  // GCC gives static locals of templates and inline functions (a template kernel's __shared__
  // arrays) STB_GNU_UNIQUE binding: glibc then ignores dlclose for the module (a later module
  // loaded under the same /proc/self/fd name got the stale one), and binds the same-named array
  // of every later module to the first one's, whatever its size. Clang never emits it.
  // (Told from the binary's resolved path, so that no subprocess runs for a cached kernel.)
  // GCC also vectorises a thread loop only where it can test at run time that the pointers the
  // loop reads and writes do not overlap, at most 10 pairs by default: a kernel writing five
  // planes from a shared tile (Rodinia's srad) needs more, and each test costs a few
  // instructions per region against a scalar loop over the block.
  // And a thread loop's per-thread value chosen by a condition that is the same for the whole
  // loop (`int north = row > 0 ? ty - 1 : ty;`, row fixed along a row of threads) is no even
  // step until the loop is unswitched on it (one copy per outcome), which GCC does for bodies
  // of at most 50 instructions by default, two levels deep here (the Rodinia-style hotspot:
  // 115 -> 68 ms; deeper costs compile time and gained nothing more). GCC 13 rewrote
  // unswitching: its default goes deeper, and the level parameter is gone (an error there), so
  // it is passed only to a GCC whose name says it is older.
  std::string fingerprint = compiler_fingerprint(compiler_);
  if (fingerprint.find("clang") == std::string::npos)
    flags.insert(flags.end(), {"-fno-gnu-unique", "--param=vect-max-version-for-alias-checks=64",
                               "--param=max-unswitch-insns=1000"});
  if (int major = gcc_major_in_name(fingerprint); major > 0 && major < 13)
    flags.push_back("--param=max-unswitch-level=2");
  // Check mode: bounds checks, and line tables to name the source line of a bad access.
  if (check_) flags.insert(flags.end(), {"-DKILN_CHECK=1", "-g"});
  return flags;
}

// What plan's module compiles with beyond code_flags() (GCC takes a precompiled prelude made
// without them: their modules share it).
// A module whose region rewrite reads through chosen indices (`totals[from][west]` as
// `(c ? totals[from][x] : totals[from][y])`) compiles without jump threading. Jump threading
// copies the thread loop's paths apart by the conditions of its region (`if (in_grid && ...)`
// after `in_grid = ...`, which the choice's own condition repeats), so that the loop is no
// longer one path GCC can if-convert and vectorise: the Rodinia-style pathfinder took 7.5 ms
// with it, 3.8 ms without. Elsewhere it stays: the reduce, abs_sum and histogram labs (region
// mode, no chosen indices) ran 10-30% slower without it, and the 9x9 blur lab (loop mode)
// compiled 100 ms slower.
// -fno-strict-aliasing where the source casts pointers: CUDA code reads memory through pointers
// of other types (an int4 load read as four half2s, as vectorised fp16 kernels do), and GCC at
// -O3 dropped the store (the sum came out 0). Elsewhere strict aliasing stays: without it a
// float store may alias the loop's bounds and pointers, which are then reloaded every
// iteration (the abs_sum lab ran 1.6x slower).
std::vector<std::string> CpuCompiler::mode_flags(const Plan& plan) const {
  std::vector<std::string> flags;
  if (plan.chosen_loads && compiler_fingerprint(compiler_).find("clang") == std::string::npos)
    flags.push_back("-fno-thread-jumps");
  if (plan.pointer_casts) flags.push_back("-fno-strict-aliasing");
  return flags;
}

std::vector<std::string> CpuCompiler::prelude_flags(const Plan& plan) const {
  std::vector<std::string> flags = code_flags();
  if (plan.has(kiln_cpu::mode_coroutines))
    flags.insert(flags.end(), {"-std=c++20", "-DKILN_COROUTINES=1"});  // as the unit defines it
  for (const auto& o : plan.user)
    if (o.starts_with("-O") || o.starts_with("-g") || o.starts_with("-std=")) flags.push_back(o);
  return flags;
}

// prelude, #line 1 "<file>", the user's source, then the exported entry points.
std::string CpuCompiler::translation_unit(const Plan& plan) const {
  const CompileRequest& request = plan.request;
  std::string filename = request.file();
  const std::string quoted = c_string_body(filename);
  const bool coroutines = plan.has(kiln_cpu::mode_coroutines);
  std::string tu = coroutines ? "#define KILN_COROUTINES 1\n" : "";
  // Device code sees what nvcc shows it: __CUDACC__, and __CUDA_ARCH__, so that code under
  // `#if __CUDA_ARCH__ >= 700` is compiled, not silently dropped.
  tu += "#include <kiln/cpu_prelude.h>\n#define __CUDACC__ 1\n#define __CUDA_ARCH__ " +
        std::to_string(cuda_arch_value(request.arch)) + "\n";
  // Where kiln/cpu_include/curand_kernel.h finds the toolkit's.
  if (!curand_header_.empty())
    tu += "#define KILN_CURAND_KERNEL_H \"" + c_string_body(curand_header_) + "\"\n";
  for (const std::string& header : jit::deduced_type_headers(request.name_expressions))
    tu += "#include <" + header + ">\n";  // (a deduced `scale<__half>`'s type)
  tu += "#line 1 \"" + quoted + "\"\n";
  std::string source = cpu::rewrite_extern_shared(plan.source, plan.checked_pointers);
  if (coroutines) source = cpu::rewrite_coroutine_returns(source);
  if (plan.checked_pointers) source = cpu::rewrite_pointer_params(source);
  if (plan.checked_pointers && plan.checked_shared) source = cpu::rewrite_shared_arrays(source);
  if (plan.checked_pointers) source = cpu::rewrite_element_addresses(source);
  tu += source;
  tu +=
      "\n#line 1 \"<kiln entry points>\"\n#define KILN_EXPORT extern \"C\" "
      "__attribute__((visibility(\"default\")))\n";
  tu += "KILN_EXPORT unsigned kiln_abi_version() { return KILN_CPU_ABI_VERSION; }\n";
  tu += "KILN_EXPORT void kiln_set_launch(const kiln_cpu::Tls* t) { kiln_cpu::tls = *t; }\n";
  tu += "KILN_EXPORT void kiln_set_thread(kiln_cpu::uint3 t) { kiln_cpu::tls.thread_idx = t; }\n";
  tu += "KILN_EXPORT void kiln_get_launch(kiln_cpu::Tls* t) { *t = kiln_cpu::tls; }\n";
  if (coroutines)
    tu +=
        "KILN_EXPORT unsigned kiln_round(void* const* f, const kiln_cpu::uint3* t, unsigned* l, "
        "unsigned c, unsigned* r) { return kiln_cpu::round(f, t, l, c, r); }\n";
  tu += "KILN_EXPORT unsigned kiln_entry_count() { return " +
        std::to_string(request.name_expressions.size()) + "; }\n";
  // The entry points' own names are kiln_-prefixed, so that no kernel name (`a`, `f`) means one
  // of them. A name expression is a name ("k", "k<float>") or a cast that picks one of an
  // overload set ("(void(*)(int*))min"): kernel_address.
  const std::vector<KernelBody> bodies = find_kernel_bodies(source);  // (as compiled)
  for (std::size_t i = 0; i < request.name_expressions.size(); ++i) {
    const std::string& expr = request.name_expressions[i];
    const std::string id = std::to_string(i), fn = kernel_address(expr, bodies);
    const std::string escaped = c_string_body(expr);
    const Mode mode = plan.kernels[i].mode;
    tu += "#line 1 \"<kernel " + escaped + ">\"\n";
    // Only fibers run the kernel one thread per call. Elsewhere the entry does not name it: a
    // template kernel is then compiled once, inside its loops, not also standalone (a quarter
    // of a lab kernel's compile: the histogram lab's, 240 -> 180 ms).
    tu += "KILN_EXPORT void kiln_entry_" + id + "(void** kiln_args) { " +
          (mode == kiln_cpu::mode_fibers ? "kiln_cpu::invoke< " + fn + " >(kiln_args);"
                                         : std::string("(void)kiln_args; __trap();")) +
          " }\n";
    tu += "KILN_EXPORT void kiln_run_" + id +
          "(void** kiln_args, unsigned long long kiln_first, unsigned long long kiln_last) { "
          "kiln_cpu::" +
          (mode == kiln_cpu::mode_regions ? "run_regions" : "run") + "< " + fn +
          " >(kiln_args, kiln_first, kiln_last); }\n";
    tu += "KILN_EXPORT const char* kiln_entry_" + id +
          "_type() { return typeid(kiln_cpu::RawKernel<decltype(" + fn + ")>::type).name(); }\n";
    tu += "KILN_EXPORT const char* kiln_entry_" + id + "_name() { return \"" + escaped + "\"; }\n";
    tu += "KILN_EXPORT int kiln_entry_" + id + "_mode() { return " + std::to_string(int(mode)) +
          "; }\n";
    tu += "KILN_EXPORT const char* kiln_entry_" + id + "_why() { return \"" +
          c_string_body(plan.kernels[i].why) + "\"; }\n";
    if (mode == kiln_cpu::mode_coroutines)
      tu += "KILN_EXPORT void* kiln_start_" + id + "(void** kiln_args) { return kiln_cpu::start< " +
            fn + " >(kiln_args); }\n";
  }
  return tu;
}

// Replaces every occurrence of from in s with to.
void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (std::size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size()))
    s.replace(p, from.size(), to);
}

// Whether a failed compile's log can only be the user's mistake: it names nothing kiln's
// rewrites make (their helpers, coroutines, checked pointers, captures) nor a statement a region
// lambda cuts from its loop. ("In lambda function" is not a sign: every region is a lambda.)
// Anything else may be the rewrite's fault, and is compiled again without it.
bool users_own_error(const std::string& log) {
  for (const char* mark : {"kiln", "KILN", "co_", "coroutine", "captur", "break", "continue",
                           "return", "checked_ptr", "RegionEnd"})
    if (log.find(mark) != std::string::npos) return false;
  return true;
}

// The first line of log that says "error", for a reason.
std::string first_error(const std::string& log) {
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);)
    if (line.find("error") != std::string::npos || line.find("Error") != std::string::npos)
      return line.size() > 200 ? line.substr(0, 200) + "..." : line;
  return "no message";
}

// The kernels of request whose region rewrite the compile log blames: those holding a line of
// the source that an error names (`kernel.cu:10:7: error: 'row' was not declared`), each with
// that error; only kernels the plan ran as regions.
std::map<std::string, std::string> regions_failed(const CompileRequest& request,
                                                  const std::vector<cpu::ThreadPlan>& kernels,
                                                  const std::string& log) {
  const std::string file = request.file() + ":";
  std::vector<std::pair<int, std::string>> errors;  // line, message
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    const std::size_t at = line.find(file);
    if (at == std::string::npos || line.find(": error") == std::string::npos) continue;
    const int n = std::atoi(line.c_str() + at + file.size());
    if (n > 0) errors.emplace_back(n, line.size() > 200 ? line.substr(0, 200) + "..." : line);
  }
  std::map<std::string, std::string> failed;
  for (const KernelBody& b : find_kernel_bodies(request.source)) {
    const auto line_of = [&](std::size_t offset) {
      return 1 + int(std::count(request.source.begin(),
                                request.source.begin() + std::min(offset, request.source.size()),
                                '\n'));
    };
    const int first = line_of(b.open), last = line_of(b.close);
    for (std::size_t i = 0; i < kernels.size(); ++i)
      if (cpu::kernel_name(request.name_expressions[i]) == b.name &&
          kernels[i].mode == kiln_cpu::mode_regions)
        for (const auto& [n, message] : errors)
          if (n >= first && n <= last) failed.try_emplace(b.name, message);
  }
  return failed;
}

CompileResult CpuCompiler::compile(const CompileRequest& request) {
  const std::vector<std::string> user = cpu::translate_options(request.options);
  Plan plan = make_plan(request, user);
  if (!plan.spliced) return compile_plan(plan);
  try {
    return compile_plan(plan);
  } catch (const CompileError&) {
    // Spliced headers that do not compile so (or the user's error): the headers included as
    // written decide, whose compile and errors are as before the splice.
  }
  Plan unspliced = make_plan(request, user, {}, /*splice=*/false);
  return compile_plan(unspliced);
}

CompileResult CpuCompiler::compile_plan(Plan& plan) {
  std::future<void> building;  // the first compile with new flags precompiles the prelude beside
  plan.pch_dir = prelude_folder(plan, &building);
  try {
    return compile_checked(plan, true);
  } catch (const CompileError& e) {
    // (GCC: "declared 'extern' and later 'static'"; clang: "static declaration of 'k' follows
    // non-static declaration")
    const bool clash = e.log().find("and later") != std::string::npos ||
                       e.log().find("static declaration of") != std::string::npos;
    if (!plan.internal() || !clash) return compile_as_written(plan, e);
  }
  // A header kiln does not scan also declares a function made static: the same unit again,
  // its functions external.
  plan.source = std::exchange(plan.external_source, std::string());
  try {
    return compile_once(plan);
  } catch (const CompileError& e) {
    return compile_as_written(plan, e);
  }
}

// The source as every mode compiles it: inline PTX as C++ (the statements it can translate),
// spin-waits on shared memory yielding to the block's other threads (a GPU runs the thread
// that sets the flag meanwhile).
std::string cpu_source(const CompileRequest& request, const std::string& source) {
  const std::string file = request.file();
  return cpu::yield_in_spin_waits(cpu::translate_inline_ptx(source, file).source);
}
std::string cpu_source(const CompileRequest& request) {
  return cpu_source(request, request.source);
}

// Whether text #defines a macro whose body synchronises (`#define SYNC() __syncthreads()`):
// spliced, its definition would sit in the source inside a header's guard, where the plan
// neither expands it nor sees its uses as barriers.
bool defines_sync_macro(std::string_view text) {
  const std::vector<jit::Token> t = jit::lex(text);
  for (std::size_t i = 0; i + 1 < t.size(); ++i)
    if (t[i].directive && jit::is_ident(t[i], "define") && (i == 0 || t[i - 1].line != t[i].line)) {
      const std::size_t end = std::min(text.find('\n', t[i + 1].end), text.size());
      if (jit::scan_sync(text.substr(t[i + 1].end, end - t[i + 1].end)).any()) return true;
    }
  return false;
}

// The folders the user's options (translated: "-Idir", never "-I" "dir") name with -I, in order.
std::vector<std::string> user_include_dirs(const std::vector<std::string>& user) {
  std::vector<std::string> dirs;
  for (const std::string& o : user)
    if (o.starts_with("-I") && o.size() > 2) dirs.push_back(o.substr(2));
  return dirs;
}

// The request's source with its quoted headers spliced in (jit::splice_includes), where one of
// them synchronises (a block reduction's helper in "reduce.cuh"): the plan, the inlining and
// the region rewrite read only the source, and a kernel calling a function they cannot see
// runs as fibers. Else the source as it is: also where a header defines a synchronising
// macro. (Headers found as the host compiler finds them: the file's folder, then the user's
// -I folders.)
std::string spliced_source(const CompileRequest& request, const std::vector<std::string>& user) {
  const fs::path folder =
      request.filename.empty() ? fs::path() : fs::path(request.filename).parent_path();
  const std::vector<std::string> named = user_include_dirs(user);
  const std::vector<fs::path> dirs(named.begin(), named.end());
  std::vector<jit::IncludedFile> headers;
  const std::optional<std::string> spliced =
      jit::splice_includes(request.source, request.file(), folder, dirs, &headers);
  const auto synchronises = [](const jit::IncludedFile& f) { return jit::scan_sync(f.text).any(); };
  const auto defines_macro = [](const jit::IncludedFile& f) { return defines_sync_macro(f.text); };
  if (!spliced || std::none_of(headers.begin(), headers.end(), synchronises) ||
      std::any_of(headers.begin(), headers.end(), defines_macro))
    return request.source;
  return *spliced;
}

// After plan's compile failed with e: e again when the error is the user's; otherwise the
// source as written, its barrier kernels as fibers.
CompileResult CpuCompiler::compile_as_written(Plan& plan, const CompileError& e) {
  if (!plan.rewritten() || plan.spliced) throw e;  // (spliced: compile tries without the splice)
  // The source as written is the user's: if it compiles as CUDA (NVRTC, beside), the rewrite
  // failed; if not, the error is the user's; unknown, the log decides.
  const CompileRequest& request = plan.request;
  const std::optional<bool> valid =
      request.compiles_as_cuda ? request.compiles_as_cuda() : std::nullopt;
  // (a lockstep pointer's error is reported at the user's line: the source as written decides)
  if (valid == false || (!valid && users_own_error(e.log()) && !plan.lockstep)) throw e;
  // A region rewrite that did not compile: those kernels as fibers, the others as planned
  // (one kernel's macro-declared index sent all of a module's kernels to fibers).
  if (const auto failed = regions_failed(request, plan.kernels, e.log()); !failed.empty()) {
    Plan again = make_plan(request, plan.user, failed);
    again.pch_dir = plan.pch_dir;
    try {
      return compile_once(again);
    } catch (const CompileError&) {
    }
  }
  // kiln's rewrite, not the user's code, may be what failed: the source as written, its
  // barrier kernels as fibers, builds whatever the user's code builds, and its error (if it
  // fails too) is the user's.
  // (the reason first: the plan's, which it follows, says how the kernel would have run)
  const std::string what =
      "the " + plan.rewrite_name() + " rewrite did not compile: " + first_error(e.log());
  const std::string yielded = cpu_source(request);
  plan.source = cpu::gpu_shifts(cpu::gpu_integer_casts(cpu::rewrite_lockstep_pointers(yielded)));
  plan.inlined = plan.lowered = plan.widened = plan.chosen_loads = false;
  plan.external_source.clear();
  for (cpu::ThreadPlan& k : plan.kernels)
    if (k.strided) {  // (a thread loop, as it was before the rewrite)
      k.mode = kiln_cpu::mode_loop;
      k.why = what + " (planned: " + k.why + ")";
    } else if (k.mode == kiln_cpu::mode_regions || k.mode == kiln_cpu::mode_coroutines) {
      k.mode = kiln_cpu::mode_fibers;
      k.why = what + " (planned: " + k.why + ")";
    }
  plan.pch_dir = prelude_folder(plan, nullptr);
  if (plan.source == yielded) return compile_checked(plan);
  // Then without the lockstep pointers (a use kiln_cpu::lockstep_ptr lacks), whose
  // warp-synchronous code then runs thread by thread, as the reason says; last, without the
  // GPU's integer casts too (a cast the rewrite misread). Spin-waits keep their yields.
  const std::string without_lockstep = cpu::gpu_shifts(cpu::gpu_integer_casts(yielded));
  try {
    return compile_checked(plan);
  } catch (const CompileError& again) {
    if (plan.source != without_lockstep) {
      for (cpu::ThreadPlan& k : plan.kernels)
        if (k.why.find("warp-synchronous code") != std::string::npos)
          k.why = "the lockstep-pointer rewrite did not compile: " + first_error(again.log()) +
                  "; its warp-synchronous code runs thread by thread, which may not give a "
                  "GPU's results (planned: " +
                  k.why + ")";
      plan.source = without_lockstep;
      try {
        return compile_checked(plan);
      } catch (const CompileError&) {
        if (without_lockstep == yielded) throw;
      }
    }
    for (cpu::ThreadPlan& k : plan.kernels)
      k.why =
          "the integer-cast rewrite did not compile: explicit casts of floats convert as the "
          "host does, not as a GPU (" +
          k.why + ")";
    plan.source = yielded;
    return compile_checked(plan);
  }
}

// plan compiled; in check mode, where its checked __shared__ arrays or pointers do not compile,
// compiled again without the arrays, then without either, every kernel's reason saying which
// accesses go unchecked.
CompileResult CpuCompiler::compile_checked(Plan& plan, bool named) {
  try {
    return compile_once(plan);
  } catch (const CompileError& e) {
    const bool arrays = e.log().find("kiln_cpu::shared_array") != std::string::npos;
    if (!plan.checked_pointers ||
        (named && !arrays && e.log().find("kiln_cpu::checked_ptr") == std::string::npos))
      throw;
    // First without the checked __shared__ arrays, a class where a template deduces from an
    // array (cub's BlockHistogram takes `CounterT histogram[BINS]`).
    if (plan.checked_shared && (arrays || !named)) {
      plan.checked_shared = false;
      const std::vector<cpu::ThreadPlan> planned = plan.kernels;
      for (cpu::ThreadPlan& k : plan.kernels)
        k.why +=
            " (check mode: __shared__ arrays unchecked in this build, as checked arrays it "
            "did not compile: " +
            first_error(e.log()) + ")";
      try {
        return compile_once(plan);
      } catch (const CompileError&) {
        plan.kernels = planned;
      }
    }
    plan.checked_pointers = false;
    for (cpu::ThreadPlan& k : plan.kernels)
      k.why +=
          " (check mode: no bounds checks in this build, whose checked pointers did not "
          "compile: " +
          first_error(e.log()) + ")";
    return compile_once(plan);
  }
}

// The plan: each kernel's mode and reason, and the source as the compiler gets it. Kernels that
// can run as coroutines run as regions when the rewrite takes them (not in check mode, which
// must see every thread reach each barrier).
CpuCompiler::Plan CpuCompiler::make_plan(const CompileRequest& request,
                                         std::vector<std::string> user,
                                         const std::map<std::string, std::string>& failed,
                                         bool splice) const {
  // Device functions with barriers or warp operations, inlined into the kernels that call them,
  // let those kernels run as regions (and those beside them, which then cannot call them, as
  // loops).
  // Block-level cooperative groups lowered (block_groups.h), and libcu++'s block barriers
  // (block_barriers.h), can run as regions; index
  // arithmetic read as int (signed_indices.h) and subscripts computed in 64 bits
  // (wide_subscripts.h) let the compiler vectorise thread loops; conditional directives in
  // kernel bodies resolved where their macros are known (conditionals.h) let the rewrite read
  // them.
  // A template instance's non-type arguments written into its body (template_args.h) let the
  // lowering read a tile width given as a template parameter.
  // Legacy warp-synchronous stores split around __syncwarp() (lockstep_stores.h) let those
  // kernels run as regions rather than as lockstep pointers' fibers.
  // Barrier macros expanded (barrier_macros.h) let the plan see those barriers as the kernels'.
  // Block votes hoisted out of if and loop headers (header_votes.h) let the region rewrite take
  // BFS-style `while (__syncthreads_or(changed))` loops.
  // Inline PTX and spin-waits are read as cpu_source reads them, in every mode.
  // Quoted headers are spliced in where one synchronises (for the region rewrite: not in check
  // mode, which runs every barrier kernel as fibers, nor with regions off).
  const std::string spliced =
      splice && regions_ && !check_ ? spliced_source(request, user) : request.source;
  const std::string yielded = cpu_source(request, spliced);
  Plan plan = [&] {
    const std::string expanded = cpu::expand_barrier_macros(yielded);
    if (!regions_ || check_) {
      Plan p = plan_source(request, expanded, std::move(user));
      p.lowered = expanded != yielded;
      return p;
    }
    const std::string lowered =
        cpu::lower_block_barriers(cpu::lower_block_groups(cpu::resolve_kernel_conditionals(
            cpu::bind_template_arguments(cpu::hoist_header_votes(expanded),
                                         request.name_expressions),
            cpu::known_macros(user, cuda_arch_value(request.arch)))));
    auto planned = [&](const std::string& lowered_source, std::vector<std::string> options) {
      const std::string source = cpu::signed_index_arithmetic(lowered_source);
      const std::string inlined = cpu::inline_sync_functions(source);
      Plan p = plan_source(request, inlined, std::move(options), failed);
      p.inlined = inlined != source;
      p.lowered = source != yielded;
      // (after the region rewrite, which would take the helper's calls for the user's)
      std::string wide = cpu::wide_subscripts(p.source);
      p.widened = wide != p.source;
      p.source = std::move(wide);
      return p;
    };
    // Split stores must all run as regions: a thread-by-thread mode would let the lanes that
    // skip a store read before it. Where one does not, the source goes as lowered.
    const std::string split = cpu::split_lockstep_stores(lowered);
    if (split == lowered) return planned(lowered, std::move(user));
    Plan p = planned(split, user);
    return cpu::keeps_split_stores(p.source) ? planned(lowered, std::move(user)) : p;
  }();
  plan.spliced = spliced != request.source;
  // (the plan's reasons name the lines of the spliced text: the lines as written instead)
  if (plan.spliced)
    for (cpu::ThreadPlan& k : plan.kernels)
      k.why = jit::written_places(std::move(k.why), spliced, request.file());
  // (in every mode: a GPU's conversions are the kernel's meaning, not an optimisation)
  plan.source = cpu::gpu_shifts(cpu::gpu_integer_casts(plan.source));
  if (std::string internal = cpu::internal_kernels(plan.source); internal != plan.source)
    plan.external_source = std::exchange(plan.source, std::move(internal));
  return plan;
}

// Whether source needs C++20, which the host compiler is not given by default (its headers
// cost every module ~15% more compile time) though NVRTC compiles C++20: a C++20 keyword
// (`concept`, `requires`, `consteval`, `constinit`, `char8_t`), `<=>`, or an #include of a
// header only C++20 has, or its libcu++ twin (<bit>, <cuda/std/span>).
bool needs_cpp20(std::string_view source) {
  static const std::set<std::string, std::less<>> words{"concept", "requires", "consteval",
                                                        "constinit", "char8_t"};
  static const std::regex include(
      R"(\s*#\s*include\s*<(cuda/std/)?(bit|span|numbers|concepts|ranges|compare|source_location)>.*)");
  const std::vector<jit::Token> t = jit::lex(source);
  for (std::size_t k = 0; k < t.size(); ++k) {
    if (t[k].directive) continue;
    if (t[k].kind == jit::Token::ident && words.count(t[k].text)) return true;
    if (k + 2 < t.size() && jit::is_punct(t[k], "<") && jit::is_punct(t[k + 1], "=") &&
        jit::is_punct(t[k + 2], ">") && t[k].end == t[k + 1].begin &&
        t[k + 1].end == t[k + 2].begin)
      return true;
  }
  std::istringstream lines{std::string(source)};
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();  // (CRLF line ends)
    if (line.find("include") != std::string::npos && std::regex_match(line, include)) return true;
  }
  return false;
}

// The plan of source (the request's, or it with synchronising device functions inlined).
CpuCompiler::Plan CpuCompiler::plan_source(const CompileRequest& request, const std::string& source,
                                           std::vector<std::string> user,
                                           const std::map<std::string, std::string>& failed) const {
  std::vector<std::string> include_dirs = user_include_dirs(user);
  include_dirs.insert(include_dirs.begin(), kernels_dir_);
  if (std::none_of(user.begin(), user.end(),
                   [](const auto& o) { return o.starts_with("-std="); }) &&
      needs_cpp20(source))
    user.push_back("-std=c++20");
  // (legacy warp-synchronous pointers, which send their kernels to fibers, become lockstep
  // pointers before the region rewrite, whose thread loops drop the barriers they were read by)
  Plan plan{request,
            cpu::thread_plans(source, request.filename, include_dirs, request.name_expressions),
            cpu::rewrite_lockstep_pointers(source), check_, std::move(user)};
  plan.lockstep = plan.source != source;
  plan.pointer_casts = cpu::casts_pointers(source, request.filename, include_dirs);
  for (std::size_t i = 0; i < plan.kernels.size(); ++i)  // (left as written: fibers)
    if (auto f = failed.find(cpu::kernel_name(request.name_expressions[i])); f != failed.end())
      if (plan.kernels[i].mode == kiln_cpu::mode_coroutines) {
        plan.kernels[i].mode = kiln_cpu::mode_fibers;
        plan.kernels[i].why = "the regions rewrite did not compile: " + f->second +
                              " (planned: " + plan.kernels[i].why + ")";
      }
  const std::string off = !regions_ ? "KILN_REGIONS=0 turns regions off"
                          : check_  ? "check mode follows each thread to every barrier"
                                    : "";
  std::set<std::string> loops;  // (whose grid-stride loops the rewrite may run in lockstep)
  std::set<std::string> fibers;  // (bodies the rewrite must leave as written, beside others)
  for (std::size_t i = 0; i < plan.kernels.size() && off.empty(); ++i) {
    if (plan.kernels[i].mode == kiln_cpu::mode_loop &&
        !failed.count(cpu::kernel_name(request.name_expressions[i])))
      loops.insert(cpu::kernel_name(request.name_expressions[i]));
    if (plan.kernels[i].mode == kiln_cpu::mode_fibers)
      fibers.insert(cpu::kernel_name(request.name_expressions[i]));
  }
  if (!plan.has(kiln_cpu::mode_coroutines) && loops.empty()) return plan;
  cpu::RegionRewrite regions;
  if (off.empty()) regions = cpu::form_regions_by_kernel(plan.source, loops, fibers);
  bool rewritten = false;
  for (std::size_t i = 0; i < plan.kernels.size(); ++i) {
    cpu::ThreadPlan& k = plan.kernels[i];
    const std::string name = cpu::kernel_name(request.name_expressions[i]);
    if (k.mode == kiln_cpu::mode_loop && regions.lockstep.count(name)) {
      k.mode = kiln_cpu::mode_regions;
      k.strided = true;
      k.why =
          "no barrier or warp operation; its grid-stride loop runs in lockstep, each round "
          "by all the block's threads, as a GPU's warps run it";
      rewritten = true;
    }
    if (k.mode != kiln_cpu::mode_coroutines) continue;
    auto declined = regions.declined.find(name);
    if (off.empty() && declined == regions.declined.end()) {
      k.mode = kiln_cpu::mode_regions;
      k.why = k.why.starts_with("warp or group operation")  // its own warp operations
                  ? "its barriers and warp operations are statements: the code between them "
                    "loops over the block's threads, and each warp operation is one step for "
                    "all of them"
                  : "its barriers are __syncthreads(); statements: the code between them loops "
                    "over the block's threads";
      rewritten = true;
      continue;
    }
    const std::string why = off.empty() ? declined->second : off;
    if (k.no_coroutines.empty()) {
      k.why = "barriers the region rewrite declines: " + why;
    } else if (k.no_coroutines == k.why) {  // its own warp operations or lambda: no coroutines
      k.mode = kiln_cpu::mode_fibers;
      k.why += " (the region rewrite declines it: " + why + ")";
    } else {  // coroutines cannot share the unit with that body
      k.mode = kiln_cpu::mode_fibers;
      k.why = "the region rewrite declines it (" + why + "), and beside it is " + k.no_coroutines;
    }
  }
  if (rewritten) {
    plan.source = std::move(regions.source);
    plan.chosen_loads = regions.chosen_loads;
  }
  return plan;
}

CompileResult CpuCompiler::compile_once(const Plan& plan) {
  const CompileRequest& request = plan.request;
  TempDir dir;
  const std::string tu_path = dir.path() + "/kernel.cpp", so_path = dir.path() + "/kernel.so";
  write_file(tu_path, translation_unit(plan));
  std::vector<std::string> argv{compiler_};
  for (const auto& f : code_flags()) argv.push_back(f);
  for (const auto& f : mode_flags(plan)) argv.push_back(f);
  // Coroutines need C++20, whose headers cost every other module ~15% more compile time. (The
  // source decides the mode, and the source is in the cache key.)
  if (plan.has(kiln_cpu::mode_coroutines)) argv.push_back("-std=c++20");
  if (!plan.pch_dir.empty()) argv.push_back("-I" + plan.pch_dir);
  argv.insert(argv.end(), {"-isystem", kernels_dir_ + "/kiln/cpu_include", "-I" + kernels_dir_});
  if (!request.filename.empty()) {  // (quoted: before kiln's, as the file's own folder is)
    fs::path parent = fs::path(request.filename).parent_path();
    if (!parent.empty() && fs::is_directory(parent))
      argv.insert(argv.end(), {"-iquote", parent.string(), "-I" + parent.string()});
  }
  argv.insert(argv.end(), plan.user.begin(), plan.user.end());
  argv.insert(argv.end(), {"-o", so_path, tu_path});
  std::string names;
  for (const auto& n : request.name_expressions) names += (names.empty() ? "" : ", ") + n;
  ProcessResult r;
  try {
    // A source that includes /dev/zero, or templates without end, must not take the machine:
    // 8 GiB of address space, 10 minutes of processor time, 1 MiB of messages.
    r = run_process(argv, dir.path(), {8ull << 30, 600, 1u << 20});
  } catch (const Interrupted&) {  // Ctrl-C: run_process killed the compiler
    throw Interrupted("cpu backend: compile of " +
                      (request.filename.empty() ? std::string("kernel source") : request.filename) +
                      " (kernels: " + names +
                      ") interrupted by Ctrl-C; it compiles again at the next launch");
  }
  std::string log = r.output;
  replace_all(log, tu_path, "<kiln translation unit>");
  replace_all(log, dir.path() + "/", "");

  if (r.exit_code != 0) {
    const std::string file = request.file();
    // An error the compiler places in kiln's generated code after the user's source comes from
    // that source (a brace never closed): name the user's line instead.
    if (log.find("<kiln entry points>") != std::string::npos ||
        log.find("<kernel ") != std::string::npos)
      if (std::optional<int> line = unclosed_brace_line(request.source))
        throw CompileError(file + ":" + std::to_string(*line) +
                               ": error: this '{' is never closed (the source ends inside it)",
                           log);
    // Inline assembly left for the host compiler (not PTX, or PTX the translation did not
    // recognise as such) that fails in its assembler: say which and why. (Or GCC's own
    // complaint about its operands: "impossible constraint in 'asm'", "output constraint".)
    if (log.find("Assembler messages") != std::string::npos ||
        log.find("'asm'") != std::string::npos || log.find("‘asm’") != std::string::npos ||
        log.find("constraint") != std::string::npos)
      for (const cpu::UntranslatedPtx& left : cpu::translate_inline_ptx(request.source).left)
        if (!left.trapped)
          throw CompileError(
              file + ":" + std::to_string(left.line) +
                  ": error: inline assembly the cpu backend cannot run: " + left.why +
                  " (kernels: " + names + "; `#ifdef KILN_CPU` can give it a C++ equivalent)",
              log);
    throw CompileError("cpu backend: cannot compile " +
                           (request.filename.empty() ? std::string("kernel source") : file) +
                           " (kernels: " + names + ") with " + compiler_,
                       log);
  }

  CompileResult result;
  result.image_kind = "so";
  result.image = read_file(so_path);
  result.log = log;
  auto so = cpu::open_object(so_path);
  for (std::size_t i = 0; i < request.name_expressions.size(); ++i) {
    std::string id = std::to_string(i);
    auto type = cpu::required_symbol<const char* (*)()>(*so, "kiln_entry_" + id + "_type");
    result.lowered_names.push_back("kiln_entry_" + id);
    result.signatures.push_back(demangle_type(type()));
  }
  return result;
}

}  // namespace

std::string find_curand_include(const std::vector<std::string>& toolkits) {
  std::vector<fs::path> candidates;
  for (const std::string& home : toolkits) candidates.push_back(fs::path(home) / "include");
  candidates.push_back("/usr/local/cuda/include");
  std::error_code ec;
  for (const fs::path& c : candidates)
    if (fs::exists(c / "curand_kernel.h", ec)) return fs::canonical(c, ec).string();
  return "";
}

std::unique_ptr<Compiler> make_cpu_compiler(const CpuCompilerOptions& options) {
  return std::make_unique<CpuCompiler>(options);
}

}  // namespace kiln::jit

namespace kiln::cpu {

std::vector<std::string> translate_options(const std::vector<std::string>& options) {
  std::vector<std::string> out;
  auto starts = [](const std::string& s, const char* p) { return s.rfind(p, 0) == 0; };
  for (std::size_t i = 0; i < options.size(); ++i) {
    const std::string& o = options[i];
    if (o == "-D" || o == "-U" || o == "-I") {
      if (i + 1 == options.size()) throw Error("compiler option '" + o + "' needs a value");
      out.push_back(o + options[++i]);
    } else if (starts(o, "-D") || starts(o, "-U") || starts(o, "-I") || o == "-w" || o == "-g" ||
               std::regex_match(o, std::regex("-O[0-3s]|-g[0-3]|-std=c\\+\\+(14|17|20|23)")) ||
               (starts(o, "-W") && !starts(o, "-Wl,") && !starts(o, "-Wa,") &&
                !starts(o, "-Wp,"))) {
      out.push_back(o);
    } else if (starts(o, "--std=c++")) {
      out.push_back(o.substr(1));
    } else if (o == "--fmad=false" || o == "-fmad=false") {
      out.push_back("-ffp-contract=off");
    } else if (o == "-lineinfo" || o == "--generate-line-info" || o == "-G" ||
               o == "--device-debug" || o == "--use_fast_math" || o == "-use_fast_math" ||
               o == "-default-device" || o == "--fmad=true" || o == "-fmad=true" ||
               starts(o, "-arch") || starts(o, "--gpu-architecture") ||
               o == "--extra-device-vectorization" || starts(o, "-maxrregcount") ||
               starts(o, "--maxrregcount") || o == "-dopt=on" || starts(o, "--ftz=") ||
               starts(o, "--prec-div=") || starts(o, "--prec-sqrt=") || o == "--restrict" ||
               o == "-restrict" || o == "--device-as-default-execution-space" ||
               o == "--device-int128" || o == "-device-int128" ||
               std::regex_match(
                   o, std::regex("-(-)?(expt-)?extended-lambda|-(-)?expt-relaxed-constexpr"))) {
      // GPU code generation options: nothing to do on the host. (--ftz=true flushes
      // subnormal floats on a GPU; the host keeps them, as --prec-div/sqrt=false's
      // approximations are the host's exact results.)
    } else {
      throw Error("compiler option '" + o +
                  "' is not accepted by the cpu backend (accepted: -D -U -I -O -g -W -std= and the "
                  "NVRTC code-generation options, which it ignores)");
    }
  }
  return out;
}

}  // namespace kiln::cpu
