#include "jit/jit.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <future>
#include <mutex>
#include <regex>
#include <thread>

#include "jit/cuda/nvrtc.h"
#include "jit/headers.h"
#include "jit/textures.h"
#include "runtime/error.h"
#include "runtime/interrupt.h"
#include "runtime/process.h"

namespace kiln::jit {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// "a, b, c"
std::string join(const std::vector<std::string>& parts, const char* sep = ", ") {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : sep) + p;
  return out;
}

// Whether a source declares globals that m:set_constant may write: __constant__ variables or
// __device__ variables (a __device__ declaration that reaches ; = [ or { before any '(').
bool has_settable_globals(const std::string& text) {
  if (text.find("__constant__") != std::string::npos) return true;
  for (std::size_t at = text.find("__device__"); at != std::string::npos;
       at = text.find("__device__", at + 10)) {
    std::size_t end = text.find_first_of("(;=[{", at + 10);
    if (end != std::string::npos && text[end] != '(') return true;
  }
  return false;
}

// The key of what an argument is, for finding its specialisation: kind, dtype, ndim; and what
// else choose_overload reads (a table's lanes and fields, whether a number is integral).
void append_signature(std::string& key, const ArgValue& a) {
  key += static_cast<char>('a' + static_cast<int>(a.kind));
  if (a.kind == ArgValue::Kind::device_array || a.kind == ArgValue::Kind::host_array) {
    key += static_cast<char>('A' + static_cast<int>(a.dtype));
    key += static_cast<char>('0' + a.ndim);
  } else if (a.kind == ArgValue::Kind::table) {
    key += static_cast<char>('0' + std::min<std::size_t>(a.lanes.size(), 9));
    key += a.fields.empty() ? '-' : '+';
  } else if (a.kind == ArgValue::Kind::number) {
    key += std::floor(a.number) == a.number ? 'i' : 'f';
  }
}

}  // namespace

const char* origin_name(Origin o) {
  switch (o) {
    case Origin::memory:
      return "memory";
    case Origin::disk:
      return "disk";
    case Origin::compiled:
      return "compiled";
  }
  return "?";
}

// ---------------------------------------------------------------------------------------- Jit

Jit::Jit(std::shared_ptr<Backend> backend, std::shared_ptr<Compiler> compiler, DiskCache cache,
         std::filesystem::path kernels_dir, JitOptions options)
    : backend_(std::move(backend)),
      compiler_(std::move(compiler)),
      cache_(std::move(cache)),
      kernels_dir_(std::move(kernels_dir)),
      options_(std::move(options)) {
  compiler_->use_store(
      {[this](const std::string& key) { return cache_.load(key); },
       [this](const std::string& key, const CompileResult& value) { cache_.store(key, value); },
       [this] { return cache_.usable(); }});
}

Jit::~Jit() {
  compiler_->use_store({});  // the compiler may outlive this Jit and its cache
}

std::string Jit::target(const std::string& arch) const {
  if (!arch.empty()) return arch;
  if (!options_.arch.empty()) return options_.arch;
  return compiler_->default_arch();
}

const std::map<std::string, std::string>& Jit::headers() const {
  if (!headers_) headers_ = builtin_headers(kernels_dir_);
  return *headers_;
}

namespace {

// While alive, a thread that tells options.on_slow_compile about the request once
// compile_notice_ms have passed (and nothing if the compile ends first).
class SlowCompileNotice {
 public:
  SlowCompileNotice(const JitOptions& options, const CompileRequest& request) {
    if (!options.on_slow_compile || options.compile_notice_ms <= 0) return;
    const std::string file = request.file();
    std::string what;  // "k1, k2 (file)"; the file alone for a build of no kernel (a layout probe)
    for (const std::string& e : request.name_expressions) what += (what.empty() ? "" : ", ") + e;
    what = what.empty() ? file : what + " (" + file + ")";
    const auto delay = std::chrono::duration<double, std::milli>(options.compile_notice_ms);
    watcher_ = std::thread([this, delay, what, tell = options.on_slow_compile] {
      std::unique_lock lock(mutex_);
      if (!cv_.wait_for(lock, delay, [this] { return done_; })) tell("compiling " + what);
    });
  }
  ~SlowCompileNotice() {
    if (!watcher_.joinable()) return;
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    cv_.notify_all();
    watcher_.join();
  }
  SlowCompileNotice(const SlowCompileNotice&) = delete;
  SlowCompileNotice& operator=(const SlowCompileNotice&) = delete;

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread watcher_;
};

// Rethrows the compile error being handled, with a hint when the cause is a common slip: kiln::
// names used without #include <kiln.cuh>, or a texture reference kiln does not rewrite. Called
// from a catch block.
[[noreturn]] void rethrow_with_hints(const CompileError& e, const std::string& source) {
  std::string hint = texture_hint(e.log());
  if (hint.empty() && source.find("kiln::") != std::string::npos &&
      source.find("kiln.cuh") == std::string::npos)
    hint =
        "the source uses kiln:: but does not #include <kiln.cuh>, which declares kiln::Array, "
        "kiln::grid and kiln::gridsize";
  if (hint.empty()) throw;
  std::string message = e.what();  // the message, then "\n" and the log
  if (!e.log().empty() && message.size() > e.log().size())
    message.resize(message.size() - e.log().size() - 1);
  throw CompileError(message + " (hint: " + hint + ")", e.log());
}

}  // namespace

BuildRef Jit::build(const CompileRequest& request, const std::vector<std::string>& extra_key,
                    const void* private_to) {
  auto start = Clock::now();
  std::vector<std::string> parts = {KILN_VERSION,
                                    backend_->name(),
                                    compiler_->identity(request.arch),
                                    request.arch,
                                    request.filename,
                                    request.source,
                                    join(request.name_expressions, "\n"),
                                    join(request.options, "\n")};
  for (const auto& [name, text] : headers()) parts.push_back(name + "\n" + text);
  parts.insert(parts.end(), extra_key.begin(), extra_key.end());
  // (a build checked by NVRTC holds its __launch_bounds__, one not checked does not)
  parts.push_back(checks_for_gpu() ? "checked for a GPU" : "");
  std::string key = hash_key(parts);

  std::string memory_key = key;
  if (private_to)
    memory_key.append("@").append(std::to_string(reinterpret_cast<std::uintptr_t>(private_to)));
  if (auto it = builds_.find(memory_key); it != builds_.end())
    if (std::shared_ptr<Build> b = it->second.lock()) return {b, Origin::memory, ms_since(start)};

  auto b = std::make_shared<Build>();
  Origin origin = Origin::disk;
  if (std::optional<CompileResult> cached = cache_.load(key)) {
    b->result = std::move(*cached);
  } else {
    origin = Origin::compiled;
    if (!swept_) {  // what kiln processes killed mid-compile left in $TMPDIR, once per Jit
      swept_ = true;
      sweep_stale_temp_dirs();
    }
    SlowCompileNotice notice(options_, request);
    try {
      b->result = compile_beside_check(request, extra_key);
    } catch (const CompileError& e) {
      rethrow_with_hints(e, request.source);
    }
    cache_.store(key, b->result);
  }
  try {
    b->module = backend_->load(b->result, private_to != nullptr);
  } catch (const Error&) {
    if (origin != Origin::disk) throw;
    // An entry that decodes but does not load (another machine's cubin, say): rebuild it.
    origin = Origin::compiled;
    b->result = compile_beside_check(request, extra_key);
    cache_.store(key, b->result);
    b->module = backend_->load(b->result, private_to != nullptr);
  }
  builds_[memory_key] = b;
  return {b, origin, ms_since(start)};
}

