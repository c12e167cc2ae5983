// The cpu compiler's source plan: thread modes from the lexer's scans, and the rewrites.
#include "jit/cpu/plan.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "jit/cpu/block_groups.h"
#include "jit/cpu/edits.h"
#include "jit/cpu/region_words.h"
#include "jit/cpu/regions.h"
#include "jit/kernel_decl.h"
#include "jit/lexer.h"
#include "jit/source.h"

namespace kiln::cpu {

namespace {

namespace fs = std::filesystem;
using Mode = kiln_cpu::ThreadMode;

// Whether a <kiln...> header may hold barriers (system headers cannot sync).
bool kiln_header(const std::string& name) {
  return name.rfind("kiln", 0) == 0;
}

// "file:line", for the reasons a plan gives.
std::string place(const std::string& file, int line) {
  return (file.empty() ? std::string("kernel.cu") : file) + ":" + std::to_string(line);
}

// Why a synchronising construct found by use at lines of file forces fibers, or "" if none does.
std::string fiber_reason(const jit::SyncUse& use, const std::string& file, int line_offset) {
  if (use.other_sync)  // (a construct's name, or a description: "warp-synchronous code ...")
    return (use.first_other.find(' ') == std::string::npos ? "warp or group operation " : "") +
           use.first_other + " at " + place(file, use.first_other_line + line_offset);
  if (use.block_barriers)
    return "a barrier outside a __global__ body, at " +
           place(file, use.first_barrier_line + line_offset);
  return "";
}

// Why source outside the kernel bodies and their functions (globals, structs; bodies blanked,
// lines kept) or a header it includes makes every barrier kernel fibers, or "" when nothing
// does. (An #include of cooperative groups or a namespace alias of it alone does not: the plan
// follows the code that names them.)
std::string barriers_outside(std::string_view outside, const std::string& filename,
                             const fs::path& dir, const std::vector<std::string>& include_dirs) {
  jit::SyncUse use = jit::scan_sync(outside);
  use.other_sync = use.other_used;
  if (std::string why = fiber_reason(use, filename, 0); !why.empty()) return why;
  std::vector<fs::path> dirs(include_dirs.begin(), include_dirs.end());
  for (const jit::IncludedFile& f : jit::walk_includes(outside, dir, dirs, kiln_header))
    if (std::string why = fiber_reason(jit::scan_sync(f.text), f.path.filename().string(), 0);
        !why.empty())
      return why;
  return "";
}

// Whether name is ever the operand of a reinterpret_cast in t: `reinterpret_cast<T*>(name`.
// (A static_cast or a C-style cast takes check mode's dyn_shared through its conversion.)
bool reinterpreted(const std::vector<jit::Token>& t, const std::string& name) {
  for (std::size_t k = 0; k + 1 < t.size(); ++k) {
    if (!is_ident(t[k], "reinterpret_cast") || !is_punct(t[k + 1], "<")) continue;
    std::size_t j = k + 2;
    for (int depth = 0; j < t.size() && !(depth == 0 && is_punct(t[j], ">")); ++j)
      depth += is_punct(t[j], "<") - is_punct(t[j], ">");
    if (j + 2 < t.size() && is_punct(t[j + 1], "(") && is_ident(t[j + 2], name)) return true;
  }
  return false;
}

// Whether tokens t hold a cast to a pointer type (plan.h, casts_pointers).
bool has_pointer_cast(const std::vector<jit::Token>& t) {
  for (std::size_t k = 0; k < t.size(); ++k) {
    if (t[k].directive) continue;
    if (is_ident(t[k], "reinterpret_cast")) return true;
    if (is_ident(t[k], "static_cast") && k + 1 < t.size() && is_punct(t[k + 1], "<")) {
      for (std::size_t j = k + 2; j < t.size() && !is_punct(t[j], ">") && !is_punct(t[j], ";"); ++j)
        if (is_punct(t[j], "*")) return true;
      continue;
    }
    // `( type words * )` before an operand: a C-style cast to a pointer.
    if (!is_punct(t[k], ")") || k < 2 || !is_punct(t[k - 1], "*")) continue;
    std::size_t open = k - 1;
    while (open > 0 &&
           (is_punct(t[open], "*") || t[open].kind == jit::Token::ident || is_punct(t[open], "::")))
      --open;
    if (is_punct(t[open], "(") && open + 1 < k - 1 && t[open + 1].kind == jit::Token::ident &&
        k + 1 < t.size() &&
        (t[k + 1].kind != jit::Token::punct || is_punct(t[k + 1], "(") || is_punct(t[k + 1], "&") ||
         is_punct(t[k + 1], "*")))
      return true;
  }
  return false;
}

// The 1-based line of offset at in source.
int line_at(std::string_view source, std::size_t at) {
  return 1 + int(std::count(source.begin(), source.begin() + std::min(at, source.size()), '\n'));
}

// The functions defined at namespace scope outside the kernel bodies (device functions, with
// their template headers), each name's definitions merged: why each forces fibers on a kernel
// that reaches it ("" when it does not synchronise), and the identifiers it names.
struct OutsideFunction {
  std::string why;
  std::set<std::string> names;
};
struct OutsideCode {
  std::map<std::string, OutsideFunction> functions;
  std::string rest;                  // outside, those definitions blanked (lines kept)
  std::set<std::string> rest_names;  // the identifiers of rest (macros, globals, structs)
  // `cooperative_groups` and its aliases (`namespace cg = cooperative_groups;` in rest): code
  // naming one uses cooperative groups, which synchronise in ways no scan follows
  // (`cg::reduce(tile, v, op)` on a tile passed in).
  std::set<std::string> groups{"cooperative_groups"};
  // Why rest forces fibers on every kernel, cooperative groups named there other than in an
  // #include or a namespace alias (`using namespace`, a typedef of a tile), or "".
  std::string groups_why;
};

// The identifier of tokens [b, e) that names cooperative groups (one of groups) and most likely
// kept them: the first whose member the lowering (block_groups.h) never takes
// (`cg::memcpy_async`, `cg::grid_group`), else the first; as "cg::reduce at file:line", or "".
std::string groups_named(const std::vector<jit::Token>& t, std::size_t b, std::size_t e,
                         const std::set<std::string>& groups, const std::string& filename,
                         int line_offset) {
  const std::set<std::string>& lowered = lowered_group_names();
  std::size_t first = e;
  for (std::size_t k = b; k < e; ++k) {
    if (t[k].kind != jit::Token::ident || !groups.count(t[k].text)) continue;
    const bool member = k + 2 < e && is_punct(t[k + 1], "::") && t[k + 2].kind == jit::Token::ident;
    if (first == e) first = k;
    if (member && !lowered.count(t[k + 2].text)) {
      first = k;
      break;
    }
  }
  if (first == e) return "";
  std::string what = t[first].text;
  if (first + 2 < e && is_punct(t[first + 1], "::") && t[first + 2].kind == jit::Token::ident)
    what += "::" + t[first + 2].text;
  return "warp or group operation " + what + " at " + place(filename, t[first].line + line_offset);
}

// The index of the '(' matching the ')' at close in t (npos: none).
std::size_t open_paren(const std::vector<jit::Token>& t, std::size_t close) {
  for (std::size_t j = close, depth = 0; j-- > 0;) {
    if (t[j].directive) continue;
    if (jit::is_punct(t[j], ")")) ++depth;
    if (jit::is_punct(t[j], "(") && depth-- == 0) return j;
  }
  return std::string::npos;
}

// The index of the ')' matching the '(' at open in t (npos: none).
std::size_t close_paren(const std::vector<jit::Token>& t, std::size_t open) {
  for (std::size_t j = open + 1, depth = 0; j < t.size(); ++j) {
    if (t[j].directive) continue;
    if (jit::is_punct(t[j], "(")) ++depth;
    if (jit::is_punct(t[j], ")") && depth-- == 0) return j;
  }
  return std::string::npos;
}

// The name of the function whose body opens at t[brace], or "" when the brace opens no
// function body (a namespace, a struct, an initialiser; an operator counts as none).
std::string defined_function(const std::vector<jit::Token>& t, std::size_t brace) {
  static const std::set<std::string> after_params{"const", "noexcept", "override",
                                                  "final", "volatile", "__restrict__"};
  static const std::set<std::string> not_names{
      "if",      "while",         "for",        "switch",   "sizeof",
      "alignof", "__attribute__", "noexcept",   "decltype", "throw",
      "alignas", "__align__",     "__device__", "__host__"};  // (a lambda's)
  std::size_t j = brace;
  while (j > 0 && t[j - 1].kind == jit::Token::ident && after_params.count(t[j - 1].text)) --j;
  for (;;) {  // past `noexcept(...)` and `__attribute__((...))` after the parameters
    if (j == 0 || !jit::is_punct(t[j - 1], ")")) return "";
    const std::size_t open = open_paren(t, j - 1);
    if (open == std::string::npos) return "";
    const std::size_t at = regions::callee(t, open);  // (a specialisation's: before its `<...>`)
    if (at == t.size()) return "";
    const jit::Token& name = t[at];
    if (!not_names.count(name.text))
      return at >= 1 && jit::is_ident(t[at - 1], "operator") ? "" : name.text;
    if (!jit::is_ident(name, "noexcept") && !jit::is_ident(name, "__attribute__")) return "";
    j = open - 1;
  }
}

// Whether tokens from k name the cooperative_groups namespace: `cooperative_groups` or
// `::cooperative_groups`, then ';'.
bool groups_alias_target(const std::vector<jit::Token>& t, std::size_t k) {
  if (k < t.size() && is_punct(t[k], "::")) ++k;
  return k + 1 < t.size() && jit::is_ident(t[k], "cooperative_groups") && is_punct(t[k + 1], ";");
}

// Splits outside (the source with the kernel bodies blanked) into the functions it defines at
// namespace scope and the rest.
OutsideCode outside_code(std::string_view outside, const std::string& filename) {
  OutsideCode code{{}, std::string(outside), {}};
  const std::vector<jit::Token> t = jit::lex(outside);
  // The aliases first: a function may name one declared after it only in a template, which
  // is harmless to over-count.
  for (std::size_t k = 0; k + 3 < t.size(); ++k)
    if (jit::is_ident(t[k], "namespace") && t[k + 1].kind == jit::Token::ident &&
        is_punct(t[k + 2], "=") && groups_alias_target(t, k + 3))
      code.groups.insert(t[k + 1].text);
  const std::set<std::string>& groups = code.groups;
  std::vector<std::size_t> match(t.size(), std::string::npos), stack;
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (t[i].directive || t[i].kind != jit::Token::punct) continue;
    if (t[i].text == "{") stack.push_back(i);
    if (t[i].text == "}" && !stack.empty()) match[stack.back()] = i, stack.pop_back();
  }
  std::size_t start = 0;  // the first token of the declaration at hand
  for (std::size_t i = 0; i < t.size(); ++i) {
    const jit::Token& x = t[i];
    if (x.directive || is_punct(x, ";") || is_punct(x, "}")) {
      start = i + 1;
      continue;
    }
    if (!is_punct(x, "{")) continue;
    const bool block =
        (i >= 1 &&
         (jit::is_ident(t[i - 1], "namespace") ||
          (t[i - 1].kind == jit::Token::string && i >= 2 && jit::is_ident(t[i - 2], "extern")))) ||
        (i >= 2 && jit::is_ident(t[i - 2], "namespace"));
    if (block) {  // a namespace's declarations are at namespace scope too
      start = i + 1;
      continue;
    }
    if (match[i] == std::string::npos) break;
    const std::string name = defined_function(t, i);
    if (!name.empty()) {
      const std::size_t b = t[start].begin, e = t[match[i]].end;
      OutsideFunction& f = code.functions[name];
      if (f.why.empty())
        f.why = fiber_reason(jit::scan_sync(outside.substr(b, e - b)), filename,
                             line_at(outside, b) - 1);
      if (f.why.empty()) f.why = groups_named(t, start, match[i] + 1, groups, filename, 0);
      for (std::size_t k = start; k <= match[i]; ++k)
        if (t[k].kind == jit::Token::ident) f.names.insert(t[k].text);
      for (std::size_t c = b; c < e; ++c)
        if (code.rest[c] != '\n') code.rest[c] = ' ';
    }
    i = match[i];  // (a struct's or initialiser's braces stay in rest)
    start = i + 1;
  }
  const std::vector<jit::Token> rest = jit::lex(code.rest);
  for (std::size_t k = 0; k < rest.size(); ++k) {
    const jit::Token& x = rest[k];
    if (x.kind != jit::Token::ident) continue;
    code.rest_names.insert(x.text);
    if (!code.groups_why.empty() || !code.groups.count(x.text)) continue;
    // (an #include line, or an alias `namespace cg = [::]cooperative_groups;`, only declares)
    std::size_t first = k;  // the directive's first word
    while (x.directive && first > 0 && rest[first - 1].directive && rest[first - 1].line == x.line)
      --first;
    const bool included = x.directive && jit::is_ident(rest[first], "include");
    std::size_t before = k;
    if (before > 0 && is_punct(rest[before - 1], "::")) --before;
    const bool aliased = (before >= 3 && is_punct(rest[before - 1], "=") &&
                          jit::is_ident(rest[before - 3], "namespace")) ||
                         (k >= 1 && jit::is_ident(rest[k - 1], "namespace") &&
                          k + 1 < rest.size() && is_punct(rest[k + 1], "="));
    if (!included && !aliased) code.groups_why = groups_named(rest, k, k + 1, groups, filename, 0);
  }
  return code;
}

// Why the functions a kernel body can reach force fibers, or "". It reaches those it names,
// those they name, and every one the rest names (a macro's body, a table of functions).
std::string reached_why(const std::vector<jit::Token>& body, const OutsideCode& code) {
  std::vector<std::string> todo;
  for (const jit::Token& x : body)
    if (x.kind == jit::Token::ident) todo.push_back(x.text);
  todo.insert(todo.end(), code.rest_names.begin(), code.rest_names.end());
  std::set<std::string> seen;
  for (std::size_t i = 0; i < todo.size(); ++i) {
    auto f = code.functions.find(todo[i]);
    if (f == code.functions.end() || !seen.insert(todo[i]).second) continue;
    if (!f->second.why.empty()) return f->second.why;
    todo.insert(todo.end(), f->second.names.begin(), f->second.names.end());
  }
  return "";
}

// The identifiers text declares at namespace or class scope (not inside a function's body): a
// method (`reduce(`), a variable (`auto f = [] ...`, `Functor f;`), a type (`struct Reduce`), a
// macro.
std::set<std::string> declared_names(std::string_view text) {
  const std::vector<jit::Token> t = jit::lex(text);
  std::set<std::string> names;
  std::vector<bool> counts;  // each open brace: whether it is a class's or function's (depth)
  int depth = 0;
  for (std::size_t k = 0; k + 1 < t.size(); ++k) {
    if (t[k].directive) {  // a macro's name (`#define SYNC() __syncthreads()`)
      if (is_ident(t[k], "define") && t[k + 1].directive && t[k + 1].line == t[k].line &&
          t[k + 1].kind == jit::Token::ident && (k == 0 || t[k - 1].line != t[k].line))
        names.insert(t[k + 1].text);
      continue;
    }
    if (is_punct(t[k], "{")) {  // (a namespace's or extern "C"'s braces add no depth)
      const bool scope = (k > 0 && is_ident(t[k - 1], "namespace")) ||
                         (k > 1 && is_ident(t[k - 2], "namespace")) ||
                         (k > 0 && t[k - 1].kind == jit::Token::string);
      counts.push_back(!scope);
      depth += !scope;
    } else if (is_punct(t[k], "}") && !counts.empty()) {
      depth -= counts.back();
      counts.pop_back();
    }
    if (t[k].kind != jit::Token::ident || depth > 1) continue;
    if (is_punct(t[k + 1], "(") || is_punct(t[k + 1], "=") || is_punct(t[k + 1], "{") ||
        is_punct(t[k + 1], ";") ||
        (k > 0 && (is_ident(t[k - 1], "struct") || is_ident(t[k - 1], "class") ||
                   is_ident(t[k - 1], "union"))))
      names.insert(t[k].text);
  }
  return names;
}

// Whether a kernel body names (itself, or through the functions it reaches) one of names.
bool reaches_names(const std::vector<jit::Token>& body, const OutsideCode& code,
                   const std::set<std::string>& names) {
  std::vector<std::string> todo;
  for (const jit::Token& x : body)
    if (x.kind == jit::Token::ident) todo.push_back(x.text);
  std::set<std::string> seen;
  for (std::size_t i = 0; i < todo.size(); ++i) {
    if (!seen.insert(todo[i]).second) continue;
    if (names.count(todo[i])) return true;
    if (auto f = code.functions.find(todo[i]); f != code.functions.end())
      todo.insert(todo.end(), f->second.names.begin(), f->second.names.end());
  }
  return false;
}

// What in a kernel body synchronises other than the warp operations the region rewrite runs in
// lockstep (jit/cpu/regions.h: shuffles, votes, __activemask, __match_any_sync and __syncwarp,
// called by name): its first construct and line, or nullopt when nothing does. Cooperative
// groups, CUB and the rest stay with fibers. (Lambdas do not matter: regions keep a lambda's
// `return` its own. Lockstep pointers, which regions take too, thread_plans finds in the whole
// source.)
std::optional<jit::SyncUse> beyond_region_warp_ops(std::string_view body) {
  std::string rest(body);  // the body, those blanked: nothing else may synchronise
  const std::vector<jit::Token> tokens = jit::lex(body);
  for (const jit::Token& t : tokens)
    if (t.kind == jit::Token::ident && region_warp_operation(t.text))
      std::fill(rest.begin() + t.begin, rest.begin() + t.end, ' ');
  if (jit::SyncUse other = jit::scan_sync(rest, false); other.other_sync) return other;
  return std::nullopt;
}

}  // namespace

