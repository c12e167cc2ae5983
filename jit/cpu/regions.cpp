// Region formation over jit/lexer.h's tokens. For each __global__ body naming __syncthreads:
//   - a barrier-level statement list (the body, and the bodies of loops and ifs holding
//     barriers) is cut at each `__syncthreads();` into regions;
//   - each region becomes `::kiln_cpu::each_thread<calls>(..., [&](unsigned long kiln_t_, uint3
//     kiln_tid_) -> RegionEnd { <region> return {}; });`, a loop over the block's threads in
//     threadIdx order, in which threadIdx reads kiln_tid_ (kiln_cpu_tls() is shadowed);
//   - a variable declared at barrier level is replicated, one per thread
//     (`std::remove_cv_t<T> kiln_r<N>_<name>[kiln_n_]` before its region's loop), and every
//     region's lambda binds the name to the running thread's copy, or recomputes it when it is
//     a const value of indices, unwritten parameters and constants;
//   - `__shared__` arrays and the module's Tls are reached through addresses taken once;
//   - a `return` in a region marks the thread returned (kiln_done_), and later regions skip it;
//     a region's lambda returns a RegionEnd, so that a `return;` the rewrite cannot see (from a
//     macro) fails to compile instead of silently ending only the region;
//   - a loop or if holding a barrier is evaluated once per block: its header reads the values of
//     the first thread that has not returned (KILN_LEAD), so it may only name such variables,
//     the loop's own variables and thread-independent things (no calls, no threadIdx); a for
//     loop's init or step that writes a variable of each thread writes the leader's copy, then
//     copies it to every thread's (kiln_cpu::broadcast);
//   - a lambda capturing by reference, named after a barrier, is declared again in each later
//     region, over the running thread's copies (Remade);
// Anything else (a barrier in an expression or a switch, references, brace-initialised
// arrays, another header that writes, one that calls) is refused: the kernel then runs as
// coroutines. What is
// accepted but wrong C++ after the rewrite (say, `break` at a region's top level, which no loop
// encloses any more) fails to compile, and the backend then builds coroutines too.
#include "jit/cpu/regions.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <stdexcept>
#include <utility>
#include <vector>

#include "jit/cpu/inline_sync.h"
#include "jit/cpu/region_words.h"
#include "jit/kernel_decl.h"
#include "jit/lexer.h"
#include "kiln/cpu_abi.h"

namespace kiln::cpu {
namespace {

using jit::is_ident;
using jit::is_punct;
using jit::Token;
using namespace regions;

// The copies kept per thread across barriers live on the block's stack (8 MiB, guarded:
// runtime/cpu/stacks.h), kiln_n_ of each: at most 48 variables and 4 KB per thread, 4 MB at
// 1024 threads. A variable whose size the rewrite reads off its declaration (`float keep[20]`:
// a keyword type, literal extents) counts as that size, any other as 64 bytes, which is all it
// takes of the stack: a larger one (a wmma fragment, a struct) is kept on the heap.
constexpr std::size_t kMaxReplicated = 48, kMaxKeptBytes = 4096, kUnsizedCopy = 64;

// Declares `store`, a pointer to kiln_n_ copies of `type`, whose size the rewrite could not
// read: a VLA on the block's stack when the compiler finds it at most kUnsizedCopy bytes, else
// one allocation on the heap (kiln_cpu::HeapCopies).
std::string unsized_copies(const std::string& type, const std::string& store) {
  const std::string e = store + "_t",
                    large = "(sizeof(" + e + ") > " + std::to_string(kUnsizedCopy) + ")";
  return " using " + e + " = " + type + "; " + e + " " + store + "_s[" + large +
         " ? 1 : kiln_n_]; ::kiln_cpu::HeapCopies<" + e + "> " + store + "_h(" + large +
         " ? kiln_n_ : 0); " + e + "* const " + store + " = " + large + " ? " + store +
         "_h.copies : " + store + "_s;";
}

// The size in bytes of a variable whose type is tokens [b, e) of t (keyword types: `unsigned
// int`, `float4`) and extents [d, de) (`[20][4]`, literals), or 0 when the rewrite cannot tell.
std::size_t declared_size(const std::vector<Token>& t, std::size_t b, std::size_t e, std::size_t d,
                          std::size_t de) {
  static const std::map<std::string, std::size_t> sizes{
      {"bool", 1},   {"char", 1},   {"short", 2}, {"__half", 2}, {"int", 4},     {"unsigned", 4},
      {"signed", 4}, {"float", 4},  {"long", 8},  {"double", 8}, {"size_t", 8},  {"int2", 8},
      {"uint2", 8},  {"float2", 8}, {"int4", 16}, {"uint4", 16}, {"float4", 16}, {"double2", 16}};
  std::size_t size = 0;
  for (std::size_t k = b; k < e; ++k) {
    if (is_ident(t[k], "const") || is_ident(t[k], "volatile")) continue;
    auto s = sizes.find(t[k].text);
    if (s == sizes.end() || t[k].kind != Token::ident) return 0;
    // (`unsigned char`, `short int`: the narrower word; `long long`, `unsigned long`: 8;
    // `long double`: not told)
    if (t[k].text == "double" && size != 0) return 0;
    const bool sized = t[k].text == "char" || t[k].text == "short" || t[k].text == "long";
    if (size == 0 || sized) size = t[k].text == "long" ? 8 : s->second;
  }
  for (std::size_t k = d; k < de; k += 3) {
    if (k + 2 >= de || !is_punct(t[k], "[") || !is_integer_literal(t[k + 1]) ||
        !is_punct(t[k + 2], "]"))
      return 0;
    const std::size_t n = std::strtoull(t[k + 1].text.c_str(), nullptr, 0);
    if (n == 0 || n > kMaxKeptBytes) return 0;
    size *= n;
  }
  return size;
}

// At the top of a loop body with a barrier or warp operation: the kernel ends when every thread
// has returned, the loop when none of those in it is left (kiln_cpu::loop_state).
constexpr const char* kLoopCheck =
    " if (const int kiln_ls_ = ::kiln_cpu::loop_state(kiln_n_, kiln_done_, kiln_act_); kiln_ls_ "
    "== 1) return; else if (kiln_ls_ == 2) break;";
// The end of a region's thread loop.
constexpr const char* kRegionClose = " return {}; });";
// The thread's view of the indices in a region's thread loop (kiln_tid_ its thread's). (The
// block's indices are locals read once: loaded from the module's Tls in the loop, they might
// change with any store, and no index computed from them would step evenly.)
constexpr const char* kRegionView =
    " const ::kiln_cpu::RegionTls kiln_view_{kiln_tid_, kiln_bi_, kiln_b_, kiln_gd_};"
    " [[maybe_unused]] auto kiln_cpu_tls = [&]() -> const ::kiln_cpu::RegionTls& { return "
    "kiln_view_; };";

// The warp operations that become steps between regions, by name.
const std::map<std::string, int, std::less<>>& warp_steps() {
  using namespace kiln_cpu;
  static const std::map<std::string, int, std::less<>> ops{{"__shfl_sync", warp_shfl_idx},
                                                           {"__shfl_up_sync", warp_shfl_up},
                                                           {"__shfl_down_sync", warp_shfl_down},
                                                           {"__shfl_xor_sync", warp_shfl_xor},
                                                           {"__ballot_sync", warp_ballot},
                                                           {"__any_sync", warp_any},
                                                           {"__all_sync", warp_all},
                                                           {"__activemask", warp_activemask},
                                                           {"__match_any_sync", warp_match_any},
                                                           {"__reduce_add_sync", warp_reduce_add},
                                                           {"__reduce_min_sync", warp_reduce_min},
                                                           {"__reduce_max_sync", warp_reduce_max},
                                                           {"__reduce_and_sync", warp_reduce_and},
                                                           {"__reduce_or_sync", warp_reduce_or},
                                                           {"__reduce_xor_sync", warp_reduce_xor}};
  return ops;
}

// Why a body cannot be rewritten.
struct Refused : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Edit {
  std::size_t begin, end;  // source offsets replaced
  std::string text;
  bool chosen_load = false;  // a read through a chosen index (rewrite_selects)
};

// The integer types that hold every thread index unchanged.
const std::set<std::string> kIndexTypes{
    "int",          "const int",          "unsigned",  "const unsigned",
    "unsigned int", "const unsigned int", "long long", "const long long",
    "long",         "const long",         "size_t",    "const size_t"};

// A barrier-level variable, one copy per thread.
struct Replica {
  std::string name, storage;
  std::string recompute;  // a declaration that recomputes it in a later region ("": none)
  int region;             // the region that declares it
  bool uniform = false;   // recomputed, and the same in every thread (n = a.size())
  std::string init;       // a recomputed one's initialiser, as text ("threadIdx.x")
  // A recomputed index chosen by a condition (`int west = col > 0 ? tx - 1 : tx;`): the names
  // of its condition and of both values, which its recomputation declares too (see selects).
  std::string select;  // "" or "kiln_s<N>_": <select>c, <select>a, <select>b
  bool flag = false;   // a bool whose copies are kiln_cpu::Flag (ints)
  std::size_t init_b = 0, init_e = 0;  // init's tokens (a recomputed index's), else empty
};
// A lambda capturing only by reference, declared at barrier level and named after a barrier:
// each later region declares it again, after its bindings, so that it refers to the running
// thread's copies (a closure cannot be kept one per thread, and its references would all be the
// first thread's).
struct Remade {
  std::string name, definition;  // `[[maybe_unused]] auto f = [&](...) {...};` on one line
  int region;                    // the region that declares it (as written)
};
// A barrier loop's variable, and its value two iterations on as text (none: var empty).
struct Ahead {
  std::string var, next;
};
// A barrier-level scope: its replicated variables, shared arrays and the loop variables of its
// header.
struct Scope {
  std::vector<Replica> replicated;
  std::vector<std::pair<std::string, std::string>> shared;  // name, its alias
  std::vector<std::string> uniform;
  std::vector<Remade> lambdas;
};

class BodyWriter {
 public:
  BodyWriter(std::string_view src, const std::vector<Token>& toks,
             const std::set<std::string>& thread_macros, const std::set<std::string>& pure_macros,
             const std::set<std::string>& value_macros, const std::set<std::string>& free_functions,
             std::set<std::string> params, std::set<std::string> array_params, int& counter)
      : src_(src),
        t_(toks),
        thread_macros_(thread_macros),
        pure_macros_(pure_macros),
        value_macros_(value_macros),
        free_functions_(free_functions),
        params_(std::move(params)),
        array_params_(std::move(array_params)),
        counter_(counter) {}

  // Whether word may be a variable that the body body() rewrote declares, other than a
  // __shared__ array (those every region names alike). A parameter it writes counts too: its
  // copies are renamed.
  bool names_a_variable(const std::string& word) const {
    if (shared_names_.count(word)) return false;
    if (written_params_.count(word)) return true;
    for (std::size_t k = open_ + 1; k < close_; ++k)
      if (t_[k].text == word && (declares(k) || (is_punct(t_[k - 1], ",") && !member_name(k))))
        return true;  // (`int a, b;`: b follows a comma)
    return false;
  }
  // How many grid-stride loops body() ran in lockstep.
  int lockstep_loops() const { return lockstep_loops_; }
  // Runs in lockstep only the grid-stride loops whose threads start at consecutive indices
  // (affine_lockstep), which cost no flag or index per thread, or from threadIdx.x itself
  // (strides_along_x): for a kernel without barriers, where the others cost more than they
  // gained (the blur lab's 2-D loops: 10% slower).
  void consecutive_only() { consecutive_only_ = true; }

  // Rewrites the body whose braces are tokens open and close; appends the edits.
  void body(std::size_t open, std::size_t close, std::vector<Edit>& out) {
    match_.assign(t_.size(), 0);
    std::vector<std::size_t> stack;
    for (std::size_t i = open; i <= close; ++i) {
      if (t_[i].directive) throw Refused("a preprocessor line inside the kernel");
      const Token& t = t_[i];
      if (t.kind != Token::punct) continue;
      if (t.text == "(" || t.text == "[" || t.text == "{") stack.push_back(i);
      if (t.text == ")" || t.text == "]" || t.text == "}") {
        if (stack.empty()) throw Refused("unbalanced brackets");
        match_[stack.back()] = i;
        match_[i] = stack.back();
        stack.pop_back();
      }
    }
    if (!stack.empty()) throw Refused("unbalanced brackets");
    open_ = open;
    close_ = close;
    find_lambdas(open, close);
    // Every thread has its own copy of the parameters: one the kernel writes (`src +=
    // blockIdx.x * TILE + threadIdx.x;`, as CUDA's samples advance their pointers) is
    // replicated like a variable declared at the body's top, each copy starting as the argument.
    std::set<std::string> written;
    const std::map<std::string, std::set<std::string>> macros = macro_writes();
    for (std::size_t i = open; i < close; ++i) {
      if (t_[i].kind != Token::ident || member_name(i)) continue;
      if (params_.count(t_[i].text) &&
          ((writes(i, true) && !array_element_address(i)) || written_by_call(i)))
        written.insert(t_[i].text);
      if (auto m = macros.find(t_[i].text); m != macros.end())  // `#define STEP p += 1`
        for (const std::string& name : m->second)
          if (params_.count(name)) written.insert(name);
    }
    written_params_ = written;
    std::string param_copies;
    for (const std::string& name : written) {
      params_.erase(name);
      const std::string store = "kiln_r" + std::to_string(++counter_) + "_" + name;
      param_copies += unsized_copies("std::remove_cv_t<decltype(" + name + ")>", store) +
                      " for (unsigned kiln_t_ = 0; kiln_t_ < kiln_n_; ++kiln_t_) " + store +
                      "[kiln_t_] = " + name + ";";
      param_copies_.push_back({name, store, "", 0});
      keep(kUnsizedCopy);
    }
    std::set<std::string> atomics;  // those the body names, each bound in the prologue
    for (std::size_t i = open; i < close; ++i) {
      if (t_[i].kind == Token::ident && t_[i].text.starts_with("atomic")) {
        atomics.insert(unscoped(t_[i].text));
      }
    }
    const std::size_t prologue_at = edits_.size();  // first: it precedes what follows the brace
    edits_.push_back({t_[open].end, t_[open].end, ""});
    statements(open + 1, close, false);
    // threadIdx & co. name kiln_cpu_tls(): here a local that holds the module's Tls address,
    // taken once per block (see alias_shared).
    std::string prologue =
        " auto* const kiln_tls_ = ::kiln_cpu::opaque(&::kiln_cpu::tls); auto kiln_cpu_tls = "
        "[kiln_tls_]() -> "
        "::kiln_cpu::Tls& { return *kiln_tls_; };"
        " const ::kiln_cpu::dim3 kiln_b_ = blockDim; const unsigned kiln_n_ = kiln_b_.x * "
        "kiln_b_.y * kiln_b_.z; (void)kiln_n_; const ::kiln_cpu::uint3 kiln_bi_ = blockIdx; "
        "const ::kiln_cpu::dim3 kiln_gd_ = gridDim;";
    prologue += param_copies;
    prologue += region_atomics(atomics);
    shared_atomics(open, close, atomics, prologue);
    prologue += returns_ ? " bool kiln_done_s_[kiln_n_]; bool* const kiln_done_ = "
                           "::kiln_cpu::cleared(kiln_done_s_, kiln_n_);"
                         : " constexpr bool* kiln_done_ = nullptr;";
    // The threads in the branch or loop at hand (null: all): a warp operation's if or loop
    // names its own in a block of its own.
    prologue += " constexpr const bool* kiln_act_ = nullptr;";
    edits_[prologue_at].text = prologue;
    out.insert(out.end(), edits_.begin(), edits_.end());
    for (const Edit& s : select_edits_) {  // (an edit inside or at the edge of it: left as is)
      const bool meets = std::any_of(edits_.begin(), edits_.end(), [&](const Edit& o) {
        return o.begin <= s.end && o.end >= s.begin;
      });
      if (!meets) out.push_back(s);
    }
  }

 private:
  // The atomics region_atomics binds, and their update on shared memory (kiln_old, kiln_v).
  static const std::map<std::string, std::string>& atomic_bindings() {
    static const std::map<std::string, std::string> bindings{
        {"atomicAdd",
         "std::is_arithmetic, ::kiln_cpu::atomic_sum(kiln_old, kiln_T(kiln_v), false)"},
        {"atomicSub",
         "std::is_arithmetic, ::kiln_cpu::atomic_difference(kiln_old, kiln_T(kiln_v), false)"},
        {"atomicExch", "std::is_arithmetic, kiln_T(kiln_v)"},
        {"atomicMin", "std::is_integral, kiln_T(kiln_v) < kiln_old ? kiln_T(kiln_v) : kiln_old"},
        {"atomicMax", "std::is_integral, kiln_old < kiln_T(kiln_v) ? kiln_T(kiln_v) : kiln_old"},
        {"atomicAnd", "std::is_integral, static_cast<kiln_T>(kiln_old & kiln_T(kiln_v))"},
        {"atomicOr", "std::is_integral, static_cast<kiln_T>(kiln_old | kiln_T(kiln_v))"},
        {"atomicXor", "std::is_integral, static_cast<kiln_T>(kiln_old ^ kiln_T(kiln_v))"},
        {"atomicInc",
         "std::is_unsigned, kiln_old >= kiln_T(kiln_v) ? kiln_T(0) : static_cast<kiln_T>(kiln_old "
         "+ 1)"},
        {"atomicDec",
         "std::is_unsigned, (kiln_old == 0 || kiln_old > kiln_T(kiln_v)) ? kiln_T(kiln_v) : "
         "static_cast<kiln_T>(kiln_old - 1)"},
    };
    return bindings;
  }
  // An atomic's name without its scope: atomicAdd_block and atomicAdd_system are atomicAdd.
  static std::string unscoped(std::string name) {
    for (const char* scope : {"_block", "_system"})
      if (name.ends_with(scope)) name.resize(name.size() - std::string(scope).size());
    return name;
  }
  // Whether name (as written, _block and _system included) is an atomic region_atomics binds.
  static bool bound_atomic(const std::string& name) {
    const std::string base = unscoped(name);
    return base == "atomicCAS" || atomic_bindings().count(base);
  }

  // The prologue's bindings of the atomics in names (cpu_modes.h, KILN_REGION_ATOMIC): each is
  // a local of the kernel's outer block, so the regions' calls find it before the global one.
  // (The shared-memory histogram ran 2.5x slower as regions than as coroutines while each
  // update looked the module's TLS block up.)
  static std::string region_atomics(const std::set<std::string>& names) {
    const auto& bindings = atomic_bindings();
    std::string out;
    for (const auto& name : names) {
      if (name == "atomicCAS")
        out += " [[maybe_unused]] auto atomicCAS = KILN_REGION_ATOMIC_CAS;";
      else if (auto b = bindings.find(name); b != bindings.end())
        out += " [[maybe_unused]] auto " + name + " = KILN_REGION_ATOMIC(" + name + ", " +
               b->second + ");";
    }
    if (!out.empty())
      out =
          " const ::kiln_cpu::BlockMemory kiln_mem_ = ::kiln_cpu::block_memory(*kiln_tls_);" + out;
    return out;
  }

  // Atomics on an element of a __shared__ array the body declares (`atomicAdd(&bins[v], 1)`,
  // the name declared nowhere else in it): the update is plain, as only the block's threads
  // touch the array and they run on one OS thread, with no test of the address per update.
  // Each such call names kiln_shared_<atomic>, bound in the prologue.
  void shared_atomics(std::size_t open, std::size_t close, const std::set<std::string>& atomics,
                      std::string& prologue) {
    std::map<std::string, int> declared;  // name -> declarations of it in the body
    for (std::size_t k = open + 1; k < close; ++k)
      if (declares(k)) ++declared[t_[k].text];
    std::set<std::string> used;
    for (std::size_t k = open + 1; k < close; ++k) {
      const Token& t = t_[k];
      if (t.kind != Token::ident || !atomics.count(t.text) || !atomic_bindings().count(t.text) ||
          member_name(k) || !is_punct(t_[k + 1], "("))
        continue;
      const std::size_t a = is_punct(t_[k + 2], "&") ? k + 3 : k + 2;  // &name[...] or name + i
      if (!shared_names_.count(t_[a].text) || declared[t_[a].text] != 1 ||
          !(is_punct(t_[a + 1], "[") || (a == k + 2 && is_punct(t_[a + 1], "+"))))
        continue;
      edits_.push_back({t.begin, t.end, "kiln_shared_" + t.text});
      used.insert(t.text);
    }
    for (const auto& name : used)
      prologue += " [[maybe_unused]] auto kiln_shared_" + name + " = KILN_SHARED_ATOMIC(" + name +
                  ", " + atomic_bindings().at(name) + ");";
  }

