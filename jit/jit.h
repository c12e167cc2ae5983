// The dispatcher, as Numba's: program → compile → kernel → configure → launch.
//   Jit      — one per Lua state: the backend, the disk cache, the in-memory module cache
//   Kernel   — one __global__ function of a source; a specialisation per argument signature,
//              compiled on first launch and never again (in this process or, via the disk
//              cache, the next)
#pragma once
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "jit/cache.h"
#include "jit/compiler.h"
#include "jit/kernel_decl.h"
#include "jit/signature.h"
#include "jit/source.h"
#include "runtime/backend.h"

namespace kiln::jit {

class Nvrtc;

// The most threads a block of PTX entry `entry` may have: the product of its `.maxntid`
// (__launch_bounds__), 0 where it has none or the PTX has no such entry.
int ptx_max_threads(std::string_view ptx, std::string_view entry);

// What a user passes as opts to cuda.jit.
struct KernelOptions {
  std::string name;  // "blur", "reduce<float, 256>", or "" when the source has one kernel
  std::vector<std::pair<std::string, std::string>> defines;  // validated macro names
  std::vector<std::string> options;                          // validated compiler options
  std::string arch;                                          // "" → JitOptions::arch
  // One of a cuda.module's kernels: when every kernel of the source is plain (no template,
  // one definition per name), the first launch of any builds them all in one compile.
  bool module = false;
};

// The dispatcher's settings (repl/settings reads them from the environment).
struct JitOptions {
  std::string arch;                        // the default target ("" → the compiler's own)
  bool nvrtc_check = true;                 // on the cpu backend, also compile with NVRTC
  // ...for these GPU architectures ("sm_80", "sm_90"); empty: the kernel's own or sm_80.
  std::vector<std::string> check_archs;
  std::vector<std::string> cuda_toolkits;  // where to look for NVRTC first
  // Told "compiling <kernels> (<file>)" once a compile has taken compile_notice_ms, so that a
  // slow first launch says why it waits; empty: never told.
  std::function<void(const std::string&)> on_slow_compile;
  double compile_notice_ms = 500;
  // Told one line, once per kernel, when the kernel's threads run as fibers on the cpu backend
  // (several times slower than a thread loop), naming what made them; empty: never told.
  std::function<void(const std::string&)> on_note;
};

// Where a build came from, as k:info().cache says it.
enum class Origin { memory, disk, compiled };
const char* origin_name(Origin o);

// A compiled and loaded translation unit, shared by every kernel that needs the same build.
struct Build {
  CompileResult result;
  std::unique_ptr<Module> module;
  // Whether the module's globals (m:set_constant) were written into it. Only once when it is
  // loaded: a module's kernels share one build, and the values its kernels wrote since (a
  // counter they bump) must outlive the first launch of each of them.
  bool globals_applied = false;
};

// A build as one kernel got it: from where, and how long that took.
struct BuildRef {
  std::shared_ptr<Build> build;
  Origin origin = Origin::compiled;
  double ms = 0;
};

class Jit {
 public:
  Jit(std::shared_ptr<Backend> backend, std::shared_ptr<Compiler> compiler, DiskCache cache,
      std::filesystem::path kernels_dir, JitOptions options = {});
  ~Jit();

  Backend& backend() const { return *backend_; }
  const std::shared_ptr<Backend>& backend_ptr() const { return backend_; }
  Compiler& compiler() const { return *compiler_; }
  const JitOptions& options() const { return options_; }
  DiskCache& cache() { return cache_; }
  const std::filesystem::path& kernels_dir() const { return kernels_dir_; }
  // The target for opts.arch: itself, else options().arch, else the compiler's default.
  std::string target(const std::string& arch) const;