std::string kernel_name(const std::string& expr) {
  std::string base = expr[0] == '(' ? expr.substr(expr.rfind(')') + 1) : expr;
  base = base.substr(0, base.find('<'));
  base.erase(base.find_last_not_of(" \t") + 1);
  if (auto colons = base.rfind("::"); colons != std::string::npos) base = base.substr(colons + 2);
  return base;
}

std::vector<ThreadPlan> thread_plans(std::string_view source, const std::string& filename,
                                     const std::vector<std::string>& include_dirs,
                                     const std::vector<std::string>& name_expressions) {
  std::vector<jit::KernelBody> bodies = jit::find_kernel_bodies(source);
  std::vector<jit::SyncUse> uses;
  for (const auto& k : bodies)
    uses.push_back(jit::scan_sync(source.substr(k.open, k.close - k.open), false));
  // What the whole source finds that keeps a kernel from regions, where a kernel's parameters
  // matter: its lockstep pointers (`volatile int* flags`, a parameter or in the body), where a
  // kernel's parameters tell its values the same in every thread from a device function's (its
  // warp-synchronous code), and its spin-waits on global memory through a volatile parameter
  // (`while (ready[col] == 0) {}`), each as the body's (lines the body's).
  std::vector<std::optional<jit::SyncUse>> lockstep(bodies.size());
  if (source.find("volatile") != std::string_view::npos) {
    const std::vector<jit::Token> t = jit::lex(source);
    auto keep = [&](std::size_t i, const std::string& what, int line) {
      jit::SyncUse& use = lockstep[i].emplace();
      use.other_sync = use.other_used = true;
      use.first_other = what;
      use.first_other_line = line - (line_at(source, bodies[i].open) - 1);
      if (!uses[i].other_sync) {
        uses[i].other_sync = uses[i].other_used = true;
        uses[i].first_other = use.first_other;
        uses[i].first_other_line = use.first_other_line;
      }
    };
    for (const jit::LockstepPointer& p : jit::lockstep_pointers(t))
      for (std::size_t i = 0; i < bodies.size(); ++i) {
        const std::size_t at = t[p.name].begin;
        const bool in_kernel = p.body ? t[p.body].begin == bodies[i].open
                                      : at > bodies[i].open && at < bodies[i].close;
        if (in_kernel && !lockstep[i])
          keep(i, "warp-synchronous code through volatile '" + t[p.name].text + "'", p.line);
      }
    for (const jit::SpinWait& w : jit::spin_waits(t))
      for (std::size_t i = 0; i < bodies.size(); ++i) {
        const std::size_t at = t[w.condition].begin;
        if (!w.shared && !w.between_blocks && at > bodies[i].open && at < bodies[i].close &&
            !lockstep[i])
          keep(i, "a spin-wait on volatile '" + w.name + "' (another thread sets it)",
               t[w.condition].line);
      }
  }
  // Everything but the kernel bodies: device functions, globals, includes.
  std::string outside(source);
  for (const auto& k : bodies)
    for (std::size_t i = k.open; i < k.close; ++i)
      if (outside[i] != '\n') outside[i] = ' ';
  fs::path dir = filename.empty() ? fs::path(".") : fs::path(filename).parent_path();
  // A kernel is a candidate for regions (and coroutines) when its only synchronisation is
  // __syncthreads* in its own body, without a lambda (whose `return` must stay a return), and
  // nothing it can reach outside the kernel bodies synchronises: no function it calls (directly
  // or through others), nothing else outside the functions (a struct's method, a header the
  // source includes). Each body's reason when it is not:
  const OutsideCode code = outside_code(outside, filename);
  const std::string module_why = !code.groups_why.empty()
                                     ? code.groups_why
                                     : barriers_outside(code.rest, filename, dir, include_dirs);
  // Barriers in the rest itself (a struct's static method: CloverLeaf's Reduce<T>::run) reach
  // only the kernels that name what it declares; a kernel naming none keeps its own plan.
  const bool rest_barriers = code.groups_why.empty() && !module_why.empty() &&
                             fiber_reason(jit::scan_sync(code.rest), filename, 0) == module_why;
  const std::set<std::string> rest_declared =
      rest_barriers ? declared_names(code.rest) : std::set<std::string>{};
  std::string any_outside_why = module_why;  // (coroutines compile the whole unit as theirs)
  for (const auto& [name, f] : code.functions)
    if (any_outside_why.empty()) any_outside_why = f.why;
  std::vector<std::string> body_why(bodies.size()), reach_why(bodies.size()),
      module_reach(bodies.size(), module_why);
  std::vector<bool> regions_take(bodies.size());  // what keeps it from coroutines, regions take
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    const int offset = line_at(source, bodies[i].open) - 1;
    const std::string_view body = source.substr(bodies[i].open, bodies[i].close - bodies[i].open);
    const std::vector<jit::Token> tokens = jit::lex(body);
    if (rest_barriers && !reaches_names(tokens, code, rest_declared)) module_reach[i].clear();
    if (module_reach[i].empty()) reach_why[i] = reached_why(tokens, code);
    if (std::string why = groups_named(tokens, 0, tokens.size(), code.groups, filename, offset);
        !why.empty()) {  // cooperative groups left as they are (block_groups.h lowers the rest)
      body_why[i] = why;
      uses[i].other_sync = true;
    } else if (uses[i].other_sync) {
      // (what regions cannot take, when something: `__match_all_sync`, not the `__ballot_sync`
      // before it)
      std::optional<jit::SyncUse> kept = beyond_region_warp_ops(body);
      if (!kept) kept = lockstep[i];
      body_why[i] = fiber_reason(kept ? *kept : uses[i], filename, offset);
      regions_take[i] = !kept;
    } else if (uses[i].block_barriers && uses[i].lambda) {  // not coroutines; regions may
      body_why[i] = "a lambda in kernel " + bodies[i].name + ", which has barriers, at " +
                    place(filename, uses[i].first_lambda_line + offset);
      regions_take[i] = true;
    }
  }
  std::vector<ThreadPlan> result;
  for (const auto& expr : name_expressions) {
    const std::string base = kernel_name(expr);
    bool found = false, sync = false, regions_may = true;
    std::string own_why, other_why;  // this kernel's bodies', another body's
    std::string outside_why;         // what it reaches outside the bodies
    for (std::size_t i = 0; i < bodies.size(); ++i) {
      std::string& why = bodies[i].name == base ? own_why : other_why;
      if (why.empty()) why = body_why[i];
      if (bodies[i].name != base) continue;
      found = true;
      if (outside_why.empty()) outside_why = module_reach[i];
      sync = sync || uses[i].any();
      regions_may = regions_may && (body_why[i].empty() || regions_take[i]);
      if (outside_why.empty()) outside_why = reach_why[i];
    }
    if (other_why.empty()) other_why = any_outside_why;
    if (!found && jit::uses_barriers(source))
      result.push_back({kiln_cpu::mode_fibers, "its body was not found by kiln's scan"});
    else if (!sync && outside_why.empty())
      result.push_back({kiln_cpu::mode_loop, "no barrier or warp operation"});
    else if (!sync)  // it may call the device function that synchronises
      result.push_back({kiln_cpu::mode_fibers,
                        "its body does not synchronise, but it may call "
                        "code that does: " +
                            outside_why});
    else if (!outside_why.empty())
      result.push_back({kiln_cpu::mode_fibers, outside_why});
    else if (!own_why.empty() && regions_may)  // warp operations: regions, else fibers
      result.push_back({kiln_cpu::mode_coroutines, own_why, own_why});
    else if (!own_why.empty())
      result.push_back({kiln_cpu::mode_fibers, own_why});
    else
      result.push_back(
          {kiln_cpu::mode_coroutines, "barriers only as __syncthreads* in its body", other_why});
  }
  return result;
}

