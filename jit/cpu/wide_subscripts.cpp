// Subscripts computed in 64 bits (wide_subscripts.h), over jit/lexer.h's tokens: find each
// subscript, check its expression, and write it twice, once with its operands widened.
#include "jit/cpu/wide_subscripts.h"

#include <algorithm>
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

// Keywords after which `[` opens no subscript: a lambda, a structured binding, new[], delete[].
bool opens_no_subscript(const Token& t) {
  static const std::set<std::string> words{"return",   "case",   "else",     "do",      "new",
                                           "delete",   "throw",  "operator", "auto",    "co_return",
                                           "co_yield", "sizeof", "alignof",  "decltype"};
  return t.kind == Token::ident && (words.count(t.text) || regions::is_keyword_type(t.text));
}

// The operands of subscript tokens [b, e) (each a name with its members, `::` parts, or a
// function-style cast to a keyword type) as [first, last) token ranges, when the subscript is
// arithmetic the rewrite takes (wide_subscripts.h) with at least one binary operator; else none.
std::vector<std::pair<std::size_t, std::size_t>> operands(const std::vector<Token>& t,
                                                          std::size_t b, std::size_t e) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  bool binary = false, after_operand = false;
  for (std::size_t k = b; k < e;) {
    const Token& x = t[k];
    if (x.directive || x.kind == Token::string) return {};
    if (x.kind == Token::number) {
      if (!regions::is_integer_literal(x)) return {};
      after_operand = true, ++k;
    } else if (x.kind == Token::ident) {
      std::size_t end = k + 1;
      while (end + 1 < e && (is_punct(t[end], ".") || is_punct(t[end], "::")) &&
             t[end + 1].kind == Token::ident)
        end += 2;
      while (end + 2 < e && is_punct(t[end], "-") && is_punct(t[end + 1], ">") &&
             t[end + 2].kind == Token::ident)
        end += 3;
      if (end < e && is_punct(t[end], "(")) {  // a cast to a keyword type: int(x)
        if (end != k + 1 || !regions::is_keyword_type(x.text)) return {};
        int depth = 0;
        for (; end < e; ++end) {
          if (is_punct(t[end], "(")) ++depth;
          if (is_punct(t[end], ")") && --depth == 0) break;
          if (is_punct(t[end], "[") || is_punct(t[end], "?") || is_punct(t[end], ",")) return {};
        }
        if (end == e) return {};
        ++end;
      }
      if (end < e && (is_punct(t[end], "(") || is_punct(t[end], "[") || is_punct(t[end], "<")))
        return {};  // a call, a subscript, a template
      out.push_back({k, end});
      after_operand = true, k = end;
    } else if (is_punct(x, "+") || is_punct(x, "-") || is_punct(x, "*") || is_punct(x, "/") ||
               is_punct(x, "%")) {
      if (k + 1 < e && t[k + 1].begin == x.end &&
          (is_punct(t[k + 1], x.text) || is_punct(t[k + 1], "=") || is_punct(t[k + 1], ">")))
        return {};  // ++, --, +=, ->
      binary = binary || after_operand;
      after_operand = false, ++k;
    } else if (is_punct(x, "(")) {
      after_operand = false, ++k;
    } else if (is_punct(x, ")")) {
      if (k + 1 < e && (t[k + 1].kind != Token::punct || is_punct(t[k + 1], "(")))
        return {};  // a C-style cast: (int)x, (T)(x)
      after_operand = true, ++k;
    } else {
      return {};
    }
  }
  if (!binary) return {};
  return out;
}

// The macros the source defines whose expansion could do something when evaluated: a call, an
// assignment, an increment, a subscript (`#define NEXT_SLOT atomicAdd(counter, 1)`, `#define POP
// (--top)`). A subscript naming one is left alone: the rewrite writes its expression twice.
std::set<std::string> acting_macros(std::string_view source, const std::vector<Token>& t) {
  std::set<std::string> out;
  for (std::size_t k = 0; k + 1 < t.size(); ++k) {
    if (!t[k].directive || !is_ident(t[k], "define") || t[k + 1].kind != Token::ident ||
        (k > 0 && t[k - 1].directive && t[k - 1].line == t[k].line))
      continue;
    for (std::size_t j = k + 2; j < t.size() && t[j].directive; ++j) {
      const Token& x = t[j];
      if (x.line != t[j - 1].line &&  // (a line continued with '\' goes on)
          source.substr(t[j - 1].end, x.begin - t[j - 1].end).find('\\') == std::string_view::npos)
        break;
      const bool calls = x.kind == Token::ident && j + 1 < t.size() && is_punct(t[j + 1], "(") &&
                         t[j + 1].line == x.line && !regions::is_keyword_type(x.text);
      if (calls || is_punct(x, "=") || is_punct(x, "[") || is_punct(x, "++") || is_punct(x, "--") ||
          (is_punct(x, "+") && j + 1 < t.size() && is_punct(t[j + 1], "+") &&
           t[j + 1].begin == x.end) ||
          (is_punct(x, "-") && j + 1 < t.size() && is_punct(t[j + 1], "-") &&
           t[j + 1].begin == x.end)) {
        out.insert(t[k + 1].text);
        break;
      }
    }
  }
  return out;
}

}  // namespace

std::string wide_subscripts(std::string_view source) {
  const std::vector<Token> t = jit::lex(source);
  const std::set<std::string> acting = acting_macros(source, t);
  struct Insert {
    std::size_t begin, end;  // (equal: an insertion)
    std::string text;
  };
  std::vector<Insert> inserts;
  for (std::size_t k = 1; k < t.size(); ++k) {
    if (!is_punct(t[k], "[") || t[k].directive) continue;
    const Token& before = t[k - 1];
    const bool after_operand = (before.kind == Token::ident && !opens_no_subscript(before)) ||
                               is_punct(before, "]") || is_punct(before, ")");
    if (!after_operand || before.directive) continue;
    std::size_t close = k + 1;
    for (int depth = 1; close < t.size(); ++close) {
      if (t[close].directive) break;
      if (is_punct(t[close], "[")) ++depth;
      if (is_punct(t[close], "]") && --depth == 0) break;
    }
    if (close >= t.size() || !is_punct(t[close], "]")) continue;
    if (is_punct(before, ")") && close + 1 < t.size() &&
        (is_punct(t[close + 1], "(") || is_punct(t[close + 1], "{")))
      continue;  // a lambda after a condition: if (c) [x]() { ... }
    const auto ops = operands(t, k + 1, close);
    if (ops.empty() || std::any_of(ops.begin(), ops.end(), [&](const auto& op) {
          return acting.count(t[op.first].text) > 0;
        }))
      continue;
    const std::size_t b = t[k + 1].begin, e = t[close - 1].end;
    const std::string expr(source.substr(b, e - b));
    if (expr.find('\n') != std::string::npos) continue;  // lines must not move
    std::string wide;                                    // E with each operand widened
    std::size_t at = b;
    for (const auto& [first, last] : ops) {
      wide.append(source.substr(at, t[first].begin - at));
      wide += "::kiln_cpu::wide(" +
              std::string(source.substr(t[first].begin, t[last - 1].end - t[first].begin)) + ")";
      at = t[last - 1].end;
    }
    wide.append(source.substr(at, e - at));
    inserts.push_back(
        {b, b, "::kiln_cpu::wide_index<decltype((" + expr + ") + 0)>(" + wide + ", "});
    inserts.push_back({e, e, ")"});
    k = close;  // (E holds no subscript: operands() takes none)
  }
  if (inserts.empty()) return std::string(source);
  return apply_edits(source, inserts);
}

}  // namespace kiln::cpu
