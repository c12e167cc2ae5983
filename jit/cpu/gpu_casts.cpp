// Casts to integer types as a GPU converts (gpu_casts.h), over jit/lexer.h's tokens: find each
// explicit cast to an integer type, find its operand's end, and edit the cast's spelling.
#include "jit/cpu/gpu_casts.h"

#include <algorithm>
#include <cstdlib>
#include <set>
#include <vector>

#include "jit/cpu/edits.h"
#include "jit/cpu/region_words.h"
#include "jit/lexer.h"

namespace kiln::cpu {
namespace {

using jit::is_ident;
using jit::is_punct;
using jit::Token;
constexpr std::size_t kNone = std::string::npos;

struct Edit {
  std::size_t begin, end;
  std::string text;
};

// Whether tokens [b, e) spell an integer type: `int`, `unsigned long long`, `const short`,
// `size_t`, `std::uint32_t`, `::int64_t`.
bool integer_type(const std::vector<Token>& t, std::size_t b, std::size_t e) {
  static const std::set<std::string> words{"unsigned", "signed", "short", "long", "int", "char"};
  static const std::set<std::string> names{
      "size_t",  "ptrdiff_t", "intptr_t", "uintptr_t", "int8_t",   "int16_t", "int32_t",
      "int64_t", "uint8_t",   "uint16_t", "uint32_t",  "uint64_t", "uint",    "ushort",
      "uchar",   "ulong",     "longlong", "ulonglong", "ssize_t"};
  if (b < e && is_ident(t[b], "const")) ++b;
  if (b + 1 < e && is_punct(t[b], "::")) ++b;
  if (b + 2 < e && is_ident(t[b], "std") && is_punct(t[b + 1], "::")) b += 2;
  if (b + 1 == e && t[b].kind == Token::ident && names.count(t[b].text)) return true;
  if (b >= e) return false;
  for (std::size_t k = b; k < e; ++k)
    if (t[k].kind != Token::ident || !words.count(t[k].text)) return false;
  return true;
}

// Whether tokens [b, e) spell a floating-point type a cast may name in an operand: `(float)x`.
bool float_type(const std::vector<Token>& t, std::size_t b, std::size_t e) {
  return b + 1 == e && (is_ident(t[b], "float") || is_ident(t[b], "double"));
}

// The index of the bracket closing the one at k, or kNone.
std::size_t group_end(const std::vector<Token>& t, std::size_t k) {
  int depth = 0;
  for (std::size_t j = k; j < t.size(); ++j) {
    if (t[j].directive) return kNone;
    if (is_punct(t[j], "(") || is_punct(t[j], "[") || is_punct(t[j], "{")) ++depth;
    if (is_punct(t[j], ")") || is_punct(t[j], "]") || is_punct(t[j], "}"))
      if (--depth == 0) return j;
  }
  return kNone;
}

// Whether tokens k and k + 1 are the punctuators a and b written together (`++`, `->`).
bool pair_at(const std::vector<Token>& t, std::size_t k, std::string_view a, std::string_view b) {
  return k + 1 < t.size() && is_punct(t[k], a) && is_punct(t[k + 1], b) &&
         t[k].end == t[k + 1].begin;
}

// Whether the `<` at k opens a template's arguments (`foo<3>(x)`, `A<int>::v`) rather than
// compares (`a < b`): a `>` closes it, within the statement, before a call or a `::`.
bool template_arguments(const std::vector<Token>& t, std::size_t k) {
  for (std::size_t j = k + 1, depth = 1; j < t.size() && j < k + 32; ++j) {
    if (t[j].directive || is_punct(t[j], ";") || is_punct(t[j], "{") || is_punct(t[j], "}"))
      return false;
    if (is_punct(t[j], "<")) ++depth;
    if (is_punct(t[j], ">") && --depth == 0)
      return j + 1 < t.size() && (is_punct(t[j + 1], "(") || is_punct(t[j + 1], "::"));
  }
  return false;
}

// One past a postfix expression's suffixes from k: [..], (..), .m, ->m, ++, --.
std::size_t postfix_end(const std::vector<Token>& t, std::size_t k) {
  while (k < t.size() && !t[k].directive) {
    if (is_punct(t[k], "[") || is_punct(t[k], "(")) {
      const std::size_t close = group_end(t, k);
      if (close == kNone) return kNone;
      k = close + 1;
    } else if (is_punct(t[k], ".") || pair_at(t, k, "-", ">")) {  // .m, ->m, .template m<..>
      std::size_t m = k + (is_punct(t[k], ".") ? 1 : 2);
      if (m < t.size() && is_ident(t[m], "template")) ++m;
      if (m >= t.size() || t[m].kind != Token::ident) return kNone;
      k = m + 1;
      if (k < t.size() && is_punct(t[k], "<")) {  // a member template's arguments, or `<`
        if (!template_arguments(t, k)) break;
        for (int depth = 0; k < t.size(); ++k) {
          if (is_punct(t[k], "<")) ++depth;
          if (is_punct(t[k], ">") && --depth == 0) break;
        }
        ++k;
      }
    } else if (pair_at(t, k, "+", "+") || pair_at(t, k, "-", "-")) {
      k += 2;
    } else {
      break;
    }
  }
  return k;
}

// One past the unary expression (a cast's operand) starting at k, or kNone where it is not one
// the rewrite reads: a template name, a string, `new`.
std::size_t operand_end(const std::vector<Token>& t, std::size_t k) {
  if (k >= t.size() || t[k].directive) return kNone;
  const Token& x = t[k];
  if (pair_at(t, k, "+", "+") || pair_at(t, k, "-", "-")) return operand_end(t, k + 2);
  if (x.kind == Token::punct) {
    if (x.text == "-" || x.text == "+" || x.text == "!" || x.text == "~" || x.text == "*" ||
        x.text == "&")
      return operand_end(t, k + 1);
    if (x.text != "(") return kNone;
    const std::size_t close = group_end(t, k);
    if (close == kNone) return kNone;
    if (integer_type(t, k + 1, close) || float_type(t, k + 1, close))
      return operand_end(t, close + 1);  // another cast: (int)(float)x
    return postfix_end(t, close + 1);
  }
  if (x.kind == Token::number) return k + 1;
  if (x.kind != Token::ident) return kNone;
  if (x.text == "sizeof" || x.text == "alignof")
    return k + 1 < t.size() && is_punct(t[k + 1], "(") ? postfix_end(t, k + 1)
                                                       : operand_end(t, k + 1);
  if (x.text == "static_cast" || x.text == "reinterpret_cast" || x.text == "const_cast") {
    if (k + 1 >= t.size() || !is_punct(t[k + 1], "<")) return kNone;
    std::size_t j = k + 2;
    for (int depth = 1; j < t.size() && depth > 0; ++j) {
      if (is_punct(t[j], "<")) ++depth;
      if (is_punct(t[j], ">")) --depth;
      if (is_punct(t[j], ";") || t[j].directive) return kNone;
    }
    return j < t.size() && is_punct(t[j], "(") ? postfix_end(t, j) : kNone;
  }
  static const std::set<std::string> refused{"new", "delete", "throw", "operator", "return"};
  if (refused.count(x.text)) return kNone;
  std::size_t j = k + 1;
  while (j + 1 < t.size() && is_punct(t[j], "::") && t[j + 1].kind == Token::ident) j += 2;
  if (j < t.size() && is_punct(t[j], "<") && template_arguments(t, j)) return kNone;
  return postfix_end(t, j);
}

// Whether an expression may start after token k - 1: a cast there is an expression's, not a
// declaration's (`void f(int)`) or an operator's operand (`sizeof(int)`, `decltype(x)`).
bool expression_before(const std::vector<Token>& t, std::size_t k, bool statement_start_ok) {
  if (k == 0) return statement_start_ok;
  const Token& p = t[k - 1];
  if (p.directive) return false;
  if (p.kind == Token::ident)
    return p.text == "return" || p.text == "case" || p.text == "co_return" ||
           p.text == "co_yield" || p.text == "throw";
  if (p.kind != Token::punct) return false;
  if (p.text == ")" || p.text == "]" || p.text == "::" || p.text == ".") return false;
  if (p.text == ";" || p.text == "{" || p.text == "}") return statement_start_ok;
  return true;
}

// Whether the parentheses [open, close] after an integer type's name declare rather than
// convert: `int (*p)[4]`, `int (&a)[4]`, `int (S::*m)`, a function type `int(float)`, or
// are followed by what no value can be (`int(x)[2]`, `int(f)(y)`).
bool declarator(const std::vector<Token>& t, std::size_t open, std::size_t close) {
  const Token& first = t[open + 1];
  if (is_punct(first, "*") || is_punct(first, "&") || is_punct(first, "^")) return true;
  const bool called = open + 2 < t.size() && is_punct(t[open + 2], "(");  // `int(float(x))`
  if (first.kind == Token::ident && !called &&
      (regions::is_keyword_type(first.text) || first.text == "const" || first.text == "volatile"))
    return true;
  for (std::size_t k = open + 1; k + 1 < close; ++k)
    if (is_punct(t[k], "::") && is_punct(t[k + 1], "*")) return true;
  return close + 1 < t.size() && (is_punct(t[close + 1], "(") || is_punct(t[close + 1], "["));
}

// Whether an operand is one whose cast needs no conversion of a float: an integer literal or a
// thread or block index.
bool integer_operand(const std::vector<Token>& t, std::size_t b, std::size_t e) {
  if (e == b + 1) return t[b].kind == Token::number && regions::is_integer_literal(t[b]);
  static const std::set<std::string> builtins{"threadIdx", "blockIdx", "blockDim", "gridDim"};
  return e == b + 3 && t[b].kind == Token::ident && builtins.count(t[b].text) &&
         is_punct(t[b + 1], ".");
}

// The text of tokens [b, e), as the source spells it.
std::string text_of(std::string_view source, const std::vector<Token>& t, std::size_t b,
                    std::size_t e) {
  return std::string(source.substr(t[b].begin, t[e - 1].end - t[b].begin));
}

// Whether the `>` at k, with the `>` after it, closes template arguments rather than shifts:
// its statement (back to a `;`, `{` or `}`, at its own bracket depth) holds a `<` after a name
// that no `>` has closed (`vector<vector<int>> v`, `static_cast<A<B>>(x)`). A comparison's
// `<` (`a < b >> c`) reads as one too: that shift is left as it is.
bool closes_templates(const std::vector<Token>& t, std::size_t k) {
  int closed = 0;
  for (std::size_t j = k; j-- > 0;) {
    const Token& x = t[j];
    if (x.directive) return false;
    if (is_punct(x, ")") || is_punct(x, "]") || is_punct(x, "}")) {
      if (is_punct(x, "}")) return false;
      int depth = 0;  // (back over the group, whatever it holds)
      for (; j > 0; --j) {
        if (is_punct(t[j], ")") || is_punct(t[j], "]")) ++depth;
        if ((is_punct(t[j], "(") || is_punct(t[j], "[")) && --depth == 0) break;
      }
      continue;
    }
    if (is_punct(x, ";") || is_punct(x, "{") || is_punct(x, "(") || is_punct(x, "[")) return false;
    const bool paired =
        (j > 0 && t[j - 1].end == x.begin && t[j - 1].kind == Token::punct) ||
        (j + 1 < t.size() && t[j + 1].begin == x.end && t[j + 1].kind == Token::punct);
    if (is_punct(x, ">") && !paired) ++closed;
    if (is_punct(x, "<") && !paired && j > 0 && t[j - 1].kind == Token::ident && closed-- == 0)
      return true;
  }
  return false;
}

// One past the additive expression (a shift's right operand) starting at k: unary expressions
// joined by * / % + -; kNone where one is not a unary expression operand_end reads.
std::size_t additive_end(const std::vector<Token>& t, std::size_t k) {
  std::size_t end = operand_end(t, k);
  while (end != kNone && end + 1 < t.size() && !t[end].directive &&
         (is_punct(t[end], "*") || is_punct(t[end], "/") || is_punct(t[end], "%") ||
          is_punct(t[end], "+") || is_punct(t[end], "-")) &&
         !(t[end + 1].begin == t[end].end && t[end + 1].kind == Token::punct &&
           (t[end + 1].text == "=" || t[end + 1].text == ">" || t[end + 1].text == t[end].text)))
    end = operand_end(t, end + 1);  // (not `+=`, `->`, `++`)
  return end;
}

// Whether tokens [b, e) are an integer literal below 32, which every type shifts by as written.
bool small_count(const std::vector<Token>& t, std::size_t b, std::size_t e) {
  if (e != b + 1 || t[b].kind != Token::number || !regions::is_integer_literal(t[b])) return false;
  return std::strtoull(t[b].text.c_str(), nullptr, 0) < 32;
}
}  // namespace

std::string gpu_integer_casts(std::string_view source) {
  const std::vector<Token> t = jit::lex(source);
  std::vector<Edit> edits;
  std::size_t cast_close = kNone - 1;  // the `)` of the (T) rewritten last
  for (std::size_t k = 0; k < t.size(); ++k) {
    if (t[k].directive) {
      // A one-line #define's body, read as code of its own: `#define BIN(x) ((int)(x))`.
      const std::size_t name = k + 1;
      if (!is_ident(t[k], "define") ||
          (k > 0 && t[k - 1].directive && t[k - 1].line == t[k].line) || name >= t.size() ||
          t[name].line != t[k].line)
        continue;
      std::size_t body = name + 1;
      if (body < t.size() && is_punct(t[body], "(") && t[body].begin == t[name].end) {
        while (body < t.size() && t[body].line == t[k].line && !is_punct(t[body], ")")) ++body;
        ++body;  // (past its parameters)
      }
      std::size_t end = body;
      while (end < t.size() && t[end].directive && t[end].line == t[k].line) ++end;
      if (body >= end) continue;
      const std::size_t from = t[body].begin, to = t[end - 1].end;
      const std::size_t line_end = std::min(source.find('\n', to), source.size());
      if (source.substr(to, line_end - to).find('\\') != std::string_view::npos)
        continue;  // (continued on the next line: left as it is)
      if (std::string cast = gpu_integer_casts(source.substr(from, to - from));
          cast != source.substr(from, to - from))
        edits.push_back({from, to, std::move(cast)});
      k = end - 1;
      continue;
    }
    // (T)e: `(T)` becomes `kiln_cpu::gpu_cast<T>(`, and `)` follows e; e may start with a
    // cast of its own (`(int)(unsigned)x`).
    if (is_punct(t[k], "(") && (expression_before(t, k, true) || k == cast_close + 1)) {
      const std::size_t close = group_end(t, k);
      if (close == kNone || !integer_type(t, k + 1, close)) continue;
      const std::size_t end = operand_end(t, close + 1);
      if (end == kNone || end == close + 1 || integer_operand(t, close + 1, end)) continue;
      edits.push_back({t[k].begin, t[close].end,
                       "kiln_cpu::gpu_cast<" + text_of(source, t, k + 1, close) + ">("});
      edits.push_back({t[end - 1].end, t[end - 1].end, ")"});
      cast_close = close;
      continue;
    }
    // T(e), std::size_t(e): the type's name becomes `kiln_cpu::gpu_cast<T>`.
    if (t[k].kind == Token::ident && expression_before(t, k, false)) {
      std::size_t name_end = k + 1;
      if (is_ident(t[k], "std") && k + 2 < t.size() && is_punct(t[k + 1], "::")) name_end = k + 3;
      if (name_end < t.size() && is_punct(t[name_end], "(") && integer_type(t, k, name_end)) {
        const std::size_t close = group_end(t, name_end);
        if (close == kNone || close == name_end + 1 || declarator(t, name_end, close) ||
            integer_operand(t, name_end + 1, close))
          continue;
        edits.push_back({t[k].begin, t[name_end - 1].end,
                         "kiln_cpu::gpu_cast<" + text_of(source, t, k, name_end) + ">"});
        k = name_end - 1;
        continue;
      }
    }
    // static_cast<T>(e): `static_cast` becomes `kiln_cpu::gpu_cast`.
    if (is_ident(t[k], "static_cast") && k + 1 < t.size() && is_punct(t[k + 1], "<")) {
      std::size_t close = k + 2;
      while (close < t.size() && !is_punct(t[close], ">") && !is_punct(t[close], ";")) ++close;
      if (close < t.size() && is_punct(t[close], ">") && integer_type(t, k + 2, close))
        edits.push_back({t[k].begin, t[k].end, "kiln_cpu::gpu_cast"});
    }
  }
  if (edits.empty()) return std::string(source);
  std::stable_sort(edits.begin(), edits.end(),
                   [](const Edit& a, const Edit& b) { return a.begin < b.begin; });
  return apply_edits(source, edits);
}

std::string gpu_shifts(std::string_view source) {
  const std::vector<Token> t = jit::lex(source);
  std::vector<Edit> edits;
  for (std::size_t k = 0; k + 2 < t.size(); ++k) {
    // `<<` or `>>` written together (`<<=`, `>>=` too), not an operator's name nor templates'
    // ends, and not `<<<` / `>>>`.
    const bool left = pair_at(t, k, "<", "<"), right = pair_at(t, k, ">", ">");
    if (t[k].directive || (!left && !right) || (k > 0 && is_ident(t[k - 1], "operator")) ||
        (k > 0 && t[k - 1].end == t[k].begin && is_punct(t[k - 1], t[k].text)) ||
        pair_at(t, k + 1, t[k].text, t[k].text) || (right && closes_templates(t, k))) {
      if (left || right) ++k;
      continue;
    }
    const bool compound = pair_at(t, k + 1, t[k].text, "=");
    const std::size_t from = k + 2 + compound, end = additive_end(t, from);
    if (end == kNone || end == from || small_count(t, from, end) ||
        (compound && end < t.size() && !is_punct(t[end], ";") && !is_punct(t[end], ")") &&
         !is_punct(t[end], ",") && !is_punct(t[end], "]") && !is_punct(t[end], "}"))) {
      k += 1 + compound;
      continue;
    }
    edits.push_back({t[from].begin, t[from].begin, "::kiln_cpu::shift_count("});
    edits.push_back({t[end - 1].end, t[end - 1].end, ")"});
    k += 1 + compound;
  }
  if (edits.empty()) return std::string(source);
  // (a count may hold a shift of its own, `x << (y << z)`: its edits come after the outer `)`)
  std::stable_sort(edits.begin(), edits.end(),
                   [](const Edit& a, const Edit& b) { return a.begin < b.begin; });
  return apply_edits(source, edits);
}

}  // namespace kiln::cpu
