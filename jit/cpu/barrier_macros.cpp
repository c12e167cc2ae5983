#include "jit/cpu/barrier_macros.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "jit/cpu/edits.h"
#include "jit/kernel_decl.h"
#include "jit/lexer.h"

namespace kiln::cpu {

namespace {

using jit::is_ident;
using jit::is_punct;
using jit::Token;

// A #define of the source.
struct Macro {
  bool function_like = false;
  std::vector<std::string> params;
  std::vector<Token> body;   // the replacement's tokens
  std::size_t begin = 0;     // the directive's text: its '#' ...
  std::size_t end = 0;       // ... to the end of its logical line
  int definitions = 0;       // (more than one, or any #undef: left alone)
  bool expandable = true;    // defined outside conditionals, no # or ##, no `...`
  bool barrier = false;      // its replacement names a barrier or such a macro
  bool all_expanded = true;  // every use of it was expanded (its #define may go)
};

// The end of the logical line from offset at: its '\n' (not one a backslash continues), or the
// end of s.
std::size_t logical_line_end(std::string_view s, std::size_t at) {
  for (std::size_t k = at; k < s.size(); ++k) {
    if (s[k] != '\n') continue;
    std::size_t b = k;
    if (b > 0 && s[b - 1] == '\r') --b;
    if (b == 0 || s[b - 1] != '\\') return k;
  }
  return s.size();
}

// Tokens [b, e) of t as one line of text: each token as the source wrote it, a space where the
// source had any between two.
std::string joined(std::string_view src, const std::vector<Token>& t, std::size_t b,
                   std::size_t e) {
  std::string out;
  for (std::size_t k = b; k < e; ++k) {
    if (k > b && t[k].begin != t[k - 1].end) out += ' ';
    out.append(src.substr(t[k].begin, t[k].end - t[k].begin));
  }
  return out;
}

// The source's macros, by name, and the offset after which a quoted #include appears last
// (0: none).
std::map<std::string, Macro> read_macros(std::string_view src, const std::vector<Token>& t,
                                         std::size_t* last_include) {
  std::map<std::string, Macro> macros;
  int depth = 0;  // of conditional groups
  // (the lexer gives no token for a directive's '#': its first token is the word after it, and
  // each directive is read whole, to the end of its logical line)
  for (std::size_t k = 0; k < t.size(); ++k) {
    if (!t[k].directive || t[k].kind != Token::ident) continue;
    const std::string& word = t[k].text;
    const std::size_t end = logical_line_end(src, t[k].begin);
    std::size_t e = k + 1;
    while (e < t.size() && t[e].begin < end) ++e;
    if (word == "if" || word == "ifdef" || word == "ifndef") ++depth;
    if (word == "endif" && depth > 0) --depth;
    if (word == "include" && k + 1 < e && t[k + 1].kind == Token::string) *last_include = end;
    if ((word == "define" || word == "undef") && k + 1 < e && t[k + 1].kind == Token::ident) {
      Macro& m = macros[t[k + 1].text];
      m.definitions += word == "define" ? 1 : 2;  // (an #undef: never expanded)
      m.begin = src.rfind('#', t[k].begin);
      m.end = end;
      m.expandable = m.expandable && depth == 0 && m.begin != std::string_view::npos;
      std::size_t b = k + 2;
      if (word == "define" && b < e && is_punct(t[b], "(") && t[b].begin == t[k + 1].end) {
        m.function_like = true;
        for (++b; b < e && !is_punct(t[b], ")"); ++b)
          if (t[b].kind == Token::ident)
            m.params.push_back(t[b].text);
          else if (!is_punct(t[b], ","))
            m.expandable = false;  // `...`
        ++b;
      }
      if (b <= e) m.body.assign(t.begin() + std::ptrdiff_t(b), t.begin() + std::ptrdiff_t(e));
      for (const Token& x : m.body)
        if (is_punct(x, "#")) m.expandable = false;
    }
    k = e - 1;
  }
  return macros;
}

// Marks the macros whose replacement names a barrier or warp operation, or such a macro.
void find_barrier_macros(std::string_view src, std::map<std::string, Macro>& macros,
                         std::size_t last_include) {
  for (auto& [name, m] : macros)
    m.expandable = m.expandable && m.definitions == 1 && m.end > last_include;
  for (bool changed = true; changed;) {
    changed = false;
    for (auto& [name, m] : macros) {
      if (m.barrier || !m.expandable) continue;
      bool names = jit::scan_sync(joined(src, m.body, 0, m.body.size())).any();
      for (const Token& x : m.body) {
        auto other = x.kind == Token::ident ? macros.find(x.text) : macros.end();
        names = names || (other != macros.end() && other->second.barrier);
      }
      if (names) m.barrier = changed = true;
    }
  }
}

// Expands the barrier macros of text (a use's expansion) not in active, recursively.
class Expander {
 public:
  Expander(std::string_view src, std::map<std::string, Macro>& macros)
      : src_(src), macros_(macros) {}