  // Whether token k is a name being declared, by its neighbours: `T name =`, `T* name;`,
  // `T& name)`, `T name[`, ... (not `(&name[i]` nor `return name;`).
  bool declares(std::size_t k) const {
    const Token &t = t_[k], &p = t_[k - 1], &pp = t_[k - 2], &n = t_[k + 1];
    if (t.kind != Token::ident || member_name(k) || is_keyword_type(t.text) ||
        is_qualifier(t.text) || is_statement_keyword(p.text))
      return false;
    const bool after_type = p.kind == Token::ident || is_punct(p, ">") ||
                            ((is_punct(p, "*") || is_punct(p, "&")) &&
                             (pp.kind == Token::ident || is_punct(pp, ">") || is_punct(pp, "*")));
    return after_type &&
           (is_punct(n, "=") || is_punct(n, ";") || is_punct(n, ",") || is_punct(n, "[") ||
            is_punct(n, ")") || is_punct(n, "{") || is_punct(n, "(") || is_punct(n, ":"));
  }

  // Marks the tokens of each lambda in [open, close), from its captures to its body's end
  // (in_lambda_). A lambda's `return` is its own; a barrier or warp operation inside one is
  // declined.
  void find_lambdas(std::size_t open, std::size_t close) {
    in_lambda_.assign(t_.size(), false);
    for (std::size_t k = open + 1; k < close; ++k) {
      if (!is_punct(t_[k], "[") || in_lambda_[k]) continue;
      const Token& p = t_[k - 1];  // a subscript follows an operand; an introducer does not
      if (p.kind == Token::ident || p.kind == Token::number || is_punct(p, ")") ||
          is_punct(p, "]") || is_punct(p, "[") || is_ident(p, "delete"))
        continue;
      std::size_t j = match_[k] + 1;
      if (is_punct(t_[j], "(")) j = match_[j] + 1;
      while (t_[j].kind == Token::ident &&
             (t_[j].text == "mutable" || t_[j].text == "constexpr" || t_[j].text == "noexcept"))
        ++j;
      if (is_punct(t_[j], "-") && is_punct(t_[j + 1], ">"))
        while (j < close && !is_punct(t_[j], "{") && !is_punct(t_[j], ";")) ++j;
      if (!is_punct(t_[j], "{")) continue;
      for (std::size_t b = k; b <= match_[j]; ++b) in_lambda_[b] = true;  // [captures] to }
      if (has_barrier(j, match_[j])) throw Refused("a barrier or warp operation in a lambda");
    }
  }

  // `auto f = [...](...) { ... };` at barrier level whose body names, of the kernel's own
  // variables, only its __shared__ arrays: it stays where it is, between the regions, so that
  // every later region can call it (a lambda cannot be kept one per thread).
  bool hoistable_lambda(std::size_t i, std::size_t next) const {
    std::size_t k = i;
    if (is_ident(t_[k], "const")) ++k;
    if (!is_ident(t_[k], "auto") || t_[k + 1].kind != Token::ident || !is_punct(t_[k + 2], "=") ||
        !is_punct(t_[next - 1], ";") || !is_punct(t_[next - 2], "}"))
      return false;
    for (std::size_t b = k + 3; b + 1 < next; ++b)  // the lambda is all of the initialiser
      if (!in_lambda_[b]) return false;
    std::set<std::string> kernel_names;  // declared in the kernel body outside any lambda
    for (std::size_t d = open_ + 1; d < close_; ++d)
      if (!in_lambda_[d] && declares(d)) kernel_names.insert(t_[d].text);
    for (const Scope& sc : scopes_)
      for (const auto& [name, alias] : sc.shared) kernel_names.erase(name);
    // (its parameters may share a name with the kernel's variables: they hide them)
    if (std::size_t params = match_[k + 3] + 1; is_punct(t_[params], "("))
      for (std::size_t b = params + 1; b < match_[params]; ++b)
        if (t_[b].kind == Token::ident && (is_punct(t_[b + 1], ",") || b + 1 == match_[params]))
          kernel_names.erase(t_[b].text);
    for (std::size_t b = k + 3; b + 1 < next; ++b)
      if (t_[b].kind == Token::ident && !member_name(b) && kernel_names.count(t_[b].text))
        return false;
    return true;
  }

  // One past the statement starting at token i.
  std::size_t statement_end(std::size_t i) const {
    const Token& t = t_[i];
    if (is_punct(t, "{")) return match_[i] + 1;
    if (is_punct(t, ";")) return i + 1;
    if ((is_ident(t, "for") || is_ident(t, "while") || is_ident(t, "switch")) &&
        is_punct(t_[i + 1], "("))
      return statement_end(match_[i + 1] + 1);
    if (is_ident(t, "if") && is_punct(t_[i + 1], "(")) {
      std::size_t k = statement_end(match_[i + 1] + 1);
      return is_ident(t_[k], "else") ? statement_end(k + 1) : k;
    }
    if (is_ident(t, "do")) {
      std::size_t k = statement_end(i + 1);
      if (!is_ident(t_[k], "while") || !is_punct(t_[k + 1], "("))
        throw Refused("a do without while");
      return match_[k + 1] + 2;
    }
    for (std::size_t k = i;; ++k) {
      if (k >= close_ || is_punct(t_[k], "}")) throw Refused("a statement without ';'");
      if (is_punct(t_[k], "(") || is_punct(t_[k], "[") || is_punct(t_[k], "{")) k = match_[k];
      if (is_punct(t_[k], ";")) return k + 1;
    }
  }

  // Whether tokens [b, e) call a function (a name, template or expression before '(').
  bool has_call(std::size_t b, std::size_t e) const {
    static const std::set<std::string> not_calls{"if",     "for",    "while",     "switch",
                                                 "return", "sizeof", "co_return", "catch"};
    for (std::size_t k = b + 1; k < e; ++k) {
      if (!is_punct(t_[k], "(")) continue;
      const Token& p = t_[k - 1];
      // (The body's atomics are bound to region_atomics' lambdas, which read no threadIdx;
      // value macros call nothing.)
      // (Warp operations become steps between regions; their results are read from arrays.
      // Functions that read no thread index need no threadIdx written for them.)
      if ((p.kind == Token::ident && !is_keyword_type(p.text) && !is_qualifier(p.text) &&
           !not_calls.count(p.text) && !bound_atomic(p.text) && !value_macros_.count(p.text) &&
           warp_op(p) < 0 && !(free_functions_.count(p.text) && !member_name(k - 1))) ||
          is_punct(p, ">") || is_punct(p, ")") || is_punct(p, "]"))
        return true;
    }
    return false;
  }

  // Whether tokens [b, e) hold a synchronisation point: a block barrier or a warp operation.
  bool has_barrier(std::size_t b, std::size_t e) const {
    return has_block_barrier(b, e) || has_warp_op(b, e);
  }
  bool has_block_barrier(std::size_t b, std::size_t e) const {
    for (std::size_t i = b; i < e; ++i)
      if (is_ident(t_[i], "__syncthreads") || vote_op(t_[i]) >= 0) return true;
    return false;
  }
  bool has_warp_op(std::size_t b, std::size_t e) const {
    for (std::size_t i = b; i < e; ++i)
      if (warp_op(t_[i]) >= 0 || is_ident(t_[i], "__syncwarp")) return true;
    return false;
  }

  // The vote of __syncthreads_count / _and / _or (kiln_cpu::BarrierOp), or -1 for other tokens.
  static int vote_op(const Token& t) {
    if (t.kind != Token::ident) return -1;
    if (t.text == "__syncthreads_count") return 1;
    if (t.text == "__syncthreads_and") return 2;
    if (t.text == "__syncthreads_or") return 3;
    return -1;
  }

  // `T name = __syncthreads_count(pred);` (or _and, _or) [i, next): a region in which each thread
  // adds its vote to a block counter, then name declared between the regions (every thread
  // gets the same value: the block's count, or whether all or any voted); later regions see it
  // through their capture, so it must not be written after. Any other use of a vote (in an
  // expression, a header) is declined.
  bool vote_statement(std::size_t i, std::size_t next) {
    std::size_t eq = i;
    while (eq < next && !is_punct(t_[eq], "=")) ++eq;
    if (eq + 5 >= next || eq < i + 2 || t_[eq - 1].kind != Token::ident) return false;
    const int op = vote_op(t_[eq + 1]);
    const std::size_t open = eq + 2;
    if (op < 0 || !is_punct(t_[open], "(") || match_[open] + 2 != next ||
        !is_punct(t_[next - 1], ";"))
      return false;
    for (std::size_t k = i; k + 1 < eq; ++k)  // the type: words, `::`, `<...>` (no declarators)
      if (is_punct(t_[k], ",") || is_punct(t_[k], "*") || is_punct(t_[k], "&") ||
          is_punct(t_[k], "["))
        return false;
    const std::string name = t_[eq - 1].text;
    if (bound(name) || may_write(name, next))
      throw Refused("the result of a __syncthreads vote, '" + name +
                    "', is written or hides another");
    const std::string votes = "kiln_v" + std::to_string(++counter_) + "_";
    const std::size_t pred = open + 1, pred_end = match_[open];
    // [type name = __syncthreads_X(] -> the counter; [pred] -> the vote region; [);] -> name.
    blank(t_[i].begin, t_[pred].begin, "unsigned " + votes + " = 0;");
    edits_.push_back({t_[pred_end - 1].end, t_[pred_end - 1].end, ") != 0);"});
    write_region(pred, pred_end, false, true);
    edits_.push_back({t_[pred].begin, t_[pred].begin, votes + " += (("});
    blank(t_[pred_end].begin, t_[next - 1].end,
          " " + text(i, eq - 1) + " " + name + " = ::kiln_cpu::vote(" + votes + ", " +
              std::to_string(op) + ", kiln_n_, kiln_done_);");
    return true;
  }

  // A barrier-level statement list [b, e): regions cut at barriers, loops and ifs with barriers
  // recursed into.
  void statements(std::size_t b, std::size_t e, bool loop_body) {
    scopes_.emplace_back();
    if (scopes_.size() == 1) scopes_.back().replicated = std::move(param_copies_);
    scope_ends_.push_back(e);
    if (loop_body && b > 0)  // all threads returned: a `while (true)` must still end
      edits_.push_back({t_[b - 1].end, t_[b - 1].end, kLoopCheck});
    std::size_t region = e;  // first statement of the open region
    auto flush = [&](std::size_t end) {
      if (region != e) write_region(region, end);
      region = e;
    };
    std::optional<Rounds> rounds;  // a while loop's, when it runs as rounds
    for (std::size_t i = b; i < e;) {
      const std::size_t next = statement_end(i);
      if (next > e) throw Refused("a statement crossing its block");
      if (!has_barrier(i, next)) {
        if (is_ident(t_[i], "for") && strided_loop(i, next, region == e ? i : region)) {
          flush(i);
          if (affine_lockstep(i, next)) {
            ++lockstep_loops_;
          } else if (!consecutive_only_ || strides_along_x(i)) {
            lockstep(i, next);
            ++lockstep_loops_;
          } else {
            region = i;  // (a statement of the region it opens)
          }
        } else if (is_ident(t_[i], "while") &&
                   (rounds = while_rounds(i, next, region == e ? i : region))) {
          flush(i);
          if (rounds_fit(*rounds)) {
            write_rounds(*rounds);
            ++lockstep_loops_;
          } else {
            region = i;  // (a statement of the region it opens)
          }
        } else if (is_ident(t_[i], "for") && simt_loop(region == e ? i : region, i, next)) {
          flush(i);
          barrier_statement(i, next);  // (its region runs once per iteration)
        } else if (hoistable_lambda(i, next) || shared_extent_constant(i, next)) {
          flush(i);  // (left as written: later regions capture it by reference)
        } else if (t_[i].kind == Token::ident &&
                   (is_hoistable(t_[i].text) ||  // (`volatile __shared__ float s[64];` too)
                    (is_ident(t_[i], "volatile") && is_ident(t_[i + 1], "__shared__")))) {
          // Left out of the thread loops, a type definition must not declare variables too.
          const bool type = is_ident(t_[i], "struct") || is_ident(t_[i], "class") ||
                            is_ident(t_[i], "union") || is_ident(t_[i], "enum");
          if (type && !is_punct(t_[next - 2], "}"))
            throw Refused("a variable declared with its type at barrier level");
          flush(i);
          alias_shared(i, next);
          if (is_ident(t_[i], "using") || is_ident(t_[i], "typedef") ||
              is_ident(t_[i], "static_assert") || is_ident(t_[i], "constexpr"))
            name_storage(i, next);
        } else if (region == e) {
          region = i;
        }
        i = next;
        continue;
      }
      flush(i);
      if (warp_statement(i, next))
        region = i;  // the statement reads its results: it opens the next region
      else
        barrier_statement(i, next);
      i = next;
    }
    flush(e);
    scopes_.pop_back();
    scope_ends_.pop_back();
  }

  // A loop in which each thread strides through memory, the grid-stride loop of CUDA code:
  // `for (T i = <the thread's index>; cond; i += <stride>) body`, its start reading the thread's
  // index (threadIdx, a macro of it, a call such as kiln::grid<1>(), or a variable bound per
  // thread), its step adding something other than a literal, no break or continue of its own.
  // Run thread after thread, each thread's pass reads a new cache line per element; run in
  // lockstep (lockstep()), the block's threads read neighbouring elements together, as a GPU's.
  // (region: the first statement of the open region the loop ends, whose locals it may read:
  // `int tid = blockIdx.x * blockDim.x + threadIdx.x; for (int i = tid; ...)`)
  bool strided_loop(std::size_t i, std::size_t next, std::size_t region) const {
    if (!is_punct(t_[i + 1], "(")) return false;
    const std::size_t open = i + 1, close = match_[open];
    const std::vector<std::size_t> semis = header_semicolons(open, close);
    if (semis.size() != 2) return false;
    // init: a declaration of one variable, T name = expr
    std::size_t eq = open + 1;
    while (eq < semis[0] && !is_punct(t_[eq], "=") && !is_punct(t_[eq], ",")) ++eq;
    if (eq >= semis[0] || !is_punct(t_[eq], "=") || eq < open + 3 ||
        t_[eq - 1].kind != Token::ident)
      return false;
    for (std::size_t k = eq + 1; k < semis[0]; ++k)
      if (is_punct(t_[k], ",")) return false;
    const std::string& var = t_[eq - 1].text;
    const bool per_thread = reads_thread(eq + 1, semis[0], region, i);
    // step: var += something not a literal
    const std::size_t s = semis[1] + 1;
    if (!(s + 3 < close && is_ident(t_[s], var.c_str()) && is_punct(t_[s + 1], "+") &&
          is_punct(t_[s + 2], "=") && t_[s + 1].end == t_[s + 2].begin))
      return false;
    if (s + 4 == close && t_[s + 3].kind == Token::number) return false;
    return per_thread && !leaves_loop(close + 1, next);
  }

  // Whether the expression [b, e) may differ between threads: it reads threadIdx (or a macro of
  // it), calls a function (kiln::grid<N>() ...), or names a variable bound per thread or a
  // local of tokens [from, to) (an open region) declared with such a value.
  bool reads_thread(std::size_t b, std::size_t e, std::size_t from, std::size_t to) const {
    for (std::size_t k = b; k < e; ++k) {
      const Token& t = t_[k];
      if (t.kind != Token::ident) continue;
      const bool call = (is_punct(t_[k + 1], "(") && !is_keyword_type(t.text)) ||
                        (is_punct(t_[k + 1], "<") && t.text == "grid");  // kiln::grid<N>()
      if (call || (!member_name(k) &&
                   (t.text == "threadIdx" || thread_macros_.count(t.text) || replicated(t.text))))
        return true;
      if (member_name(k)) continue;
      // `T name = init` in [from, to), the last before the use: init reads the thread's index
      if (const auto d = local_declaration(t.text, from, std::min(to, k));
          d && reads_thread(d->first + 2, d->second, from, d->first))
        return true;
    }
    return false;
  }

  // The last declaration `T name = init` in tokens [from, to) (the name after a type's word or
  // a ','): its name's token and the end of its initialiser (the ';' or ',' after it).
  std::optional<std::pair<std::size_t, std::size_t>> local_declaration(const std::string& name,
                                                                       std::size_t from,
                                                                       std::size_t to) const {
    for (std::size_t d = to; d-- > from + 1;) {
      if (!is_ident(t_[d], name) || !is_punct(t_[d + 1], "=") || member_name(d) ||
          (t_[d - 1].kind != Token::ident && !is_punct(t_[d - 1], ",")))
        continue;
      std::size_t end = d + 2;
      while (end < to && !is_punct(t_[end], ";") && !is_punct(t_[end], ",")) {
        if (is_punct(t_[end], "(") || is_punct(t_[end], "[") || is_punct(t_[end], "{"))
          end = match_[end];
        ++end;
      }
      return std::pair{d, end};
    }
    return std::nullopt;
  }

  // Whether the for loop at i starts from threadIdx.x itself (`i = 4 * (blockIdx.x * blockDim.x
  // + threadIdx.x)`): no other axis, no call, no local. Such a loop's rounds read runs of
  // neighbouring elements even with a flag per thread (a 1-D pass of 16M floats, 4 per thread:
  // 29 ms thread after thread, 8 ms in rounds); a 2-D image loop's (the blur lab's `y =
  // start.y`) cost 10% where the grid covers the image, and gained nothing where it did not.
  bool strides_along_x(std::size_t i) const {
    const std::size_t open = i + 1, close = match_[open];
    std::size_t semi = open + 1;
    while (semi < close && !is_punct(t_[semi], ";")) ++semi;
    bool x = false;
    for (std::size_t k = open + 1; k < semi; ++k) {
      if (is_punct(t_[k], "(") && k > open + 1 && t_[k - 1].kind == Token::ident &&
          !is_keyword_type(t_[k - 1].text))
        return false;  // a call
      if (!is_ident(t_[k], "threadIdx")) continue;
      if (!is_punct(t_[k + 1], ".") || !is_ident(t_[k + 2], "x")) return false;
      x = true;
    }
    return x;
  }

  // Whether the loop body [b, e) holds a break, continue or goto of its own loop (those of
  // loops and switches inside it are theirs).
  bool leaves_loop(std::size_t b, std::size_t e) const {
    std::vector<std::size_t> nested;
    for (std::size_t k = b; k < e; ++k) {
      while (!nested.empty() && k >= nested.back()) nested.pop_back();
      if (is_ident(t_[k], "for") || is_ident(t_[k], "while") || is_ident(t_[k], "do") ||
          is_ident(t_[k], "switch")) {
        nested.push_back(statement_end(k));
        continue;
      }
      if (nested.empty() &&
          (is_ident(t_[k], "break") || is_ident(t_[k], "continue") || is_ident(t_[k], "goto")))
        return true;
    }
    return false;
  }