bool casts_pointers(std::string_view source, const std::string& filename,
                    const std::vector<std::string>& include_dirs) {
  if (has_pointer_cast(jit::lex(source))) return true;
  const fs::path dir = filename.empty() ? fs::path(".") : fs::path(filename).parent_path();
  std::vector<fs::path> dirs(include_dirs.begin(), include_dirs.end());
  for (const jit::IncludedFile& f : jit::walk_includes(source, dir, dirs, kiln_header))
    if (has_pointer_cast(jit::lex(f.text))) return true;
  return false;
}

std::string rewrite_coroutine_returns(std::string_view source) {
  std::string out(source);
  // `extern "C" [...] __global__` (up to the declaration's name): blanked, columns kept.
  if (source.find("extern") != std::string_view::npos) {
    const std::vector<jit::Token> t = jit::lex(source);
    for (std::size_t k = 0; k + 2 < t.size(); ++k) {
      if (!jit::is_ident(t[k], "extern") || t[k + 1].kind != jit::Token::string ||
          t[k + 1].text != "C" || t[k].directive)
        continue;
      for (std::size_t j = k + 2; j < t.size() && j < k + 8 && t[j].kind == jit::Token::ident; ++j)
        if (jit::is_ident(t[j], "__global__")) {
          std::fill(out.begin() + t[k].begin, out.begin() + t[k + 1].end, ' ');
          break;
        }
    }
  }
  std::vector<jit::KernelBody> bodies = jit::find_kernel_bodies(source);
  for (auto k = bodies.rbegin(); k != bodies.rend(); ++k) {  // last first: offsets stay valid
    std::string_view body = source.substr(k->open, k->close - k->open);
    if (!jit::uses_barriers(body)) continue;
    std::vector<std::size_t> at = jit::find_identifier(body, "return");
    for (auto p = at.rbegin(); p != at.rend(); ++p) out.insert(k->open + *p, "co_");
  }
  return out;
}

