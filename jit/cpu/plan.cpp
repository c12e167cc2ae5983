// The cpu compiler's source plan: thread modes from the lexer's scans, and the rewrites.
#include "jit/cpu/plan.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

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
  if (use.other_sync)
    return "warp or group operation " + use.first_other + " at " +
           place(file, use.first_other_line + line_offset);
  if (use.block_barriers)
    return "a barrier outside a __global__ body, at " +
           place(file, use.first_barrier_line + line_offset);
  return "";
}

// Why source outside the kernel bodies (device functions, globals; bodies blanked, lines kept)
// or a header it includes makes its barrier kernels fibers, or "" when nothing does.
std::string barriers_outside(std::string_view outside, const std::string& filename,
                             const fs::path& dir, const std::vector<std::string>& include_dirs) {
  if (std::string why = fiber_reason(jit::scan_sync(outside), filename, 0); !why.empty())
    return why;
  std::vector<fs::path> dirs(include_dirs.begin(), include_dirs.end());
  for (const jit::IncludedFile& f : jit::walk_includes(outside, dir, dirs, kiln_header))
    if (std::string why = fiber_reason(jit::scan_sync(f.text), f.path.filename().string(), 0);
        !why.empty())
      return why;
  return "";
}

// Whether every warp or group construct in a kernel body is a warp operation the region rewrite
// runs in lockstep (jit/cpu/regions.h): shuffles, votes, __activemask, __match_any_sync and
// __syncwarp, called by name. Cooperative groups, CUB and the rest stay with fibers. (Lambdas
// do not matter: regions keep a lambda's `return` its own.)
bool region_warp_ops_only(std::string_view body) {
  std::string rest(body);  // the body, those blanked: nothing else may synchronise
  for (const jit::Token& t : jit::lex(body))
    if (t.kind == jit::Token::ident && region_warp_operation(t.text))
      std::fill(rest.begin() + t.begin, rest.begin() + t.end, ' ');
  return !jit::scan_sync(rest).other_sync;
}

// The 1-based line of offset at in source.
int line_at(std::string_view source, std::size_t at) {
  return 1 + int(std::count(source.begin(), source.begin() + std::min(at, source.size()), '\n'));
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
    uses.push_back(jit::scan_sync(source.substr(k.open, k.close - k.open)));
  // Everything but the kernel bodies: device functions, globals, includes.
  std::string outside(source);
  for (const auto& k : bodies)
    for (std::size_t i = k.open; i < k.close; ++i)
      if (outside[i] != '\n') outside[i] = ' ';
  fs::path dir = filename.empty() ? fs::path(".") : fs::path(filename).parent_path();
  // A kernel is a candidate for regions (and coroutines) when its only synchronisation is
  // __syncthreads* in its own body, without a lambda (whose `return` must stay a return), and
  // nothing outside the kernel bodies synchronises. Each body's reason when it is not:
  const std::string outside_why = barriers_outside(outside, filename, dir, include_dirs);
  std::vector<std::string> body_why(bodies.size());
  std::vector<bool> regions_take(bodies.size());  // what keeps it from coroutines, regions take
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    const int offset = line_at(source, bodies[i].open) - 1;
    if (uses[i].other_sync) {
      body_why[i] = fiber_reason(uses[i], filename, offset);
      regions_take[i] =
          region_warp_ops_only(source.substr(bodies[i].open, bodies[i].close - bodies[i].open));
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
    for (std::size_t i = 0; i < bodies.size(); ++i) {
      std::string& why = bodies[i].name == base ? own_why : other_why;
      if (why.empty()) why = body_why[i];
      if (bodies[i].name != base) continue;
      found = true;
      sync = sync || uses[i].any();
      regions_may = regions_may && (body_why[i].empty() || regions_take[i]);
    }
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

std::string rewrite_coroutine_returns(std::string_view source) {
  std::string out(source);
  std::vector<jit::KernelBody> bodies = jit::find_kernel_bodies(source);
  for (auto k = bodies.rbegin(); k != bodies.rend(); ++k) {  // last first: offsets stay valid
    std::string_view body = source.substr(k->open, k->close - k->open);
    if (!jit::uses_barriers(body)) continue;
    std::vector<std::size_t> at = jit::find_identifier(body, "return");
    for (auto p = at.rbegin(); p != at.rend(); ++p) out.insert(k->open + *p, "co_");
  }
  return out;
}

std::string rewrite_extern_shared(std::string_view source, bool checked) {
  // A declaration is everything from `extern` to the next ';': the qualifiers may come in any
  // legal order (`extern __shared__ float s[]`, `extern float __shared__ s[]`, with __align__),
  // so its tokens are taken apart rather than its text matched as a whole (no regex: a source
  // is any size).
  const std::vector<jit::Token> tokens = jit::lex(source);
  std::string out(source);
  std::vector<std::pair<std::size_t, std::size_t>> replaced;  // [begin, end) in source
  std::vector<std::string> replacements;
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
    for (std::size_t j = i + 1; j < end; ++j) {
      const jit::Token& t = tokens[j];
      if (jit::is_ident(t, "__shared__")) {
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
    // One unsized array: type words, then `name [ ]`.
    const std::size_t n = rest.size();
    if (!shared || odd || n < 4 || !jit::is_punct(*rest[n - 1], "]") ||
        !jit::is_punct(*rest[n - 2], "[") || rest[n - 3]->kind != jit::Token::ident)
      continue;
    std::string type;
    for (std::size_t j = 0; j + 3 < n; ++j) {
      if (!type.empty()) type += ' ';
      type += rest[j]->text;
    }
    std::string replacement =
        checked ? "[[maybe_unused]] static constexpr ::kiln_cpu::dyn_shared<" + type + "> " +
                      rest[n - 3]->text + "{}"
                : "static thread_local " + type + "* const " + rest[n - 3]->text +
                      " = reinterpret_cast<" + type + "*>(::kiln_cpu::tls.dyn_smem)";
    // The same lines, so that the user's line numbers hold.
    replacement.append(std::size_t(tokens[end].line - tokens[i].line), '\n');
    replaced.emplace_back(tokens[i].begin, tokens[end].begin);
    replacements.push_back(std::move(replacement));
    i = end;
  }
  for (std::size_t r = replaced.size(); r-- > 0;)  // last first: offsets hold
    out.replace(replaced[r].first, replaced[r].second - replaced[r].first, replacements[r]);
  return out;
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

}  // namespace kiln::cpu
