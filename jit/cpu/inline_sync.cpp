// Inlining of synchronising device functions (inline_sync.h), over jit/lexer.h's tokens: find
// the __device__ functions defined at namespace scope, mark those whose bodies synchronise
// (directly or through another such function), replace each call statement of one in a kernel
// body by a block holding its body, and repeat (an inlined body may call another) until nothing
// changes. Then the functions nothing names any more are blanked.
#include "jit/cpu/inline_sync.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "jit/cpu/edits.h"
#include "jit/cpu/region_words.h"
#include "jit/kernel_decl.h"
#include "jit/lexer.h"

namespace kiln::cpu {
namespace {

using jit::is_ident;
using jit::is_punct;
using jit::Token;

constexpr std::size_t npos = std::size_t(-1);
constexpr int kMaxPasses = 8;          // nesting depth of synchronising calls inlined
constexpr std::size_t kMaxGrowth = 8;  // the inlined source at most 8x the size (+ 64 KiB)

// A __device__ function defined in the source, by token indices.
struct Function {
  std::string name;
  std::size_t first = 0;             // its declaration's first token (`template`, a specifier)
  std::size_t open = 0, close = 0;   // its parameter list's parentheses
  std::size_t body = 0, end = 0;     // its body's braces
  std::vector<std::string> tparams;  // template parameters, in order
  std::vector<bool> tparam_is_type;
  struct Param {
    std::size_t begin, end;  // its type's tokens
    std::string name;
  };
  std::vector<Param> params;
  // Its `return`s, each ending the body or a branch of an if/else that does (`if (r == 0)
  // return v; else return -1;`, simpleCooperativeGroups' sumReduction): each one's `return`
  // and ';'.
  std::vector<std::pair<std::size_t, std::size_t>> rets;
  bool returns_value = false;
  std::string refused;  // why it cannot be inlined ("" when it can)
  bool syncs = false;
};

// The tokens of a source with each bracket's partner (directives left out of the pairing).
struct Tokens {
  std::vector<Token> t;
  std::vector<std::size_t> match;

  explicit Tokens(std::string_view source) : t(jit::lex(source)) {
    for (int s = 0; s < 4; ++s)  // sentinels: lookahead stays in range
      t.push_back({Token::punct, "", source.size(), source.size(), 0, false});
    match.assign(t.size(), npos);
    std::vector<std::size_t> stack;
    for (std::size_t i = 0; i < t.size(); ++i) {
      if (t[i].directive || t[i].kind != Token::punct) continue;
      if (t[i].text == "(" || t[i].text == "[" || t[i].text == "{") stack.push_back(i);
      if ((t[i].text == ")" || t[i].text == "]" || t[i].text == "}") && !stack.empty()) {
        match[stack.back()] = i;
        match[i] = stack.back();
        stack.pop_back();
      }
    }
  }
  bool punct(std::size_t i, const char* p) const { return i < t.size() && is_punct(t[i], p); }
};

// Whether the word p, before a name, shows that the name is not declared there (`return x;`).
bool not_a_local_type(const std::string& p) {
  static const std::set<std::string> words{"return", "case",    "goto", "sizeof",    "new",
                                           "delete", "throw",   "else", "co_return", "typename",
                                           "using",  "typedef", "do",   "template",  "operator"};
  return words.count(p) > 0;
}

// Whether s names a word that precedes '(' without making a call.
bool not_a_call(const std::string& s) {
  static const std::set<std::string> words{"if",      "for",          "while", "switch",
                                           "return",  "sizeof",       "catch", "decltype",
                                           "alignof", "static_assert"};
  return words.count(s) > 0;
}

// The index one past the '>' closing the '<' at k (npos when it is not closed before a ';',
// '{' or '}').
std::size_t angle_close(const Tokens& x, std::size_t k) {
  int depth = 0;
  for (std::size_t j = k; j < x.t.size(); ++j) {
    if ((x.punct(j, "(") || x.punct(j, "[")) && x.match[j] != npos) j = x.match[j];
    if (x.punct(j, "<")) ++depth;
    if (x.punct(j, ">") && --depth == 0) return j + 1;
    if (x.punct(j, ";") || x.punct(j, "{") || x.punct(j, "}")) break;
  }
  return npos;
}

// The top-level comma-separated parts of tokens [b, e) (brackets and template lists skipped).
std::vector<std::pair<std::size_t, std::size_t>> split(const Tokens& x, std::size_t b,
                                                       std::size_t e) {
  std::vector<std::pair<std::size_t, std::size_t>> parts;
  if (b >= e) return parts;
  std::size_t from = b;
  int angles = 0;
  for (std::size_t k = b; k < e; ++k) {
    if ((x.punct(k, "(") || x.punct(k, "[") || x.punct(k, "{")) && x.match[k] != npos) {
      k = x.match[k];
      continue;
    }
    if (x.punct(k, "<")) ++angles;
    if (x.punct(k, ">") && angles > 0) --angles;
    if (x.punct(k, ",") && angles == 0) {
      parts.emplace_back(from, k);
      from = k + 1;
    }
  }
  parts.emplace_back(from, e);
  return parts;
}

class Inliner {
 public:
  explicit Inliner(std::string_view source) : src_(source), x_(source) {}