std::string yield_in_spin_waits(std::string_view source) {
  if (source.find("volatile") == std::string_view::npos) return std::string(source);
  const std::vector<jit::Token> t = jit::lex(source);
  std::string out(source);
  const std::vector<jit::SpinWait> spins = jit::spin_waits(t);
  for (auto s = spins.rbegin(); s != spins.rend(); ++s)  // last first: offsets stay valid
    out.insert(t[s->condition].begin,
               s->shared ? "::kiln_cpu::spin_yield(), " : "::kiln_cpu::spin_yield(1), ");
  return out;
}

std::string rewrite_lockstep_pointers(std::string_view source) {
  // (every compile plans its source: lex only one that can hold them)
  if (source.find("volatile") == std::string_view::npos) return std::string(source);
  const std::vector<jit::Token> t = jit::lex(source);
  auto text = [&](std::size_t k) { return source.substr(t[k].begin, t[k].end - t[k].begin); };
  // The edits, [begin, end) of source replaced: a parameter's also inserts at its function's
  // body, after the parameters that follow it.
  struct Edit {
    std::size_t begin, end;
    std::string text;
  };
  std::vector<Edit> edits;
  for (const jit::LockstepPointer& p : jit::lockstep_pointers(t)) {
    // T: the declaration's words but volatile (and an array's __shared__ and static), and an
    // array's extents after its first (`__shared__ volatile int b[4][2]`: `int[2]`).
    std::string type, array;  // (in steps: GCC 12 warns of "" + string)
    const std::size_t type_end = p.array ? p.name : p.last;
    for (std::size_t k = p.first; k < type_end; ++k) {
      if (jit::is_ident(t[k], "volatile") || jit::is_ident(t[k], "__shared__") ||
          jit::is_ident(t[k], "static"))
        continue;
      if (!type.empty()) type += ' ';
      type += text(k);
    }
    for (std::size_t k = p.inner; p.array && k <= p.last; ++k) type += text(k);
    const std::string name(text(p.name));
    if (p.body) {
      // A parameter keeps its type (the kernel's signature is what a launch fills): renamed,
      // it initialises the lockstep pointer of its name at the body's start (on its line).
      edits.push_back({t[p.name].begin, t[p.name].end, "kiln_lockstep_" + name});
      edits.push_back(
          {t[p.body].end, t[p.body].end,
           " ::kiln_cpu::lockstep_ptr<" + type + "> " + name + "(kiln_lockstep_" + name + ");"});
      continue;
    }
    // `__shared__ volatile T s[N]` -> `__shared__ T kiln_lockstep_s[N]; lockstep_ptr<T> s =
    // kiln_lockstep_s` (its ';' stays)
    for (std::size_t k = p.first; p.array && k <= p.last; ++k) {
      if (jit::is_ident(t[k], "volatile")) continue;
      if (!array.empty()) array += ' ';
      array += k == p.name ? "kiln_lockstep_" + name : std::string(text(k));
    }
    const std::size_t b = t[p.first].begin, e = t[p.last].end;
    std::string replaced = p.array ? array + "; ::kiln_cpu::lockstep_ptr<" + type + "> " + name +
                                         " = kiln_lockstep_" + name
                                   : "::kiln_cpu::lockstep_ptr<" + type + "> ";
    replaced += std::string(std::count(source.begin() + b, source.begin() + e, '\n'), '\n');
    edits.push_back({b, e, std::move(replaced)});
  }
  // (at one offset, a parameter's insertion before a declaration replaced there: `{volatile`)
  std::sort(edits.begin(), edits.end(), [](const Edit& a, const Edit& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  return apply_edits(source, edits);
}

std::string rewrite_extern_shared(std::string_view source, bool checked) {
  // A declaration is everything from `extern` to the next ';': the qualifiers may come in any
  // legal order (`extern __shared__ float s[]`, `extern float __shared__ s[]`, with __align__),
  // so its tokens are taken apart rather than its text matched as a whole (no regex: a source
  // is any size).
  const std::vector<jit::Token> tokens = jit::lex(source);
  std::vector<TextEdit> edits;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i].directive || !jit::is_ident(tokens[i], "extern")) continue;
    std::size_t end = i;
    while (end < tokens.size() && !jit::is_punct(tokens[end], ";") &&
           !jit::is_punct(tokens[end], "{"))
      ++end;
    if (end == tokens.size() || !jit::is_punct(tokens[end], ";")) continue;
    // The declaration's words, qualifiers left out: extern, __shared__, __align__(N), alignas(N).
    std::vector<const jit::Token*> rest;
    bool shared = false, odd = false;
    int brackets = 0;  // (an extent's parentheses are its own: `[CHUNK * (K + 1)]`)
    for (std::size_t j = i + 1; j < end; ++j) {
      const jit::Token& t = tokens[j];
      brackets += jit::is_punct(t, "[") - jit::is_punct(t, "]");
      if (brackets > 0 || jit::is_punct(t, "]")) {
        rest.push_back(&t);
      } else if (jit::is_ident(t, "__shared__")) {
        shared = true;
      } else if ((jit::is_ident(t, "__align__") || jit::is_ident(t, "alignas")) && j + 3 < end &&
                 jit::is_punct(tokens[j + 1], "(") && tokens[j + 2].kind == jit::Token::number &&
                 jit::is_punct(tokens[j + 3], ")")) {
        j += 3;
      } else if (t.kind == jit::Token::string || jit::is_punct(t, "(") || jit::is_punct(t, ")") ||
                 jit::is_punct(t, "}") || jit::is_ident(t, "extern")) {
        odd = true;  // an extern "C" block, a function: not an unsized array
      } else {
        rest.push_back(&t);
      }
    }
    // One unsized array: type words, then `name [ ]`, then any extents of its rows
    // (`extern __shared__ half tile[][CHUNK + SKEW];`, cudaTensorCoreGemm's).
    const std::size_t n = rest.size();
    std::size_t rows = n;  // rest[rows, n): the rows' extents
    while (rows >= 2 && jit::is_punct(*rest[rows - 1], "]")) {
      std::size_t open = rows - 1;  // the `[` of this `]`
      for (int depth = 0; open-- > 0;) {
        if (jit::is_punct(*rest[open], "]")) ++depth;
        if (jit::is_punct(*rest[open], "[") && depth-- == 0) break;
      }
      if (open >= rows || rows - open == 2) break;  // none, or `[ ]`: the unsized one
      rows = open;
    }
    if (!shared || odd || rows < 4 || !jit::is_punct(*rest[rows - 1], "]") ||
        !jit::is_punct(*rest[rows - 2], "[") || rest[rows - 3]->kind != jit::Token::ident)
      continue;
    std::string type, extents;
    for (std::size_t j = 0; j + 3 < rows; ++j) type += (type.empty() ? "" : " ") + rest[j]->text;
    for (std::size_t j = rows; j < n; ++j) extents += rest[j]->text;
    const std::string& name = rest[rows - 3]->text;
    // (a pointer to the rows where there are extents: `float (*const tile)[8]`)
    const std::string pointer = extents.empty() ? type + "*" : type + " (*)" + extents;
    const std::string declared =
        extents.empty() ? type + "* const " + name : type + " (*const " + name + ")" + extents;
    // (check mode's checked array is a class, which no reinterpret_cast takes: an array the
    // source reinterprets stays a plain pointer)
    std::string replacement = checked && !reinterpreted(tokens, name)
                                  ? "[[maybe_unused]] static constexpr ::kiln_cpu::dyn_shared<" +
                                        type + extents + "> " + name + "{}"
                                  : "static thread_local " + declared + " = reinterpret_cast<" +
                                        pointer + ">(::kiln_cpu::tls.dyn_smem)";
    // The same lines, so that the user's line numbers hold.
    replacement.append(std::size_t(tokens[end].line - tokens[i].line), '\n');
    edits.push_back({tokens[i].begin, tokens[end].begin, std::move(replacement)});
    i = end;
  }
  return apply_edits(source, edits);
}