  // t[k], a use of a barrier macro: its expansion, and *end past the use; nullopt when it is
  // not a use cpp would expand (a function-like name without arguments, the wrong count).
  std::optional<std::string> use(std::string_view text, const std::vector<Token>& t, std::size_t k,
                                 std::size_t* end, std::set<std::string>& active, int depth) {
    const Macro& m = macros_.at(t[k].text);
    std::vector<std::string> args;
    *end = k + 1;
    if (m.function_like) {
      if (k + 1 >= t.size() || !is_punct(t[k + 1], "(")) return std::nullopt;
      std::size_t from = k + 2, j = k + 2;
      for (int level = 0; j < t.size(); ++j) {
        if (is_punct(t[j], "(")) ++level;
        if (is_punct(t[j], ")") && level-- == 0) break;
        if (level == 0 && is_punct(t[j], ",")) {
          args.push_back(joined(text, t, from, j));
          from = j + 1;
        }
      }
      if (j >= t.size()) return std::nullopt;
      if (from < j || !args.empty() || !m.params.empty()) args.push_back(joined(text, t, from, j));
      if (args.size() != m.params.size()) return std::nullopt;
      *end = j + 1;
    }
    std::string out;
    for (std::size_t b = 0; b < m.body.size(); ++b) {
      const Token& x = m.body[b];
      if (b > 0 && x.begin != m.body[b - 1].end) out += ' ';
      const auto p = x.kind == Token::ident ? std::find(m.params.begin(), m.params.end(), x.text)
                                            : m.params.end();
      out += p != m.params.end() ? args[std::size_t(p - m.params.begin())]
                                 : std::string(src_.substr(x.begin, x.end - x.begin));
    }
    active.insert(t[k].text);
    std::string expanded = depth < 16 ? all(out, active, depth + 1) : out;
    active.erase(t[k].text);
    return expanded;
  }

  // text with every use of a barrier macro not in active expanded (a line of text: no
  // directives, no line breaks to keep).
  std::string all(const std::string& text, std::set<std::string>& active, int depth) {
    const std::vector<Token> t = jit::lex(text);
    std::string out;
    std::size_t done = 0;
    for (std::size_t k = 0; k < t.size(); ++k) {
      auto m = t[k].kind == Token::ident ? macros_.find(t[k].text) : macros_.end();
      if (m == macros_.end() || !m->second.barrier || active.count(t[k].text)) continue;
      std::size_t end = 0;
      const std::optional<std::string> e = use(text, t, k, &end, active, depth);
      if (!e) continue;
      out += text.substr(done, t[k].begin - done) + *e;
      done = t[end - 1].end;
      k = end - 1;
    }
    return out + text.substr(done);
  }

 private:
  std::string_view src_;
  std::map<std::string, Macro>& macros_;
};

}  // namespace

std::string expand_barrier_macros(std::string_view source) {
  if (source.find("define") == std::string_view::npos) return std::string(source);
  const std::vector<Token> t = jit::lex(source);
  std::size_t last_include = 0;
  std::map<std::string, Macro> macros = read_macros(source, t, &last_include);
  find_barrier_macros(source, macros, last_include);
  if (std::none_of(macros.begin(), macros.end(), [](const auto& m) { return m.second.barrier; }))
    return std::string(source);
  Expander expander(source, macros);
  struct Edit {
    std::size_t begin, end;
    std::string text;
  };
  std::vector<Edit> edits;
  for (std::size_t k = 0; k < t.size(); ++k) {
    if (t[k].directive || t[k].kind != Token::ident) continue;
    auto m = macros.find(t[k].text);
    if (m == macros.end() || !m->second.barrier || t[k].begin < m->second.end) continue;
    std::size_t end = 0;
    std::set<std::string> active;
    const std::optional<std::string> e = expander.use(source, t, k, &end, active, 0);
    if (!e) {
      m->second.all_expanded = false;
      continue;
    }
    const std::size_t b = t[k].begin, stop = t[end - 1].end;
    const auto breaks = std::size_t(std::count(source.begin() + b, source.begin() + stop, '\n'));
    edits.push_back({b, stop, *e + std::string(breaks, '\n')});
    k = end - 1;
  }
  // Each expanded macro's #define blanked (lines kept): nothing names its barrier there any more.
  for (const auto& [name, m] : macros) {
    if (!m.barrier || !m.all_expanded) continue;
    std::string blank(source.substr(m.begin, m.end - m.begin));
    for (char& c : blank)
      if (c != '\n') c = ' ';
    edits.push_back({m.begin, m.end, std::move(blank)});
  }
  std::sort(edits.begin(), edits.end(),
            [](const Edit& a, const Edit& b) { return a.begin < b.begin; });
  return apply_edits(source, edits);
}

}  // namespace kiln::cpu