  // One pass: the source with every call statement it can take inlined, or nullopt when none.
  std::optional<std::string> pass(int& counter) {
    find_functions();
    if (functions_.empty()) return std::nullopt;
    std::vector<Edit> edits;
    for (const jit::KernelBody& k : jit::find_kernel_bodies(src_)) {
      const std::size_t open = at(k.open), close = at(k.close);
      for (std::size_t c = open + 1; c < close; ++c)
        if (auto e = inline_call(c, counter); e || (e = hoist_call(c, counter))) {
          edits.push_back(*e);
          c = e->last;
        }
    }
    // Bodies may overlap (one never closed holds the next): each call once, in order.
    std::sort(edits.begin(), edits.end(),
              [](const Edit& a, const Edit& b) { return a.begin < b.begin; });
    std::vector<Edit> apart;
    for (Edit& e : edits)
      if (apart.empty() || e.begin >= apart.back().end) apart.push_back(std::move(e));
    if (apart.empty()) return std::nullopt;
    return apply_edits(src_, apart);
  }

  // identity_free_functions (inline_sync.h).
  std::set<std::string> identity_free(const std::set<std::string>& thread_macros) {
    static const std::set<std::string> reads{"threadIdx", "blockIdx", "blockDim", "gridDim",
                                             "warpSize"};
    static const std::set<std::string> math{
        "min",         "max",    "abs",   "fabs",  "fabsf",     "sqrt",   "sqrtf",  "rsqrtf",
        "exp",         "expf",   "exp2f", "log",   "logf",      "log2f",  "pow",    "powf",
        "fmin",        "fmax",   "fminf", "fmaxf", "floor",     "floorf", "ceil",   "ceilf",
        "sin",         "sinf",   "cos",   "cosf",  "tanh",      "tanhf",  "erf",    "erff",
        "round",       "roundf", "fma",   "fmaf",  "copysignf", "__expf", "__logf", "__fdividef",
        "__saturatef", "__popc", "__clz", "__ffs"};
    find_functions();
    std::map<std::string, int> count;
    for (const auto& f : functions_) ++count[f.name];
    std::set<std::string> free;
    for (bool changed = true; changed;) {
      changed = false;
      for (const auto& f : functions_) {
        if (free.count(f.name) || count[f.name] != 1) continue;
        bool ok = true;
        for (std::size_t k = f.body; k < f.end && ok; ++k) {
          const Token& t = x_.t[k];
          if (t.kind != Token::ident || member(k)) continue;
          if (reads.count(t.text) || thread_macros.count(t.text)) ok = false;
          if (x_.punct(k + 1, "(") && !not_a_call(t.text) && !math.count(t.text) &&
              !free.count(t.text))  // (nor recursion: a stack overflow names the thread)
            ok = regions::is_keyword_type(t.text);  // a cast, int(x), reads nothing
          if (x_.punct(k + 1, "<")) ok = false;     // a template call: unknown
        }
        if (ok) free.insert(f.name), changed = true;
      }
    }
    // The math functions too, unless the source defines one of that name (or a macro).
    for (const auto& m : math) {
      bool defined = count.count(m) > 0;
      for (std::size_t k = 0; k + 2 < x_.t.size() && !defined; ++k)
        defined = x_.t[k].directive && is_ident(x_.t[k], "define") && is_ident(x_.t[k + 1], m);
      if (!defined) free.insert(m);
    }
    return free;
  }

  // The source with each synchronising function's early returns at its body's top level made
  // the branches of an if/else that ends it, or nullopt when there are none: `if (t >= 32)
  // return 0.f; v = warp_sum(v); return v;` becomes `if (t >= 32) return 0.f; else { v =
  // warp_sum(v); return v; }`, which inline_call takes (a block sum whose other warps leave
  // early ran as fibers, 11x slower). Lines kept.
  std::optional<std::string> else_after_early_returns() {
    find_functions();
    std::vector<std::pair<std::size_t, std::string>> inserts;  // (offset, text), in order
    for (const Function& f : functions_) {
      if (!f.syncs || f.refused != "a return before the end of its body") continue;
      std::size_t opened = 0;
      for (std::size_t k = f.body + 1; k < f.end;) {
        const std::size_t next = top_statement_end(k, f.end);
        if (next == npos || next > f.end) {
          opened = 0;
          break;
        }
        if (is_ident(x_.t[k], "if") && x_.punct(k + 1, "(") && next < f.end &&
            next == statement_after(x_.match[k + 1] + 1) &&
            returns_at_end(x_.match[k + 1] + 1, next)) {
          inserts.emplace_back(x_.t[next - 1].end, " else {");
          ++opened;
        }
        k = next;
      }
      if (opened == 0) {
        while (!inserts.empty() && inserts.back().first > x_.t[f.body].begin) inserts.pop_back();
        continue;
      }
      inserts.emplace_back(x_.t[f.end].begin, std::string(opened, '}') + " ");
    }
    if (inserts.empty()) return std::nullopt;
    std::string out;
    std::size_t done = 0;
    for (const auto& [offset, text] : inserts) {
      out.append(src_.substr(done, offset - done));
      out += text;
      done = offset;
    }
    out.append(src_.substr(done));
    return out;
  }