std::string rewrite_shared_arrays(std::string_view source) {
  const std::vector<jit::Token> tokens = jit::lex(source);
  const std::vector<std::size_t> closer = jit::pair_groups(tokens);
  auto alignment = [&](std::size_t j) {  // `__align__(16)` / `alignas(16)` at j: its `)`, else j
    return (is_ident(tokens[j], "__align__") || is_ident(tokens[j], "alignas")) &&
                   j + 1 < tokens.size() && is_punct(tokens[j + 1], "(") &&
                   closer[j + 1] < tokens.size()
               ? closer[j + 1]
               : j;
  };
  std::vector<TextEdit> edits;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i].directive || !is_ident(tokens[i], "__shared__")) continue;
    // The declaration: back to its first word, on to its ';'.
    std::size_t first = i;
    while (first > 0 && !tokens[first - 1].directive &&
           (tokens[first - 1].kind == jit::Token::ident || is_punct(tokens[first - 1], ")"))) {
      if (is_punct(tokens[first - 1], ")")) {  // `__align__(16) __shared__`
        std::size_t open = first - 1;
        while (open > 0 && !is_punct(tokens[open], "(")) --open;
        if (open == 0 || alignment(open - 1) != first - 1) break;
        first = open - 1;
      } else {
        --first;
      }
    }
    std::size_t end = i + 1;
    while (end < tokens.size() && !is_punct(tokens[end], ";") && !is_punct(tokens[end], "{") &&
           !is_punct(tokens[end], "=") && !is_punct(tokens[end], "(") && !tokens[end].directive) {
      if (is_punct(tokens[end], "[") && closer[end] < tokens.size()) end = closer[end];
      end = alignment(end) + 1;  // (past `__align__(16)` whole)
    }
    if (end == tokens.size() || !is_punct(tokens[end], ";")) continue;
    // Its words apart: storage (static, __shared__, alignment) kept in front; the element
    // type's words (cv-qualifiers included); then declarators `name [E]...`, comma-separated.
    std::string storage, type;
    bool odd = false;
    std::vector<std::pair<std::string, std::vector<std::string>>> declarators;  // name, extents
    std::size_t j = first;
    for (int angle = 0; j < end; ++j) {
      const jit::Token& t = tokens[j];
      angle += is_punct(t, "<") - is_punct(t, ">");
      if (is_ident(t, "extern") || is_ident(t, "thread_local") || is_ident(t, "constexpr"))
        odd = true;
      if (is_ident(t, "static") || is_ident(t, "__shared__")) {
        storage += t.text + " ";
      } else if (const std::size_t close = alignment(j); close != j) {
        storage += std::string(source.substr(t.begin, tokens[close].end - t.begin)) + " ";
        j = close;
      } else if (t.kind == jit::Token::ident && angle == 0 && !type.empty() &&
                 (j + 1 == end || is_punct(tokens[j + 1], "[") || is_punct(tokens[j + 1], ","))) {
        break;  // the first declarator's name
      } else if (t.kind == jit::Token::ident || is_punct(t, "::") || is_punct(t, "<") ||
                 is_punct(t, ">") || is_punct(t, ",") || t.kind == jit::Token::number) {
        type += (type.empty() || is_punct(t, "::") || type.ends_with("::") ? "" : " ") + t.text;
      } else {
        odd = true;  // a pointer, a reference, a function: not an array of elements
      }
    }
    while (!odd && j < end) {
      if (tokens[j].kind != jit::Token::ident) {
        odd = true;
        break;
      }
      std::vector<std::string> extents;
      std::size_t k = j + 1;
      for (; k < end && is_punct(tokens[k], "["); k = closer[k] + 1) {
        if (closer[k] == k + 1) odd = true;  // `[]`: sized by its initialiser, which it has not
        extents.emplace_back(source.substr(tokens[k].end, tokens[closer[k]].begin - tokens[k].end));
      }
      declarators.emplace_back(tokens[j].text, std::move(extents));
      if (k < end && !is_punct(tokens[k], ",")) odd = true;
      j = k + 1;
    }
    const bool arrays = std::any_of(declarators.begin(), declarators.end(),
                                    [](const auto& d) { return !d.second.empty(); });
    if (odd || !arrays || type.empty()) continue;
    // One declaration per declarator; an array the source reinterprets stays an array.
    std::string replacement;
    for (const auto& [name, extents] : declarators) {
      replacement += storage;
      if (extents.empty() || reinterpreted(tokens, name)) {
        replacement += type + " " + name;
        for (const std::string& e : extents) replacement += "[" + e + "]";
      } else {
        replacement += "::kiln_cpu::shared_array<" + type;
        for (const std::string& e : extents) replacement += ", (" + e + ")";
        replacement += "> " + name;
      }
      replacement += "; ";
    }
    replacement.pop_back();
    replacement.pop_back();  // (the declaration's own ';' follows)
    replacement.append(std::size_t(tokens[end].line - tokens[first].line), '\n');
    edits.push_back({tokens[first].begin, tokens[end].begin, std::move(replacement)});
    i = end;
  }
  return apply_edits(source, edits);
}