  // A loop without barriers whose iterations are better run in a GPU's order, each iteration
  // by all the block's threads before the next (it is then run as a loop around its body's
  // region, as a barrier loop is). Code written for a GPU indexes memory by the thread in the
  // last subscript (`tile[r][tx] = in[(y0 + r) * w + x0 + tx]`): run thread after thread, each
  // thread's pass reads a column of rows far apart, which the compiler turns into a call per
  // thread (memmove) or a strided loop; run iteration after iteration, the threads' loop reads
  // a row and vectorises. Only where that order changes nothing and costs no per-thread loads:
  // `for (T v = E0; v op E1; step)`, its bounds and step the same in every thread; a body that
  // leaves v alone, does not break out of the loop or return, writes no variable declared
  // before it (a sum carried across iterations stays in a register), names no per-thread
  // array, and subscripts parameters and __shared__ arrays by v, by indices and by what each
  // region recomputes (a per-thread pointer or index loaded from its copies would make every
  // access a gather: transposeCoalesced's block-row loops ran 2x slower), but never by v plus
  // a thread's offset (`p[tid * 64 + v]`, a thread's own run, is best read thread after
  // thread). region: the first statement of the region the loop would end.
  bool simt_loop(std::size_t region, std::size_t i, std::size_t next) {
    if (!is_punct(t_[i + 1], "(")) return false;
    const std::size_t open = i + 1, close = match_[open], body = close + 1;
    const std::vector<std::size_t> semis = header_semicolons(open, close);
    if (semis.size() != 2) return false;
    // init: T v = E0, one variable of an index type
    std::size_t eq = open + 1;
    while (eq < semis[0] && !is_punct(t_[eq], "=")) ++eq;
    if (eq >= semis[0] || eq < open + 3 || t_[eq - 1].kind != Token::ident ||
        !kIndexTypes.count(text(open + 1, eq - 1)) || !uniform_expr(eq + 1, semis[0]))
      return false;
    const std::string& var = t_[eq - 1].text;
    if (replica(var) || bound(var)) return false;  // (it would hide a barrier-level name)
    // condition: v < E1 (or <=, >, >=, !=); step: v++, ++v, v--, --v, v op= E
    const std::size_t c = semis[0] + 1;
    if (!is_ident(t_[c], var)) return false;
    std::size_t bound_at = c + 1;
    if (is_punct(t_[c + 1], "<") || is_punct(t_[c + 1], ">"))
      bound_at = is_punct(t_[c + 2], "=") ? c + 3 : c + 2;
    else if (is_punct(t_[c + 1], "!") && is_punct(t_[c + 2], "="))
      bound_at = c + 3;
    if (bound_at == c + 1 || is_punct(t_[bound_at], "<") || is_punct(t_[bound_at], ">") ||
        !uniform_expr(bound_at, semis[1]))
      return false;
    const std::size_t s = semis[1] + 1;
    auto twice = [&](std::size_t k) {  // ++ or --
      return (is_punct(t_[k], "+") || is_punct(t_[k], "-")) && is_punct(t_[k + 1], t_[k].text);
    };
    const bool by_one = close == s + 3 && ((is_ident(t_[s], var) && twice(s + 1)) ||
                                           (twice(s) && is_ident(t_[s + 2], var)));
    std::size_t op_end = s + 1;
    while (op_end < close && t_[op_end].kind == Token::punct && !is_punct(t_[op_end], "=") &&
           !is_punct(t_[op_end], "("))
      ++op_end;
    const bool by_uniform = is_ident(t_[s], var) && op_end > s + 1 && op_end < close &&
                            is_punct(t_[op_end], "=") && uniform_expr(op_end + 1, close);
    if (!by_one && !by_uniform) return false;
    for (std::size_t k = open + 1; k < close; ++k)  // (header_part takes no other calls)
      if (is_punct(t_[k], "(") && t_[k - 1].kind == Token::ident &&
          !is_keyword_type(t_[k - 1].text))
        return false;
    // The per-thread arrays declared before the loop (a replicated one would cost its copies).
    std::set<std::string> own_arrays;
    for (std::size_t k = open_ + 1; k < i; ++k)
      if (t_[k].kind == Token::ident && is_punct(t_[k + 1], "[") && declares(k) &&
          !shared_names_.count(t_[k].text))
        own_arrays.insert(t_[k].text);
    std::set<std::string> declared;
    for (std::size_t k = body; k < next; ++k)
      if (t_[k].kind == Token::ident && declares(k)) declared.insert(t_[k].text);
    if (leaves_loop(body, next)) return false;
    bool indexes_by_var = false;
    for (std::size_t k = body; k < next; ++k) {
      const Token& t = t_[k];
      if (in_lambda_[k] || is_ident(t, "return") || is_ident(t, "goto") ||
          is_ident(t, "__shared__") || is_ident(t, "static"))
        return false;
      if (is_punct(t, "[")) {
        const Token& array = t_[k - 1];
        if (array.kind == Token::ident && !params_.count(array.text) &&
            !shared_names_.count(array.text))
          return false;
        if (named_in({var}, k + 1, match_[k])) indexes_by_var = true;
        if (!is_punct(t_[match_[k] + 1], "[") && plain_term(k + 1, match_[k], var))
          return false;  // the last subscript
      }
      if (t.kind != Token::ident || member_name(k)) continue;
      if (own_arrays.count(t.text)) return false;
      if (t.text == var && (writes(k) || written_by_call(k))) return false;
      if (!declared.count(t.text) && (writes(k, true) || written_by_call(k))) return false;
    }
    return indexes_by_var && recomputed_subscripts(region, i, next, var);
  }
  // Whether every subscript in the loop [i, next) is pure(): the loop's variable var, indices,
  // parameters, and variables that the regions recompute, those declared in [region, i) too.
  bool recomputed_subscripts(std::size_t region, std::size_t i, std::size_t next,
                             const std::string& var) {
    local_inits_.clear();  // (as write_region will note them)
    for (std::size_t s = region; s < i;) {
      const std::size_t end = statement_end(s);
      if (t_[s].kind == Token::ident && !is_statement_keyword(t_[s].text) &&
          declarator_names(s, end - 1))
        note_local_inits(s, end - 1);
      s = end;
    }
    scopes_.emplace_back();
    scopes_.back().uniform.push_back(var);
    bool pure_all = true;
    for (std::size_t k = match_[i + 1] + 1; k < next && pure_all; ++k)
      if (is_punct(t_[k], "[")) pure_all = pure(k + 1, match_[k], true);
    scopes_.pop_back();
    local_inits_.clear();
    return pure_all;
  }
  // Whether var is a term of the sum [b, e) with coefficient one, itself or inside a
  // parenthesised term (`v`, `base + v`, `(v + 1) - x`), not in a product (`(v + 1) * w`).
  bool plain_term(std::size_t b, std::size_t e, const std::string& var) const {
    std::size_t from = b;
    for (std::size_t k = b; k <= e; ++k) {
      if (k < e && (is_punct(t_[k], "(") || is_punct(t_[k], "["))) {
        k = match_[k];
        continue;
      }
      const bool binary =
          k < e && (is_punct(t_[k], "+") || is_punct(t_[k], "-")) && k > from &&
          (t_[k - 1].kind != Token::punct || is_punct(t_[k - 1], ")") || is_punct(t_[k - 1], "]"));
      if (k < e && !binary) continue;
      if (k == from + 1 && is_ident(t_[from], var)) return true;  // the term `v`
      if (k > from + 1 && is_punct(t_[from], "(") && match_[from] == k - 1 &&
          plain_term(from + 1, k - 1, var))
        return true;  // `(v + 1)`
      from = k + 1;
    }
    return false;
  }

  // A strided loop [i, next) (strided_loop) run in lockstep: the init as a region of its own
  // (its variable one per thread), then rounds while any thread is still in the loop, each
  // round one region in which every such thread tests the condition, runs the body once and
  // steps. Lines are kept: the header's condition and step move into the round's region.
  void lockstep(std::size_t i, std::size_t next) {
    const std::size_t open = i + 1, close = match_[open];
    const std::vector<std::size_t> semis = header_semicolons(open, close);  // two: checked
    const std::size_t semi0 = semis[0], semi1 = semis[1];
    const std::string live = "kiln_live" + std::to_string(++counter_) + "_";
    const std::string cond = text(semi0 + 1, semi1), step = text(semi1 + 1, close);
    scopes_.emplace_back();  // the loop variable's scope ends with the loop
    scope_ends_.push_back(next);
    edits_.push_back({t_[i].begin, t_[open].end,
                      "{ bool " + live + "[kiln_n_]; ::kiln_cpu::enter_lockstep(" + live +
                          ", kiln_n_, kiln_done_, kiln_act_);"});
    write_region(open + 1, semi0 + 1);  // the init: a declaration
    // The round: a region over the body, the test before it and the step after it.
    const std::size_t body = close + 1;
    edits_.push_back({t_[next - 1].end, t_[next - 1].end, " " + step + ";"});
    blank(t_[semi0 + 1].begin, t_[close].end,
          " while (::kiln_cpu::in_lockstep(" + live + ", kiln_n_, kiln_done_)) {");
    write_region(body, next, has_call(semi0 + 1, close));
    edits_.push_back({t_[body].begin, t_[body].begin,
                      " if (!" + live + "[kiln_t_]) return {}; if (!(" + cond + ")) { " + live +
                          "[kiln_t_] = false; return {}; }"});
    edits_.push_back({t_[next - 1].end, t_[next - 1].end, " } }"});
    scopes_.pop_back();
    scope_ends_.pop_back();
  }

  // Whether tokens [b, e) are pure() and the same in every thread of the block: no threadIdx,
  // no replicated variable but uniform ones. (loop_variables: the barrier loops' variables too,
  // the same in every thread, which differ between regions.)
  bool uniform_expr(std::size_t b, std::size_t e, bool loop_variables = false) const {
    if (b >= e) return false;
    for (std::size_t k = b; k < e; ++k) {
      const Token& t = t_[k];
      if (t.kind != Token::ident || member_name(k)) continue;
      if (t.text == "threadIdx" || thread_macros_.count(t.text)) return false;
      if (const Replica* r = replica(t.text); r && !r->uniform) return false;
      if (auto l = local_inits_.find(t.text); l != local_inits_.end() && !l->second.uniform)
        return false;
    }
    return pure(b, e, loop_variables);
  }
  // The replicated variable visible by that name (innermost first), or null.
  const Replica* replica(const std::string& name) const {
    for (auto s = scopes_.rbegin(); s != scopes_.rend(); ++s)
      for (auto r = s->replicated.rbegin(); r != s->replicated.rend(); ++r)
        if (r->name == name) return &*r;
    return nullptr;
  }

  // Tokens [b, e) as text for a header read once per block: replicated names read the leader's
  // copy (or the copy at index: "0" in a type, `decltype(v)`).
  std::string lead_text(std::size_t b, std::size_t e,
                        const std::string& index = "KILN_LEAD") const {
    std::string out;
    for (std::size_t k = b; k < e; ++k) {
      if (k > b && t_[k].begin != t_[k - 1].end) out += ' ';
      const Token& t = t_[k];
      std::optional<std::string> storage;
      if (t.kind == Token::ident && !member_name(k)) storage = replicated(t.text);
      if (storage)
        out += "(" + *storage + "[" + index + "])";
      else
        out.append(src_.substr(t.begin, t.end - t.begin));
    }
    return out;
  }

  // The start of a strided loop [init_b, init_e) as the block's first index, when each thread's
  // start is that plus threadIdx.x: `blockIdx.x * blockDim.x + threadIdx.x` (in any order of
  // the sum), `threadIdx.x`, `kiln::grid<1>()`. nullopt otherwise.
  std::optional<std::string> affine_base(std::size_t b, std::size_t e) const {
    if (e == b + 8 && is_ident(t_[b], "kiln") && is_punct(t_[b + 1], "::") &&
        is_ident(t_[b + 2], "grid") && is_punct(t_[b + 3], "<") && t_[b + 4].text == "1" &&
        is_punct(t_[b + 5], ">") && is_punct(t_[b + 6], "(") && is_punct(t_[b + 7], ")"))
      return std::string("(long long)blockIdx.x * blockDim.x");
    // Terms of a top-level sum; nothing of lower precedence than + at the top level.
    std::vector<std::pair<std::size_t, std::size_t>> terms;
    std::size_t from = b;
    for (std::size_t k = b; k < e; ++k) {
      const Token& t = t_[k];
      if (is_punct(t, "(") || is_punct(t, "[")) {
        k = match_[k];
        continue;
      }
      static const std::set<std::string> lower{"<", ">", "=", "&", "^", "|", "?", ":", ","};
      if (t.kind == Token::punct && lower.count(t.text)) return std::nullopt;
      const bool binary_plus = is_punct(t, "+") && k > from && !is_punct(t_[k + 1], "+") &&
                               !is_punct(t_[k - 1], "+") && t_[k - 1].kind != Token::punct;
      const bool after_group =
          is_punct(t, "+") && k > from && (is_punct(t_[k - 1], ")") || is_punct(t_[k - 1], "]"));
      if (binary_plus || after_group) {
        terms.emplace_back(from, k);
        from = k + 1;
      }
    }
    terms.emplace_back(from, e);
    std::string base;
    int own = 0;
    for (auto [tb, te] : terms) {
      // (threadIdx.x, or int(threadIdx.x) as signed_indices.h reads it)
      const bool wrapped = te == tb + 6 && is_ident(t_[tb], "int") && is_punct(t_[tb + 1], "(") &&
                           is_punct(t_[tb + 5], ")");
      const std::size_t x = wrapped ? tb + 2 : tb;
      const bool thread_x = (wrapped || te == tb + 3) && is_ident(t_[x], "threadIdx") &&
                            is_punct(t_[x + 1], ".") && is_ident(t_[x + 2], "x");
      const Replica* r = te == tb + 1 ? replica(t_[tb].text) : nullptr;
      if (thread_x || (r && (r->init == "threadIdx.x" ||
                             r->init == "int(threadIdx.x)"))) {  // `int tid = threadIdx.x;`
        ++own;
        continue;
      }
      // `int tid = blockIdx.x * blockDim.x + threadIdx.x;` read as its initialiser
      if (const auto inner = r && !r->init.empty() && r->init_e > r->init_b
                                 ? affine_base(r->init_b, r->init_e)
                                 : std::nullopt) {
        ++own;
        base += (base.empty() ? "" : " + ") + *inner;
        continue;
      }
      if (!uniform_expr(tb, te)) return std::nullopt;
      base += (base.empty() ? "" : " + ") + lead_text(tb, te);
    }
    if (own != 1) return std::nullopt;
    return base.empty() ? "0" : "(" + base + ")";
  }

  // A grid-stride loop of consecutive threads, as rounds: the statement [at, next) whose header
  // closes at token close and whose body follows it; var of type (as written) starts at base in
  // the block's first thread; its condition is tokens [cond, cond_end) (`var < bound`), its
  // stride [step, step_end).
  struct Rounds {
    std::size_t at, close, next;
    std::string var, type, base;
    std::size_t cond, cond_end, step, step_end;
    bool calls;                // the header calls functions (their threadIdx is set per thread)
    std::size_t own_step = 0;  // a while's: its last statement, `var += stride;` (0: none)
  };
  // A strided loop (strided_loop) whose threads start at the block's first index plus
  // threadIdx.x, stop at a bound `i < n` (or <=) and step by a stride that are the same in
  // every thread: then in each round the threads' indices are consecutive, and the round
  // itself is a plain loop over the block's index, `for (k = base; k < n; k += stride)`, in
  // which every thread runs the body with i = k + threadIdx.x (those past the bound skip it).
  // No per-thread index or live flags: the compiler sees consecutive elements and can
  // vectorise the round. False when the loop is not of that form.
  bool affine_lockstep(std::size_t i, std::size_t next) {
    const std::size_t open = i + 1, close = match_[open];
    const std::vector<std::size_t> semis = header_semicolons(open, close);
    std::size_t eq = open + 1;
    while (eq < semis[0] && !is_punct(t_[eq], "=")) ++eq;
    Rounds r{i,
             close,
             next,
             t_[eq - 1].text,
             text(open + 1, eq - 1),
             {},
             semis[0] + 1,
             semis[1],
             semis[1] + 4,
             close,
             has_call(semis[0], close)};
    for (std::size_t k = open + 1; k + 1 < eq; ++k)
      if (is_punct(t_[k], "*") || is_punct(t_[k], "&") || is_ident(t_[k], "auto")) return false;
    const std::optional<std::string> base = affine_base(eq + 1, semis[0]);
    if (!base || !rounds_fit(r)) return false;
    r.base = *base;
    write_rounds(r);
    return true;
  }

  // The same for the while form of a grid-stride loop, as cuda-samples' reduce6 writes it:
  // `T i = <the block's first index> + threadIdx.x; ... while (i < n) { body; i += stride; }`,
  // i declared before the loop in the same statement list, not written between, named nowhere
  // after the loop, and its last statement the loop's only step. region: the first statement of
  // the open region the loop ends (i's declaration may be there).
  std::optional<Rounds> while_rounds(std::size_t i, std::size_t next, std::size_t region) const {
    const std::size_t open = i + 1, close = match_[open], body = close + 1;
    if (!is_punct(t_[open], "(") || !is_punct(t_[body], "{") || match_[body] + 1 != next)
      return std::nullopt;
    const std::size_t c = open + 1;
    if (t_[c].kind != Token::ident) return std::nullopt;
    const std::string& var = t_[c].text;
    // The last statement: `var += stride ;`.
    const std::size_t semi = next - 2;
    if (!is_punct(t_[semi], ";")) return std::nullopt;
    std::size_t last = semi;  // its first token
    while (last > body + 1 && !is_punct(t_[last - 1], ";") && !is_punct(t_[last - 1], "}") &&
           !is_punct(t_[last - 1], "{"))
      --last;
    if (!(is_ident(t_[last], var) && is_punct(t_[last + 1], "+") && is_punct(t_[last + 2], "=") &&
          t_[last + 1].end == t_[last + 2].begin && last + 3 < semi))
      return std::nullopt;
    // The declaration, `T var = init;` at this level since the open region began, one declarator.
    const auto declaration = local_declaration(var, region, i);
    if (!declaration) return std::nullopt;
    const auto [name, init_end] = *declaration;
    std::size_t first = name;  // the type's first word
    while (first > region && (t_[first - 1].kind == Token::ident || is_punct(t_[first - 1], "::")))
      --first;
    if (first == name || !is_punct(t_[init_end], ";") ||
        (first > open_ + 1 && !is_punct(t_[first - 1], ";") && !is_punct(t_[first - 1], "}") &&
         !is_punct(t_[first - 1], "{")) ||
        !kIndexTypes.count(text(first, name)) || may_write(var, init_end, i) ||
        named_in({var}, next, close_))
      return std::nullopt;
    for (std::size_t k = body + 1; k < last; ++k)  // nothing else moves it, nor leaves the loop
      if (is_ident(t_[k], var) && !member_name(k) && (writes(k) || written_by_call(k)))
        return std::nullopt;
    if (leaves_loop(body + 1, last)) return std::nullopt;
    Rounds r{i, close, next,     var,  text(first, name),     {},
             c, close, last + 3, semi, has_call(open, close), last};
    const std::optional<std::string> base = affine_base(name + 2, init_end);
    if (!base) return std::nullopt;
    r.base = *base;
    return r;  // (rounds_fit once the region before it is written: its stride may be a local)
  }

  // Whether r's condition is `var < bound` (or <=) and its bound and stride are the same in
  // every thread, and its body does not move var.
  bool rounds_fit(const Rounds& r) const {
    const std::size_t c = r.cond;
    if (!is_ident(t_[c], r.var) || !is_punct(t_[c + 1], "<") || is_punct(t_[c + 2], "<"))
      return false;
    const std::size_t bound = is_punct(t_[c + 2], "=") ? c + 3 : c + 2;
    if (!uniform_expr(bound, r.cond_end) || !uniform_expr(r.step, r.step_end)) return false;
    for (std::size_t k = r.close + 1; k < r.next; ++k)
      if (is_ident(t_[k], r.var) && !member_name(k) && (writes(k) || written_by_call(k)) &&
          k != r.own_step)
        return false;
    return true;
  }
  // Writes r as rounds: a loop over the block's first index, `for (k = base; k < n; k +=
  // stride)`, in which every thread runs the body with var = k + threadIdx.x (those past the
  // bound skip it).
  void write_rounds(const Rounds& r) {
    const std::size_t c = r.cond, body = r.close + 1, next = r.next;
    const std::size_t bound = is_punct(t_[c + 2], "=") ? c + 3 : c + 2;
    const std::string round = "kiln_k" + std::to_string(++counter_) + "_";
    const std::string index_type = "std::remove_cv_t<" + r.type + ">";
    const std::string stride = lead_text(r.step, r.step_end);
    // Each round prefetches the elements its threads will read two rounds on from the
    // parameters the body indexes by the loop's variable (`values[i]`).
    std::string prefetches;
    std::set<std::string> indexed;
    for (std::size_t k = body; k + 3 < next; ++k)
      if (t_[k].kind == Token::ident && !member_name(k) && params_.count(t_[k].text) &&
          is_punct(t_[k + 1], "[") && is_ident(t_[k + 2], r.var) && is_punct(t_[k + 3], "]") &&
          indexed.insert(t_[k].text).second)
        prefetches += " ::kiln_cpu::prefetch_elements(" + t_[k].text + ", " + round + " + 2 * (" +
                      stride + "), kiln_b_.x, 0);";
    scopes_.emplace_back();
    scope_ends_.push_back(next);
    if (r.own_step) blank(t_[r.own_step].begin, t_[r.step_end].end);  // (the rounds step)
    blank(t_[r.at].begin, t_[r.close].end,
          "{ for (" + index_type + " " + round + " = " + r.base + "; " + round + " " +
              text(c + 1, bound) + " " + lead_text(bound, r.cond_end) + "; " + round +
              " += " + stride + ") {" + prefetches);
    edits_.push_back({t_[next - 1].end, t_[next - 1].end, " }"});
    round_index_ = {round, index_type};  // the region hands its threads var's value
    write_region(body, next, r.calls);
    edits_.push_back({t_[body].begin, t_[body].begin,
                      "{ [[maybe_unused]] " + index_type + " " + r.var + " = kiln_i_; if (!(" +
                          text(c, r.cond_end) + ")) return {};"});
    edits_.push_back({t_[next - 1].end, t_[next - 1].end, " } }"});
    scopes_.pop_back();
    scope_ends_.pop_back();
  }

  // Whether any of names is named (not as a member) in tokens [b, e).
  bool named_in(const std::vector<std::string>& names, std::size_t b, std::size_t e) const {
    for (std::size_t k = b; k < e; ++k)
      if (t_[k].kind == Token::ident && !member_name(k) &&
          std::find(names.begin(), names.end(), t_[k].text) != names.end())
        return true;
    return false;
  }