  // The source with the synchronising functions that nothing names any more blanked.
  std::string without_unused() {
    find_functions();
    std::vector<bool> removed(functions_.size());
    for (bool changed = true; changed;) {
      changed = false;
      for (std::size_t f = 0; f < functions_.size(); ++f) {
        if (removed[f] || !functions_[f].syncs) continue;
        bool named = false;
        for (std::size_t k = 0; k < x_.t.size() && !named; ++k) {
          if (!is_ident(x_.t[k], functions_[f].name)) continue;
          bool inside_removed = k >= functions_[f].first && k <= functions_[f].end;
          for (std::size_t g = 0; g < functions_.size(); ++g)
            inside_removed = inside_removed ||
                             (removed[g] && k >= functions_[g].first && k <= functions_[g].end);
          named = !inside_removed;
        }
        if (!named) removed[f] = changed = true;
      }
    }
    std::string out(src_);
    for (std::size_t f = 0; f < functions_.size(); ++f)
      if (removed[f])
        for (std::size_t i = x_.t[functions_[f].first].begin; i < x_.t[functions_[f].end].end; ++i)
          if (out[i] != '\n') out[i] = ' ';
    return out;
  }

 private:
  struct Edit {
    std::size_t begin, end;  // source offsets replaced
    std::string text;
    std::size_t last;  // the statement's last token
  };

  // The token starting at offset.
  std::size_t at(std::size_t offset) const {
    auto it = std::lower_bound(x_.t.begin(), x_.t.end(), offset,
                               [](const Token& t, std::size_t o) { return t.begin < o; });
    return std::size_t(it - x_.t.begin());
  }

  // Tokens [a, b) as text on one line, identifiers in renames replaced; #pragma lines dropped.
  std::string text(std::size_t a, std::size_t b,
                   const std::map<std::string, std::string>& renames = {}) const {
    std::string out;
    for (std::size_t i = a; i < b; ++i) {
      const Token& t = x_.t[i];
      if (t.directive) continue;
      if (!out.empty() && i > a && t.begin != x_.t[i - 1].end) out += ' ';
      auto r = t.kind == Token::ident && !member(i) ? renames.find(t.text) : renames.end();
      out += r != renames.end() ? r->second : std::string(src_.substr(t.begin, t.end - t.begin));
    }
    return out;
  }

  // Whether token k names a member (after . -> or ::) rather than a variable or function.
  bool member(std::size_t k) const {
    if (k == 0) return false;
    return x_.punct(k - 1, ".") || x_.punct(k - 1, "::") ||
           (x_.punct(k - 1, ">") && k >= 2 && x_.punct(k - 2, "-") &&
            x_.t[k - 2].end == x_.t[k - 1].begin);
  }

  // Every __device__ function defined at namespace scope, with whether it synchronises.
  void find_functions() {
    functions_.clear();
    std::vector<std::size_t> scopes;  // open braces around the token: true for namespaces
    std::vector<bool> namespace_scope;
    for (std::size_t i = 0; i < x_.t.size(); ++i) {
      const Token& t = x_.t[i];
      if (t.directive || t.kind != Token::punct) continue;
      if (t.text == "}" && !scopes.empty()) {
        scopes.pop_back();
        namespace_scope.pop_back();
      }
      if (t.text != "{") continue;
      const bool at_namespace_scope =
          std::all_of(namespace_scope.begin(), namespace_scope.end(), [](bool b) { return b; });
      bool is_namespace = false;
      for (std::size_t k = i; k-- > 0 && k + 3 > i;)
        is_namespace = is_namespace || is_ident(x_.t[k], "namespace");
      scopes.push_back(i);
      namespace_scope.push_back(is_namespace);
      if (at_namespace_scope && !is_namespace && x_.punct(i - 1, ")") && x_.match[i] != npos)
        if (auto f = function_at(i)) {
          functions_.push_back(std::move(*f));
          // The body is not a scope of interest: skip it whole.
          i = functions_.back().end;
          scopes.pop_back();
          namespace_scope.pop_back();
        }
    }
    // Overloads cannot be told apart by name: none of them is inlined.
    std::map<std::string, int> count;
    for (const auto& f : functions_) ++count[f.name];
    for (auto& f : functions_)
      if (count[f.name] > 1) f.refused = "overloaded";
    // Synchronising: names a barrier or warp operation, or calls a function that does.
    for (auto& f : functions_)
      f.syncs =
          jit::scan_sync(src_.substr(x_.t[f.body].begin, x_.t[f.end].end - x_.t[f.body].begin))
              .any();
    for (bool changed = true; changed;) {
      changed = false;
      for (auto& f : functions_) {
        if (f.syncs) continue;
        for (std::size_t k = f.body; k < f.end && !f.syncs; ++k)
          if (x_.t[k].kind == Token::ident && called(k))
            if (const Function* g = find(x_.t[k].text); g && g->syncs) f.syncs = changed = true;
      }
    }
    // A function that reaches itself through the functions it names is never inlined.
    for (auto& f : functions_) {
      std::set<std::string> seen, todo{f.name};
      while (!todo.empty() && f.refused.empty()) {
        const Function* g = find(*todo.begin());
        todo.erase(todo.begin());
        if (!g || !seen.insert(g->name).second) continue;
        for (std::size_t k = g->body; k < g->end; ++k)
          if (x_.t[k].kind == Token::ident && find(x_.t[k].text)) {
            if (x_.t[k].text == f.name) f.refused = "recursive";
            todo.insert(x_.t[k].text);
          }
      }
    }
  }