std::shared_ptr<Nvrtc> Jit::nvrtc(std::string* why) {
  if (!nvrtc_tried_) {
    nvrtc_tried_ = true;
    nvrtc_ = Nvrtc::load(&nvrtc_why_, options_.cuda_toolkits);
  }
  if (!nvrtc_ && why) *why = nvrtc_why_;
  return nvrtc_;
}

bool Jit::checks_for_gpu() {
  return backend_->name() != "cuda" && options_.nvrtc_check && nvrtc(nullptr);
}

CompileResult Jit::compile_beside_check(const CompileRequest& request,
                                        const std::vector<std::string>& extra_key) {
  if (!checks_for_gpu()) return compiler_->compile(request);
  headers();  // read here, so that the two threads do not race to fill it
  // The check's thread touches NVRTC and the disk cache; this one only the host compiler.
  std::shared_future<CompileResult> check = std::async(std::launch::async, [&] {
                                              block_interrupts_in_this_thread();
                                              return check_for_gpu(request, extra_key);
                                            }).share();
  // The host compiler may ask NVRTC's verdict on the source (whose fault a failed rewrite is).
  CompileRequest host = request;
  host.compiles_as_cuda = [check]() -> std::optional<bool> {
    try {
      check.get();
      return true;
    } catch (const CompileError&) {
      return false;
    } catch (...) {
      return std::nullopt;
    }
  };
  CompileResult result;
  std::exception_ptr host_error;
  try {
    result = compiler_->compile(host);
  } catch (const Interrupted&) {
    check.wait();  // Ctrl-C: the interrupt is the answer, whatever NVRTC says
    throw;
  } catch (...) {
    host_error = std::current_exception();
  }
  const CompileResult gpu = check.get();  // NVRTC's error first: it says what a GPU would
  if (host_error) std::rethrow_exception(host_error);
  // A GPU refuses a block larger than the kernel's __launch_bounds__; so does this backend.
  result.max_threads.clear();
  for (const std::string& entry : gpu.lowered_names)
    result.max_threads.push_back(ptx_max_threads(gpu.ptx, entry));
  return result;
}

CompileResult Jit::check_for_gpu(const CompileRequest& request,
                                 const std::vector<std::string>& extra_key) {
  if (!checks_for_gpu()) return {};
  CompileRequest r = request;
  // The GPU target asked for (opts.arch = "sm_90"), else the default one: what the host backend
  // calls its target ("native") means nothing to NVRTC.
  if (r.arch.rfind("sm_", 0) != 0 && r.arch.rfind("compute_", 0) != 0) r.arch.clear();
  if (options_.check_archs.empty() || !r.arch.empty()) return gpu_build(r, extra_key);
  CompileResult first;
  for (const std::string& arch : options_.check_archs) {  // each one's cubin must assemble
    r.arch = arch;
    CompileResult built = gpu_build(r, extra_key);
    if (first.image_kind.empty()) first = std::move(built);
  }
  return first;
}

CompileResult Jit::gpu_build(const CompileRequest& request,
                             const std::vector<std::string>& extra_key, bool report) {
  std::string why;
  std::shared_ptr<Nvrtc> compiler = nvrtc(&why);
  if (!compiler) throw Error("a GPU build needs NVRTC, which is unavailable: " + why);
  CompileRequest r = request;
  r.arch = compiler->cap_arch(r.arch.empty() || r.arch == "native" ? "sm_80" : r.arch);
  // Host-compiler options NVRTC does not take (it optimises by default).
  std::erase_if(r.options, [](const std::string& o) {
    return (o.size() == 3 && o.starts_with("-O")) || o == "-g";
  });
  if (report && r.arch.starts_with("sm_")) {
    // ptxas's report of each kernel's resources. With it, ptxas leaves its error messages out
    // of the log: a build that fails is built again without, for the error a user can read.
    CompileRequest verbose = r;
    verbose.options.push_back("-Xptxas=-v");
    try {
      return gpu_build(verbose, extra_key, false);
    } catch (const CompileError&) {
      return gpu_build(r, extra_key, false);
    }
  }
  std::vector<std::string> parts = {KILN_VERSION,
                                    "gpu",
                                    compiler->version(),
                                    r.arch,
                                    r.filename,
                                    r.source,
                                    join(r.name_expressions, "\n"),
                                    join(r.options, "\n")};
  const std::map<std::string, std::string>& hdrs = headers();
  for (const auto& [name, text] : hdrs) parts.push_back(name + "\n" + text);
  parts.insert(parts.end(), extra_key.begin(), extra_key.end());
  std::string key = hash_key(parts);
  if (std::optional<CompileResult> cached = cache_.load(key)) return *cached;
  CompileResult result = compiler->compile(r, hdrs);
  cache_.store(key, result);
  return result;
}

int ptx_max_threads(std::string_view ptx, std::string_view entry) {
  // `.entry name(` ... `)` then the directives before its body: `.maxntid 128, 1, 1`.
  for (std::size_t at = ptx.find(".entry "); at != std::string_view::npos;
       at = ptx.find(".entry ", at + 1)) {
    std::size_t name = ptx.find_first_not_of(" \t", at + 7);
    if (name == std::string_view::npos || ptx.compare(name, entry.size(), entry) != 0) continue;
    const std::size_t after = name + entry.size();
    if (after >= ptx.size() || (ptx[after] != '(' && !std::isspace((unsigned char)ptx[after])))
      continue;
    const std::size_t body = ptx.find('{', after);
    const std::string_view head = ptx.substr(after, body - after);
    const std::size_t directive = head.find(".maxntid");
    if (directive == std::string_view::npos) return 0;
    std::uint64_t threads = 1;
    std::size_t p = directive + 8;
    for (int dim = 0; dim < 3; ++dim) {
      p = head.find_first_not_of(" \t,", p);
      if (p == std::string_view::npos || !std::isdigit((unsigned char)head[p])) break;
      std::uint64_t n = 0;
      for (; p < head.size() && std::isdigit((unsigned char)head[p]); ++p)
        n = std::min<std::uint64_t>(n * 10 + std::uint64_t(head[p] - '0'), 1 << 20);
      threads = std::min<std::uint64_t>(threads * n, 1 << 20);
    }
    return int(std::min<std::uint64_t>(threads, 1 << 20));
  }
  return 0;
}

// ------------------------------------------------------------------------------------- Kernel

namespace {

// decls with each parameter type's aliases read (`typedef float real;`: `real*` is `float*`),
// for choose_overload, which knows C++'s types only. (One declaration: as it is.)
std::vector<KernelDecl> read_aliases(std::vector<KernelDecl> decls, const std::string& source) {
  if (decls.size() < 2) return decls;
  for (KernelDecl& d : decls)
    for (ParamDecl& p : d.params)
      for (std::size_t at = 0; at < p.type.size();) {
        if (!std::isalpha(static_cast<unsigned char>(p.type[at])) && p.type[at] != '_') {
          ++at;
          continue;
        }
        std::size_t end = at;
        while (end < p.type.size() &&
               (std::isalnum(static_cast<unsigned char>(p.type[end])) || p.type[end] == '_'))
          ++end;
        const std::string word = p.type.substr(at, end - at);
        const std::optional<std::string> alias = find_type_alias(source, word);
        if (alias && *alias != word) {
          p.type.replace(at, end - at, *alias);
          end = at + alias->size();
        }
        at = end;
      }
  return decls;
}

}  // namespace