  // Whether token i, a kiln::Array parameter, is `&a[...]`, `&a.data[...]` or `&a(...)`: the
  // address of an element, in memory the array points to, not of the parameter itself.
  bool array_element_address(std::size_t i) const {
    if (!array_params_.count(t_[i].text) || i == 0 || !is_punct(t_[i - 1], "&")) return false;
    if (is_punct(t_[i + 1], "[") || is_punct(t_[i + 1], "(")) return true;
    return is_punct(t_[i + 1], ".") && is_ident(t_[i + 2], "data") && is_punct(t_[i + 3], "[");
  }

  // Whether the variable name may be written in tokens [from, to) (default: to the body's end):
  // assigned, incremented, its address taken, or passed to a call that may take it by reference
  // (written_by_call).
  bool may_write(const std::string& name, std::size_t from, std::size_t to = 0) const {
    for (std::size_t k = from; k < (to ? to : close_); ++k)
      if (t_[k].kind == Token::ident && t_[k].text == name && !member_name(k) &&
          (writes(k) || written_by_call(k)))
        return true;
    return false;
  }

  // Whether the variable named at token k is itself an argument of a call (not a value
  // macro's), which a reference parameter could bind to: `f(x)`, `f((x), c ? x : y)`,
  // `f(v.member)`, `f(p[i])`. Inside an operand it is only read: `f(a[x] + x - 1)`.
  bool call_argument(std::size_t k) const {
    // (a parenthesis beside it counts as an argument's edge: `f((x) + 1)` is taken as passed)
    auto edge = [&](std::size_t j) {
      return j < t_.size() &&
             (is_punct(t_[j], "(") || is_punct(t_[j], ")") || is_punct(t_[j], ",") ||
              is_punct(t_[j], "?") || is_punct(t_[j], ":"));
    };
    const std::size_t next = k + 1;
    const bool member =
        next < t_.size() &&
        (is_punct(t_[next], ".") || is_punct(t_[next], "[") ||
         (is_punct(t_[next], "-") && next + 1 < t_.size() && is_punct(t_[next + 1], ">")));
    if (k == 0 || !(member || (edge(k - 1) && edge(next)))) return false;
    return in_call_arguments(k);
  }

  // Whether a call may write the variable named at token k: k is the object of a member
  // function call (`it.advance(n)`), or passed whole to a call that may take it by reference
  // (`adv(p, n)` with `void adv(const float*& p, int n)`, a macro `ADV(p, n)` that assigns it).
  // Known to take it by value: math functions, CUDA's intrinsics and atomics (their operands are
  // values and pointers), and the source's functions whose every definition declares that
  // parameter without a non-const '&'. (Only a write spelled out in the body was seen: each
  // thread of a block then advanced one shared copy of a parameter, or a grid-stride loop's
  // round recomputed an index a helper had moved.)
  bool written_by_call(std::size_t k) const {
    std::size_t j = k + 1;
    bool member = false;
    while (j + 1 < t_.size() && is_punct(t_[j], ".") && t_[j + 1].kind == Token::ident)
      j += 2, member = true;
    if (member && j < t_.size() && is_punct(t_[j], "(")) return true;
    if (!call_argument(k)) return false;
    // k and its members (`it.p`), through parentheses right around them (`f((p))`), must be a
    // whole argument: after '(' or ',', before ',' or ')'. Then its index among the call's.
    std::size_t first = k, last = j - 1;
    while (first > 0 && last + 1 < t_.size() && is_punct(t_[first - 1], "(") &&
           match_[first - 1] == last + 1 && regions::callee(t_, first - 1) >= t_.size())
      --first, ++last;
    if (first == 0 || last + 1 >= t_.size()) return false;
    if (is_punct(t_[first - 1], "?") || is_punct(t_[first - 1], ":") ||
        is_punct(t_[last + 1], "?") || is_punct(t_[last + 1], ":"))
      return true;  // (`f(c ? a : b)` binds a reference to a or b)
    if (!(is_punct(t_[first - 1], "(") || is_punct(t_[first - 1], ",")) ||
        !(is_punct(t_[last + 1], ")") || is_punct(t_[last + 1], ",")))
      return false;
    int index = 0;
    std::size_t open = first - 1;
    for (; !is_punct(t_[open], "("); --open) {
      if (is_punct(t_[open], ")") || is_punct(t_[open], "]") || is_punct(t_[open], "}"))
        open = match_[open];
      else if (is_punct(t_[open], ","))
        ++index;
      else if (is_punct(t_[open], "[") || is_punct(t_[open], "{") || is_punct(t_[open], ";") ||
               open == 0)
        return false;
    }
    const std::size_t name = regions::callee(t_, open);
    if (name >= t_.size()) return false;  // (a grouping: k is in an expression's value)
    const std::string& f = t_[name].text;
    if (is_keyword_type(f) || is_statement_keyword(f) || f == "sizeof" || f == "switch" ||
        f == "while" || f == "if" || is_pure_math(f) || value_macros_.count(f) ||
        warp_op(t_[name]) >= 0 || f.rfind("__", 0) == 0 || f.rfind("atomic", 0) == 0 ||
        f == "printf" || f == "assert")
      return false;
    return !by_value_everywhere(f, index);
  }

  // Whether the source defines function name, and every definition's parameter index is taken
  // by value (no '&' but after `const`).
  bool by_value_everywhere(const std::string& name, int index) const {
    bool defined = false;
    for (std::size_t k = 0; k + 1 < t_.size(); ++k) {
      if (!is_ident(t_[k], name) || !is_punct(t_[k + 1], "(") ||
          (k > 0 && (is_punct(t_[k - 1], ".") || is_punct(t_[k - 1], "::"))))
        continue;
      // (matched here: the definition is outside the body, which match_ pairs alone)
      std::size_t close = k + 2;
      for (int depth = 0; close < t_.size(); ++close) {
        if (is_punct(t_[close], "(")) ++depth;
        if (is_punct(t_[close], ")") && depth-- == 0) break;
      }
      std::size_t after = close + 1;
      while (after < t_.size() && t_[after].kind == Token::ident) ++after;  // const, noexcept
      if (after >= t_.size() || !is_punct(t_[after], "{") || k == 0 ||
          !(t_[k - 1].kind == Token::ident || is_punct(t_[k - 1], "*") ||
            is_punct(t_[k - 1], "&") || is_punct(t_[k - 1], ">")))
        continue;  // a call, not a definition
      defined = true;
      int at = 0, depth = 0;  // (inside parentheses, brackets or template arguments: no comma)
      bool is_const = false;
      for (std::size_t x = k + 2; x < close; ++x) {
        if (is_punct(t_[x], "(") || is_punct(t_[x], "[") || is_punct(t_[x], "<")) ++depth;
        if (is_punct(t_[x], ")") || is_punct(t_[x], "]") || is_punct(t_[x], ">")) --depth;
        if (depth > 0) continue;
        if (is_punct(t_[x], ",")) ++at, is_const = false;
        if (at != index) continue;
        if (is_ident(t_[x], "const")) is_const = true;
        if (is_punct(t_[x], "*")) is_const = false;  // (`const float*& p`: the pointer is not)
        if (is_punct(t_[x], "&") && !is_const) return false;
      }
    }
    return defined;
  }

  // The source's macros whose expansion writes a name: assigns it, or increments or decrements
  // it (`#define STEP p += threadIdx.x`), each with the names it writes.
  std::map<std::string, std::set<std::string>> macro_writes() const {
    std::map<std::string, std::set<std::string>> out;
    for (std::size_t k = 0; k + 1 < t_.size(); ++k) {
      if (!t_[k].directive || !is_ident(t_[k], "define") || t_[k + 1].kind != Token::ident)
        continue;
      for (std::size_t j = k + 2; j + 2 < t_.size() && t_[j].directive; ++j) {
        if (is_ident(t_[j], "define")) break;  // (the next directive's)
        if (t_[j].kind != Token::ident) continue;
        auto adjacent = [&](std::size_t a) { return t_[a].end == t_[a + 1].begin; };
        const Token& n = t_[j + 1];
        static const std::set<std::string> ops{"+", "-", "*", "/", "%", "&", "|", "^"};
        const bool assigned = (is_punct(n, "=") && !is_punct(t_[j + 2], "=")) ||
                              (n.kind == Token::punct && ops.count(n.text) &&
                               is_punct(t_[j + 2], "=") && adjacent(j + 1)) ||
                              ((is_punct(n, "+") || is_punct(n, "-")) &&
                               is_punct(t_[j + 2], n.text) && adjacent(j + 1));
        const bool stepped = j >= 2 && (is_punct(t_[j - 1], "+") || is_punct(t_[j - 1], "-")) &&
                             is_punct(t_[j - 2], t_[j - 1].text) && adjacent(j - 2);
        if (assigned || stepped) out[t_[k + 1].text].insert(t_[j].text);
      }
    }
    return out;
  }

  // Whether token k is inside the argument list of a call (not a value macro's).
  bool in_call_arguments(std::size_t k) const {
    static const std::set<std::string> not_calls{"if",     "for",    "while",
                                                 "switch", "return", "sizeof"};
    for (std::size_t j = k; j-- > 0;) {
      const Token& t = t_[j];
      if (is_punct(t, ")") || is_punct(t, "]")) {
        j = match_[j];  // a closed group before k
      } else if (is_punct(t, "(") && j > 0) {
        const Token& p = t_[j - 1];
        if (p.kind == Token::ident && !is_keyword_type(p.text) && !is_qualifier(p.text) &&
            !not_calls.count(p.text) && !value_macros_.count(p.text) && warp_op(p) < 0)
          return true;  // (a warp operation takes its operands by value)
        if (is_punct(p, ">") || is_punct(p, ")") || is_punct(p, "]")) return true;
      } else if (is_punct(t, "{") || is_punct(t, "}") || is_punct(t, ";")) {
        return false;
      }
    }
    return false;
  }

  // Whether the regions bind name (a replicated variable, a shared array or a loop variable).
  bool bound(const std::string& name) const {
    for (const Scope& sc : scopes_) {
      for (const auto& r : sc.replicated)
        if (r.name == name) return true;
      for (const auto& s : sc.shared)
        if (s.first == name) return true;
      for (const auto& u : sc.uniform)
        if (u == name) return true;
      for (const auto& l : sc.lambdas)
        if (l.name == name) return true;
    }
    return false;
  }

  // The name an `auto` declaration [b, e) declares (`const auto* x = ...`), or "".
  std::string auto_name(std::size_t b, std::size_t e) const {
    std::size_t k = b;
    while (k < e && (is_qualifier(t_[k].text) || is_ident(t_[k], "auto") || is_punct(t_[k], "*") ||
                     is_punct(t_[k], "&")))
      ++k;
    return k < e && t_[k].kind == Token::ident ? t_[k].text : "";
  }

  // A `__shared__` declaration [b, e): each name gets a reference taken here, once per block,
  // which the regions bind the name to. Declarations it cannot read keep no alias.
  // - In the kernel's outermost block (not extern, not static), the variables become automatic:
  //   a region-mode block runs whole in one call of the kernel, on its worker's stack, so its
  //   shared memory can live there. The compiler then knows them apart from every other
  //   object: a store to a thread-local reached through a hidden address (below) may write
  //   anything whose address escaped (the kernel's parameters, captured by the regions), which
  //   then are reloaded after every store (the histogram lab: 10 ms as thread-locals, 6.4 ms
  //   so), and GCC vectorises no gather beside such a store.
  // - Elsewhere they stay thread-locals (__shared__), reached through a reference taken here,
  //   its origin hidden: a thread-local's address costs a __tls_get_addr call, which GCC does
  //   not hoist out of a thread loop.
  void alias_shared(std::size_t b, std::size_t e) {
    std::size_t k = b, shared_word = e;
    bool storage_class = false;  // extern or static
    for (;
         k < e && t_[k].kind == Token::ident &&
         (is_ident(t_[k], "extern") || is_ident(t_[k], "static") || is_ident(t_[k], "__shared__") ||
          is_ident(t_[k], "volatile"));  // (`volatile __shared__ float s[64];`: only names matter)
         ++k) {
      if (is_ident(t_[k], "__shared__")) shared_word = k;
      storage_class = storage_class || is_ident(t_[k], "extern") || is_ident(t_[k], "static");
    }
    if (shared_word == e || !is_punct(t_[e - 1], ";")) return;
    std::optional<std::vector<std::string>> names;
    try {
      names = declarator_names(k, e - 1);
    } catch (const Refused&) {
    }
    if (!names) return;
    // (A lambda naming one keeps it thread-local: `[=]` would copy an automatic array.)
    bool in_lambda = false;
    for (std::size_t j = open_; j < close_ && !in_lambda; ++j)
      in_lambda = in_lambda_[j] && t_[j].kind == Token::ident &&
                  std::find(names->begin(), names->end(), t_[j].text) != names->end();
    const bool automatic = scopes_.size() == 1 && !storage_class && !in_lambda;
    if (automatic) blank(t_[shared_word].begin, t_[shared_word].end);
    std::string aliases;
    for (const auto& name : *names) {
      const std::string alias = "kiln_s" + std::to_string(++counter_) + "_" + name;
      shared_names_.insert(name);
      aliases += " [[maybe_unused]] auto& " + alias + " = " +
                 (automatic ? name : "*::kiln_cpu::opaque(&" + name + ")") + ";";
      scopes_.back().shared.emplace_back(name, alias);
    }
    edits_.push_back({t_[e - 1].end, t_[e - 1].end, aliases});
  }

  // The warp operation (kiln_cpu::WarpOp) token t calls, or -1. (__syncwarp ends a region
  // instead, as __syncthreads does; the plan sends kernels with other warp operations to fibers.)
  static int warp_op(const Token& t) {
    if (t.kind != Token::ident) return -1;
    auto op = warp_steps().find(t.text);
    return op == warp_steps().end() ? -1 : op->second;
  }

  // The top-level arguments of the call whose '(' is at open: [begin, end) of each.
  std::vector<std::pair<std::size_t, std::size_t>> arguments(std::size_t open) const {
    std::vector<std::pair<std::size_t, std::size_t>> args;
    const std::size_t close = match_[open];
    if (close == open + 1) return args;
    std::size_t begin = open + 1;
    for (std::size_t k = begin; k <= close; ++k) {
      if (k < close && (is_punct(t_[k], "(") || is_punct(t_[k], "[") || is_punct(t_[k], "{")))
        k = match_[k];
      else if (k == close || is_punct(t_[k], ",")) {
        args.emplace_back(begin, k);
        begin = k + 1;
      }
    }
    return args;
  }

  // A statement [i, next) that calls warp operations (not a loop, if or block: those are
  // recursed into): a region stores each running thread's operands in slots, a step per
  // operation computes every thread's result, and the statement itself, each call replaced by
  // the thread's result, opens the region after. False for other statements.
  bool warp_statement(std::size_t i, std::size_t next) {
    const Token& t = t_[i];
    if (is_punct(t, "{") || is_ident(t, "if") || is_ident(t, "for") || is_ident(t, "while") ||
        is_ident(t, "do") || is_ident(t, "switch") || is_ident(t, "__syncwarp") ||
        has_block_barrier(i, next) || !has_warp_op(i, next))
      return false;
    edits_.push_back({t.begin, t.begin, warp_steps_before(i, next)});
    return true;
  }

  // The warp operations called in tokens [b, e), each replaced by the thread's result: the
  // slots of their operands, a region that stores each running thread's, and a step per
  // operation that computes every thread's result, as text to go before the region that reads
  // the results.
  std::string warp_steps_before(std::size_t b, std::size_t e) {
    std::string operands, steps, storage;
    bool calls = false;
    for (std::size_t k = b; k < e; ++k) {
      const int op = warp_op(t_[k]);
      if (is_ident(t_[k], "__syncwarp")) throw Refused("__syncwarp inside an expression");
      if (op < 0) continue;
      if (!is_punct(t_[k + 1], "("))
        throw Refused("a warp operation '" + t_[k].text + "' not called");
      const std::size_t open = k + 1, close = match_[open];
      const auto args = arguments(open);
      // (`__ballot_sync(__activemask(), p)`: the lanes running the step are those the mask
      // names, which is what warp_step joins anyway)
      const bool active_mask = !args.empty() && args[0].second == args[0].first + 3 &&
                               is_ident(t_[args[0].first], "__activemask") &&
                               is_punct(t_[args[0].first + 1], "(");
      if (has_warp_op(active_mask ? args[0].second : open + 1, close))
        throw Refused("a warp operation inside another's operands");
      const bool shuffle = op <= kiln_cpu::warp_shfl_xor;
      const bool vote =
          op == kiln_cpu::warp_ballot || op == kiln_cpu::warp_any || op == kiln_cpu::warp_all;
      const bool reduce = op >= kiln_cpu::warp_reduce_add && op <= kiln_cpu::warp_reduce_xor;
      const std::size_t want = shuffle ? 3 : op == kiln_cpu::warp_activemask ? 0 : 2;
      if (args.size() != want && !(shuffle && args.size() == 4))
        throw Refused(t_[k].text + " with " + std::to_string(args.size()) + " operands");
      calls = calls || has_call(open, close);
      const std::string slot = "kiln_w" + std::to_string(++counter_) + "_";
      auto arg = [&](std::size_t a) {  // (built in steps: GCC 12 warns of "(" + string)
        std::string out = "(";
        out += text(args[a].first, args[a].second);
        return out += ")";
      };
      storage +=
          " ::kiln_cpu::WarpSlot " + slot + "[kiln_n_]; unsigned long long " + slot + "r[kiln_n_];";
      if (shuffle) storage += " ::kiln_cpu::WideSlots " + slot + "v;";
      std::string value = "0ull", param = "0", width = "32", mask = "0xffffffffu";
      if (!args.empty() && !active_mask) mask = "unsigned" + arg(0);
      if (shuffle) {
        value = "::kiln_cpu::shuffle_operand(" + arg(1) + ", " + slot + "v, kiln_t_, kiln_n_)";
        param = "int" + arg(2);
        if (args.size() == 4) width = "int" + arg(3);
      } else if (vote) {
        value = "(unsigned long long)(" + arg(1) + " != 0)";
      } else if (op == kiln_cpu::warp_match_any) {
        value = "::kiln_cpu::to_bits(" + arg(1) + ")";
      } else if (reduce) {  // (the value's bits, and whether it is taken as int)
        value = "(unsigned long long)(unsigned)(" + arg(1) + ")";
        param = "::kiln_cpu::reduces_as_int<decltype(" + arg(1) + ")>";
      }
      operands +=
          " " + slot + "[kiln_t_] = {" + value + ", " + param + ", " + width + ", " + mask + "};";
      steps += " ::kiln_cpu::warp_step(" + std::to_string(op) + ", " + slot + ", " + slot +
               "r, kiln_n_, kiln_done_, kiln_act_);";
      const std::string result =
          shuffle
              ? "::kiln_cpu::shuffle_result<std::remove_cv_t<std::remove_reference_t<decltype(" +
                    arg(1) + ")>>>(" + slot + "r[kiln_t_], " + slot + "v)"
          : vote ? "int(" + slot + "r[kiln_t_])"
          : reduce && op <= kiln_cpu::warp_reduce_max  // (and, or, xor: unsigned alone)
              ? "::kiln_cpu::reduce_result<decltype(" + arg(1) + ")>(" + slot + "r[kiln_t_])"
              : "unsigned(" + slot + "r[kiln_t_])";
      blank(t_[k].begin, t_[close].end, result);
      k = close;
    }
    return storage + region_open(b, b, calls, true) + operands + kRegionClose + steps;
  }

  // `if (cond) A [else B]` holding warp operations and no block barrier: each running thread
  // evaluates cond in a region of its own, then A runs for the threads that took it and B for
  // the others (kiln_act_ names them in each), so that a warp's lanes can part at the branch as
  // on a GPU (`if (warp == 0) v = warp_sum(v);`).
  void predicated_if(std::size_t i, std::size_t next) {
    const std::size_t open = i + 1, close = match_[open];
    // (a warp operation in cond, `if (__any_sync(m, p))`: its steps before cond's region, for
    // every lane that reaches the if; not after && or || or inside ?:, where only some lanes
    // would evaluate it)
    std::string steps;
    if (has_warp_op(open, close)) {
      for (std::size_t k = open + 1; k < close; ++k)
        if ((is_punct(t_[k], "?") ||
             ((is_punct(t_[k], "&") || is_punct(t_[k], "|")) && is_punct(t_[k + 1], t_[k].text) &&
              t_[k].end == t_[k + 1].begin)) &&
            has_warp_op(k, close))
          throw Refused("a warp operation in the header of an if after " + t_[k].text +
                        (is_punct(t_[k], "?") ? "" : t_[k].text));
      steps = warp_steps_before(open + 1, close);
    }
    const std::string n = std::to_string(++counter_);
    const std::string then_set = "kiln_c" + n + "_", else_set = "kiln_e" + n + "_";
    blank(t_[i].begin, t_[open].end,
          "{ bool " + then_set + "[kiln_n_], " + else_set + "[kiln_n_]; ::kiln_cpu::cleared(" +
              then_set + ", kiln_n_); ::kiln_cpu::cleared(" + else_set + ", kiln_n_);" + steps);
    edits_.push_back({t_[close - 1].end, t_[close - 1].end,
                      "); " + else_set + "[kiln_t_] = !" + then_set + "[kiln_t_];"});
    write_region(open + 1, close, has_call(open, close + 1), true);
    edits_.push_back({t_[open + 1].begin, t_[open + 1].begin, then_set + "[kiln_t_] = ("});
    blank(t_[close].begin, t_[close].end, " { const bool* const kiln_act_ = " + then_set + ";");
    const std::size_t then_end = statement_end(close + 1);
    acts_.push_back(then_set);
    sub_statement(close + 1, then_end, false);
    acts_.pop_back();
    edits_.push_back({t_[then_end - 1].end, t_[then_end - 1].end, " }"});
    if (then_end < next) {  // after `else`
      blank(t_[then_end].begin, t_[then_end].end,
            "{ const bool* const kiln_act_ = " + else_set + ";");
      acts_.push_back(else_set);
      sub_statement(then_end + 1, next, false);
      acts_.pop_back();
      edits_.push_back({t_[next - 1].end, t_[next - 1].end, " }"});
    }
    edits_.push_back({t_[next - 1].end, t_[next - 1].end, " }"});
  }