namespace {

// Whether tokens [first, last) are one pointer parameter `[const|volatile] T[<...>] [const] *
// [__restrict__] name`; then star and name are the '*' and the name's indices.
bool pointer_param(const std::vector<jit::Token>& t, std::size_t first, std::size_t last,
                   std::size_t* star, std::size_t* name) {
  if (last - first < 3 || t[last - 1].kind != jit::Token::ident) return false;
  *name = last - 1;
  std::size_t s = *name - 1;
  if (jit::is_ident(t[s], "__restrict__") || jit::is_ident(t[s], "__restrict")) --s;
  if (s <= first || !jit::is_punct(t[s], "*")) return false;
  *star = s;
  // Before the '*': qualifiers and one (possibly qualified, possibly templated) type name.
  bool named = false;
  int angle = 0;
  for (std::size_t j = first; j < s; ++j) {
    const jit::Token& k = t[j];
    if (angle > 0) {
      if (jit::is_punct(k, "<")) ++angle;
      if (jit::is_punct(k, ">")) --angle;
      if (jit::is_punct(k, "(") || jit::is_punct(k, ")")) return false;
      continue;
    }
    if (jit::is_ident(k, "const") || jit::is_ident(k, "volatile")) continue;
    // (a built-in type of several words: `unsigned int`, `long long`, `unsigned char`)
    static const std::set<std::string, std::less<>> builtin{"unsigned", "signed", "short", "long",
                                                            "int",      "char",   "double"};
    if (named && builtin.count(k.text) && builtin.count(t[j - 1].text)) continue;
    if (k.kind == jit::Token::ident && !named) {
      named = true;
      while (j + 2 < s && jit::is_punct(t[j + 1], "::") && t[j + 2].kind == jit::Token::ident)
        j += 2;
      continue;
    }
    if (named && jit::is_punct(k, "<")) {
      ++angle;
      continue;
    }
    return false;  // '&', '[', a second '*', two type names: not a plain pointer
  }
  return named && angle == 0;
}

}  // namespace