Kernel::Kernel(std::shared_ptr<Jit> jit, std::shared_ptr<SourceText> source,
               std::vector<KernelDecl> decls, KernelOptions options,
               std::shared_ptr<Globals> globals)
    : jit_(std::move(jit)),
      source_(std::move(source)),
      overloads_(std::move(decls)),
      choices_(read_aliases(overloads_, source_->text())),
      options_(std::move(options)),
      globals_(std::move(globals)),
      built_revision_(source_->revision()),
      names_grid_(names_grid()),
      spins_(spins_on_global_memory()),
      textures_(textures_read()) {}

std::string Kernel::name_expression(const std::vector<ArgValue>& args) const {
  if (options_.name.find('<') != std::string::npos)  // (qualified by its namespaces)
    return options_.name.substr(0, options_.name.find('<')).find("::") == std::string::npos
               ? decl().scope + options_.name
               : options_.name;
  std::string why;
  std::optional<std::string> expr =
      deduce_name_expression(overloads_[choose_overload(choices_, args)], args, &why);
  if (!expr) throw Error("kernel '" + name() + "': " + why);
  return *expr;
}

namespace {

// The struct a parameter type names ("Params", "const Params", "struct Params", a template's
// "TensorInfo<float, long long>"), or "".
std::string struct_name_of(const std::string& type) {
  std::string name, rest = type;
  if (const std::size_t open = type.find('<'); open != std::string::npos) {
    // A template-id: its arguments kept whole (they may hold spaces), the rest read as words.
    if (type.rfind('>') == std::string::npos || type.rfind('>') < open) return "";
    rest = type.substr(0, open) + "@" + type.substr(type.rfind('>') + 1);
  }
  std::size_t at = 0;
  while (at < rest.size()) {
    std::size_t end = rest.find(' ', at);
    if (end == std::string::npos) end = rest.size();
    std::string word = rest.substr(at, end - at);
    at = end + 1;
    if (word.empty() || word == "const" || word == "volatile" || word == "struct" ||
        word == "class" || word == "enum" || word == "__grid_constant__")
      continue;
    if (!name.empty()) return "";  // two names: not one struct
    name = word;
  }
  const std::size_t template_at = name.find('@');
  for (std::size_t i = 0; i < name.size(); ++i)  // (`geo::Box`: a namespace's struct)
    if (i != template_at &&
        !(std::isalnum(static_cast<unsigned char>(name[i])) || name[i] == '_' || name[i] == ':'))
      return "";
  if (template_at == std::string::npos) return name;
  if (template_at != name.size() - 1 || template_at == 0) return "";
  const std::size_t open = type.find('<');
  return name.substr(0, template_at) + type.substr(open, type.rfind('>') - open + 1);
}

// A struct type's name as its declaration spells it, without its template's arguments or its
// namespaces: "TensorInfo" of "TensorInfo<float, long long>", "Box" of "geo::Box".
std::string template_name_of(const std::string& struct_type) {
  const std::string name = struct_type.substr(0, struct_type.find('<'));
  const std::size_t scope = name.rfind("::");
  return scope == std::string::npos ? name : name.substr(scope + 2);
}

// The struct a pointer parameter type points to ("Node*", "const Node *", "Node* __restrict__"),
// or "": one '*', only qualifiers after it.
std::string pointee_struct_of(const std::string& type) {
  const std::size_t star = type.find('*');
  if (star == std::string::npos || type.find('*', star + 1) != std::string::npos) return "";
  std::string after = type.substr(star + 1);
  for (const char* q : {"const", "volatile", "__restrict__", "__restrict", "restrict"})
    for (std::size_t at; (at = after.find(q)) != std::string::npos;)
      after.erase(at, std::strlen(q));
  if (after.find_first_not_of(" \t") != std::string::npos) return "";
  std::string before = type.substr(0, star);
  while (!before.empty() && before.back() == ' ') before.pop_back();
  return struct_name_of(before);
}

// The layout of a by-value `cuda::std::array<T, N>` / `std::array<T, N>` of a dtype T, however
// the compiler spells it ("std::array<float, 4ul>", "cuda::std::__4::array<float, 4ul>"): N
// elements from offset 0 (the standard's one-member aggregate), one unnamed field that a Lua
// table of N values sets; nullptr for any other type.
std::shared_ptr<const StructLayout> std_array_layout(const std::string& type) {
  static const std::regex array_type(
      R"(^\s*(?:const\s+)?(?:::)?(?:cuda::)?std::(?:__\w+::)?array\s*<\s*([\w: ]+?)\s*,\s*(\d+)[uUlL]*\s*>\s*(?:const)?\s*$)");
  std::smatch m;
  if (!std::regex_match(type, m, array_type)) return nullptr;
  const std::optional<DType> element = dtype_of_cpp(m[1].str());
  const std::size_t count = std::stoul(m[2].str());
  if (!element || count == 0) return nullptr;
  auto layout = std::make_shared<StructLayout>();
  layout->name = "cuda::std::array<" + m[1].str() + ", " + m[2].str() + ">";
  layout->size = count * dtype_info(*element).size;
  layout->align = dtype_info(*element).align;
  StructLayout::Field f;
  f.type = m[1].str() + "[" + m[2].str() + "]";
  f.dtype = *element;
  f.count = count;
  f.settable = true;
  layout->fields.push_back(std::move(f));
  return layout;
}

// The global a struct's layout probe fills: its size, alignment, and each member's offset and
// size, as the compiler laid them out.
std::string layout_symbol(const std::string& struct_name) {
  std::string symbol = "kiln_layout_" + struct_name;  // (a template's: `<`, `,`, ` ` as `_`)
  for (char& c : symbol)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) c = '_';
  return symbol;
}

// The global an enumeration's probe fills: its size, alignment, and whether its underlying
// type is signed.
std::string enum_probe(const std::string& symbol, const std::string& type) {
  const std::string u = "__underlying_type(" + type + ")";
  return "__device__ unsigned long long " + symbol + "[] = {sizeof(" + type + "), alignof(" + type +
         "), (" + u + ")-1 < (" + u + ")0};\n";
}

// The first declaration find(text, name) finds in the kernel's source, then in its local
// headers (find_struct, find_type_alias).
template <class Find>
auto find_in(const SourceText& source, const std::string& name, Find find)
    -> decltype(find(std::string_view(), name)) {
  if (auto found = find(source.text(), name)) return found;
  for (const std::string& text : source.included_texts())
    if (auto found = find(text, name)) return found;
  return std::nullopt;
}

// Whether name is a generator state of cuRAND's device API (curandState, curandStateXORWOW,
// curandStatePhilox4_32_10_t, ...): a struct of the toolkit's headers, which kernels keep in a
// device array between launches. kiln probes its size and alignment; Lua sets no fields of it.
bool is_curand_state(const std::string& name) {
  return name.starts_with("curandState");
}

// The struct called name that the kernel's source (or its local headers) declares; a cuRAND
// state has no members kiln reads.
std::optional<StructDecl> probed_decl(const SourceText& source, const std::string& name) {
  if (auto d = find_in(source, name, find_struct)) return d;
  if (is_curand_state(name)) return StructDecl{};
  return std::nullopt;
}