  // The build for a request: from memory, else from disk, else compiled (then stored in both).
  // extra_key holds what else decides the output (included headers' text).
  // private_to, when not null, keeps the build out of other sources' reach (its globals are
  // its own).
  BuildRef build(const CompileRequest& request, const std::vector<std::string>& extra_key,
                 const void* private_to);
  // NVRTC's output for a request (a cubin for an sm_ arch; PTX always), cached like any build;
  // any backend, needs NVRTC. arch "" or "native": sm_80. With report, the log holds ptxas's
  // resource report (-Xptxas=-v; k:resources reads spills from it).
  CompileResult gpu_build(const CompileRequest& request, const std::vector<std::string>& extra_key,
                          bool report = false);
  // Its PTX.
  std::string ptx(const CompileRequest& request, const std::vector<std::string>& extra_key) {
    return gpu_build(request, extra_key).ptx;
  }
  // On a backend other than cuda, also compiles the source with NVRTC (when it is there), so
  // that code that runs on the host is known to compile for a GPU and GPU-only mistakes are
  // reported as the cuda backend reports them. options().nvrtc_check turns it off.
  // Returns NVRTC's build (the first of options().check_archs'), empty when it has no work.
  CompileResult check_for_gpu(const CompileRequest& request,
                              const std::vector<std::string>& extra_key);
  // Whether check_for_gpu has work: a backend other than cuda, the check on, NVRTC there.
  bool checks_for_gpu();

  // The number of a launch about to be made: 1, 2, ... in order.
  std::uint64_t next_launch() { return ++launches_; }
  // NVRTC, loaded on first use; nullptr (why filled) without it. For k:ptx() on any backend.
  std::shared_ptr<Nvrtc> nvrtc(std::string* why);
  // kiln.cuh & co, for NVRTC and every cache key: read once, on first use (they are kiln's own
  // files, not the user's, so a session does not watch them).
  const std::map<std::string, std::string>& headers() const;

 private:
  // The backend's compile of request, with check_for_gpu running beside it on a thread of its
  // own (a cold compile then waits for the slower of the two, not their sum). NVRTC's error,
  // when there is one, is the one thrown.
  CompileResult compile_beside_check(const CompileRequest& request,
                                     const std::vector<std::string>& extra_key);

  std::shared_ptr<Backend> backend_;
  std::shared_ptr<Compiler> compiler_;
  DiskCache cache_;
  std::filesystem::path kernels_dir_;
  JitOptions options_;
  std::unordered_map<std::string, std::weak_ptr<Build>> builds_;
  std::shared_ptr<Nvrtc> nvrtc_;
  std::string nvrtc_why_;
  bool nvrtc_tried_ = false;
  bool swept_ = false;  // stale compile folders removed (before this Jit's first compile)
  std::uint64_t launches_ = 0;  // launches so far, which number each (Specialisation::launched)
  mutable std::optional<std::map<std::string, std::string>> headers_;
};

// The bytes of __constant__ / __device__ globals set from Lua (m:set_constant), applied to
// every build of a source, present and future.
using Globals = std::map<std::string, std::vector<char>>;

// One kernel of a source, specialised per argument signature.
class Kernel {
 public:
  struct Specialisation {
    std::string name_expression;  // "scale<float>"
    std::string lowered_name;
    std::vector<ParamType> params;
    std::vector<std::string> param_names;
    BuildRef build;
    std::unique_ptr<Program> program;
    std::size_t overload = 0;  // its declaration, in overloads_
    std::uint64_t launched = 0;  // its latest launch's number among the Jit's (0: none)
  };

  // source is shared by the kernels of one cuda.module; decls are the declarations of this
  // kernel's name: one, or its overloads (each call runs the one its arguments choose).
  Kernel(std::shared_ptr<Jit> jit, std::shared_ptr<SourceText> source,
         std::vector<KernelDecl> decls, KernelOptions options, std::shared_ptr<Globals> globals);

  const std::string& name() const { return decl().name; }
  // The declaration of the last call's overload (the first before any call).
  const KernelDecl& decl() const { return overloads_[current_]; }
  const SourceText& source() const { return *source_; }