  // Whether the loop header between parentheses open and close may differ between threads: it
  // names a thread index or a variable of each thread, or calls a function.
  bool thread_header(std::size_t open, std::size_t close) const {
    for (std::size_t k = open + 1; k < close; ++k) {
      const Token& t = t_[k];
      if (t.kind != Token::ident || member_name(k)) continue;
      if (t.text == "threadIdx" || thread_macros_.count(t.text)) return true;
      if (const Replica* r = replica(t.text); r && !r->uniform) return true;
      if (is_punct(t_[k + 1], "(") && !is_keyword_type(t.text) && !is_qualifier(t.text) &&
          !is_pure_math(t.text) && t.text != "sizeof")
        return true;
    }
    return false;
  }

  // `for (init; cond; step) body` or `while (cond) body` holding warp operations and no block
  // barrier, whose header differs between threads (a warp per row: `for (int row = warp_id;
  // row < n; row += warps)`): run as a GPU runs it, each thread in the loop until its own
  // condition fails. The init is a region (its variables one per thread); then, while any
  // thread is still in the loop, a region tests each one's condition, the body runs for those
  // still in it (kiln_act_), and a region steps them. A warp operation then joins the lanes
  // still in the loop, as on a GPU. (`break` and `continue` are refused: leave_loop.)
  void predicated_loop(std::size_t i, std::size_t next) {
    const std::size_t open = i + 1, close = match_[open];
    const bool is_for = is_ident(t_[i], "for");
    std::size_t cond_b = open + 1, cond_e = close;
    if (is_for) {
      const std::vector<std::size_t> semis = header_semicolons(open, close);
      if (semis.size() != 2) throw Refused("a for header without two ';'");
      cond_b = semis[0] + 1, cond_e = semis[1];
    }
    if (has_warp_op(open, close)) throw Refused("a warp operation in the header of a loop");
    const std::string n = std::to_string(++counter_);
    const std::string live = "kiln_live" + n + "_";
    // (threads that took `continue`: out of the rest of the iteration, back in for the step)
    const std::string continued =
        loop_exits(close + 1, next).continues ? "kiln_cont" + n + "_" : "";
    scopes_.emplace_back();  // the init's variables live as long as the loop
    scope_ends_.push_back(next);
    blank(t_[i].begin, t_[open].end,
          "{ bool " + live + "[kiln_n_]; ::kiln_cpu::enter_lockstep(" + live +
              ", kiln_n_, kiln_done_, kiln_act_);" +
              (continued.empty() ? ""
                                 : " bool " + continued + "[kiln_n_]; ::kiln_cpu::cleared(" +
                                       continued + ", kiln_n_);"));
    if (is_for && cond_b - 1 > open + 1)
      write_region(open + 1, cond_b);  // the init, with its ';'
    else if (is_for)
      blank(t_[open + 1].begin, t_[open + 1].end);
    edits_.push_back({t_[cond_b - 1].end, t_[cond_b - 1].end,
                      " for (;;) { const bool* const kiln_act_ = " + live + ";"});
    if (cond_b < cond_e) {
      edits_.push_back(
          {t_[cond_e - 1].end, t_[cond_e - 1].end, ")) " + live + "[kiln_t_] = false;"});
      write_region(cond_b, cond_e, has_call(cond_b - 1, cond_e), true);
      edits_.push_back({t_[cond_b].begin, t_[cond_b].begin, " if (!("});
    }
    std::string step;
    if (is_for && cond_e + 1 < close)
      step = region_open(cond_e + 1, close, has_call(cond_e, close), true) +
             text(cond_e + 1, close) + ";" + kRegionClose;
    blank(t_[cond_e].begin, t_[close].end,
          " if (!::kiln_cpu::in_lockstep(" + live + ", kiln_n_, kiln_done_)) break;");
    loops_.push_back("kiln_j" + std::to_string(++counter_) + "_");
    warp_loops_.push_back(true);
    loop_flags_at_.push_back(edits_.size());
    aheads_.push_back(Ahead{});
    predicated_.push_back({live, continued, acts_.size()});
    edits_.push_back({t_[i].begin, t_[i].begin, ""});
    sub_statement(close + 1, next, false);
    loops_.pop_back();
    warp_loops_.pop_back();
    loop_flags_at_.pop_back();
    aheads_.pop_back();
    predicated_.pop_back();
    const std::string resume = continued.empty() ? ""
                                                 : " ::kiln_cpu::resume_continued(" + live + ", " +
                                                       continued + ", kiln_n_);";
    edits_.push_back({t_[next - 1].end, t_[next - 1].end, resume + step + " } }"});
    scopes_.pop_back();
    scope_ends_.pop_back();
  }

  // `const int SW = TILE + 2 * R;` at barrier level, SW sizing a `__shared__` array (which is
  // declared before the regions): left between the regions, as one value for the block. Only a
  // single declarator of a keyword type, initialised from what every thread sees alike (no
  // thread index, no variable of the kernel's own, no call): CUDA makes it a constant anyway.
  bool shared_extent_constant(std::size_t b, std::size_t e) const {
    if (!is_ident(t_[b], "const")) return false;
    std::size_t k = b + 1;
    while (k < e && t_[k].kind == Token::ident && is_keyword_type(t_[k].text)) ++k;
    if (k == b + 1 || k + 3 > e || t_[k].kind != Token::ident || !is_punct(t_[k + 1], "=") ||
        !sizes_shared_array(t_[k].text))
      return false;
    for (std::size_t j = k + 2; j + 1 < e; ++j) {
      const Token& t = t_[j];
      if (is_punct(t, ",") || is_punct(t, "[") || is_punct(t, "{")) return false;
      if (t.kind != Token::ident || member_name(j)) continue;
      if (is_punct(t_[j + 1], "(") && t.text != "sizeof") return false;  // a call
      if (t.text == "threadIdx" || thread_macros_.count(t.text) || replica(t.text) ||
          local_inits_.count(t.text))
        return false;
    }
    return true;  // (numbers, operators, parameters, macros, also the compile's -D ones)
  }

  // Whether name appears in the extents of a `__shared__` array declared in the kernel body.
  bool sizes_shared_array(const std::string& name) const {
    for (std::size_t k = open_; k < close_; ++k) {
      if (!is_ident(t_[k], "__shared__")) continue;
      for (std::size_t j = k + 1; j < close_ && !is_punct(t_[j], ";"); ++j)
        if (is_punct(t_[j], "["))
          for (std::size_t x = j + 1; x < match_[j]; ++x)
            if (is_ident(t_[x], name)) return true;
    }
    return false;
  }

  // A declaration left between the regions (a type alias: `using T = decltype(v);`, as an
  // inlined function's deduced template parameter) can name a replicated variable only where
  // it is not evaluated: its first copy stands in for it.
  void name_storage(std::size_t b, std::size_t e) {
    blank(t_[b].begin, t_[e - 1].end, lead_text(b, e, "0"));
  }

  // A statement holding a barrier: the barrier itself, or a loop, if or block around one.
  void barrier_statement(std::size_t i, std::size_t next) {
    const Token& t = t_[i];
    if (vote_statement(i, next)) return;
    if (is_ident(t, "__syncthreads")) {
      if (next != i + 4 || !is_punct(t_[i + 1], "(") || !is_punct(t_[i + 2], ")"))
        throw Refused("__syncthreads() inside an expression");
      edits_.push_back({t.begin, t_[i + 2].end, ""});
      return;
    }
    // __syncwarp(mask); ends a region as a barrier does: the warp's lanes run in lockstep.
    if (is_ident(t, "__syncwarp")) {
      if (!is_punct(t_[i + 1], "(") || match_[i + 1] + 2 != next || !is_punct(t_[next - 1], ";"))
        throw Refused("__syncwarp inside an expression");
      blank(t.begin, t_[next - 1].end);
      return;
    }
    if (is_punct(t, "{")) {
      statements(i + 1, match_[i], false);
      return;
    }
    if ((is_ident(t, "for") || is_ident(t, "while") || is_ident(t, "if")) &&
        !is_punct(t_[i + 1], "("))
      throw Refused("`" + t.text + "` without its header");
    if (is_ident(t, "for") || is_ident(t, "while")) {
      const std::size_t open = i + 1, close = match_[open];
      if (!has_block_barrier(i, next) &&
          (thread_header(open, close) || loop_exits(close + 1, next).any())) {
        predicated_loop(i, next);
        return;
      }
      // A warp's lanes may leave such a loop at different times: one the leader's header
      // steers must not read a value of its own thread.
      warp_loop_ = !has_block_barrier(i, next);
      scopes_.emplace_back();  // the header's own variables
      if (is_ident(t, "for")) {
        for_header(open, close, next);
      } else {
        header_part(open + 1, close, {});
      }
      const bool warp_loop = std::exchange(warp_loop_, false);
      loop_body(t, close + 1, next, warp_loop,
                is_ident(t, "for") ? ahead_of(open, close) : Ahead{});
      scopes_.pop_back();
      return;
    }
    // `do body while (cond);` as the while loop it is, its header read after the body: the
    // leader's copy decides for the block, as a header does (NVIDIA's `do { stride >>= 1;
    // __syncthreads(); ... } while (stride > 1);`).
    if (is_ident(t, "do") && has_block_barrier(i, next)) {
      const std::size_t body_end = statement_end(i + 1);  // (its `while`)
      const std::size_t open = body_end + 1, close = match_[open];
      scopes_.emplace_back();
      header_part(open + 1, close, {});
      loop_body(t, i + 1, body_end, false, Ahead{});
      scopes_.pop_back();
      return;
    }
    if (is_ident(t, "if") && !has_block_barrier(i, next)) {
      predicated_if(i, next);
      return;
    }
    if (is_ident(t, "if")) {
      const std::size_t open = i + 1, close = match_[open];
      header_part(open + 1, close, {});
      std::size_t then_end = statement_end(close + 1);
      sub_statement(close + 1, then_end, false);
      if (then_end < next) sub_statement(then_end + 1, next, false);  // after `else`
      return;
    }
    for (std::size_t k = i; k < next; ++k)
      if (vote_op(t_[k]) >= 0)
        throw Refused(t_[k].text + " other than as `T name = " + t_[k].text + "(...);`");
    throw Refused("a barrier inside `" + t.text + "`");
  }

  // The body [b, e) of the barrier loop at token `at`, which the block runs once per iteration
  // (warp_loop: one a warp's leader steers; ahead: its variable's value ahead, for prefetches).
  void loop_body(const Token& at, std::size_t b, std::size_t e, bool warp_loop, Ahead ahead) {
    warp_loops_.push_back(warp_loop);
    loops_.push_back("kiln_j" + std::to_string(++counter_) + "_");
    loop_flags_at_.push_back(edits_.size());  // its flags, declared before it if it has any
    aheads_.push_back(std::move(ahead));
    predicated_.push_back({});
    edits_.push_back({at.begin, at.begin, ""});
    sub_statement(b, e, true);
    loops_.pop_back();
    warp_loops_.pop_back();
    loop_flags_at_.pop_back();
    aheads_.pop_back();
    predicated_.pop_back();
  }

  // The body of a loop or if: a block, or a single statement given braces.
  void sub_statement(std::size_t b, std::size_t e, bool loop_body) {
    if (is_punct(t_[b], "{") && match_[b] + 1 == e) {
      statements(b + 1, e - 1, loop_body);
      return;
    }
    edits_.push_back({t_[b].begin, t_[b].begin, "{"});
    if (loop_body) edits_.push_back({t_[b].begin, t_[b].begin, kLoopCheck});
    statements(b, e, false);
    edits_.push_back({t_[e - 1].end, t_[e - 1].end, "}"});
  }

  // The top-level ';' of the header between parentheses open and close (brackets skipped).
  std::vector<std::size_t> header_semicolons(std::size_t open, std::size_t close) const {
    std::vector<std::size_t> semis;
    for (std::size_t k = open + 1; k < close; ++k) {
      if (is_punct(t_[k], "(") || is_punct(t_[k], "[") || is_punct(t_[k], "{")) k = match_[k];
      if (is_punct(t_[k], ";")) semis.push_back(k);
    }
    return semis;
  }

  // `for (init; cond; step)` [.., next): init may declare the loop's (uniform) variables.
  void for_header(std::size_t open, std::size_t close, std::size_t next) {
    for (std::size_t k = open + 1; k < close; ++k) {
      if (is_punct(t_[k], "(") || is_punct(t_[k], "[") || is_punct(t_[k], "{")) k = match_[k];
      if (is_punct(t_[k], ":")) throw Refused("a range-for around a barrier");
    }
    const std::vector<std::size_t> semis = header_semicolons(open, close);
    if (semis.size() != 2) throw Refused("a for header without two ';'");
    std::vector<std::string> own;
    std::size_t init = open + 1;
    if (auto d = declarator_names(init, semis[0])) {
      own = *d;
      init = first_declarator_;
    }
    // A variable of each thread that the header assigns, `int i; ... for (i = 32; i > 0; i /= 2)`
    // (Rodinia's C89 style), is written in the leader's copy, then copied to every thread's
    // (every thread of a GPU's block runs the header and gets the same value). Only where that
    // value is the same in every thread: the init assigns it a uniform value, the step changes
    // it by uniform values alone, and the body does not write it.
    std::set<std::string> init_writes, step_writes;
    header_part(init, semis[0], own, !own.empty(), &init_writes);
    for (const auto& n : own) scopes_.back().uniform.push_back(n);
    header_part(semis[0] + 1, semis[1], {});
    header_part(semis[1] + 1, close, own, false, &step_writes);
    if (init_writes.empty() && step_writes.empty()) return;
    // (GPU Gems' N-body: `for (i = 0, tile = 0; i < N; i += p, tile++)`, each variable alike)
    std::set<std::string> vars = init_writes;
    vars.insert(step_writes.begin(), step_writes.end());
    // The init's `var = uniform` parts, split at its top-level commas.
    std::set<std::string> assigned;
    for (std::size_t b = init, k = init; own.empty() && k <= semis[0]; ++k) {
      if (k < semis[0] && (is_punct(t_[k], "(") || is_punct(t_[k], "[") || is_punct(t_[k], "{")))
        k = match_[k];
      if (k < semis[0] && !is_punct(t_[k], ",")) continue;
      if (k > b + 2 && t_[b].kind == Token::ident && is_punct(t_[b + 1], "=") &&
          !is_punct(t_[b + 2], "=") && uniform_expr(b + 2, k))
        assigned.insert(t_[b].text);
      b = k + 1;
    }
    for (const std::string& var : vars) {
      // (or an empty init, `int i = N / 2; for (; i > 1; i /= 2)`, Rodinia's kmeans: the value
      // every thread's copy already holds is the same)
      const bool uniform_before =
          own.empty() && init == semis[0] && uniform_since_declaration(var, open - 1);
      const bool set = init_writes.count(var) ? assigned.count(var) && assigned == init_writes
                                              : init_writes.empty() && uniform_before;
      bool uniform_step = true;
      for (std::size_t k = semis[1] + 1; k < close; ++k)
        if (t_[k].kind == Token::ident && !member_name(k) && !vars.count(t_[k].text))
          if (const Replica* r = replica(t_[k].text); r && !r->uniform) uniform_step = false;
      for (std::size_t k = close + 1; k < next; ++k)
        if (is_ident(t_[k], var) && !member_name(k) && (writes(k) || written_by_call(k)))
          uniform_step = false;
      if (!set || !uniform_step) throw Refused("a header that writes '" + var + "'");
      const std::string copy =
          ", ::kiln_cpu::broadcast(" + *replicated(var) + ", kiln_n_, KILN_LEAD)";
      if (init_writes.count(var)) edits_.push_back({t_[semis[0]].begin, t_[semis[0]].begin, copy});
      if (step_writes.count(var)) edits_.push_back({t_[close].begin, t_[close].begin, copy});
    }
  }

  // Whether var, declared before token before in the same block with a uniform initialiser
  // (`unsigned int n = THREADS / 2;`), holds the same value in every thread there: since, it is
  // only read, or updated by statements of its own that every thread runs with uniform values
  // (`n >>= 1;`, `n += STEP;`, also in a plain `{ }` block: NVIDIA's odd-even merge sort), not
  // in a branch or a loop, not passed anywhere.
  bool uniform_since_declaration(const std::string& var, std::size_t before) const {
    std::size_t decl = 0;
    for (std::size_t k = before; k > open_ && decl == 0; --k) {
      if (is_punct(t_[k], "}")) {
        k = match_[k];  // (a whole block, which the scan below checks)
        continue;
      }
      if (is_punct(t_[k], "{")) return false;
      if (is_ident(t_[k], var) && !member_name(k) && is_punct(t_[k + 1], "=") &&
          !is_punct(t_[k + 2], "="))
        decl = k;
    }
    if (decl == 0) return false;
    const Token& type = t_[decl - 1];  // `T var = ...`: a declaration, not an assignment
    if (type.kind != Token::ident || !(is_keyword_type(type.text) || replica(type.text) == nullptr))
      return false;
    const std::size_t end = expression_end(decl + 2, before);
    if (end >= before || !uniform_expr(decl + 2, end, true)) return false;
    std::vector<bool> plain;  // the blocks open since the declaration: plain `{ }` ones?
    for (std::size_t k = end + 1; k < before; ++k) {
      const Token& t = t_[k];
      if (is_punct(t, "{")) {
        const Token& p = t_[k - 1];
        plain.push_back(is_punct(p, ";") || is_punct(p, "{") || is_punct(p, "}"));
      } else if (is_punct(t, "}") && !plain.empty()) {
        plain.pop_back();
      }
      if (!is_ident(t, var) || member_name(k) || in_type_query(k)) continue;
      if (!writes(k) && !written_by_call(k)) continue;  // a read
      // `var op= E;` or `var++;` as a statement of its own, every block around it plain
      const Token& p = t_[k - 1];
      if (!(is_punct(p, ";") || is_punct(p, "{") || is_punct(p, "}")) ||
          std::find(plain.begin(), plain.end(), false) != plain.end())
        return false;
      std::size_t op = k + 1;
      while (op < before && t_[op].kind == Token::punct && !is_punct(t_[op], "=") &&
             !is_punct(t_[op], ";"))
        ++op;
      const bool step = op == k + 3 && is_punct(t_[op], ";") &&
                        (is_punct(t_[k + 1], "+") || is_punct(t_[k + 1], "-"));
      const std::size_t value_end = expression_end(op + 1, before);
      const bool assign = is_punct(t_[op], "=") && op > k + 1 && value_end < before &&
                          uniform_expr(op + 1, value_end, true);
      if (!step && !assign) return false;
    }
    return true;
  }

  // The first top-level ';' from b, brackets skipped (limit when none before it).
  std::size_t expression_end(std::size_t b, std::size_t limit) const {
    std::size_t end = b;
    while (end < limit && !is_punct(t_[end], ";")) {
      if (is_punct(t_[end], "(") || is_punct(t_[end], "[") || is_punct(t_[end], "{"))
        end = match_[end];
      ++end;
    }
    return std::min(end, limit);
  }