  // Whether the identifier at k is called: `f(`, or `f<...>(` with template arguments.
  bool called(std::size_t k) const {
    if (x_.punct(k + 1, "<")) {
      const std::size_t e = angle_close(x_, k + 1);
      return e != npos && x_.punct(e, "(");
    }
    return x_.punct(k + 1, "(");
  }

  const Function* find(const std::string& name) const {
    for (const auto& f : functions_)
      if (f.name == name) return &f;
    return nullptr;
  }

  // The __device__ function whose body opens at token body (after its ')'), or nullopt.
  std::optional<Function> function_at(std::size_t body) const {
    Function f;
    f.body = body;
    f.end = x_.match[body];
    f.close = body - 1;
    f.open = x_.match[f.close];
    if (f.open == npos || f.open == 0) return std::nullopt;
    const std::size_t name = f.open - 1;
    if (x_.t[name].kind != Token::ident || not_a_call(x_.t[name].text) || member(name))
      return std::nullopt;
    f.name = x_.t[name].text;
    // Back to the declaration's start: the previous ';', '}', '{' or directive.
    std::size_t first = name;
    while (first > 0 && !x_.t[first - 1].directive && !x_.punct(first - 1, ";") &&
           !x_.punct(first - 1, "}") && !x_.punct(first - 1, "{")) {
      if (x_.punct(first - 1, ")") || x_.punct(first - 1, "]")) {
        first = x_.match[first - 1];
        if (first == npos) return std::nullopt;
      } else {
        --first;
      }
    }
    f.first = first;
    bool device = false;
    for (std::size_t k = first; k < name; ++k) {
      if (is_ident(x_.t[k], "__global__")) return std::nullopt;
      device = device || is_ident(x_.t[k], "__device__");
    }
    if (!device) return std::nullopt;
    // template <typename T, int N>
    if (is_ident(x_.t[first], "template") && x_.punct(first + 1, "<")) {
      const std::size_t e = angle_close(x_, first + 1);
      if (e == npos) return std::nullopt;
      for (auto [b, pe] : split(x_, first + 2, e - 1)) {
        std::size_t last = pe;  // the name: the last identifier before any default
        for (std::size_t k = b; k < pe; ++k)
          if (x_.punct(k, "=")) {
            last = k;
            break;
          }
        if (last == b || x_.t[last - 1].kind != Token::ident) {
          f.refused = "a template parameter kiln cannot read";
          break;
        }
        f.tparams.push_back(x_.t[last - 1].text);
        f.tparam_is_type.push_back(is_ident(x_.t[b], "typename") || is_ident(x_.t[b], "class"));
      }
    }
    // Parameters: a type and a name each, no defaults.
    if (!(f.close == f.open + 2 && is_ident(x_.t[f.open + 1], "void")))
      for (auto [b, e] : split(x_, f.open + 1, f.close)) {
        if (b == e) break;  // ()
        bool defaulted = false;
        for (std::size_t k = b; k < e; ++k) defaulted = defaulted || x_.punct(k, "=");
        if (defaulted || e - b < 2 || x_.t[e - 1].kind != Token::ident || x_.punct(e - 2, "::")) {
          f.refused = "a parameter kiln cannot read";
          break;
        }
        f.params.push_back({b, e - 1, x_.t[e - 1].text});
      }
    // The body: its only `return` (if any) ends it; no lambda, no directive but #pragma.
    for (std::size_t k = body + 1; k < f.end; ++k) {
      const Token& t = x_.t[k];
      if (t.directive) {  // #pragma lines are dropped when it is inlined; others refuse
        if (x_.punct(k, "#") && !is_ident(x_.t[k + 1], "pragma"))
          f.refused = "a preprocessor line in its body";
        continue;
      }
      if (x_.punct(k, "]") && (x_.punct(k + 1, "(") || x_.punct(k + 1, "{")))
        f.refused = "a lambda in its body";
      if (!is_ident(t, "return")) continue;
      std::size_t semi = k;
      while (semi < f.end && !x_.punct(semi, ";")) {
        if (x_.match[semi] != npos &&
            (x_.punct(semi, "(") || x_.punct(semi, "[") || x_.punct(semi, "{")))
          semi = x_.match[semi];
        ++semi;
      }
      if (!ends_body(semi, f.end)) f.refused = "a return before the end of its body";
      f.rets.emplace_back(k, semi);
      f.returns_value = f.returns_value || semi > k + 1;
    }
    return f;
  }