// The template arguments of a name expression, as written: "k<P, 4>" -> {"P", "4"}.
std::vector<std::string> template_arguments(const std::string& name_expression) {
  std::vector<std::string> args;
  std::size_t name = 0;  // (after a cast, `(void(*)(float*, int))t<float>`)
  for (int depth = 0; name < name_expression.size() && name_expression[0] == '('; ++name) {
    if (name_expression[name] == '(') ++depth;
    if (name_expression[name] == ')' && --depth == 0) break;
  }
  const std::size_t open = name_expression.find('<', name_expression[0] == '(' ? name : 0);
  if (open == std::string::npos) return args;
  std::string arg;
  int depth = 0;
  for (std::size_t i = open + 1; i < name_expression.size(); ++i) {
    const char c = name_expression[i];
    if (c == '<' || c == '(') ++depth;
    if ((c == '>' || c == ')') && depth-- == 0) break;
    if (c == ',' && depth == 0) {
      args.push_back(arg);
      arg.clear();
    } else {
      arg += c;
    }
  }
  args.push_back(arg);
  for (std::string& a : args) {
    a.erase(0, a.find_first_not_of(' '));
    a.erase(a.find_last_not_of(' ') + 1);
  }
  return args;
}

}  // namespace

std::string Kernel::declared_type(std::size_t i, const std::string& name_expression) const {
  const KernelDecl& decl = decl_of(name_expression);
  std::vector<std::string> params;
  for (const auto& p : decl.template_params) params.push_back(p.name);
  return substitute_words(decl.params.at(i).type, params, template_arguments(name_expression));
}

std::vector<std::string> Kernel::probed_structs(const std::string& name_expression) const {
  std::vector<std::string> names;
  const KernelDecl& decl = decl_of(name_expression);
  for (std::size_t i = 0; i < decl.params.size(); ++i) {
    const std::string type = declared_type(i, name_expression);
    std::string name = struct_name_of(type);
    if (name.empty()) name = pointee_struct_of(type);
    if (name.empty() || std::find(names.begin(), names.end(), name) != names.end()) continue;
    if (probed_decl(*source_, template_name_of(name)) || is_enum(name)) names.push_back(name);
  }
  return names;
}

std::optional<DType> Kernel::enum_dtype(Build& build, const std::string& type_name,
                                        const std::string& key) const {
  if (type_name.empty() || !is_enum(type_name)) return std::nullopt;
  unsigned long long words[3];  // sizeof, alignof, signed: enum_probe
  try {
    build.module->get_global(layout_symbol(key), words, sizeof words);
  } catch (const Error&) {
    return std::nullopt;  // (not probed: an enumeration only a template's field names)
  }
  const bool is_signed = words[2] != 0;
  switch (words[0]) {
    case 1:
      return is_signed ? DType::int8 : DType::uint8;
    case 2:
      return is_signed ? DType::int16 : DType::uint16;
    case 4:
      return is_signed ? DType::int32 : DType::uint32;
    case 8:
      return is_signed ? DType::int64 : DType::uint64;
    default:
      return std::nullopt;
  }
}

std::optional<ParamType> Kernel::enum_param(Build& build, const std::string& type,
                                            const std::string& scope) const {
  std::string name = struct_name_of(type);
  if (name.empty()) name = pointee_struct_of(type);
  const std::optional<DType> integer = enum_dtype(build, name, scope + name);
  if (!integer) return std::nullopt;
  std::string as_integer = type;
  if (as_integer.starts_with("enum ")) as_integer.erase(0, 5);
  ParamType p =
      classify_param(substitute_words(as_integer, {name}, {std::string(dtype_info(*integer).cpp)}));
  if (p.kind == ParamKind::unsupported) return std::nullopt;
  p.spelling = type;  // (messages name the enumeration: "parameter 2 'm' (Mode)")
  return p;
}

bool Kernel::is_enum(const std::string& type_name) const {
  const std::string name = template_name_of(type_name);
  if (type_name.find('<') != std::string::npos || name.empty()) return false;
  if (probed_decl(*source_, name)) return false;  // (a struct of that name: the struct)
  if (declares_enum(source_->text(), name)) return true;
  for (const std::string& text : source_->included_texts())
    if (declares_enum(text, name)) return true;
  return false;
}

std::string Kernel::layout_probes(const std::vector<std::string>& name_expressions) const {
  // Every kernel's of the build (a module's plain kernels share one: their parameters' types
  // as declared), each struct once, in order, with the namespaces of the kernel naming it.
  // (each probe keyed by the kernel's namespaces and the name: `P` of a global kernel and of
  // one in namespace ns may be two types)
  std::vector<std::pair<std::string, std::string>> types;  // name, scope
  auto add = [&](const std::string& name, const std::string& scope) {
    if (std::find(types.begin(), types.end(), std::pair(name, scope)) == types.end())
      types.emplace_back(name, scope);
  };
  if (name_expressions.size() == 1)
    for (const std::string& name : probed_structs(name_expressions.front()))
      add(name, decl_of(name_expressions.front()).scope);
  const std::vector<KernelDecl> kernels =
      name_expressions.size() > 1 ? find_kernels(source_->text()) : std::vector<KernelDecl>{};
  for (const std::string& expr : name_expressions) {
    for (const KernelDecl& d : kernels) {
      if (!d.template_params.empty() || *deduce_name_expression(d, {}, nullptr) != expr) continue;
      for (const ParamDecl& p : d.params) {
        std::string name = struct_name_of(p.type);
        if (name.empty()) name = pointee_struct_of(p.type);
        if (!name.empty() && (probed_decl(*source_, template_name_of(name)) || is_enum(name)))
          add(name, d.scope);
      }
    }
  }
  return probes_of(types);
}

std::string Kernel::probes_of(const std::vector<std::pair<std::string, std::string>>& types) const {
  std::string probes;
  for (const auto& [name, scope] : types) {
    // (through a typedef, declared among the kernel's namespaces, where the name means what the
    // kernel means by it; a template's arguments would split offsetof's macro arguments)
    const std::string symbol = layout_symbol(scope + name), local = symbol + "_type";
    const std::string type = scope + local;
    probes += scope.empty() ? "typedef " + name + " " + local + ";\n"
                            : "namespace " + scope.substr(0, scope.size() - 2) + " { typedef " +
                                  name + " " + local + "; }\n";
    if (is_enum(name)) {
      probes += enum_probe(symbol, type);
      continue;
    }
    const StructDecl d = *probed_decl(*source_, template_name_of(name));
    probes += "__device__ unsigned long long " + symbol + "[] = {sizeof(" + type + "), alignof(" +
              type + ")";
    for (const StructDecl::Member& m : d.members)
      probes +=
          ", offsetof(" + type + ", " + m.name + "), sizeof(((" + type + "*)0)->" + m.name + ")";
    probes += "};\n";
    for (const StructDecl::Member& m : d.members)  // (an enumeration's field: its signedness)
      if (d.template_params.empty() && is_enum(struct_name_of(m.type)))
        probes += enum_probe(layout_symbol(scope + name + "." + m.name),
                             "kiln_element<decltype(((" + type + "*)0)->" + m.name + ")>::type");
  }
  if (probes.empty()) return "";
  // After the user's source, so that its lines keep their numbers.
  return "\n#include <stddef.h>\ntemplate <class T> struct kiln_element { typedef T type; };\n"
         "template <class T, unsigned long long N> struct kiln_element<T[N]> "
         "{ typedef typename kiln_element<T>::type type; };\n" +
         probes;
}