  // A barrier loop `for (T v = ...; ...; v++)` (or ++v, v--, --v, v += s, v -= s, s uniform):
  // its variable, and v two iterations on as text (`(v + 2 * (s))`); none for other steps.
  Ahead ahead_of(std::size_t open, std::size_t close) const {
    const std::vector<std::size_t> semis = header_semicolons(open, close);
    const std::size_t b = semis[1] + 1;
    if (close - b < 2) return {};
    const bool inc = is_punct(t_[b], "+") || is_punct(t_[b + 1], "+");
    std::size_t v = b;
    std::string step = "2";
    if (close == b + 3 && (is_punct(t_[b], "+") || is_punct(t_[b], "-")) &&
        is_punct(t_[b + 1], t_[b].text)) {
      v = b + 2;  // ++v, --v
    } else if (close == b + 3 && (is_punct(t_[b + 1], "+") || is_punct(t_[b + 1], "-")) &&
               is_punct(t_[b + 2], t_[b + 1].text)) {
      v = b;  // v++, v--
    } else if (close > b + 3 && (is_punct(t_[b + 1], "+") || is_punct(t_[b + 1], "-")) &&
               is_punct(t_[b + 2], "=") && uniform_expr(b + 3, close)) {
      step = "2 * (" + text(b + 3, close) + ")";  // v += s, v -= s
    } else {
      return {};
    }
    if (t_[v].kind != Token::ident || scopes_.back().uniform.size() != 1 ||
        scopes_.back().uniform[0] != t_[v].text)
      return {};
    return {t_[v].text, "(" + t_[v].text + (inc ? " + " : " - ") + step + ")"};
  }

  // Before a region of a barrier loop (aheads_): a prefetch of each element `p[E]` that the
  // region reads or writes, p a parameter and E naming the loop's variable, as the region's
  // first and last running threads will index it two iterations on (kiln_cpu::prefetch_ahead).
  // A block of a pyramid kernel reads a short run of every row, rows far apart (pathfinder:
  // 1 KB runs of 20 rows, 400 KB apart), more streams than the hardware's prefetchers follow.
  // E is evaluated outside the thread loop with the region's bindings, so it must be pure but
  // for the loop's variables, and divide by literals only: an index a thread would not compute
  // must not trap. binds: the region's bindings.
  std::string prefetches_ahead(std::size_t b, std::size_t e, const std::string& binds) const {
    if (aheads_.empty() || aheads_.back().var.empty()) return "";
    const Ahead& ahead = aheads_.back();
    std::set<std::string> seen;
    std::string out;
    for (std::size_t k = b; k + 1 < e && seen.size() < 4; ++k) {
      if (t_[k].kind != Token::ident || member_name(k) || in_lambda_[k] ||
          !params_.count(t_[k].text) || !is_punct(t_[k + 1], "["))
        continue;
      const std::size_t ib = k + 2, ie = match_[k + 1];
      bool names_var = false, traps = false;
      for (std::size_t i = ib; i < ie; ++i) {
        names_var = names_var || (is_ident(t_[i], ahead.var) && !member_name(i));
        traps = traps || ((is_punct(t_[i], "/") || is_punct(t_[i], "%")) &&
                          t_[i + 1].kind != Token::number);
      }
      const std::string index = text(ib, ie, false, &ahead);
      if (!names_var || traps || !pure(ib, ie, true) ||
          !seen.insert(t_[k].text + "[" + index + "]").second)
        continue;
      out += " ::kiln_cpu::prefetch_ahead(" + t_[k].text +
             ", kiln_b_, kiln_done_, kiln_act_, [&](unsigned long kiln_t_, ::kiln_cpu::uint3 "
             "kiln_tid_) { (void)kiln_t_;" +
             kRegionView + binds + " return (" + index + "); }, 0);";
    }
    return out;
  }

  // A header expression [b, e), read once per block: refuses calls, threadIdx and writes (except
  // to `writable`, the loop's own variables, and with `broadcasts` given, to replicated variables,
  // whose names it collects); replicated names read the leader's copy.
  void header_part(std::size_t b, std::size_t e, const std::vector<std::string>& writable,
                   bool declares = false, std::set<std::string>* broadcasts = nullptr) {
    for (std::size_t k = b; k < e; ++k) {
      const Token& t = t_[k];
      if (is_punct(t, "(") && k > b) {
        const Token& p = t_[k - 1];
        // (a math function of the header's values is as uniform as they are: `i <= __log2f(n)`)
        if (p.kind == Token::ident && !is_keyword_type(p.text) && !is_qualifier(p.text) &&
            !(is_pure_math(p.text) && !member_name(k - 1)))
          throw Refused("a call in the header of a loop or if with a barrier");
        if (is_punct(p, ")") || is_punct(p, "]") || is_punct(p, ">"))
          throw Refused("a call in the header of a loop or if with a barrier");
      }
      if (t.kind != Token::ident || member_name(k)) continue;
      if (t.text == "threadIdx" || thread_macros_.count(t.text))
        throw Refused("threadIdx in the header of a loop or if with a barrier");
      if (writes(k) && !(declares && k == b) &&
          std::find(writable.begin(), writable.end(), t.text) == writable.end()) {
        if (!broadcasts || !replicated(t.text) || warp_loop_)
          throw Refused("a header that writes '" + t.text + "'");
        broadcasts->insert(t.text);
      }
      if (auto storage = replicated(t.text)) {
        // (one the same in every thread, `const int VEC = 32;`, reads as well from any copy)
        if (const Replica* r = replica(t.text); warp_loop_ && !(r && r->uniform))
          throw Refused("a value of each thread ('" + t.text +
                        "') in the header of a loop with a warp operation");
        edits_.push_back({t.begin, t.end, "(" + *storage + "[KILN_LEAD])"});
      }
    }
  }

  // Whether token k names a member (after . or -> or ::) rather than a variable.
  bool member_name(std::size_t k) const {
    if (k == 0) return false;
    const Token& p = t_[k - 1];
    return is_punct(p, ".") || is_punct(p, "::") ||
           (is_punct(p, ">") && k >= 2 && is_punct(t_[k - 2], "-") && t_[k - 2].end == p.begin);
  }

  // Whether the identifier at k follows a unary & (not one after an operand, nor part of &&).
  bool address_of(std::size_t k) const {
    if (k == 0 || !is_punct(t_[k - 1], "&")) return false;
    if (k == 1) return true;
    const Token& p = t_[k - 2];
    return !(p.kind == Token::ident || p.kind == Token::number || is_punct(p, ")") ||
             is_punct(p, "]") || (is_punct(p, "&") && p.end == t_[k - 1].begin));
  }

  // Whether the identifier at k is inside decltype(...), __typeof__(...), sizeof(...) or
  // alignof(...): a question about its type, not its value.
  bool in_type_query(std::size_t k) const {
    static const std::set<std::string> queries{"decltype", "__typeof__", "sizeof", "alignof"};
    for (std::size_t j = k; j-- > open_;) {
      if (is_punct(t_[j], ")") || is_punct(t_[j], "]")) {
        j = match_[j];
      } else if (is_punct(t_[j], "(")) {
        if (j > 0 && queries.count(t_[j - 1].text)) return true;
      } else if (is_punct(t_[j], "{") || is_punct(t_[j], "}") || is_punct(t_[j], ";")) {
        return false;
      }
    }
    return false;
  }

  // Whether `&name` appears anywhere in the body.
  bool address_taken(const std::string& name) const {
    for (std::size_t k = open_; k < close_; ++k)
      if (is_ident(t_[k], name) && !member_name(k) && address_of(k)) return true;
    return false;
  }

  // Whether a bool variable name can keep its copies as kiln_cpu::Flag: not where its address
  // is taken (a pointer to a region's bool would outlive it), nor a question about its type.
  bool flag_storage(const std::string& name) const {
    if (address_taken(name)) return false;
    for (std::size_t k = open_; k < close_; ++k)
      if (is_ident(t_[k], name) && !member_name(k) && in_type_query(k)) return false;
    return true;
  }

  // Whether the identifier at k is written there: assigned (=, op=), incremented, decremented
  // or has its address taken (after any .member / [index] postfixes).
  // (itself_only: writes to the variable's own storage count, not those through it as a
  // pointer: `p[i] = v` and `p->x = v` write memory, `s.x = v` and `&p` can change p.)
  bool writes(std::size_t k, bool itself_only = false) const {
    auto adjacent = [&](std::size_t a) { return t_[a].end == t_[a + 1].begin; };
    auto punct = [&](std::size_t a, const char* p) { return a < t_.size() && is_punct(t_[a], p); };
    if (k >= 2 && adjacent(k - 2) &&
        ((punct(k - 2, "+") && punct(k - 1, "+")) || (punct(k - 2, "-") && punct(k - 1, "-"))))
      return true;
    if (address_of(k) &&
        !(itself_only && (punct(k + 1, "[") || (punct(k + 1, "-") && punct(k + 2, ">")))))
      return true;
    std::size_t j = k + 1;
    if (itself_only && (punct(j, "[") || (punct(j, "-") && punct(j + 1, ">") && adjacent(j))))
      return false;
    while (j < t_.size()) {
      if (punct(j, ".") && j + 1 < t_.size()) {
        j += 2;
      } else if (punct(j, "-") && punct(j + 1, ">") && adjacent(j)) {
        j += 3;
      } else if (punct(j, "[")) {
        j = match_[j] + 1;
      } else {
        break;
      }
    }
    if (j + 1 >= t_.size()) return false;
    if (punct(j, "=")) return !punct(j + 1, "=");
    if ((punct(j, "+") && punct(j + 1, "+")) || (punct(j, "-") && punct(j + 1, "-")))
      return adjacent(j);
    static const char* const ops[] = {"+", "-", "*", "/", "%", "&", "|", "^"};
    for (const char* op : ops)
      if (punct(j, op) && punct(j + 1, "=") && adjacent(j) && !punct(j + 2, "=")) return true;
    if ((punct(j, "<") || punct(j, ">")) && punct(j + 1, t_[j].text.c_str()) && punct(j + 2, "=") &&
        adjacent(j) && adjacent(j + 1))
      return true;
    return false;
  }

  // The storage of a replicated variable visible here by that name (nullopt: none, or a loop's
  // own variable hides it).
  std::optional<std::string> replicated(const std::string& name) const {
    for (auto s = scopes_.rbegin(); s != scopes_.rend(); ++s) {
      for (const auto& u : s->uniform)
        if (u == name) return std::nullopt;
      for (auto r = s->replicated.rbegin(); r != s->replicated.rend(); ++r)
        if (r->name == name) return r->storage;
    }
    return std::nullopt;
  }

  // A declaration [b, e) (e at its ';'): the declared names, first_declarator_ set to the
  // token after its type; nullopt when it is not a declaration. Refuses what cannot be
  // replicated.
  std::optional<std::vector<std::string>> declarator_names(std::size_t b, std::size_t e) {
    std::size_t k = b;
    bool type = false;
    while (k < e && t_[k].kind == Token::ident) {
      const std::string& w = t_[k].text;
      if (is_qualifier(w) || (!type && w == "typename")) {  // (`typename X<T>::type v`)
        ++k;
      } else if (is_keyword_type(w)) {
        type = true;
        ++k;
      } else if (!type && (w == "decltype" || w == "__typeof__") && is_punct(t_[k + 1], "(")) {
        k = match_[k + 1] + 1;  // decltype(expr): the type of an expression
        type = true;
      } else if (!type && !is_statement_keyword(w) && !is_hoistable(w)) {
        ++k;  // a type name: ident (<...>)? (:: ident (<...>)?)*
        for (;;) {
          if (k < e && is_punct(t_[k], "<")) k = angle_end(k, e);
          if (k + 1 >= e || !is_punct(t_[k], "::") || t_[k + 1].kind != Token::ident) break;
          k += 2;
        }
        type = true;
      } else {
        break;
      }
    }
    if (!type || k >= e) return std::nullopt;
    const auto [first, past] = declarator_at(k, e);
    // (`mask &= bits;` is an assignment: the lexer's '&' then '=', side by side)
    if (k + 1 < e && is_punct(t_[k], "&") && is_punct(t_[k + 1], "=") &&
        t_[k].end == t_[k + 1].begin)
      return std::nullopt;
    if (first < e && is_punct(t_[first], "&"))
      throw Refused("a reference declared at barrier level");
    if (first >= e || t_[first].kind != Token::ident || is_statement_keyword(t_[first].text) ||
        is_keyword_type(t_[first].text) || past > e)
      return std::nullopt;
    const Token& after = t_[past];
    if (!(is_punct(after, "=") || is_punct(after, ";") || is_punct(after, ",") ||
          is_punct(after, "[") || is_punct(after, "(") || is_punct(after, "{")))
      return std::nullopt;
    if (is_punct(after, "=") && is_punct(t_[first + 2], "=")) return std::nullopt;  // a == b
    first_declarator_ = k;
    std::vector<std::string> names;
    for (std::size_t d = k; d < e;) {
      const auto [n, past] = declarator_at(d, e);
      if (n < e && is_punct(t_[n], "&")) throw Refused("a reference declared at barrier level");
      if (n >= e || t_[n].kind != Token::ident) throw Refused("a declarator kiln cannot read");
      names.push_back(t_[n].text);
      std::size_t x = past;
      while (x < e && !is_punct(t_[x], ",")) {
        if (is_punct(t_[x], "(") || is_punct(t_[x], "[") || is_punct(t_[x], "{")) x = match_[x];
        ++x;
      }
      d = x + 1;
    }
    return names;
  }

  // The first token from n on past a declarator's pointer part: its stars, each with the
  // qualifiers after it (`* const`, `* __restrict__`); the part's text in *text when given.
  std::size_t past_pointers(std::size_t n, std::size_t e, std::string* text = nullptr) const {
    while (n < e && is_punct(t_[n], "*")) {
      if (text) *text += '*';
      for (++n; n < e && t_[n].kind == Token::ident && is_qualifier(t_[n].text) &&
                t_[n].text != "register";
           ++n)
        if (text) *text += " " + t_[n].text;
    }
    return n;
  }

  // The declarator at d: its name's token, and the token after what belongs to the name (its
  // own extents follow there). `(*rows)[8]`, a pointer to arrays of 8 (`float (*rows)[8] =
  // (float (*)[8])smem;`, as kernels view dynamic shared memory as rows), has the pointer part
  // `(*)[8]` in *stars; a plain one its stars and their qualifiers.
  std::pair<std::size_t, std::size_t> declarator_at(std::size_t d, std::size_t e,
                                                    std::string* stars = nullptr) const {
    if (!(is_punct(t_[d], "(") && d + 1 < e && is_punct(t_[d + 1], "*"))) {
      const std::size_t n = past_pointers(d, e, stars);
      return {n, n + 1};
    }
    std::string inner;
    const std::size_t n = past_pointers(d + 1, e, &inner);
    if (n + 1 >= e || !is_punct(t_[n + 1], ")") || is_punct(t_[n + 2], "("))
      return {e, e};  // (not a pointer to arrays: a function pointer)
    std::size_t after = n + 2;
    while (after < e && is_punct(t_[after], "[")) after = match_[after] + 1;
    if (stars) *stars = "(" + inner + ")" + text(n + 2, after);
    return {n, after};
  }

  // One past the '>' closing the template argument list opened at k (k itself when unclosed).
  std::size_t angle_end(std::size_t k, std::size_t e) const {
    int depth = 0;
    for (std::size_t j = k; j < e; ++j) {
      if (is_punct(t_[j], "(") || is_punct(t_[j], "[")) j = match_[j];
      if (is_punct(t_[j], "<")) ++depth;
      if (is_punct(t_[j], ">") && --depth == 0) return j + 1;
      if (is_punct(t_[j], ";") || is_punct(t_[j], "{")) break;
    }
    return k;
  }

  // Tokens [a, b) as text: adjacent tokens joined, others one space apart (comments dropped,
  // so that the text can go on one generated line); with_locals: each recomputable local of
  // the region replaced by its initialiser; ahead: the loop's variable by its value ahead.
  std::string text(std::size_t a, std::size_t b, bool with_locals = false,
                   const Ahead* ahead = nullptr) const {
    std::string out;
    for (std::size_t i = a; i < b; ++i) {
      if (i > a && t_[i].begin != t_[i - 1].end) out += ' ';
      const bool name = t_[i].kind == Token::ident && !member_name(i);
      auto l = with_locals && name ? local_inits_.find(t_[i].text) : local_inits_.end();
      if (ahead && name && t_[i].text == ahead->var)
        out += ahead->next;
      else if (l != local_inits_.end())
        out += l->second.value;
      else
        out.append(src_.substr(t_[i].begin, t_[i].end - t_[i].begin));
    }
    return out;
  }

  // Whether tokens [a, b) compute the same value in every region: they read only thread and
  // block indices, kernel parameters never written, literals, macros of such, and variables
  // recomputed themselves (no memory through pointers, no calls, no writes). (loop_variables:
  // the barrier loops' variables too, whose values differ between regions.)
  bool pure(std::size_t a, std::size_t b, bool loop_variables = false) const {
    static const std::set<std::string> builtins{"threadIdx", "blockIdx", "blockDim",
                                                "gridDim",   "warpSize", "sizeof"};
    for (std::size_t k = a; k < b; ++k) {
      const Token& t = t_[k];
      if (t.kind == Token::string) return false;
      if (t.kind == Token::number) continue;
      if (t.kind == Token::punct) {
        const Token* p = k > a ? &t_[k - 1] : nullptr;
        const bool after_operand =
            p && (p->kind != Token::punct || is_punct(*p, ")") || is_punct(*p, "]"));
        const bool logical_and =
            is_punct(t, "&") &&
            ((k + 1 < b && is_punct(t_[k + 1], "&") && t.end == t_[k + 1].begin) ||
             (p && is_punct(*p, "&") && p->end == t.begin));
        if ((is_punct(t, "*") || is_punct(t, "&")) && !after_operand && !logical_and)
          return false;  // unary: an address, a dereference
        if (is_punct(t, "[") &&
            !(p && k >= a + 2 && is_ident(*p, "shape") && is_punct(t_[k - 2], ".")))
          return false;  // indexing memory (a kiln::Array parameter's shape is its own)
        if (is_punct(t, "(") && p && !uniform_call(k) &&
            ((p->kind == Token::ident && !is_keyword_type(p->text) && !is_qualifier(p->text) &&
              p->text != "sizeof" && !value_macros_.count(p->text)) ||
             is_punct(*p, ">") || is_punct(*p, ")") || is_punct(*p, "]")))
          return false;  // a call
        if (is_punct(t, "{")) return false;
        if (is_punct(t, ">") && p && is_punct(*p, "-") && p->end == t.begin) return false;
        if (p && is_punct(*p, "=") == false && is_punct(t, "=")) {
          const bool comparison = k + 1 < b && is_punct(t_[k + 1], "=");
          const bool compound = p->kind == Token::punct && p->end == t.begin &&
                                (is_punct(*p, "<") || is_punct(*p, ">") || is_punct(*p, "!"));
          if (!comparison && !compound) return false;  // an assignment
        }
        if ((is_punct(t, "+") || is_punct(t, "-")) && k + 1 < b && is_punct(t_[k + 1], t.text) &&
            t.end == t_[k + 1].begin)
          return false;  // ++ or --
        continue;
      }
      if (t.text == "kiln" && is_punct(t_[k + 1], "::") && is_ident(t_[k + 2], "gridsize"))
        continue;  // (its call is a uniform_call)
      if (member_name(k) || builtins.count(t.text) || is_keyword_type(t.text) ||
          is_qualifier(t.text) || params_.count(t.text) || pure_macros_.count(t.text) ||
          (value_macros_.count(t.text) && k + 1 < b && is_punct(t_[k + 1], "(")))
        continue;
      if (local_inits_.count(t.text)) continue;  // a local of this region, recomputable itself
      bool found = false;
      for (auto sc = scopes_.rbegin(); sc != scopes_.rend() && !found; ++sc) {
        for (const auto& u : sc->uniform)
          if (u == t.text && !loop_variables) return false;  // it changes between regions
          else if (u == t.text) found = true;
        for (auto r = sc->replicated.rbegin(); r != sc->replicated.rend(); ++r)
          if (r->name == t.text) {
            if (r->recompute.empty()) return false;
            found = true;
            break;
          }
      }
      if (!found) return false;  // a global, a local type, an unknown name: not known constant
    }
    return true;
  }

  // Whether the '(' at k opens a call whose value is the same for every thread of the launch
  // and reads no memory: `a.size()` of a kiln::Array parameter, `kiln::gridsize<N>()`.
  bool uniform_call(std::size_t k) const {
    if (!is_punct(t_[k + 1], ")") || k < 3) return false;
    if (is_ident(t_[k - 1], "size") && is_punct(t_[k - 2], ".") &&
        array_params_.count(t_[k - 3].text) && params_.count(t_[k - 3].text))
      return true;
    return k >= 6 && is_punct(t_[k - 1], ">") && t_[k - 2].kind == Token::number &&
           is_punct(t_[k - 3], "<") && is_ident(t_[k - 4], "gridsize") &&
           is_punct(t_[k - 5], "::") && is_ident(t_[k - 6], "kiln");
  }

  // Blanks [begin, end) of the source, keeping its newlines (lines must not move).
  void blank(std::size_t begin, std::size_t end, std::string replacement = "") {
    for (std::size_t i = begin; i < end; ++i)
      if (src_[i] == '\n') replacement += '\n';
    edits_.push_back({begin, end, replacement});
  }