  // Whether nothing runs after the statement ending at token last but the body's end at token
  // end: what follows it is the end, an `else` branch it skips, or the '}' of an if's or an
  // else's braced branch from which the same holds.
  bool ends_body(std::size_t last, std::size_t end) const {
    for (std::size_t k = last + 1;;) {
      if (k == end) return true;
      if (is_ident(x_.t[k], "else")) {
        k = statement_after(k + 1);
        if (k == npos) return false;
        continue;
      }
      if (!x_.punct(k, "}") || x_.match[k] == npos) return false;
      const std::size_t open = x_.match[k];  // `if (...) {` or `else {`
      const bool branch =
          open > 0 && (is_ident(x_.t[open - 1], "else") ||
                       (x_.punct(open - 1, ")") && x_.match[open - 1] != npos &&
                        x_.match[open - 1] > 0 && is_ident(x_.t[x_.match[open - 1] - 1], "if")));
      if (!branch) return false;
      ++k;
    }
  }

  // Whether the statement [b, e) ends with a return: `return v;`, or a block whose last
  // statement is one.
  bool returns_at_end(std::size_t b, std::size_t e) const {
    std::size_t last = e - 1;  // its ';', or its block's '}'
    if (x_.punct(b, "{")) {
      if (x_.match[b] != e - 1 || e < b + 3) return false;
      last = e - 2;
    }
    if (!x_.punct(last, ";")) return false;
    std::size_t start = last;  // back to the statement's start
    while (start > b && !x_.punct(start - 1, ";") && !x_.punct(start - 1, "{") &&
           !x_.punct(start - 1, "}"))
      --start;
    return is_ident(x_.t[start], "return");
  }

  // One past the statement starting at token k at a function body's top level (ending by
  // limit): a block, an if with its else, a loop or switch with its body, a do-while, or one
  // ending at ';'; npos when it cannot tell.
  std::size_t top_statement_end(std::size_t k, std::size_t limit) const {
    if (k >= limit) return npos;
    if (x_.punct(k, "{")) return x_.match[k] == npos ? npos : x_.match[k] + 1;
    if (is_ident(x_.t[k], "if") && x_.punct(k + 1, "(") && x_.match[k + 1] != npos) {
      const std::size_t then_end = top_statement_end(x_.match[k + 1] + 1, limit);
      if (then_end == npos || then_end >= limit) return then_end;
      return is_ident(x_.t[then_end], "else") ? top_statement_end(then_end + 1, limit) : then_end;
    }
    if ((is_ident(x_.t[k], "for") || is_ident(x_.t[k], "while") || is_ident(x_.t[k], "switch")) &&
        x_.punct(k + 1, "(") && x_.match[k + 1] != npos)
      return top_statement_end(x_.match[k + 1] + 1, limit);
    if (is_ident(x_.t[k], "do")) {
      const std::size_t body_end = top_statement_end(k + 1, limit);
      if (body_end == npos || body_end + 1 >= limit || !is_ident(x_.t[body_end], "while") ||
          !x_.punct(body_end + 1, "(") || x_.match[body_end + 1] == npos)
        return npos;
      const std::size_t semi = x_.match[body_end + 1] + 1;
      return x_.punct(semi, ";") ? semi + 1 : npos;
    }
    for (std::size_t j = k; j < limit; ++j) {
      if (x_.match[j] != npos && (x_.punct(j, "(") || x_.punct(j, "[") || x_.punct(j, "{")))
        j = x_.match[j];
      else if (x_.punct(j, "}"))
        return npos;
      else if (x_.punct(j, ";"))
        return j + 1;
    }
    return npos;
  }

  // One past the statement starting at token k (a block, an if with its else, or one ending
  // at ';'), or npos when it cannot tell.
  std::size_t statement_after(std::size_t k) const {
    if (k >= x_.t.size()) return npos;
    if (x_.punct(k, "{")) return x_.match[k] == npos ? npos : x_.match[k] + 1;
    if (is_ident(x_.t[k], "if") && x_.punct(k + 1, "(") && x_.match[k + 1] != npos) {
      const std::size_t then_end = statement_after(x_.match[k + 1] + 1);
      if (then_end == npos || then_end >= x_.t.size()) return then_end;
      return is_ident(x_.t[then_end], "else") ? statement_after(then_end + 1) : then_end;
    }
    for (std::size_t j = k; j < x_.t.size(); ++j) {
      if (x_.punct(j, "{") || x_.punct(j, "}")) return npos;  // (a loop: not followed)
      if (x_.match[j] != npos && (x_.punct(j, "(") || x_.punct(j, "["))) j = x_.match[j];
      if (x_.punct(j, ";")) return j + 1;
    }
    return npos;
  }