std::string rewrite_element_addresses(std::string_view source) {
  const std::vector<jit::Token> tokens = jit::lex(source);
  const std::vector<std::size_t> closer = jit::pair_groups(tokens);
  // Whether the `&` at i takes an address: what comes before it cannot end an operand (`a & b[i]`,
  // `f() & b[i]`, `i++ & b[j]` are and-ing; a cast's `)` cannot be told apart, and is left).
  // (the lexer gives `&&`, `++`, `--` and `->` as two one-character tokens: k and k + 1 here)
  auto pair = [&](std::size_t k, const char* a, const char* b) {
    return k + 1 < tokens.size() && is_punct(tokens[k], a) && is_punct(tokens[k + 1], b) &&
           tokens[k].end == tokens[k + 1].begin;
  };
  auto unary = [&](std::size_t i) {
    if (i == 0) return true;
    const jit::Token& t = tokens[i - 1];
    if (t.kind == jit::Token::ident)
      return t.text == "return" || t.text == "case" || t.text == "throw" || t.text == "else" ||
             t.text == "do" || t.text == "co_return" || t.text == "co_yield";
    return t.kind == jit::Token::punct && t.text != ")" && t.text != "]" && t.text != ">" &&
           t.text != "}" && !(i >= 2 && (pair(i - 2, "+", "+") || pair(i - 2, "-", "-"))) &&
           !pair(i - 1, "&", "&");  // (`a && b[i]` is no address; `T<A> & b[i]` may be none)
  };
  // Whether the address at i is accessed at once, through a raw pointer (unchecked): read
  // through (`*&s[i]`, `(&s[i])[1]`), or an argument of a named cast
  // (`*reinterpret_cast<float4*>(&p[i])`), an atomic, a load or store hint or a copy
  // (`memcpy(&d[i], ...)`). Its subscript then keeps its check: the element must exist.
  auto accessed = [&](std::size_t i) {
    if (i > 0 && is_punct(tokens[i - 1], "*")) return true;
    std::size_t open = i;  // the innermost `(` around i, within its statement
    for (int depth = 0; open-- > 0;) {
      const jit::Token& t = tokens[open];
      if (is_punct(t, ")") || is_punct(t, "]")) ++depth;
      if ((is_punct(t, "(") || is_punct(t, "[")) && depth-- == 0) break;
      if (depth <= 0 && (is_punct(t, ";") || is_punct(t, "{") || is_punct(t, "}"))) return false;
    }
    if (open >= tokens.size() || !is_punct(tokens[open], "(") || open == 0) return false;
    if (closer[open] + 1 < tokens.size() &&
        (is_punct(tokens[closer[open] + 1], "[") || pair(closer[open] + 1, "-", ">")))
      return true;
    std::size_t name = open - 1;
    if (is_punct(tokens[name], ">")) {  // a template's arguments: back to its name
      for (int angle = 0; name > 0; --name) {
        angle += is_punct(tokens[name], ">") - is_punct(tokens[name], "<");
        if (angle == 0) break;
      }
      if (name == 0) return false;
      --name;
    }
    const std::string& f = tokens[name].text;
    return tokens[name].kind == jit::Token::ident &&
           (f.ends_with("_cast") || f.starts_with("atomic") || f.starts_with("__ld") ||
            f.starts_with("__st") || f == "memcpy" || f == "memmove" || f == "memset" ||
            f == "memcpy_async" || f == "__pipeline_memcpy_async");
  };
  std::vector<TextEdit> edits;
  for (std::size_t i = 0; i + 2 < tokens.size(); ++i) {
    if (tokens[i].directive || !is_punct(tokens[i], "&") || !unary(i) ||
        tokens[i + 1].kind != jit::Token::ident || !is_punct(tokens[i + 2], "[") || accessed(i))
      continue;
    // `&name[a]...[z]`, the whole postfix expression: its last subscript, and what follows.
    std::size_t last = i + 2;
    while (closer[last] + 1 < tokens.size() && is_punct(tokens[closer[last] + 1], "["))
      last = closer[last] + 1;
    const std::size_t close = closer[last];
    if (close >= tokens.size()) continue;
    if (close + 1 < tokens.size()) {
      const jit::Token& next = tokens[close + 1];
      if (is_punct(next, ".") || is_punct(next, "(") || is_punct(next, "::") ||
          pair(close + 1, "-", ">") || pair(close + 1, "+", "+") || pair(close + 1, "-", "-"))
        continue;  // (`&s[i].x`: a member's address; `&s[i]++`: not an address at all)
    }
    const std::size_t base_end = tokens[last].begin, index_begin = tokens[last].end;
    const std::size_t index_end = tokens[close].begin;
    // (a space after a `:`, which `::` would join: `c ? &a[i] :&b[j]`)
    const bool colon = tokens[i].begin > 0 && source[tokens[i].begin - 1] == ':';
    edits.push_back({tokens[i].begin, tokens[close].end,
                     std::string(colon ? " " : "") + "::kiln_cpu::element_address(" +
                         // (from the `&` on: what lies between it and the name keeps its newlines)
                         std::string(source.substr(tokens[i].end, base_end - tokens[i].end)) +
                         ", (" + std::string(source.substr(index_begin, index_end - index_begin)) +
                         "))"});
    i = close;
  }
  return apply_edits(source, edits);
}

