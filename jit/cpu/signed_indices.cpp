// Signed index arithmetic (signed_indices.h), over jit/lexer.h's tokens: find each `int`
// declaration, check each declarator's initialiser, and wrap the indices it reads.
#include "jit/cpu/signed_indices.h"

#include <cstdlib>
#include <set>
#include <vector>

#include "jit/cpu/region_words.h"
#include "jit/lexer.h"

namespace kiln::cpu {
namespace {

using jit::is_ident;
using jit::is_punct;
using jit::Token;

// Whether token k starts an index component: threadIdx.x, blockIdx.y, blockDim.z, gridDim.x.
bool index_component(const std::vector<Token>& t, std::size_t k) {
  static const std::set<std::string> builtins{"threadIdx", "blockIdx", "blockDim", "gridDim"};
  return t[k].kind == Token::ident && builtins.count(t[k].text) && k + 2 < t.size() &&
         is_punct(t[k + 1], ".") && t[k + 2].kind == Token::ident &&
         (t[k + 2].text == "x" || t[k + 2].text == "y" || t[k + 2].text == "z") &&
         (k == 0 || !(is_punct(t[k - 1], ".") || is_punct(t[k - 1], "::")));
}

// Whether integer literal x is beyond what index arithmetic multiplies or adds (2^20): a
// hash's or a random generator's constant (`tid * 1103515245 + 12345`, FNV's 16777619), whose
// arithmetic wraps on purpose.
bool hash_constant(const Token& x) {
  return std::strtoull(x.text.c_str(), nullptr, 0) > (1ull << 20);
}

// The names the source gives such a constant: `#define PRIME 16777619u`, `constexpr unsigned
// kMul = 2654435761u;` (an integer literal alone, maybe in parentheses).
std::set<std::string> hash_constant_names(const std::vector<Token>& t) {
  std::set<std::string> out;
  for (std::size_t k = 0; k + 2 < t.size(); ++k) {
    if (t[k].kind != Token::ident) continue;
    std::size_t v = k + 1;
    const bool defined = t[k].directive && k > 0 && is_ident(t[k - 1], "define") &&
                         t[k - 1].directive && t[k - 1].line == t[k].line;
    if (!defined && !(is_punct(t[v], "=") && !t[k].directive)) continue;
    if (!defined) ++v;
    while (v < t.size() && is_punct(t[v], "(")) ++v;
    if (v < t.size() && t[v].kind == Token::number && regions::is_integer_literal(t[v]) &&
        hash_constant(t[v]) && (!defined || t[v].line == t[k].line))
      out.insert(t[k].text);
  }
  return out;
}

// Whether tokens [b, e) are integer arithmetic of the kind the rewrite takes: identifiers
// (not called), members, integer literals, parentheses, + - * (signed_indices.h), and no
// hash constant (by its value or its name: hashes).
bool plain_arithmetic(const std::vector<Token>& t, std::size_t b, std::size_t e,
                      const std::set<std::string>& hashes) {
  if (b >= e) return false;
  for (std::size_t k = b; k < e; ++k) {
    const Token& x = t[k];
    if (x.directive || x.kind == Token::string) return false;
    if (x.kind == Token::number && (!regions::is_integer_literal(x) || hash_constant(x)))
      return false;
    if (x.kind == Token::ident && hashes.count(x.text)) return false;
    if (x.kind == Token::ident && k + 1 < e && is_punct(t[k + 1], "(")) return false;  // a call
    if (x.kind == Token::punct &&
        !(x.text == "+" || x.text == "-" || x.text == "*" || x.text == "(" || x.text == ")" ||
          x.text == "." || x.text == "::"))
      return false;
  }
  return true;
}

// The end of the declarator's initialiser starting at b: the ',' or ';' (or the for header's
// ')') at depth 0, or t.size() when there is none.
std::size_t initialiser_end(const std::vector<Token>& t, std::size_t b) {
  int depth = 0;
  for (std::size_t k = b; k < t.size(); ++k) {
    if (t[k].directive) return t.size();
    if (is_punct(t[k], "(") || is_punct(t[k], "[") || is_punct(t[k], "{")) ++depth;
    if (is_punct(t[k], ")") || is_punct(t[k], "]") || is_punct(t[k], "}")) {
      if (depth == 0) return k;
      --depth;
    }
    if (depth == 0 && (is_punct(t[k], ",") || is_punct(t[k], ";"))) return k;
  }
  return t.size();
}

// Whether the `int` at k begins a declaration: after a statement's start (`;`, `{`, `}`, a for
// header's `(`), alone or with `const` before it.
bool declaration_start(const std::vector<Token>& t, std::size_t k) {
  std::size_t p = k;
  if (p > 0 && is_ident(t[p - 1], "const")) --p;
  if (p == 0) return true;
  const Token& before = t[p - 1];
  return !before.directive && (is_punct(before, ";") || is_punct(before, "{") ||
                               is_punct(before, "}") || is_punct(before, "("));
}

}  // namespace

std::string signed_index_arithmetic(std::string_view source) {
  const std::vector<Token> t = jit::lex(source);
  const std::set<std::string> hashes = hash_constant_names(t);
  std::vector<std::size_t> wrap;  // index components to read as int
  for (std::size_t k = 0; k < t.size(); ++k) {
    if (!is_ident(t[k], "int") || t[k].directive || !declaration_start(t, k)) continue;
    std::size_t d = k + 1;
    if (d < t.size() && is_ident(t[d], "const")) ++d;
    // Declarators: name = E, separated by commas, up to the ';' (or a for header's ';').
    while (d + 1 < t.size() && t[d].kind == Token::ident && is_punct(t[d + 1], "=")) {
      const std::size_t end = initialiser_end(t, d + 2);
      if (end == t.size() || is_punct(t[end], ")")) break;
      if (plain_arithmetic(t, d + 2, end, hashes))
        for (std::size_t j = d + 2; j < end; ++j)
          if (index_component(t, j)) wrap.push_back(j);
      if (!is_punct(t[end], ",")) break;
      d = end + 1;
    }
  }
  if (wrap.empty()) return std::string(source);
  std::string out;
  std::size_t at = 0;
  for (std::size_t j : wrap) {
    out.append(source.substr(at, t[j].begin - at));
    out += "int(";
    out.append(source.substr(t[j].begin, t[j + 2].end - t[j].begin));
    out += ")";
    at = t[j + 2].end;
  }
  out.append(source.substr(at));
  return out;
}

}  // namespace kiln::cpu