std::shared_ptr<const StructLayout> Kernel::struct_layout(
    Build& build, const std::string& type, const std::string& name_expression) const {
  std::string name = struct_name_of(type);
  const std::vector<std::string> probed = probed_structs(name_expression);
  if (std::find(probed.begin(), probed.end(), name) == probed.end()) return nullptr;
  return read_layout(build, name, decl_of(name_expression).scope);
}

std::shared_ptr<const StructLayout> Kernel::global_layout(const std::string& type,
                                                          const std::string& scope) {
  const std::string name = struct_name_of(type);
  if (name.empty() || !probed_decl(*source_, template_name_of(name))) return nullptr;
  // A build of the source with no kernel, only the struct's probe: the layout a __constant__
  // of it has (cached like any build; the kernels' own builds stay as they are).
  CompileRequest r = request({}, jit_->target(options_.arch));
  r.source += probes_of({{name, scope}});
  BuildRef probe = jit_->build(r, source_->included_texts(), nullptr);
  return read_layout(*probe.build, name, scope);
}

std::shared_ptr<const StructLayout> Kernel::read_layout(Build& build, const std::string& name,
                                                        const std::string& scope) const {
  std::optional<StructDecl> d = probed_decl(*source_, template_name_of(name));
  if (!d) return nullptr;
  const std::vector<std::string> args = template_arguments(name);
  const std::string key = scope + name;  // (layout_probes)
  std::vector<unsigned long long> words(2 + 2 * d->members.size());
  build.module->get_global(layout_symbol(key), words.data(), words.size() * sizeof words[0]);
  auto layout = std::make_shared<StructLayout>();
  layout->name = name;
  layout->size = words[0];
  layout->align = words[1];
  for (std::size_t i = 0; i < d->members.size(); ++i) {
    StructLayout::Field f;
    f.name = d->members[i].name;
    f.type = d->members[i].type;
    f.offset = words[2 + 2 * i];
    const std::size_t bytes = words[3 + 2 * i];
    // (f.type stays as declared, for messages; a template's parameters read as its arguments)
    std::string type = substitute_words(f.type, d->template_params, args);
    std::optional<DType> t = dtype_of_cpp(type);
    if (!t) t = enum_dtype(build, struct_name_of(type), key + "." + f.name);
    // A field's type may be an alias: `#define fp double`, `typedef double fp;`.
    for (int hops = 0; !t && hops < 4; ++hops)
      if (std::optional<std::string> alias = find_in(*source_, type, find_type_alias))
        t = dtype_of_cpp(type = *alias);
      else
        break;
    if (t) {
      const std::size_t element = dtype_info(*t).size;
      f.dtype = *t;
      f.count = bytes / element;
      f.settable = f.count >= 1 && bytes % element == 0;
    } else if (auto array = std_array_layout(type)) {  // a cuda::std::array<T, N> field
      f.dtype = array->fields[0].dtype;
      f.count = array->fields[0].count;
      f.settable = bytes == array->size;
    } else if (const ParamType p = classify_param(type);
               p.kind == ParamKind::pointer && bytes == sizeof(void*)) {
      f.dtype = p.dtype;  // (a functor's `const float* table`, a parameter block's pointers)
      f.pointer = true;
      f.untyped = p.untyped;
    } else if (bytes == sizeof(void*) && std::count(type.begin(), type.end(), '*') == 1 &&
               type.find_last_not_of(" \t") == type.rfind('*')) {
      // (a pointer to structs, CUDA by Example's `Entry* pool`: any device array of their bytes)
      f.pointer = f.untyped = true;
    }
    layout->fields.push_back(std::move(f));
  }
  return layout;
}

CompileRequest Kernel::request(std::vector<std::string> name_expressions,
                               const std::string& arch) const {
  CompileRequest r;
  r.name_expressions = std::move(name_expressions);
  r.source = rewrite_texture_references(settable_statics(source_->text())) +
             layout_probes(r.name_expressions);
  r.filename = source_->filename();
  for (const auto& [name, value] : options_.defines)
    r.options.push_back("-D" + name + (value.empty() ? "" : "=" + value));
  if (source_->is_file()) r.options.push_back("-I" + source_->folder().string());
  r.options.insert(r.options.end(), options_.options.begin(), options_.options.end());
  r.arch = arch;
  return r;
}

std::vector<std::string> Kernel::build_names(const std::string& name_expression,
                                             std::string* apart) const {
  auto alone = [&](const char* why) {
    if (apart) *apart = why;
    return std::vector<std::string>{name_expression};
  };
  if (!options_.module) return {name_expression};
  const KernelDecl& decl = decl_of(name_expression);
  if (!decl.template_params.empty()) return alone("a template's instance");
  // (a plain kernel's expression: its name, or a cast where headers overload it: `min`)
  auto plain = [](const KernelDecl& d) { return *deduce_name_expression(d, {}, nullptr); };
  if (name_expression != plain(decl)) return {name_expression};
  std::vector<std::string> names;
  std::set<std::string> plain_names, templates;  // (a template's instances build on their own)
  std::set<std::string> overloaded;              // (overloads build together, each by its cast)
  const std::vector<bool> conditional = conditional_lines(source_->text());
  for (const KernelDecl& d : find_kernels(source_->text())) {
    if (!d.template_params.empty()) {
      templates.insert(d.name);
      continue;
    }
    if (d.overloaded) overloaded.insert(d.name);
    if (!plain_names.insert(d.name).second && !d.overloaded)
      return alone("the source overloads a kernel's name");
    // (one in an #if group may be gone after the preprocessor, and would fail the others')
    if (d.line < int(conditional.size()) && conditional[d.line]) {
      if (d.name == decl.name) return alone("a kernel inside an #if group");
      continue;
    }
    names.push_back(plain(d));
  }
  // (a name find_kernels lists once, defined twice: declarations it took for one kernel)
  std::set<std::string> defined;
  for (const KernelBody& b : find_kernel_bodies(source_->text()))
    if (!defined.insert(b.name).second && !templates.count(b.name) && !overloaded.count(b.name))
      return alone("the source overloads a kernel's name");
  if (std::any_of(plain_names.begin(), plain_names.end(),
                  [&](const std::string& n) { return templates.count(n) != 0; }))
    return alone("the source overloads a kernel's name");
  if (names.size() > 16) return alone("more than 16 kernels in the source");
  if (std::find(names.begin(), names.end(), name_expression) == names.end())
    return {name_expression};
  return names;
}