  // args followed by the default arguments of the parameters after them (`int* partial =
  // NULL`, `int n = 4`: null pointers and literals) in the overload args choose; throws
  // kiln::Error naming a parameter whose default kiln cannot evaluate. Every call goes through it
  // (a file's edit is read first: the overloads may have changed).
  std::vector<ArgValue> with_defaults(std::vector<ArgValue> args);
  // The specialisation for these arguments, compiled on first use; hot-reloads file sources.
  Specialisation& specialise(const std::vector<ArgValue>& args);
  // Marshals args for spec and launches; throws kiln::Error naming the kernel on bad input.
  void launch(Specialisation& spec, const LaunchConfig& config, const std::vector<ArgValue>& args);
  // Checks a launch against the backend's device limits; throws kiln::Error when impossible.
  void validate(const LaunchConfig& config) const;

  Specialisation* last() const { return last_; }
  // The layout of a struct type the source declares, as a global of it in namespaces scope
  // has it (m:set_constant of a table), from a build of the source's probe alone; nullptr for
  // a type that is no such struct.
  std::shared_ptr<const StructLayout> global_layout(const std::string& type,
                                                    const std::string& scope);
  // PTX of the last (or given) specialisation, compiled with NVRTC on any backend.
  std::string ptx(const std::vector<ArgValue>* args);
  // NVRTC's build of the given (or last) specialisation for a GPU architecture ("sm_90"), on
  // any backend; lowered_names[0] names the kernel in it.
  CompileResult gpu_build(const std::string& arch, const std::vector<ArgValue>* args = nullptr);
  // Applies the module's globals to a build, or to every build this kernel has loaded (after
  // m:set_constant).
  void apply_globals(Build& build) const;
  void apply_globals_to_builds() const;
  const KernelOptions& options() const { return options_; }