  // For an index initialiser [a, b) of the form `cond ? x : y` whose values x and y are sums
  // and products of names and literals (Rodinia's `int west = col > 0 ? tx - 1 : tx;`): the
  // prefix of names its recomputation declares beside it (cond, and both values converted as
  // the conditional converts them), appended to recompute; "" for any other initialiser.
  // A read `a[west]` in a later region becomes `(c ? a[x] : a[y])` (selects): each of the two
  // indices then steps evenly with the thread, and the host compiler loads both rows whole
  // under masks instead of gathering element by element.
  std::string select_parts(std::size_t a, std::size_t b, const std::string& value_type,
                           std::string& recompute) {
    while (b > a + 1 && is_punct(t_[a], "(") && match_[a] == b - 1) ++a, --b;  // (c ? x : y)
    std::size_t question = 0, colon = 0;
    for (std::size_t k = a; k < b; ++k) {
      if (is_punct(t_[k], "(") || is_punct(t_[k], "["))
        k = match_[k];
      else if (is_punct(t_[k], "?") && question == 0)
        question = k;
      else if (is_punct(t_[k], "?"))
        return "";  // nested: left alone
      else if (is_punct(t_[k], ":") && question != 0 && colon == 0)
        colon = k;
    }
    if (question <= a || colon <= question + 1 || colon + 1 >= b) return "";
    auto simple = [&](std::size_t from, std::size_t to) {
      for (std::size_t k = from; k < to; ++k) {
        const Token& t = t_[k];
        if (t.kind == Token::number) continue;
        if (t.kind == Token::ident && !member_name(k) && !(k + 1 < to && is_punct(t_[k + 1], "(")))
          continue;
        if (t.kind == Token::ident && is_keyword_type(t.text)) continue;  // int(x)
        if (is_punct(t, "+") || is_punct(t, "-") || is_punct(t, "*") || is_punct(t, "(") ||
            is_punct(t, ")"))
          continue;
        return false;  // (a division in the branch not taken could trap)
      }
      return true;
    };
    if (!simple(question + 1, colon) || !simple(colon + 1, b)) return "";
    const std::string prefix = "kiln_s" + std::to_string(++counter_) + "_";
    const std::string cond = text(a, question, true), x = text(question + 1, colon, true),
                      y = text(colon + 1, b, true);
    const std::string both = "decltype(true ? (" + x + ") : (" + y + "))";
    auto value = [&](const std::string& v) {
      return "static_cast<" + value_type + ">(static_cast<" + both + ">(" + v + "))";
    };
    recompute += " [[maybe_unused]] const bool " + prefix + "c = (" + cond +
                 "); [[maybe_unused]] const " + value_type + " " + prefix + "a = " + value(x) +
                 "; [[maybe_unused]] const " + value_type + " " + prefix + "b = " + value(y) + ";";
    return prefix;
  }

  // Each read `p[name]` in region tokens [b, e) of a variable recomputed here as a select
  // (selects: name -> its prefix), with p a name and subscripts, becomes `(c ? p[x] : p[y])`.
  // Not where the element is written, its address taken, or subscripted or named further, nor
  // where the region declares that name again; edits overlapping the rewrite's own win.
  void rewrite_selects(std::size_t b, std::size_t e,
                       const std::map<std::string, std::string>& selects) {
    if (selects.empty()) return;
    std::set<std::string> redeclared;
    for (std::size_t k = b + 1; k < e; ++k)
      if (t_[k].kind == Token::ident && selects.count(t_[k].text) &&
          (t_[k - 1].kind == Token::ident || is_punct(t_[k - 1], "*") || is_punct(t_[k - 1], "&") ||
           is_punct(t_[k - 1], ">") || is_punct(t_[k - 1], "::")))
        redeclared.insert(t_[k].text);
    for (std::size_t k = b + 1; k + 2 < e; ++k) {
      const Token& t = t_[k];
      if (t.kind != Token::ident || in_lambda_[k] || !is_punct(t_[k - 1], "[") ||
          !is_punct(t_[k + 1], "]") || redeclared.count(t.text))
        continue;
      auto found = selects.find(t.text);
      if (found == selects.end()) continue;
      std::size_t start = k - 1;  // the `[`; back over `[...]` groups to the array's name
      while (start > b && is_punct(t_[start - 1], "]")) start = match_[start - 1];
      if (start <= b + 1 || t_[start - 1].kind != Token::ident || member_name(start - 1)) continue;
      --start;
      const Token& before = t_[start - 1];
      const std::size_t after = k + 2;
      if (is_punct(before, "&") || is_punct(before, ".") || is_punct(before, "::") ||
          is_punct(before, ">") || is_ident(before, "sizeof") || is_ident(before, "decltype") ||
          is_punct(t_[after], "[") || is_punct(t_[after], ".") || is_punct(t_[after], "(") ||
          (is_punct(t_[after], "-") && is_punct(t_[after + 1], ">")) || writes(start) ||
          (start >= 2 && (is_punct(before, "+") || is_punct(before, "-")) &&
           is_punct(t_[start - 2], before.text) && t_[start - 2].end == before.begin))
        continue;
      std::string array;
      for (std::size_t i = t_[start].begin; i < t_[k - 1].begin; ++i)
        array += src_[i] == '\n' ? ' ' : src_[i];
      const std::string& p = found->second;
      select_edits_.push_back(
          {t_[start].begin, t_[k + 1].end,
           "(" + p + "c ? " + array + "[" + p + "a] : " + array + "[" + p + "b])", true});
    }
  }

  // A declaration at a region's top level [b, e) whose names live and die in the region: each
  // integer declarator initialised from indices and parameters alone, and never written, is
  // noted in local_inits_, so that a replicated variable computed from it (`int row = ...;
  // int index = row * cols + col;`, index used after a barrier) can still be recomputed in
  // later regions, from the local's initialiser, rather than loaded per thread.
  void note_local_inits(std::size_t b, std::size_t e) {
    const std::string type = lead_text(b, first_declarator_, "0");
    if (!kIndexTypes.count(type)) return;
    for (std::size_t d = first_declarator_; d < e;) {
      std::size_t end = d + 1;
      while (end < e && !is_punct(t_[end], ",")) {
        if (is_punct(t_[end], "(") || is_punct(t_[end], "[") || is_punct(t_[end], "{"))
          end = match_[end];
        ++end;
      }
      const std::size_t x = d + 1;
      if (t_[d].kind == Token::ident && x < end && is_punct(t_[x], "=") &&
          !may_write(t_[d].text, x) && pure(x + 1, end)) {
        local_inits_[t_[d].text] = {
            "static_cast<std::remove_cv_t<" + type + ">>(" + text(x + 1, end, true) + ")",
            uniform_expr(x + 1, end)};
      }
      d = end + 1;
    }
  }

  // Counts a variable of bytes kept per thread across barriers against the limits.
  void keep(std::size_t bytes) {
    kept_bytes_ += bytes;
    if (++replicated_count_ > kMaxReplicated) throw Refused("too many barrier-level variables");
    if (kept_bytes_ > kMaxKeptBytes)
      throw Refused("more than " + std::to_string(kMaxKeptBytes) +
                    " bytes per thread kept across barriers");
  }

  // A declaration at a region's top level [b, e): storage declared before the region's loop,
  // the statement itself turned into assignments to the running thread's copies.
  // `[const] auto name = init;` at a region's top level [b, e), used after it (region: the
  // region's first statement): replicated as a variable of init's decayed type, as `auto`
  // deduces it. The copies are declared before the region, so init may name only what is in
  // scope there: not a variable of the region's own.
  void replicate_auto(std::size_t region, std::size_t b, std::size_t e, std::string& storage) {
    std::size_t n = b;
    while (n < e && (is_qualifier(t_[n].text) || is_ident(t_[n], "auto"))) ++n;
    const std::size_t x = n + 1;
    std::set<std::string> own;  // the region's variables declared before it
    for (std::size_t k = region + 1; k < b; ++k)
      if (t_[k].kind == Token::ident && declares(k) && !replicated(t_[k].text))
        own.insert(t_[k].text);
    bool readable =
        t_[n].kind == Token::ident && x < e && is_punct(t_[x], "=") && !is_punct(t_[x + 1], "{");
    for (std::size_t k = x + 1; k < e && readable; ++k) {
      if (is_punct(t_[k], "(") || is_punct(t_[k], "[") || is_punct(t_[k], "{")) {
        for (std::size_t j = k + 1; j < match_[k] && readable; ++j)
          readable = !(t_[j].kind == Token::ident && !member_name(j) && own.count(t_[j].text));
        k = match_[k];
        continue;
      }
      readable = !is_punct(t_[k], ",") &&
                 !(t_[k].kind == Token::ident && !member_name(k) && own.count(t_[k].text));
    }
    if (in_lambda_[x + 1]) return remake_lambda(region, n, e);
    if (!readable) throw Refused("`auto` at barrier level, used after a barrier");
    first_declarator_ = n;
    replicate(b, e, storage, "std::decay_t<decltype(" + lead_text(x + 1, e, "0") + ")>");
  }

  // `auto f = [captures](...) {...};` (f at token n, e at the ';') in the region opening at
  // token region, named after a barrier: declared again in each later region (Remade). Its
  // captures must be references (`[&]`, `[&a, &b]`, `[]`): a copy would take the later value.
  void remake_lambda(std::size_t region, std::size_t n, std::size_t e) {
    const std::size_t open = n + 2, captures_end = match_[open];
    auto refuse = [](const std::string& why) {
      throw Refused("a lambda used after a barrier " + why);
    };
    for (std::size_t k = open + 1; k < e; ++k)
      if (!in_lambda_[k]) refuse("that is not all of its initialiser");
    for (std::size_t k = open + 1; k < captures_end; ++k) {
      const bool by_reference = is_punct(t_[k], "&") &&
                                (k + 1 == captures_end || is_punct(t_[k + 1], ",") ||
                                 (t_[k + 1].kind == Token::ident && !is_ident(t_[k + 1], "this") &&
                                  (k + 2 == captures_end || is_punct(t_[k + 2], ","))));
      if (!by_reference) refuse("with a capture by copy");
      while (k < captures_end && !is_punct(t_[k], ",")) ++k;
    }
    if (address_taken(t_[n].text)) refuse("whose address is taken");
    // A variable of its own region that is not kept per thread is gone in the later ones.
    for (std::size_t k = region + 1; k < n; ++k)
      if (t_[k].kind == Token::ident && declares(k) && !replicated(t_[k].text))
        for (std::size_t j = open; j < e; ++j)
          if (t_[j].kind == Token::ident && !member_name(j) && t_[j].text == t_[k].text)
            refuse("naming '" + t_[k].text + "', a variable of its region only");
    scopes_.back().lambdas.push_back(
        {t_[n].text, " [[maybe_unused]] auto " + t_[n].text + " = " + text(open, e) + ";",
         region_});
  }

  // type: the declared type, when not the tokens before the first declarator (`auto`).
  void replicate(std::size_t b, std::size_t e, std::string& storage, std::string type = "") {
    // (its storage is declared outside the regions: a replicated name in `decltype(v)` there
    // reads v's first copy)
    if (type.empty()) type = lead_text(b, first_declarator_, "0");
    for (std::size_t k = b; k < first_declarator_; ++k)
      if (is_ident(t_[k], "decltype") || is_ident(t_[k], "__typeof__"))
        for (std::size_t j = k + 2; j < match_[k + 1]; ++j)
          if (t_[j].kind == Token::ident && !member_name(j) && !replicated(t_[j].text) &&
              !params_.count(t_[j].text) && !shared_names_.count(t_[j].text))
            throw Refused("a type of a variable of one region ('" + t_[j].text + "')");
    bool constant =
        false;  // `const` qualifies the declared object itself (not a template argument)
    for (std::size_t k = b, depth = 0; k < first_declarator_; ++k) {
      if (is_punct(t_[k], "<")) ++depth;
      if (is_punct(t_[k], ">") && depth > 0) --depth;
      if (depth == 0 && is_ident(t_[k], "const")) constant = true;
    }
    blank(t_[b].begin, t_[first_declarator_].begin);
    for (std::size_t d = first_declarator_; d < e;) {
      std::string stars;  // `*`, `* const`, `(*)[8]`, ...
      const auto [n, past] = declarator_at(d, e, &stars);
      std::size_t dims_end = past;
      while (is_punct(t_[dims_end], "[")) dims_end = match_[dims_end] + 1;
      const std::string dims = dims_end > past ? text(past, dims_end) : "";
      const std::size_t x = dims_end;
      std::size_t end = x;
      while (end < e && !is_punct(t_[end], ",")) {
        if (is_punct(t_[end], "(") || is_punct(t_[end], "[") || is_punct(t_[end], "{"))
          end = match_[end];
        ++end;
      }
      // (decltype(v) of a replicated v reads an element: a reference, taken off)
      const bool typeof_ = type.find("decltype") != std::string::npos ||
                           type.find("__typeof__") != std::string::npos;
      const std::string value_type =
          typeof_ ? "std::remove_cv_t<std::remove_reference_t<" + type + ">" + stars + ">"
                  : "std::remove_cv_t<" + type + stars + ">";
      const std::string name = t_[n].text;
      const std::string store = "kiln_r" + std::to_string(++counter_) + "_" + name;
      const bool flag = type == "bool" && stars.empty() && dims.empty() && flag_storage(name);
      const std::size_t size =
          stars.empty() ? declared_size(t_, b, first_declarator_, n + 1, x) : sizeof(void*);
      if (size == 0 && !flag)
        storage += unsized_copies(value_type + dims, store);
      else
        storage +=
            " " + (flag ? "::kiln_cpu::Flag" : value_type) + " " + store + "[kiln_n_]" + dims + ";";
      keep(size ? size : kUnsizedCopy);
      // A scalar computed from indices and parameters, const or never written after (`int tx =
      // threadIdx.x;`), is recomputed in later regions rather than loaded: the compiler then
      // sees threadIdx.x where the kernel wrote `tx`.
      std::string recompute, select;
      if (stars.empty() && dims.empty() && x < end && is_punct(t_[x], "=") &&
          (constant || !may_write(name, x)) && pure(x + 1, end)) {
        recompute = " [[maybe_unused]] const " + value_type + " " + name + " = (" +
                    text(x + 1, end, true) + ");";
        if (kIndexTypes.count(type)) select = select_parts(x + 1, end, value_type, recompute);
      }
      // (an index's initialiser is kept where the type holds every thread index unchanged)
      scopes_.back().replicated.push_back(
          {name, store, recompute, region_, !recompute.empty() && uniform_expr(x + 1, end),
           !recompute.empty() && stars.empty() && kIndexTypes.count(type) ? text(x + 1, end) : "",
           select, flag, x + 1, end});
      if (n > d) blank(t_[d].begin, t_[n].begin);  // the stars
      if (past > n + 1 && x != end)  // `)[8]` of a pointer to arrays, before its initialiser
        blank(t_[n + 1].begin, t_[past - 1].end);
      if (x == end) {                              // no initialiser
        blank(t_[n].begin, t_[end - 1].end, "(void)" + name);
      } else if (!dims.empty()) {  // `T a[N] = {...};` or `T a[N]{...};`: assigned whole
        const std::size_t list = is_punct(t_[x], "=") ? x + 1 : x;
        // (extents the rewrite cannot count, `acc[TM][TN]` of template parameters, are the
        // compiler's to count: the copies are unsized_copies)
        if (!is_punct(t_[list], "{") || match_[list] + 1 != end ||
            dims.find("[]") != std::string::npos)
          throw Refused("an initialised array at barrier level");
        // (the list's own tokens stay, with whatever else rewrites them)
        blank(
            t_[n].begin, t_[list].begin,
            "::kiln_cpu::assign_array(" + name + ", ::kiln_cpu::same_t<" + value_type + dims + ">");
        edits_.push_back({t_[end - 1].end, t_[end - 1].end, ")"});
      } else if (is_punct(t_[x], "=")) {
        if (is_punct(t_[x + 1], "{"))  // `T v = {...};`: v = T{...};
          edits_.push_back({t_[x + 1].begin, t_[x + 1].begin, value_type});
      } else if (is_punct(t_[x], "(") || is_punct(t_[x], "{")) {
        edits_.push_back({t_[x].begin, t_[x].begin, " = " + value_type});
      } else {
        throw Refused("a declarator kiln cannot read");
      }
      if (end < e) blank(t_[end].begin, t_[end].end, ";");  // the comma between declarators
      d = end + 1;
    }
  }

  // The region [b, e) of statements: replicated declarations, returns, then the thread loop.
  // (expression: [b, e) is an expression, which declares nothing.)
  void write_region(std::size_t b, std::size_t e, bool calls_beside = false,
                    bool expression = false) {
    edits_.push_back({t_[b].begin, t_[b].begin, region_open(b, e, calls_beside, expression)});
    edits_.push_back({t_[e - 1].end, t_[e - 1].end, kRegionClose});
    if (!expression) leave_loop(b, e);
  }

  // The `break`s and `continue`s of tokens [b, e) that leave the loop around them (none inside
  // an inner loop or, for a break, a switch; none in a lambda).
  struct Exits {
    std::vector<std::size_t> at;
    bool continues = false;
    bool any() const { return !at.empty(); }
  };
  Exits loop_exits(std::size_t b, std::size_t e) const {
    Exits out;
    std::vector<std::pair<std::size_t, bool>> inner;  // ends of inner loops (true) and switches
    for (std::size_t k = b; k < e; ++k) {
      while (!inner.empty() && k >= inner.back().first) inner.pop_back();
      const Token& t = t_[k];
      if (t.kind != Token::ident || in_lambda_[k]) continue;
      if (is_ident(t, "for") || is_ident(t, "while") || is_ident(t, "do") ||
          is_ident(t, "switch")) {
        inner.emplace_back(statement_end(k), !is_ident(t, "switch"));
        continue;
      }
      const bool is_break = is_ident(t, "break"), is_continue = is_ident(t, "continue");
      if (!is_break && !is_continue) continue;
      if (std::any_of(inner.begin(), inner.end(),
                      [&](const auto& n) { return is_break || n.second; }))
        continue;
      out.at.push_back(k);
      out.continues = out.continues || is_continue;
    }
    return out;
  }

  // `break;` and `continue;` in the region [b, e) that leave the loop with a barrier around it
  // (not a loop or switch inside the region): the thread's region ends and sets the loop's
  // flag, and after the region the block leaves the loop or goes on to its next iteration
  // (CUDA requires every thread of the block to take the same way at a barrier's loop).
  void leave_loop(std::size_t b, std::size_t e) {
    if (loops_.empty()) return;
    bool broke = false, continued = false;
    for (const std::size_t k : loop_exits(b, e).at) {
      const Token& t = t_[k];
      const bool is_break = is_ident(t, "break");
      // A loop with warp operations and no block barrier need only be left together by each
      // warp's lanes, not by the block: warps may run different numbers of iterations, which
      // the block's flag (one way for all threads) cannot give. Such a loop is predicated
      // (statement), and the thread leaves it alone: out of its loop's live set and of the
      // branches' it is in, for the rest of the iteration (continue) or the loop (break).
      if (warp_loops_.back()) {
        const Predicated& loop = predicated_.back();
        if (loop.live.empty())
          throw Refused("`" + t.text + "` in a loop with warp operations and no __syncthreads");
        std::string out = "return (";
        for (std::size_t a = loop.acts_at; a < acts_.size(); ++a)
          out += acts_[a] + "[kiln_t_] = false, ";
        out += loop.live + "[kiln_t_] = false, ";
        if (!is_break) out += loop.continued + "[kiln_t_] = true, ";
        edits_.push_back({t.begin, t.end, out + "::kiln_cpu::RegionEnd{})"});
        continue;
      }
      edits_.push_back(
          {t.begin, t.end,
           "return ::kiln_cpu::flagged(" + loops_.back() + (is_break ? "b" : "c") + ")"});
      (is_break ? broke : continued) = true;
    }
    const std::string& flag = loops_.back();
    if (broke) edits_.push_back({t_[e - 1].end, t_[e - 1].end, " if (" + flag + "b) break;"});
    if (continued)
      edits_.push_back({t_[e - 1].end, t_[e - 1].end,
                        " if (" + flag + "c) { " + flag + "c = false; continue; }"});
    if (broke || continued)
      edits_[loop_flags_at_.back()].text = "bool " + flag + "b = false, " + flag + "c = false; ";
  }

  // Binds replicated r in region [b, e) to its thread's copy. A Flag is read as a bool, or, in a
  // region that may write it, is copied into one that the region's end writes back (in the
  // region declaring it, a new one: its copy holds nothing yet).
  std::string bind(const Replica& r, std::size_t b, std::size_t e) const {
    const std::string copy = r.storage + "[kiln_t_]";
    if (!r.flag) return " [[maybe_unused]] auto& " + r.name + " = " + copy + ";";
    const bool declares = r.region == region_;
    if (!declares && !may_write(r.name, b, e))
      return " [[maybe_unused]] const bool " + r.name + " = " + copy + ";";
    const std::string slot = "kiln_f" + std::to_string(++counter_) + "_" + r.name;
    return " ::kiln_cpu::FlagCopy " + slot + "{" + copy + (declares ? ", false" : "") +
           "}; [[maybe_unused]] bool& " + r.name + " = " + slot + ".value;";
  }