std::unique_ptr<Kernel::Specialisation> Kernel::compile(const std::string& name_expression) {
  auto spec = std::make_unique<Specialisation>();
  spec->name_expression = name_expression;
  spec->overload = overload_of(name_expression).value_or(current_);
  const KernelDecl& decl = overloads_[spec->overload];
  std::string apart;  // why a module's kernel builds apart from the others
  CompileRequest r = request(build_names(name_expression, &apart), jit_->target(options_.arch));
  const std::size_t index =
      std::find(r.name_expressions.begin(), r.name_expressions.end(), name_expression) -
      r.name_expressions.begin();
  // A build whose globals Lua may set (its own or its headers') belongs to this module alone.
  const std::vector<std::string> headers = source_->included_texts();
  const bool settable = has_settable_globals(source_->text()) ||
                        !find_texture_references(source_->text()).empty() ||
                        std::any_of(headers.begin(), headers.end(),
                                    [](const std::string& h) { return has_settable_globals(h); });
  try {
    spec->build = jit_->build(r, headers, settable ? globals_.get() : nullptr);
  } catch (const CompileError& e) {
    const std::vector<bool> conditional = conditional_lines(source_->text());
    if (decl.line >= int(conditional.size()) || !conditional[decl.line]) throw;
    // (the compiler's words for a kernel the preprocessor removed: `identifier "b" is undefined`)
    std::string message = e.what();
    if (!e.log().empty() && message.ends_with("\n" + e.log()))
      message.resize(message.size() - e.log().size() - 1);
    throw CompileError(message + "; kernel '" + decl.name + "' is at line " +
                           std::to_string(decl.line) +
                           ", inside an #if group: is it there once the preprocessor has run?",
                       e.log());
  }
  const CompileResult& result = spec->build.build->result;
  if (result.lowered_names.empty())
    throw Error("kernel '" + decl.name + "': the compiler produced no entry for " +
                name_expression);
  if (result.lowered_names.size() <= index)
    throw Error("kernel '" + decl.name + "': the compiler produced no entry for " +
                name_expression);
  spec->lowered_name = result.lowered_names[index];

  // Exact parameter types from the compiler where it gives them, else from the declaration.
  std::vector<std::string> types;
  if (index < result.signatures.size() && !result.signatures[index].empty())
    types = parameter_types(result.signatures[index]);
  else
    for (const ParamDecl& p : decl.params) types.push_back(p.type);
  for (std::size_t i = 0; i < types.size(); ++i) {
    spec->params.push_back(classify_param(types[i]));
    spec->param_names.push_back(i < decl.params.size() ? decl.params[i].name : "");
    // A texture or surface object is an integer to the compiler, but no Lua number is one: a
    // GPU would read through a handle nothing made. Refused at launch (ParamType::refusal).
    if (i < decl.params.size() && names_texture_object(decl.params[i].type)) {
      spec->params.back() =
          ParamType{.spelling = decl.params[i].type, .refusal = texture_object_hint()};
      continue;
    }
    if (spec->params.back().kind != ParamKind::unsupported) continue;
    // The struct by the compiler's name for it, else by the source's (a typedef of a tagged
    // struct: the compiler says `_node const*` where the source says `const Node*`).
    ParamType& param = spec->params.back();
    // (the source's with the template's arguments: `S*` of `init<curandState>`)
    const std::string& expr = spec->name_expression;
    for (const std::string& type :
         {types[i], i < decl.params.size() ? declared_type(i, expr) : ""}) {
      auto layout = std_array_layout(type);
      if (!layout) layout = struct_layout(*spec->build.build, type, expr);
      if (layout) {  // a struct by value
        param.kind = ParamKind::structure;
        param.layout = std::move(layout);
      } else if ((param.layout =
                      struct_layout(*spec->build.build, pointee_struct_of(type), expr))) {
        param.kind = ParamKind::struct_pointer;
      } else if (std::optional<ParamType> e = enum_param(*spec->build.build, type, decl.scope)) {
        param = *e;
        break;
      }
      if (param.layout) break;
    }
  }
  spec->program = spec->build.build->module->kernel(spec->lowered_name);
  if (!spec->build.build->globals_applied) apply_globals_to_new_build(*spec->build.build);
  note_fibers(*spec->program, name_expression);
  if (!apart.empty()) note_own_globals(name_expression, apart);
  return spec;
}

void Kernel::note_own_globals(const std::string& name_expression, const std::string& why) {
  if (globals_noted_ || !jit_->options().on_note) return;
  const std::vector<std::string> variables = device_variables(source_->text());
  // (a module of one template kernel: from its second instance)
  if (variables.empty() ||
      (find_kernels(source_->text()).size() < 2 && by_name_expression_.empty()))
    return;
  globals_noted_ = true;
  jit_->options().on_note("kernel '" + name_expression + "' is built on its own (" + why +
                          "), with its own copy of the module's __device__ variables (" +
                          join(variables) +
                          "): what the module's other kernels store there, it does not see");
}

void Kernel::note_fibers(const Program& program, const std::string& name_expression) {
  if (fibers_noted_ || !jit_->options().on_note) return;
  KernelAttributes a = program.attributes();
  if (a.threads != "fibers") return;
  fibers_noted_ = true;
  // (a template's instance by its arguments: `reduce<256>`, not five notes alike)
  const bool instance = name_expression.find('<') != std::string::npos;
  jit_->options().on_note("kernel '" + (instance ? name_expression : decl().name) +
                          "' runs its threads as fibers, several times slower than a thread "
                          "loop: " +
                          a.why);
}

void Kernel::apply_globals(Build& build) const {
  for (const auto& [name, bytes] : *globals_)
    build.module->set_global(name, bytes.data(), bytes.size());
  build.globals_applied = true;
}

void Kernel::apply_globals_to_new_build(Build& build) {
  for (auto it = globals_->begin(); it != globals_->end(); ++it) {
    try {
      build.module->set_global(it->first, it->second.data(), it->second.size());
    } catch (const Error& e) {
      const std::string global = it->first;
      globals_->erase(it);
      throw Error("kernel '" + name() + "': the value an earlier m:set_constant(\"" + global +
                  "\", ...) gave, before the module was built, does not fit, and is dropped (" +
                  e.what() + ")");
    }
  }
  build.globals_applied = true;
}

void Kernel::apply_globals_to_builds() const {
  for (const auto& [expr, spec] : by_name_expression_) apply_globals(*spec->build.build);
}

void Kernel::reload_if_edited() {
  source_->refresh();
  if (source_->revision() == built_revision_) return;
  // An edit that does not compile is reported once; until the file changes again the previous
  // build stays loaded. An interrupted compile (Ctrl-C) says nothing of the edit: the next call
  // tries it again.
  const std::uint64_t previous_revision = std::exchange(built_revision_, source_->revision());
  const std::string name = this->name();
  std::vector<KernelDecl> previous =
      std::exchange(overloads_, select_kernels(*source_, name, false));
  std::vector<KernelDecl> previous_choices =
      std::exchange(choices_, read_aliases(overloads_, source_->text()));
  const std::size_t previous_current = std::exchange(current_, 0);
  std::unordered_map<std::string, std::unique_ptr<Specialisation>> rebuilt;
  names_grid_ = names_grid();
  spins_ = spins_on_global_memory();
  textures_ = textures_read();
  try {
    // (an overload the edit removed is gone: a call that chose it chooses again)
    for (const auto& [expr, spec] : by_name_expression_)
      if (overload_of(expr)) rebuilt[expr] = compile(expr);
  } catch (const Interrupted&) {
    overloads_ = std::move(previous);
    choices_ = std::move(previous_choices);
    current_ = previous_current;
    built_revision_ = previous_revision;
    throw;
  } catch (...) {
    overloads_ = std::move(previous);
    choices_ = std::move(previous_choices);
    current_ = previous_current;
    throw;
  }
  by_name_expression_ = std::move(rebuilt);
  by_signature_.clear();
  last_ = nullptr;
}

const KernelDecl& Kernel::decl_of(const std::string& name_expression) const {
  return overloads_[overload_of(name_expression).value_or(current_)];
}