 private:
  std::string name_expression(const std::vector<ArgValue>& args) const;
  // The name expression for args, else the last launch's, else the plain name (a template
  // without either is an error that ends with how to give it types).
  std::string current_expression(const std::vector<ArgValue>* args, const char* how) const;
  // Whether the kernel may synchronise its grid (names this_grid): it then launches cooperatively.
  bool names_grid() const;
  // Whether the kernel may spin on global memory another block sets, other than a look-back
  // at earlier blocks (jit::spin_waits): its blocks then run at once where the backend can
  // (LaunchConfig::resident).
  bool spins_on_global_memory() const;
  // The request that builds name_expressions (the kernel's own among them), with the layout
  // probes of all their struct parameters.
  CompileRequest request(std::vector<std::string> name_expressions, const std::string& arch) const;
  // The name expressions one build for name_expression holds: it alone, or for a module's plain
  // kernel every plain kernel of the source (one compile for all, the others from memory). A
  // module's kernel built alone says why in *apart.
  std::vector<std::string> build_names(const std::string& name_expression,
                                       std::string* apart = nullptr) const;
  // Globals appended to the source that record the layout of each struct parameter, as the
  // compiler chooses it; and the layout read back from a build ("" / nullptr: not a struct).
  std::string layout_probes(const std::vector<std::string>& name_expressions) const;
  // The structs (and enumerations) the probes cover: those the declared parameters name, by
  // value or pointer, with the name expression's template arguments in place of the template's
  // parameters.
  std::vector<std::string> probed_structs(const std::string& name_expression) const;
  std::shared_ptr<const StructLayout> struct_layout(Build& build, const std::string& type,
                                                    const std::string& name_expression) const;
  // The probes of types, each (name, the namespaces of the kernel or global naming it): globals
  // appended to a source, which the compiler fills with each layout; and the layout of struct
  // name as a build's probe keyed so gives it.
  std::string probes_of(const std::vector<std::pair<std::string, std::string>>& types) const;
  std::shared_ptr<const StructLayout> read_layout(Build& build, const std::string& name,
                                                  const std::string& scope) const;
  // Whether type_name ("Mode", "geo::Op") is an enumeration the source declares (and no
  // struct of that name); and the integer dtype its probe in build gives it, the probe's key
  // the kernel's namespaces and the name ("geo::Mode"), or those of a struct's field of its
  // type ("geo::Box.along"); nullopt: not one, or not probed.
  bool is_enum(const std::string& type_name) const;
  std::optional<DType> enum_dtype(Build& build, const std::string& type_name,
                                  const std::string& key) const;
  // A parameter of an enumeration type, or a pointer to one, of a kernel in namespaces scope,
  // as its underlying integer's ("const Mode*" as "const int*"); nullopt when type names no
  // enumeration build probed.
  std::optional<ParamType> enum_param(Build& build, const std::string& type,
                                      const std::string& scope) const;
  // Parameter i's declared type with the template's arguments in place ("S*" of "k<P>": "P*").
  std::string declared_type(std::size_t i, const std::string& name_expression) const;
  // Compiles the specialisation name_expression of the current overload.
  std::unique_ptr<Specialisation> compile(const std::string& name_expression);
  // Applies the module's globals to a build just made. A value m:set_constant gave before any
  // build could only be checked against the declaration: one the compiled global cannot hold is
  // dropped (the next launch runs without it) and named in the error, with the call it came from.
  void apply_globals_to_new_build(Build& build);
  // The overload a name expression of this kernel instantiates (nullopt: none now, after an
  // edit; a template's instance among overloads: unknown), and its declaration (else decl()).
  std::optional<std::size_t> overload_of(const std::string& name_expression) const;
  const KernelDecl& decl_of(const std::string& name_expression) const;
  void reload_if_edited();
  std::vector<std::string> textures_read() const;
  // Tells options().on_note, once, that this kernel runs as fibers and why.
  void note_fibers(const Program& program, const std::string& name_expression);
  // Tells options().on_note, once, that this module kernel, built on its own, has its own copy
  // of the source's __device__ variables.
  void note_own_globals(const std::string& name_expression, const std::string& why);

  std::shared_ptr<Jit> jit_;
  std::shared_ptr<SourceText> source_;
  std::vector<KernelDecl> overloads_;  // the declarations of its name (one, unless overloaded)
  std::vector<KernelDecl> choices_;    // overloads_ with typedefs read (`real*`: `float*`)
  std::size_t current_ = 0;            // decl(): the overload of the last call
  KernelOptions options_;
  std::shared_ptr<Globals> globals_;
  bool fibers_noted_ = false;
  bool globals_noted_ = false;
  std::unordered_map<std::string, std::unique_ptr<Specialisation>> by_name_expression_;
  std::unordered_map<std::string, Specialisation*> by_signature_;
  Specialisation* last_ = nullptr;
  std::uint64_t built_revision_ = 0;  // the source revision the specialisations come from
  bool names_grid_ = false;           // names_grid() of that revision
  bool spins_ = false;                // spins_on_global_memory() of that revision
  // The texture references its body reads (textures_read() of that revision): each must be
  // bound (m:bind_texture, a global in globals_) before a launch.
  std::vector<std::string> textures_;
  ArgPack pack_;                      // reused by every launch (launches are synchronous)
};

// The kernels of a source selected by opts.name, each overload of it (or all of them when name
// is empty and all is true). Throws kiln::Error: no __global__ function, unknown name, several
// names and no name given.
std::vector<KernelDecl> select_kernels(const SourceText& source, const std::string& name, bool all);

// Validates user defines and options (no injection of compiler arguments): macro names are
// identifiers; options come from an allow-list. Throws kiln::Error naming the bad one.
void validate_defines(const std::vector<std::pair<std::string, std::string>>& defines);
void validate_options(const std::vector<std::string>& options);

}  // namespace kiln::jit