  // The statement at token c when it is a call of a synchronising function f that can be
  // inlined: the edit replacing it, or nullopt.
  std::optional<Edit> inline_call(std::size_t c, int& counter) const {
    if (x_.t[c].kind != Token::ident || member(c)) return std::nullopt;
    const Function* f = find(x_.t[c].text);
    if (!f || !f->syncs || !f->refused.empty()) return std::nullopt;
    std::size_t open = c + 1;
    std::vector<std::string> explicit_targs;
    if (x_.punct(open, "<")) {
      const std::size_t e = angle_close(x_, open);
      if (e == npos) return std::nullopt;
      for (auto [b, pe] : split(x_, open + 1, e - 1)) explicit_targs.push_back(text(b, pe));
      open = e;
    }
    if (!x_.punct(open, "(") || x_.match[open] == npos) return std::nullopt;
    const std::size_t close = x_.match[open];
    if (!x_.punct(close + 1, ";")) return std::nullopt;
    // The statement's start: after ';', '{', '}', `else`, `do` or the header of an if or loop.
    std::size_t st = c;
    while (st > 0) {
      const std::size_t p = st - 1;
      if (x_.punct(p, ";") || x_.punct(p, "{") || x_.punct(p, "}") || is_ident(x_.t[p], "else") ||
          is_ident(x_.t[p], "do"))
        break;
      if (x_.punct(p, ")")) {
        const std::size_t m = x_.match[p];
        if (m != npos && m > 0 &&
            (is_ident(x_.t[m - 1], "if") || is_ident(x_.t[m - 1], "for") ||
             is_ident(x_.t[m - 1], "while")))
          break;
      }
      if (x_.punct(p, "(") || x_.punct(p, ",") || x_.punct(p, "?") || x_.punct(p, ":") ||
          x_.t[p].directive)
        return std::nullopt;  // inside an expression: not a statement of its own
      st = (x_.punct(p, ")") || x_.punct(p, "]")) && x_.match[p] != npos ? x_.match[p] : p;
    }
    // Its form: f(args); / lhs op= f(args); / type name = f(args);
    std::string before, target, assign;  // the declaration, the lvalue, its operator
    if (st < c) {
      std::size_t op = c - 1;  // '=', or the '=' of '+=' ...
      if (!x_.punct(op, "=") || op == st) return std::nullopt;
      std::size_t lhs_end = op;
      if (op > st && x_.t[op - 1].kind == Token::punct && x_.t[op - 1].end == x_.t[op].begin)
        lhs_end = op - 1;  // a compound assignment
      for (std::size_t k = st; k < lhs_end; ++k)
        if (x_.punct(k, "(") || x_.punct(k, "&") || is_ident(x_.t[k], "auto") ||
            is_ident(x_.t[k], "static") || is_ident(x_.t[k], "__shared__"))
          return std::nullopt;
      const bool arrow = lhs_end - st >= 3 && x_.punct(lhs_end - 2, ">") &&
                         x_.punct(lhs_end - 3, "-");  // p->x = f(...)
      const bool declaration = lhs_end == op && lhs_end - st >= 2 && !arrow &&
                               x_.t[lhs_end - 1].kind == Token::ident &&
                               (x_.t[lhs_end - 2].kind == Token::ident ||
                                x_.punct(lhs_end - 2, ">") || x_.punct(lhs_end - 2, "*"));
      if (!f->returns_value) return std::nullopt;
      if (declaration) {
        for (std::size_t k = st; k + 1 < lhs_end; ++k)
          if (!is_ident(x_.t[k], "const")) before += text(k, k + 1) + " ";
        target = x_.t[lhs_end - 1].text;
        before += target + ";";
        assign = "=";
      } else {
        target = text(st, lhs_end);
        assign = text(lhs_end, op + 1);
      }
    }
    // Arguments, one per parameter.
    const auto args = split(x_, open + 1, close);
    const std::size_t nargs = close == open + 1 ? 0 : args.size();
    if (nargs != f->params.size() || explicit_targs.size() > f->tparams.size()) return std::nullopt;
    for (std::size_t k = open + 1; k < close; ++k)
      if (x_.t[k].kind == Token::ident && x_.punct(k + 1, "(") && find(x_.t[k].text) &&
          find(x_.t[k].text)->syncs)
        return std::nullopt;  // one synchronising call in another's arguments
    const std::string prefix = "kiln_i" + std::to_string(++counter) + "_";
    std::map<std::string, std::string> renames;
    for (const auto& p : f->params) renames[p.name] = prefix + p.name;
    for (const auto& tp : f->tparams) renames[tp] = prefix + tp;
    // Its locals too (`T name =`, `T name;`, `T name[`): they must not hide the kernel's
    // names in the kernel (a local `n` beside a parameter `n`, a loop variable `m` beside the
    // kernel's `m`), nor be hidden by them.
    for (std::size_t k = f->body + 1; k + 1 < f->end; ++k) {
      const Token &t = x_.t[k], &p = x_.t[k - 1], &n = x_.t[k + 1];
      if (t.kind != Token::ident || member(k) || p.kind != Token::ident ||
          not_a_local_type(p.text) || renames.count(t.text))
        continue;
      if (x_.punct(k + 1, "=") || x_.punct(k + 1, ";") || x_.punct(k + 1, ",") ||
          x_.punct(k + 1, "[") || x_.punct(k + 1, "{") ||
          (x_.punct(k + 1, ":") && !is_punct(n, "::")))
        renames[t.text] = prefix + t.text;
    }
    std::string out = "{";
    // Template parameters: given, or deduced from the first parameter of type T, const T&, T*.
    for (std::size_t j = 0; j < f->tparams.size(); ++j) {
      std::string type = j < explicit_targs.size() ? explicit_targs[j] : "";
      for (std::size_t p = 0; p < f->params.size() && type.empty() && f->tparam_is_type[j]; ++p) {
        std::vector<std::string> words;
        for (std::size_t k = f->params[p].begin; k < f->params[p].end; ++k)
          if (!is_ident(x_.t[k], "const") && !is_ident(x_.t[k], "volatile") &&
              !is_ident(x_.t[k], "__restrict__"))
            words.push_back(x_.t[k].text);
        const std::string arg = "(" + text(args[p].first, args[p].second) + ")";
        if (words == std::vector<std::string>{f->tparams[j]} ||
            words == std::vector<std::string>{f->tparams[j], "&"})
          type = "std::remove_cv_t<std::remove_reference_t<decltype(" + arg + ")>>";
        else if (words == std::vector<std::string>{f->tparams[j], "*"})
          type = "std::remove_cv_t<std::remove_pointer_t<std::decay_t<decltype(" + arg + ")>>>";
      }
      if (type.empty()) return std::nullopt;  // not deducible here
      out += f->tparam_is_type[j]
                 ? " using " + prefix + f->tparams[j] + " = " + type + ";"
                 : " constexpr auto " + prefix + f->tparams[j] + " = " + type + ";";
    }
    // Parameters: copies of the arguments (a const reference becomes a copy).
    for (std::size_t p = 0; p < f->params.size(); ++p) {
      std::string type;
      bool reference = false, constant = false;
      for (std::size_t k = f->params[p].begin; k < f->params[p].end; ++k) {
        if (x_.punct(k, "&")) {
          reference = true;
          continue;
        }
        constant = constant || is_ident(x_.t[k], "const");
        type += (type.empty() ? "" : " ") + text(k, k + 1, renames);
      }
      if (reference && !constant) return std::nullopt;  // an output parameter
      out += " " + type + " " + prefix + f->params[p].name + " = (" +
             text(args[p].first, args[p].second) + ");";
    }
    // The body, each return turned into the statement's own use of the value.
    std::size_t from = f->body + 1;
    for (const auto& [ret, semi] : f->rets) {
      out += " " + text(from, ret, renames);
      if (semi > ret + 1) {
        const std::string value = "(" + text(ret + 1, semi, renames) + ")";
        out += target.empty() ? " (void)" + value + ";"
                              : " " + target + " " + assign + " " + value + ";";
      } else {
        out += " ;";
      }
      from = semi + 1;
    }
    out += " " + text(from, f->end, renames) + " }";
    if (!before.empty()) out = before + " " + out;
    // Lines kept: the statement's newlines follow the block.
    std::string lines;
    for (std::size_t i = x_.t[st].begin; i < x_.t[close + 1].end; ++i)
      if (src_[i] == '\n') lines += '\n';
    return Edit{x_.t[st].begin, x_.t[close + 1].end, out + lines, close + 1};
  }

