// The cpu compiler's source plan: thread modes from the lexer's scans, and the rewrites.
#include "jit/cpu/plan.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "jit/kernel_decl.h"
#include "jit/lexer.h"
#include "jit/source.h"

namespace kiln::cpu {

namespace {

namespace fs = std::filesystem;
using Mode = kiln_cpu::ThreadMode;

// Text with comments replaced by spaces (newlines kept); strings and chars left as they are.
std::string strip_comments(std::string_view s) {
  std::string out(s);
  for (std::size_t i = 0; i < out.size(); ++i) {
    char c = out[i];
    if (c == '"' || c == '\'') {
      for (++i; i < out.size() && out[i] != c && out[i] != '\n'; ++i)
        if (out[i] == '\\') ++i;
    } else if (c == '/' && i + 1 < out.size() && out[i + 1] == '/') {
      for (; i < out.size() && out[i] != '\n'; ++i) out[i] = ' ';
    } else if (c == '/' && i + 1 < out.size() && out[i + 1] == '*') {
      for (; i + 1 < out.size() && !(out[i] == '*' && out[i + 1] == '/'); ++i)
        if (out[i] != '\n') out[i] = ' ';
      if (i + 1 < out.size()) out[i] = out[i + 1] = ' ';
      ++i;
    }
  }
  return out;
}

// Whether a <kiln...> header may hold barriers (system headers cannot sync).
bool kiln_header(const std::string& name) {
  return name.rfind("kiln", 0) == 0;
}

// Whether source (outside the kernel bodies) or a header it includes uses a barrier.
bool scan_for_barriers(std::string_view source, const fs::path& dir,
                       const std::vector<std::string>& include_dirs) {
  if (jit::uses_barriers(source)) return true;
  std::vector<fs::path> dirs(include_dirs.begin(), include_dirs.end());
  for (const jit::IncludedFile& f : jit::walk_includes(source, dir, dirs, kiln_header))
    if (jit::uses_barriers(f.text)) return true;
  return false;
}

}  // namespace

std::vector<Mode> thread_modes(std::string_view source, const std::string& filename,
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
  const bool anywhere = scan_for_barriers(outside, dir, include_dirs);
  // Coroutines only when every synchronising body qualifies: its only such calls are
  // __syncthreads*, and it has no lambda (whose `return` must stay a return).
  bool coroutines = !anywhere;
  for (const auto& use : uses)
    if (use.other_sync || (use.block_barriers && use.lambda)) coroutines = false;
  const Mode sync_mode = coroutines ? kiln_cpu::mode_coroutines : kiln_cpu::mode_fibers;
  std::vector<Mode> result;
  for (const auto& expr : name_expressions) {
    // "ns::k<float>" or "(void(*)(int*))k": the kernel's own name.
    std::string base = expr[0] == '(' ? expr.substr(expr.rfind(')') + 1) : expr;
    base = base.substr(0, base.find('<'));
    base.erase(base.find_last_not_of(" \t") + 1);
    if (auto colons = base.rfind("::"); colons != std::string::npos) base = base.substr(colons + 2);
    bool found = false, sync = anywhere;
    for (std::size_t i = 0; i < bodies.size(); ++i) {
      if (bodies[i].name != base) continue;
      found = true;
      sync = sync || uses[i].any();
    }
    if (!found && jit::uses_barriers(source))
      result.push_back(kiln_cpu::mode_fibers);  // a body the scan did not find
    else
      result.push_back(sync ? sync_mode : kiln_cpu::mode_loop);
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

std::string rewrite_extern_shared(std::string_view source) {
  // A declaration is everything from `extern` to the next ';': the qualifiers may come in any
  // legal order (`extern __shared__ float s[]`, `extern float __shared__ s[]`, with __align__),
  // so each is taken apart by words rather than matched as a whole.
  static const std::regex qualifiers(
      R"(\bextern\b|\b__shared__\b|__align__\s*\(\s*\d+\s*\)|alignas\s*\(\s*\d+\s*\))");
  static const std::regex unsized(R"(^([^;]*?)\b([A-Za-z_]\w*)\s*\[\s*\]\s*$)");
  const std::string text = strip_comments(source);
  std::string out(source);
  std::vector<std::size_t> externs = jit::find_identifier(text, "extern");
  for (auto at = externs.rbegin(); at != externs.rend(); ++at) {  // last first: offsets hold
    const std::size_t end = text.find(';', *at);
    if (end == std::string::npos) continue;
    const std::string decl = text.substr(*at, end - *at);
    if (jit::find_identifier(decl, "__shared__").empty()) continue;
    std::string rest = std::regex_replace(decl, qualifiers, " ");
    std::smatch m;
    if (rest.find_first_of("{}()\"") != std::string::npos || !std::regex_match(rest, m, unsized))
      continue;  // not a declaration of one unsized array (an extern "C" block, say)
    std::string type = m[1].str();
    type.erase(0, type.find_first_not_of(" \t\n"));
    type.erase(type.find_last_not_of(" \t\n") + 1);
    if (type.empty()) continue;
    std::string replacement = "static thread_local " + type + "* const " + m[2].str() +
                              " = reinterpret_cast<" + type + "*>(::kiln_cpu::tls.dyn_smem)";
    replacement.append(std::size_t(std::count(decl.begin(), decl.end(), '\n')), '\n');
    out.replace(*at, end - *at, replacement);
  }
  return out;
}

std::string rewrite_pointer_params(std::string_view source) {
  std::string text = strip_comments(source), out(source);
  static const std::regex pointer(
      R"(^(\s*)((?:const\s+|volatile\s+)*[A-Za-z_][\w:]*(?:\s*<[^()]*>)?(?:\s+const)?)\s*\*\s*(?:__restrict__|__restrict)?\s*([A-Za-z_]\w*)(\s*)$)");
  // Kernels from last to first, so earlier positions stay valid.
  std::vector<jit::KernelBody> bodies = jit::find_kernel_bodies(source);
  for (auto k = bodies.rbegin(); k != bodies.rend(); ++k) {
    std::size_t open = text.rfind('(', k->open), close = text.rfind(')', k->open);
    if (open == std::string::npos || close == std::string::npos || close < open) continue;
    // Top-level parameters: split at commas outside <>, (), [].
    std::vector<std::pair<std::size_t, std::size_t>> params;
    int depth = 0;
    std::size_t start = open + 1;
    for (std::size_t i = open + 1; i <= close; ++i) {
      char c = text[i];
      if (c == '<' || c == '(' || c == '[') ++depth;
      if ((c == '>' || c == ')' || c == ']') && i != close) --depth;
      if ((c == ',' && depth == 0) || i == close) {
        params.emplace_back(start, i);
        start = i + 1;
      }
    }
    for (auto p = params.rbegin(); p != params.rend(); ++p) {
      std::string param = text.substr(p->first, p->second - p->first);
      std::smatch m;
      if (param.find('\n') != std::string::npos || !std::regex_match(param, m, pointer)) continue;
      out.replace(
          p->first, p->second - p->first,
          m[1].str() + "::kiln_cpu::checked_ptr<" + m[2].str() + "> " + m[3].str() + m[4].str());
    }
  }
  return out;
}

}  // namespace kiln::cpu