std::string rewrite_pointer_params(std::string_view source) {
  const std::vector<jit::Token> tokens = jit::lex(source);
  std::string out(source);
  // Kernels from last to first, so earlier positions stay valid.
  std::vector<jit::KernelBody> bodies = jit::find_kernel_bodies(source);
  for (auto k = bodies.rbegin(); k != bodies.rend(); ++k) {
    // The parameter list: the ')' before the body's '{' and its '('.
    std::size_t close = tokens.size();
    for (std::size_t i = 0; i < tokens.size() && tokens[i].begin < k->open; ++i)
      if (jit::is_punct(tokens[i], ")")) close = i;
    if (close == tokens.size()) continue;
    std::size_t open = close;
    for (int depth = 0; open-- > 0;) {
      if (jit::is_punct(tokens[open], ")")) ++depth;
      if (jit::is_punct(tokens[open], "(") && depth-- == 0) break;
    }
    if (open >= close) continue;
    // Top-level parameters: split at commas outside <>, (), [].
    std::vector<std::pair<std::size_t, std::size_t>> params;
    int depth = 0;
    std::size_t start = open + 1;
    for (std::size_t i = open + 1; i <= close; ++i) {
      const jit::Token& t = tokens[i];
      if (i != close && (jit::is_punct(t, "<") || jit::is_punct(t, "(") || jit::is_punct(t, "[")))
        ++depth;
      if (i != close && (jit::is_punct(t, ">") || jit::is_punct(t, ")") || jit::is_punct(t, "]")))
        --depth;
      if ((depth == 0 && jit::is_punct(t, ",")) || i == close) {
        params.emplace_back(start, i);
        start = i + 1;
      }
    }
    for (auto p = params.rbegin(); p != params.rend(); ++p) {
      std::size_t star = 0, name = 0;
      if (!pointer_param(tokens, p->first, p->second, &star, &name)) continue;
      const std::size_t from = tokens[p->first].begin, to = tokens[star - 1].end;
      out.replace(from, tokens[name].end - from,
                  "::kiln_cpu::checked_ptr<" + std::string(source.substr(from, to - from)) + "> " +
                      tokens[name].text);
    }
  }
  return out;
}

std::string internal_kernels(std::string_view source) {
  const std::vector<jit::Token> t = jit::lex(source);
  // The braces around the token at hand: true for `namespace [N] {`, false for any other (a
  // function's or class's body, `extern "C" {`, an initialiser).
  std::vector<bool> namespaces;
  auto namespace_scope = [&] {
    return std::all_of(namespaces.begin(), namespaces.end(), [](bool n) { return n; });
  };
  std::set<std::string> named;  // every identifier before the token at hand
  std::vector<std::size_t> inserts;
  std::size_t declaration = 0;  // the first token of the namespace-scope declaration at hand
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (t[i].directive) {  // (a line of its own: the declaration at hand starts after it)
      if (t[i].kind == jit::Token::ident) named.insert(t[i].text);
      if (declaration == i) declaration = i + 1;
      continue;
    }
    if (jit::is_punct(t[i], "{")) {
      const bool opens_namespace =
          (i >= 1 && jit::is_ident(t[i - 1], "namespace")) ||
          (i >= 2 && jit::is_ident(t[i - 2], "namespace") && t[i - 1].kind == jit::Token::ident);
      namespaces.push_back(opens_namespace);
      if (opens_namespace) declaration = i + 1;
    } else if (jit::is_punct(t[i], "}")) {
      if (!namespaces.empty()) namespaces.pop_back();
      if (namespace_scope()) declaration = i + 1;
    } else if (jit::is_punct(t[i], ";") && namespace_scope()) {
      declaration = i + 1;
    } else if ((jit::is_ident(t[i], "__global__") || jit::is_ident(t[i], "__device__")) &&
               namespace_scope()) {
      // The declaration's words up to its name: the identifier before its parameter list
      // (attributes' parentheses skipped). A device function only where this is its definition
      // (`__device__ float x = f(1);` declares a variable, which must keep its name).
      const bool kernel = t[i].text == "__global__";
      bool plain = true;
      std::size_t k = declaration;
      for (; k < t.size() && plain && !(jit::is_punct(t[k], "(") && !t[k].directive); ++k) {
        if (t[k].directive) continue;
        static const std::set<std::string> not_plain{"template", "static", "extern",  "friend",
                                                     "typedef",  "using",  "operator"};
        plain = t[k].kind != jit::Token::string && !jit::is_punct(t[k], "<") &&
                !jit::is_punct(t[k], "::") && !jit::is_punct(t[k], ";") &&
                !jit::is_punct(t[k], "{") && !jit::is_punct(t[k], "=") &&
                !jit::is_punct(t[k], "[") && !not_plain.count(t[k].text);
        static const std::set<std::string> with_arguments{"__launch_bounds__", "__attribute__",
                                                          "__align__", "alignas", "__declspec"};
        if (plain && with_arguments.count(t[k].text) && k + 1 < t.size() &&
            jit::is_punct(t[k + 1], "("))
          k = std::min(close_paren(t, k + 1), t.size() - 1);
      }
      if (!plain || k >= t.size() || k <= i + 1 || t[k - 1].kind != jit::Token::ident ||
          named.count(t[k - 1].text))
        continue;
      if (!kernel) {  // the parameter list's `)` and then the body's `{`
        const std::size_t close = close_paren(t, k);
        if (close == std::string::npos || close + 1 >= t.size() ||
            !jit::is_punct(t[close + 1], "{"))
          continue;
      }
      inserts.push_back(t[i].begin);
    }
    if (t[i].kind == jit::Token::ident) named.insert(t[i].text);
  }
  std::string out(source);
  for (auto at = inserts.rbegin(); at != inserts.rend(); ++at)
    out.insert(*at, "static __attribute__((unused)) ");
  return out;
}

}  // namespace kiln::cpu