  // The opening of the region [b, e) (empty for one the rewrite writes itself): the storage of
  // the variables it replicates (their declarations become assignments), its returns marked,
  // and the thread loop up to the region's code, with the names it binds.
  std::string region_open(std::size_t b, std::size_t e, bool calls_beside, bool expression) {
    ++region_;
    std::string storage;
    // A variable no later statement of its scope names lives and dies in this region: it stays
    // a local of the region's thread loop, as written. Only the others get a copy per thread.
    const std::size_t scope_end = scope_ends_.back();
    auto is_auto = [&](std::size_t s) {
      return t_[s].kind == Token::ident &&
             (is_ident(t_[s], "auto") || (is_qualifier(t_[s].text) && is_ident(t_[s + 1], "auto")));
    };
    // What a lambda named after the region names lives on with it (remake_lambda).
    std::set<std::string> named_by_lambdas;
    for (std::size_t s = b; s < e && !expression; s = statement_end(s))
      if (const std::string f = is_auto(s) ? auto_name(s, statement_end(s) - 1) : "";
          !f.empty() && named_in({f}, e, scope_end))
        for (std::size_t k = s; k + 1 < statement_end(s); ++k)
          if (in_lambda_[k] && t_[k].kind == Token::ident && !member_name(k))
            named_by_lambdas.insert(t_[k].text);
    for (std::size_t s = b; s < e && !expression;) {
      const std::size_t next = statement_end(s);
      // (A name the regions already bind, from an outer scope, is replicated all the same: its
      // binding and the local would clash in the region's loop. So is one whose address is
      // taken: the pointer may be read after the region.)
      auto lives_on = [&](const std::vector<std::string>& names) {
        return named_in(names, e, scope_end) ||
               std::any_of(names.begin(), names.end(), [&](const auto& n) {
                 return bound(n) || address_taken(n) || named_by_lambdas.count(n);
               });
      };
      if (is_auto(s)) {
        const std::string name = auto_name(s, next - 1);
        if (name.empty()) throw Refused("`auto` at barrier level, used after a barrier");
        if (lives_on({name})) replicate_auto(b, s, next - 1, storage);
      } else if (t_[s].kind == Token::ident &&
                 (!is_statement_keyword(t_[s].text) || is_ident(t_[s], "typename"))) {
        if (auto names = declarator_names(s, next - 1); names && lives_on(*names))
          replicate(s, next - 1, storage);
        else if (names)
          note_local_inits(s, next - 1);
      }
      s = next;
    }
    local_inits_.clear();
    for (std::size_t k = b; k < e; ++k) {
      const Token& t = t_[k];
      if (t.kind != Token::ident || member_name(k) || in_lambda_[k]) continue;
      if (t.text == "return") {
        if (!is_punct(t_[k + 1], ";")) throw Refused("a return with a value");
        edits_.push_back({t.end, t.end, " ::kiln_cpu::returned(kiln_done_, kiln_t_)"});
        returns_ = true;
      }
      for (const auto& scope : scopes_)
        for (const auto& u : scope.uniform)
          if (u == t.text && writes(k) && !replicated(u))
            throw Refused("a region writes the loop variable '" + u + "'");
    }
    // Binds each visible barrier-level name (the innermost of a name; a loop variable hides
    // outer ones) in declaration order, as the region's thread sees it.
    std::set<std::string> hidden, seen;
    bool shadowing = false;  // then recomputations might name the wrong variable: none
    for (const Scope& sc : scopes_) {
      for (const auto& r : sc.replicated) shadowing = !seen.insert(r.name).second || shadowing;
      for (const auto& r : sc.shared) shadowing = !seen.insert(r.first).second || shadowing;
      for (const auto& u : sc.uniform) shadowing = !seen.insert(u).second || shadowing;
      for (const auto& l : sc.lambdas) shadowing = !seen.insert(l.name).second || shadowing;
    }
    std::vector<std::string> binds_of(scopes_.size());
    std::map<std::string, std::string> selects;  // recomputed here as selects: name -> prefix
    for (std::size_t si = scopes_.size(); si-- > 0;) {
      const Scope& sc = scopes_[si];
      for (auto r = sc.replicated.rbegin(); r != sc.replicated.rend(); ++r) {
        if (!hidden.insert(r->name).second) continue;
        const bool loaded = r->region == region_ || r->recompute.empty() || shadowing;
        binds_of[si].insert(0, loaded ? bind(*r, b, e) : r->recompute);
        if (!loaded && !r->select.empty()) selects[r->name] = r->select;
      }
      // (after the scope's variables, which it may capture; in declaration order)
      for (const auto& l : sc.lambdas) {
        if (l.region == region_ || hidden.count(l.name)) continue;
        if (shadowing) throw Refused("a lambda used after a barrier, beside a shadowed name");
        binds_of[si] += l.definition;
      }
      for (const auto& l : sc.lambdas) hidden.insert(l.name);
      for (auto r = sc.shared.rbegin(); r != sc.shared.rend(); ++r)
        if (hidden.insert(r->first).second)
          binds_of[si].insert(0, " [[maybe_unused]] auto& " + r->first + " = " + r->second + ";");
      for (const auto& u : sc.uniform) hidden.insert(u);
    }
    std::string binds;
    for (const auto& b : binds_of) binds += b;
    rewrite_selects(b, e, selects);
    if (!expression) storage += prefetches_ahead(b, e, binds);
    // Only a region that calls something needs the module's threadIdx (device functions read
    // it); the region's own code reads kiln_tid_, so that its threads can be vectorised.
    const bool calls = calls_beside || has_call(b, e);
    const std::string identity = calls ? "true" : "false";
    if (round_index_) {  // a round of a grid-stride loop: thread t's index is round + t
      const auto [round, index_type] = *std::exchange(round_index_, std::nullopt);
      return storage + " ::kiln_cpu::each_index<" + identity +
             ">(*kiln_tls_, kiln_b_, kiln_done_, kiln_act_, " + round +
             ", [&](unsigned long kiln_t_, ::kiln_cpu::uint3 kiln_tid_, " + index_type +
             " kiln_i_) -> ::kiln_cpu::RegionEnd {" + kRegionView + binds + " ";
    }
    return storage + " ::kiln_cpu::each_thread<" + identity +
           ">(*kiln_tls_, kiln_b_, kiln_done_, kiln_act_, [&](unsigned long kiln_t_, "
           "::kiln_cpu::uint3 kiln_tid_) -> ::kiln_cpu::RegionEnd {" +
           kRegionView + binds + " ";
  }

  std::string_view src_;
  const std::vector<Token>& t_;
  const std::set<std::string>& thread_macros_;
  const std::set<std::string>& pure_macros_;     // object-like macros of constants
  const std::set<std::string>& value_macros_;    // function-like macros of their arguments' values
  const std::set<std::string>& free_functions_;  // device functions that read no thread index
  std::set<std::string> params_;                 // the kernel's parameters never written
  std::set<std::string> array_params_;           // those of them that are kiln::Array
  int& counter_;
  int lockstep_loops_ = 0;            // grid-stride loops run in lockstep
  // For the next region_open, a round of write_rounds: its first index and the index's type.
  std::optional<std::pair<std::string, std::string>> round_index_;
  bool consecutive_only_ = false;     // only those of affine_lockstep's form
  int region_ = 0;                    // the region being written
  std::vector<std::size_t> match_;    // for each bracket of the body, its partner
  std::size_t open_ = 0, close_ = 0;  // the body's braces
  std::vector<Scope> scopes_;
  std::vector<std::size_t> scope_ends_;  // for each scope, one past its last statement
  std::vector<Edit> edits_;
  std::vector<Edit> select_edits_;  // rewrite_selects', dropped where they meet another edit
  std::size_t first_declarator_ = 0;
  // The recomputable locals of the region being opened (note_local_inits): name -> its
  // initialiser as an expression of the declared type, and whether it is uniform.
  struct LocalInit {
    std::string value;
    bool uniform;
  };
  std::map<std::string, LocalInit> local_inits_;
  std::size_t replicated_count_ = 0, kept_bytes_ = 0;
  bool returns_ = false;
  bool warp_loop_ = false;  // the header being read steers a loop with only warp operations
  std::set<std::string> shared_names_;      // the __shared__ arrays the body declares
  std::vector<bool> in_lambda_;             // for each token, whether it is in a lambda's body
  std::vector<std::string> loops_;          // the loops with barriers around: their flags' prefix
  std::vector<bool> warp_loops_;  // for each of loops_: whether it has warp operations alone
  std::vector<std::size_t> loop_flags_at_;  // for each, the edit that declares its flags
  std::vector<Ahead> aheads_;               // for each, its variable two iterations on
  // For each of loops_, where it is predicated (a warp loop its threads leave one by one): the
  // live set's name, the continued set's ("": no continue), and where its acts_ start.
  struct Predicated {
    std::string live, continued;
    std::size_t acts_at = 0;
  };
  std::vector<Predicated> predicated_;
  std::vector<std::string> acts_;           // the running sets of the predicated branches we are in
  std::vector<Replica> param_copies_;       // the written parameters, replicated (body())
  std::set<std::string> written_params_;    // their names
};

}  // namespace

// The words of kept macro lines' replacement texts, each with its line's offset: the
// identifiers other than the macro's name, its parameters and names called (`min(a, b)`).
std::vector<std::pair<std::size_t, std::string>> macro_words(
    const std::vector<std::pair<std::size_t, Token>>& lines) {
  std::vector<std::pair<std::size_t, std::string>> out;
  for (std::size_t i = 0; i < lines.size();) {
    std::size_t end = i;  // one past this line's tokens
    while (end < lines.size() && lines[end].first == lines[i].first) ++end;
    std::size_t k = i;
    while (k < end && !is_ident(lines[k].second, "define")) ++k;
    std::set<std::string> params;
    if (k + 1 < end) {
      const Token& name = lines[++k].second;
      if (++k < end && is_punct(lines[k].second, "(") && lines[k].second.begin == name.end)
        for (; k < end && !is_punct(lines[k].second, ")"); ++k) params.insert(lines[k].second.text);
    }
    for (; k < end; ++k) {
      const Token& t = lines[k].second;
      const bool called = k + 1 < end && is_punct(lines[k + 1].second, "(");
      if (t.kind == Token::ident && !params.count(t.text) && !called)
        out.emplace_back(lines[k].first, t.text);
    }
    i = end;
  }
  return out;
}

RegionRewrite form_regions_by_kernel(std::string_view source, const std::set<std::string>& loops,
                                     const std::set<std::string>& fibers) {
  RegionRewrite result;
  std::vector<Token> toks = jit::lex(source);
  // `if constexpr (C)` is read as `if (C)`, its text kept: C is the same in every thread (a
  // barrier's if, whose header stays as written, discards its branch as before; a predicated
  // one's header becomes each thread's, both branches then compiled for the instance).
  for (std::size_t k = toks.size(); k-- > 1;)
    if (is_ident(toks[k], "constexpr") && is_ident(toks[k - 1], "if"))
      toks.erase(toks.begin() + std::ptrdiff_t(k));
  const std::set<std::string> macros = thread_macros(toks);
  const std::set<std::string> constants = constant_macros(source, toks);
  const std::set<std::string> values = value_macros(source, toks, constants);
  const std::set<std::string> free_functions = identity_free_functions(source, macros);
  const std::vector<jit::KernelBody> bodies = jit::find_kernel_bodies(source);
  // #pragma lines (`#pragma unroll` before a loop) stay where they are in the text; the rewrite
  // reads around them. So do a kernel's own #define and #undef lines (an indexing macro defined
  // where the kernel uses it): the rewrite keeps the text in order, so each expansion still sees
  // the macros above it; an edit that would replace one declines the kernel (kept_lines). Any
  // other directive inside a kernel body (#if: which text is the code) declines it.
  std::vector<std::size_t> kept_lines;  // offsets of the kept #define and #undef lines
  std::vector<std::pair<std::size_t, Token>> kept_tokens;  // their tokens, by the line's offset
  std::map<std::string, int> definitions;                  // the source's #defines of each name
  for (std::size_t k = 0; k + 1 < toks.size(); ++k)
    if (toks[k].directive && is_ident(toks[k], "define") && toks[k + 1].kind == Token::ident)
      ++definitions[toks[k + 1].text];
  std::erase_if(toks, [&](const Token& t) {
    if (!t.directive) return false;
    const std::size_t nl = t.begin == 0 ? std::string_view::npos : source.rfind('\n', t.begin - 1);
    std::size_t k = nl == std::string_view::npos ? 0 : nl + 1;  // this line: blanks # blanks word
    auto blanks = [&] {
      while (k < source.size() && (source[k] == ' ' || source[k] == '\t')) ++k;
    };
    blanks();
    if (k >= source.size() || source[k] != '#') return false;
    const std::size_t hash = k++;
    blanks();
    if (source.substr(k, 6) == "pragma") return true;
    const bool macro = source.substr(k, 6) == "define" || source.substr(k, 5) == "undef";
    const bool in_body = std::any_of(bodies.begin(), bodies.end(), [&](const jit::KernelBody& b) {
      return b.open < t.begin && t.begin < b.close;
    });
    if (!macro || !in_body) return false;
    if (kept_lines.empty() || kept_lines.back() != hash) kept_lines.push_back(hash);
    kept_tokens.emplace_back(hash, t);
    return true;
  });
  const std::vector<std::pair<std::size_t, std::string>> kept_words = macro_words(kept_tokens);
  struct KeptMacro {
    std::size_t at;  // its line
    std::string name;
    bool define;  // (else an #undef)
  };
  std::vector<KeptMacro> kept_macros;
  for (std::size_t i = 0; i + 1 < kept_tokens.size(); ++i) {
    const auto& [line, t] = kept_tokens[i];
    const bool define = is_ident(t, "define");
    if ((define || is_ident(t, "undef")) && kept_tokens[i + 1].first == line &&
        kept_tokens[i + 1].second.kind == Token::ident)
      kept_macros.push_back({line, kept_tokens[i + 1].second.text, define});
  }
  // Sentinels (empty punctuators) so that lookahead past the end stays in range.
  for (int s = 0; s < 4; ++s)
    toks.push_back({Token::punct, "", source.size(), source.size(), 0, false});
  // Each body's edits apart: a kernel name any of whose bodies is declined keeps them all as
  // written (its overloads share the name, and so one plan).
  std::vector<std::pair<std::string, std::vector<Edit>>> rewritten;
  int counter = 0;
  auto at = [&](std::size_t offset) {  // the token starting at offset
    auto it = std::lower_bound(toks.begin(), toks.end(), offset,
                               [](const Token& t, std::size_t o) { return t.begin < o; });
    return std::size_t(it - toks.begin());
  };
  // Why the kept macro lines of body cannot stay as they are after its edits ("": they can).
  auto kept_lines_problem = [&](const jit::KernelBody& body, const std::vector<Edit>& edits,
                                const BodyWriter& writer) -> std::string {
    for (const Edit& e : edits)
      for (std::size_t line : kept_lines)
        if (e.begin == line || (e.begin < line && line < e.end))
          return "a rewritten statement spans a #define or #undef";
    // (a macro's text is not rewritten: a variable it names may be another region's, or
    // renamed per thread)
    for (const auto& [offset, word] : kept_words)
      if (body.open < offset && offset < body.close && writer.names_a_variable(word))
        return "a #define inside the kernel names its variable '" + word + "'";
    // A statement the rewrite repeats in a later region (a recomputed variable's initialiser)
    // must expand as it did where it was written: each macro defined once, and named only
    // between its #define and #undef.
    for (const KeptMacro& m : kept_macros) {
      if (m.at < body.open || m.at > body.close) continue;
      if (definitions[m.name] > 1) return "a #define of '" + m.name + "' again";
      std::size_t from = body.open, to = body.close;
      bool defined_here = false;
      for (const KeptMacro& n : kept_macros)
        if (n.name == m.name && n.at > body.open && n.at < body.close)
          (n.define ? from : to) = n.at, defined_here = defined_here || n.define;
      if (!defined_here) return "an #undef of '" + m.name + "', defined outside the kernel";
      // (a later region may recompute what the macro gave: `int a = N * t;` read after a barrier)
      if (!m.define)
        for (std::size_t k = at(m.at); k < toks.size() && toks[k].begin < body.close; ++k)
          if (toks[k].kind == Token::ident &&
              (toks[k].text.starts_with("__syncthreads") || region_warp_operation(toks[k].text)))
            return "an #undef of '" + m.name + "' before a barrier";
      for (std::size_t k = at(body.open); k < toks.size() && toks[k].begin < body.close; ++k)
        if (is_ident(toks[k], m.name.c_str()) && (toks[k].begin < from || toks[k].begin > to))
          return "'" + m.name + "' named outside its #define and #undef";
    }
    return "";
  };
  const std::vector<jit::KernelDecl> decls = jit::find_kernels(source);
  auto bodies_named = [&](const std::string& name) {
    return std::count_if(bodies.begin(), bodies.end(),
                         [&](const jit::KernelBody& b) { return b.name == name; });
  };
  for (const jit::KernelBody& body : bodies) {
    if (fibers.count(body.name)) {  // (its threads run the body as written, each on its own)
      result.declined.emplace(body.name, "its plan runs it as fibers");
      continue;
    }
    try {
      const std::size_t open = at(body.open), close = at(body.close);
      if (close >= toks.size() || !is_punct(toks[close], "}"))
        throw Refused("an unclosed kernel body");
      bool sync = false;  // a barrier or a warp operation
      for (std::size_t j = open; j < close; ++j)
        sync = sync ||
               (toks[j].kind == Token::ident &&
                (toks[j].text.starts_with("__syncthreads") || region_warp_operation(toks[j].text)));
      // (a thread loop's kernel only with one body: its overloads would share the plan)
      const bool strided = !sync && loops.count(body.name) && bodies_named(body.name) == 1;
      if (!sync && !strided) continue;
      std::vector<Edit> edits;
      std::set<std::string> arrays;
      for (std::size_t p = 0; p < body.params.size() && p < body.param_types.size(); ++p)
        if (body.param_types[p].find("Array<") != std::string::npos) arrays.insert(body.params[p]);
      // A template's non-type parameters are constants too (`template <unsigned blockSize>`).
      std::set<std::string> known = constants;
      for (const jit::KernelDecl& d : decls)
        if (d.name == body.name)
          for (const jit::TemplateParam& p : d.template_params)
            if (p.kind != "typename") known.insert(p.name);
      BodyWriter writer(source, toks, macros, known, values, free_functions,
                        {body.params.begin(), body.params.end()}, std::move(arrays), counter);
      if (strided) writer.consecutive_only();
      try {
        writer.body(open, close, edits);
      } catch (const Refused&) {
        if (strided) continue;  // (it runs as the thread loop it was)
        throw;
      }
      if (strided && !writer.lockstep_loops()) continue;
      if (const std::string why = kept_lines_problem(body, edits, writer); !why.empty()) {
        if (strided) continue;
        throw Refused(why);
      }
      if (strided) result.lockstep.insert(body.name);
      rewritten.emplace_back(body.name, std::move(edits));
    } catch (const Refused& r) {
      result.declined.emplace(body.name, r.what());  // the first reason of a name
    }
  }
  std::vector<Edit> edits;
  for (auto& [name, body_edits] : rewritten)
    if (!result.declined.count(name))
      edits.insert(edits.end(), body_edits.begin(), body_edits.end());
  // By offset; at one offset, insertions (in the order made) before a replacement.
  std::stable_sort(edits.begin(), edits.end(), [](const Edit& a, const Edit& b) {
    return a.begin != b.begin ? a.begin < b.begin : (a.end == a.begin && b.end != b.begin);
  });
  std::size_t done = 0;
  for (const Edit& e : edits) {
    result.chosen_loads = result.chosen_loads || e.chosen_load;
    if (e.begin < done) {  // cannot happen between bodies; within one, a rewrite's own fault
      result.source = std::string(source);
      for (const auto& [name, body_edits] : rewritten)
        result.declined.emplace(name, "overlapping rewrites");
      result.chosen_loads = false;
      return result;
    }
    result.source.append(source.substr(done, e.begin - done));
    result.source += e.text;
    done = e.end;
  }
  result.source.append(source.substr(done));
  return result;
}

bool region_warp_operation(std::string_view name) {
  return name == "__syncwarp" || warp_steps().count(name) > 0;
}

std::optional<std::string> form_regions(std::string_view source, std::string* why) {
  RegionRewrite r = form_regions_by_kernel(source);
  if (r.declined.empty()) return std::move(r.source);
  if (why) *why = r.declined.begin()->second;
  return std::nullopt;
}

}  // namespace kiln::cpu