std::optional<std::size_t> Kernel::overload_of(const std::string& name_expression) const {
  // (one left: a cast of another overload's, which an edit removed, is none)
  if (overloads_.size() == 1)
    return name_expression.starts_with("(void(*)") && overloads_[0].template_params.empty() &&
                   *deduce_name_expression(overloads_[0], {}, nullptr) != name_expression
               ? std::nullopt
               : std::optional<std::size_t>(0);
  for (std::size_t i = 0; i < overloads_.size(); ++i)
    if (overloads_[i].template_params.empty() &&
        *deduce_name_expression(overloads_[i], {}, nullptr) == name_expression)
      return i;
  return std::nullopt;
}

namespace {

// The value of parameter p's default argument: a null pointer (NULL, nullptr or 0 for a
// pointer), true or false, or a number literal (a sign and suffixes allowed).
ArgValue default_argument(const std::string& kernel, int position, const ParamDecl& p) {
  std::string text = p.default_value;
  ArgValue v;
  if (p.type.find('*') != std::string::npos &&
      (text == "NULL" || text == "nullptr" || text == "0")) {
    v.kind = ArgValue::Kind::null_pointer;
    return v;
  }
  if (text == "true" || text == "false") {
    v.kind = ArgValue::Kind::boolean;
    v.boolean = text == "true";
    return v;
  }
  text.erase(std::remove(text.begin(), text.end(), ' '), text.end());  // "- 1"
  const bool hex = text.find("0x") != std::string::npos || text.find("0X") != std::string::npos;
  while (!text.empty() && std::strchr(hex ? "uUlL" : "uUlLfF", text.back())) text.pop_back();
  char* end = nullptr;
  const long long integer = std::strtoll(text.c_str(), &end, 0);
  if (!text.empty() && *end == '\0') {
    v.kind = ArgValue::Kind::integer;
    v.integer = integer;
    return v;
  }
  const double number = std::strtod(text.c_str(), &end);
  if (!text.empty() && *end == '\0') {
    v.kind = ArgValue::Kind::number;
    v.number = number;
    return v;
  }
  throw Error("kernel '" + kernel + "': parameter " + std::to_string(position) + " '" + p.name +
              "' (" + p.type + ") has a default argument kiln cannot evaluate (`" +
              p.default_value + "`): pass it");
}

}  // namespace

std::vector<ArgValue> Kernel::with_defaults(std::vector<ArgValue> args) {
  if (source_->is_file()) reload_if_edited();
  const KernelDecl& decl = overloads_[choose_overload(choices_, args)];
  for (std::size_t i = args.size(); i < decl.params.size(); ++i) {
    if (decl.params[i].default_value.empty()) break;  // (the count's error names them all)
    args.push_back(default_argument(decl.name, int(i + 1), decl.params[i]));
  }
  return args;
}

Kernel::Specialisation& Kernel::specialise(const std::vector<ArgValue>& args) {
  if (source_->is_file()) reload_if_edited();
  std::string key;  // short: stays in the string's own buffer
  for (const ArgValue& a : args) append_signature(key, a);
  if (auto it = by_signature_.find(key); it != by_signature_.end()) {
    current_ = it->second->overload;
    return *(last_ = it->second);
  }
  current_ = choose_overload(choices_, args);
  if (args.size() != decl().params.size())
    throw Error("kernel '" + decl().name + "' takes " + std::to_string(decl().params.size()) +
                " argument" + (decl().params.size() == 1 ? "" : "s") + " " +
                parameter_list(decl()) + ", got " + std::to_string(args.size()));
  std::string expr = name_expression(args);
  auto it = by_name_expression_.find(expr);
  if (it == by_name_expression_.end()) it = by_name_expression_.emplace(expr, compile(expr)).first;
  by_signature_[key] = it->second.get();
  return *(last_ = it->second.get());
}

void Kernel::validate(const LaunchConfig& c) const {
  const DeviceInfo& d = jit_->backend().device();
  auto fail = [&](const std::string& what) {
    throw Error("kernel '" + decl().name + "': impossible launch: " + what);
  };
  const std::uint32_t grid[3] = {c.grid.x, c.grid.y, c.grid.z};
  const std::uint32_t block[3] = {c.block.x, c.block.y, c.block.z};
  const char* axis = "xyz";
  for (int i = 0; i < 3; ++i) {
    if (grid[i] == 0 || block[i] == 0)
      fail(std::string("zero ") + (grid[i] == 0 ? "grid" : "block") + " dimension " + axis[i]);
    if (grid[i] > d.max_grid_dim[i])
      fail("grid dimension " + std::string(1, axis[i]) + " = " + std::to_string(grid[i]) +
           " exceeds the device's " + std::to_string(d.max_grid_dim[i]));
    if (block[i] > std::uint32_t(d.max_block_dim[i]))
      fail("block dimension " + std::string(1, axis[i]) + " = " + std::to_string(block[i]) +
           " exceeds the device's " + std::to_string(d.max_block_dim[i]));
  }
  if (c.block.count() > std::uint64_t(d.max_threads_per_block))
    fail(std::to_string(c.block.count()) + " threads per block exceed the device's " +
         std::to_string(d.max_threads_per_block));
  if (c.shared_bytes > d.max_shared_per_block_optin)
    fail(std::to_string(c.shared_bytes) + " bytes of dynamic shared memory exceed the device's " +
         std::to_string(d.max_shared_per_block_optin));
}

void Kernel::launch(Specialisation& spec, const LaunchConfig& config,
                    const std::vector<ArgValue>& args) {
  validate(config);
  if (args.size() != spec.params.size())
    throw Error("kernel '" + decl().name + "' takes " + std::to_string(spec.params.size()) +
                " arguments " + parameter_list(decl()) + ", got " + std::to_string(args.size()));
  pack_.clear();
  for (std::size_t i = 0; i < args.size(); ++i)
    pack_.add(decl().name, static_cast<int>(i + 1), spec.param_names[i], spec.params[i], args[i]);
  for (const std::string& texture : textures_)
    if (!globals_->count(texture))
      throw Error("kernel '" + decl().name + "' reads the texture '" + texture +
                  "', which no array is bound to: m:bind_texture(\"" + texture + "\", array)");
  LaunchConfig c = config;
  c.cooperative = c.cooperative || names_grid_;  // grid.sync() needs every block resident (Numba)
  c.resident = c.resident || spins_;
  spec.launched = jit_->next_launch();
  spec.program->launch(c, pack_.pointers());
  if (std::string note = spec.program->take_note(); !note.empty() && jit_->options().on_note)
    jit_->options().on_note("kernel '" + decl().name + "' " + note);
}

std::vector<std::string> Kernel::textures_read() const {
  std::vector<std::string> read;
  const std::vector<TextureRef> refs = find_texture_references(source_->text());
  if (refs.empty()) return read;
  for (const KernelBody& b : find_kernel_bodies(source_->text())) {
    if (b.name != decl().name) continue;
    std::string_view body = std::string_view(source_->text()).substr(b.open, b.close - b.open);
    for (const TextureRef& t : refs)
      if (!find_identifier(body, t.name).empty() &&
          std::find(read.begin(), read.end(), t.name) == read.end())
        read.push_back(t.name);
  }
  return read;
}