  // A call of a synchronising function inside an expression (`oval = (scan(v) - v);`, as a
  // function inlined before returned it): the call moves to a statement of its own before
  // the statement, which the next pass inlines, into a variable of the function's return
  // type: `uint kiln_h1_; kiln_h1_ = scan(v); oval = (kiln_h1_ - v);`. The body of an unbraced
  // if, else or loop gets braces around the two (`if (keep) { int kiln_h1_; kiln_h1_ =
  // agg_inc(n); dst[kiln_h1_] = v; }`, NVIDIA's warp-aggregated filter). Only where that
  // changes nothing: not in a header's part, not where the call might not run (&&, ||, ?:) or
  // not run yet (after a comma between declarators), nor in an unevaluated operand; a function
  // whose return type is written plainly, a template's too where the type names none of its
  // parameters (`sqrt(block_sum<128>(red, v))`, a Householder QR's norm: `double`).
  std::optional<Edit> hoist_call(std::size_t c, int& counter) const {
    if (x_.t[c].kind != Token::ident || member(c) || !called(c)) return std::nullopt;
    const Function* f = find(x_.t[c].text);
    if (!f || !f->syncs || !f->refused.empty() || !f->returns_value) return std::nullopt;
    const std::size_t paren = x_.punct(c + 1, "<") ? angle_close(x_, c + 1) : c + 1;
    const std::size_t close = x_.match[paren];
    if (close == npos) return std::nullopt;
    static const std::set<std::string> unevaluated{"sizeof", "decltype", "alignof",
                                                   "typeid", "noexcept", "__typeof__"};
    static const std::set<std::string> headers{"if", "for", "while", "switch", "return"};
    std::size_t st = c;
    bool body = false;      // the statement is an unbraced if's, else's or loop's body
    for (; st > 0; --st) {  // back to the statement's start
      const std::size_t p = st - 1;
      if (x_.punct(p, ";") || x_.punct(p, "{") || x_.punct(p, "}")) break;
      if (x_.t[p].directive) return std::nullopt;
      if (is_ident(x_.t[p], "else") || is_ident(x_.t[p], "do")) {
        body = true;
        break;
      }
      if (x_.punct(p, ")") || x_.punct(p, "]")) {
        if (x_.match[p] == npos) return std::nullopt;
        const std::size_t open = x_.match[p];
        if (x_.punct(p, ")") && open > 0 &&
            (is_ident(x_.t[open - 1], "if") || is_ident(x_.t[open - 1], "for") ||
             is_ident(x_.t[open - 1], "while"))) {
          body = true;  // (the header's ')': the statement starts after it)
          break;
        }
        st = open + 1;
      } else if (x_.punct(p, "(") && p > 0 &&
                 (unevaluated.count(x_.t[p - 1].text) || headers.count(x_.t[p - 1].text))) {
        return std::nullopt;
      }
    }
    if (st == 0 || st == c || headers.count(x_.t[st].text) || is_ident(x_.t[st], "case"))
      return std::nullopt;  // (a statement of its own is inline_call's)
    // Through to its ';': nothing that runs parts conditionally or in sequence.
    std::size_t semi = st;
    for (int depth = 0; semi < x_.t.size() && !(depth == 0 && x_.punct(semi, ";")); ++semi) {
      const Token& t = x_.t[semi];
      if (t.directive || x_.punct(semi, "{") || x_.punct(semi, "}") || x_.punct(semi, "?") ||
          x_.punct(semi, ":") || (x_.punct(semi, ",") && depth == 0))
        return std::nullopt;
      if ((x_.punct(semi, "&") || x_.punct(semi, "|")) && x_.punct(semi + 1, t.text.c_str()) &&
          t.end == x_.t[semi + 1].begin)
        return std::nullopt;  // && ||
      if (x_.punct(semi, "(") || x_.punct(semi, "[")) ++depth;
      if ((x_.punct(semi, ")") || x_.punct(semi, "]")) && --depth < 0) return std::nullopt;
    }
    if (semi >= x_.t.size()) return std::nullopt;
    // The return type: the declaration's words before the name, specifiers left out.
    static const std::set<std::string> specifiers{"__device__",   "__host__", "__forceinline__",
                                                  "__noinline__", "inline",   "static",
                                                  "constexpr",    "extern"};
    std::string type;
    const std::size_t name = f->open - 1;
    std::size_t first = f->first;
    if (is_ident(x_.t[first], "template") && x_.punct(first + 1, "<"))
      first = angle_close(x_, first + 1);
    if (first == npos) return std::nullopt;
    for (std::size_t k = first; k < name; ++k) {
      if (specifiers.count(x_.t[k].text)) continue;
      if (is_ident(x_.t[k], "auto") || x_.punct(k, "(") || x_.punct(k, "&") ||
          std::count(f->tparams.begin(), f->tparams.end(), x_.t[k].text))
        return std::nullopt;
      type += (type.empty() ? "" : " ") + x_.t[k].text;
    }
    if (type.empty()) return std::nullopt;
    const std::string v = "kiln_h" + std::to_string(++counter) + "_";
    const std::size_t from = x_.t[st].begin, call = x_.t[c].begin, end = x_.t[close].end;
    std::string text = type + " " + v + "; " + v + " = " +
                       std::string(src_.substr(call, end - call)) + "; " +
                       std::string(src_.substr(from, call - from)) + v;
    if (!body) return Edit{from, end, std::move(text), close};
    const std::size_t stop = x_.t[semi].end;  // (braced through the statement's ';')
    return Edit{from, stop, "{ " + text + std::string(src_.substr(end, stop - end)) + " }", semi};
  }

  std::string_view src_;
  Tokens x_;
  std::vector<Function> functions_;
};

}  // namespace

std::set<std::string> identity_free_functions(std::string_view source,
                                              const std::set<std::string>& thread_macros) {
  return Inliner(source).identity_free(thread_macros);
}

std::string inline_sync_functions(std::string_view source) {
  std::string current(source);
  int counter = 0;
  bool changed = false;
  if (auto branched = Inliner(current).else_after_early_returns()) current = std::move(*branched);
  for (int pass = 0; pass < kMaxPasses; ++pass) {
    auto next = Inliner(current).pass(counter);
    if (!next) break;
    current = std::move(*next);
    changed = true;
    // Calls of calls multiply the text: past a bound, the source is compiled as written.
    if (current.size() > kMaxGrowth * source.size() + 65536) return std::string(source);
  }
  if (!changed) return std::string(source);
  return Inliner(current).without_unused();
}

}  // namespace kiln::cpu