bool Kernel::names_grid() const {
  // In this kernel's body, or anywhere outside the kernels' bodies (a device function it calls).
  std::string outside = source_->text();
  bool in_body = false;
  for (const KernelBody& b : find_kernel_bodies(outside)) {
    std::string_view body = std::string_view(source_->text()).substr(b.open, b.close - b.open);
    if (b.name == decl().name && !find_identifier(body, "this_grid").empty()) in_body = true;
    for (std::size_t i = b.open; i < b.close; ++i)
      if (outside[i] != '\n') outside[i] = ' ';
  }
  return in_body || !find_identifier(outside, "this_grid").empty();
}

bool Kernel::spins_on_global_memory() const {
  // In this kernel's body, or in a function outside the kernels' bodies that it reaches.
  const std::string& text = source_->text();
  if (text.find("volatile") == std::string::npos) return false;
  const std::vector<Token> toks = lex(text);
  const std::vector<std::size_t> match = pair_groups(toks);
  const std::vector<KernelBody> bodies = find_kernel_bodies(text);
  struct Function {
    std::string name;
    std::size_t open, close;  // its body's braces, as tokens
  };
  std::vector<Function> functions;  // outside the kernels: `name(...) {` at the top level
  for (std::size_t k = 1; k < toks.size(); ++k) {
    if (!is_punct(toks[k], "{") || match[k] >= toks.size() || !is_punct(toks[k - 1], ")")) continue;
    std::size_t paren = k - 1;
    while (paren > 0 && !(is_punct(toks[paren], "(") && match[paren] == k - 1)) --paren;
    const bool kernel = std::any_of(bodies.begin(), bodies.end(),
                                    [&](const KernelBody& b) { return b.open == toks[k].begin; });
    if (!kernel && paren > 0 && toks[paren - 1].kind == Token::ident)
      functions.push_back({toks[paren - 1].text, k, match[k]});
    k = match[k];  // (its body is no top level)
  }
  std::set<std::string> spinning;  // the functions that spin, and those that call them
  for (const SpinWait& s : spin_waits(toks)) {
    if (s.shared || s.look_back) continue;
    const std::size_t at = toks[s.condition].begin;
    for (const KernelBody& b : bodies)
      if (b.open < at && at < b.close && b.name == name()) return true;
    for (const Function& f : functions)
      if (f.open < s.condition && s.condition < f.close) spinning.insert(f.name);
  }
  for (bool grew = !spinning.empty(); grew;) {
    grew = false;
    for (const Function& f : functions)
      for (std::size_t k = f.open + 1; k < f.close && !spinning.count(f.name); ++k)
        if (toks[k].kind == Token::ident && spinning.count(toks[k].text))
          grew = spinning.insert(f.name).second || grew;
  }
  for (const KernelBody& b : bodies)
    if (b.name == name())
      for (const std::string& f : spinning)
        if (!find_identifier(std::string_view(text).substr(b.open, b.close - b.open), f).empty())
          return true;
  return false;
}

std::string Kernel::current_expression(const std::vector<ArgValue>* args, const char* how) const {
  if (args) return name_expression(*args);
  if (last_) return last_->name_expression;
  if (overloads_.size() > 1) throw Error("kernel '" + name() + "' is overloaded: " + how);
  if (options_.name.find('<') != std::string::npos || decl().template_params.empty())
    return name_expression({});
  throw Error("kernel '" + decl().name + "' is a template: " + how);
}

std::string Kernel::ptx(const std::vector<ArgValue>* args) {
  const std::string expr =
      current_expression(args, "give k:ptx() its arguments, or launch it first");
  std::string arch = options_.arch;
  if (arch.empty()) {
    const std::string& preset = jit_->options().arch;
    arch = !preset.empty() ? preset : jit_->backend().name() == "cuda" ? jit_->target("") : "";
  }
  return jit_->ptx(request({expr}, arch), source_->included_texts());
}

CompileResult Kernel::gpu_build(const std::string& arch, const std::vector<ArgValue>* args) {
  const std::string expr =
      current_expression(args, "launch it first, so that its argument types are known");
  return jit_->gpu_build(request({expr}, arch), source_->included_texts(), /*report=*/true);
}

// -------------------------------------------------------------------------- selection, checks

std::vector<KernelDecl> select_kernels(const SourceText& source, const std::string& name,
                                       bool all) {
  std::vector<KernelDecl> decls = find_kernels(source.text());
  if (decls.empty()) throw Error("no __global__ function in " + source.origin());
  std::vector<std::string> names;
  for (const KernelDecl& d : decls) names.push_back(d.name);
  if (!name.empty()) {
    std::string base = name.substr(0, name.find('<'));
    while (!base.empty() && base.back() == ' ') base.pop_back();
    std::vector<KernelDecl> named;  // (its overloads: the first one's scope)
    for (const KernelDecl& d : decls)
      if ((d.name == base || d.scope + d.name == base) &&
          (named.empty() || named.front().scope == d.scope))
        named.push_back(d);
    if (!named.empty()) return named;
    throw Error("no kernel named '" + base + "' in " + source.origin() +
                " (it has: " + join(names) + ")");
  }
  const bool one_name = std::all_of(decls.begin(), decls.end(), [&](const KernelDecl& d) {
    return d.name == decls.front().name && d.scope == decls.front().scope;
  });
  if (all || one_name) return decls;
  throw Error(source.origin() + " has several kernels (" + join(names) +
              "): choose one with opts.name, or use cuda.module");
}

namespace {

// Whether name is a C identifier (a macro name).
bool identifier(std::string_view name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

}  // namespace

void validate_defines(const std::vector<std::pair<std::string, std::string>>& defines) {
  for (const auto& [name, value] : defines) {
    if (!identifier(name)) throw Error("defines: '" + name + "' is not a valid macro name");
    if (value.find_first_of("\n\r") != std::string::npos)
      throw Error("defines: the value of " + name + " contains a line break");
  }
}

void validate_options(const std::vector<std::string>& options) {
  // Options that change code generation only; each is one argv word, never a shell string.
  // -D and -U are checked by hand (a define's value may be long); the rest are short words,
  // against a pattern built when there is one to check (a tenth of a millisecond to build).
  auto allowed = [](const std::string& o) {
    static const std::regex pattern(
        "-lineinfo|--generate-line-info|-G|--device-debug|-g|-O[0-3]|-w|"
        "-(-)?use_fast_math|--ftz=(true|false)|--prec-div=(true|false)|--prec-sqrt=(true|false)|"
        "--fmad=(true|false)|-(-)?maxrregcount=[0-9]+|-std=c\\+\\+(17|20)|"
        "--extra-device-vectorization|-(-)?restrict|-default-device|"
        "--device-as-default-execution-space|-(-)?device-int128|-(-)?extended-lambda|"
        "-(-)?expt-extended-lambda|-(-)?expt-relaxed-constexpr");
    return std::regex_match(o, pattern);
  };
  for (const std::string& o : options) {
    const std::string_view rest = o.size() > 2 ? std::string_view(o).substr(2) : std::string_view();
    const bool ok = o.starts_with("-D") ? identifier(rest.substr(0, rest.find('='))) &&
                                              o.find_first_of("\n\r") == std::string::npos
                    : o.starts_with("-U") ? identifier(rest)
                                          : o.size() <= 64 && allowed(o);
    if (!ok)
      throw Error("options: '" + o + "' is not an allowed compiler option (see docs/jit.md)");
  }
}

}  // namespace kiln::jit
