#include "jit/cpu/region_words.h"

namespace kiln::cpu::regions {

using jit::is_ident;
using jit::is_punct;
using jit::Token;

// A built-in type word.
bool is_keyword_type(const std::string& s) {
  static const std::set<std::string> words{"unsigned", "signed", "short",  "long",
                                           "int",      "char",   "float",  "double",
                                           "bool",     "void",   "__half", "wchar_t"};
  return words.count(s) > 0;
}
// A cv- or storage qualifier a declaration may start with.
bool is_qualifier(const std::string& s) {
  return s == "const" || s == "volatile" || s == "register" || s == "__restrict__";
}
// Statements left in place between thread loops: they declare nothing per thread.
bool is_hoistable(const std::string& s) {
  static const std::set<std::string> words{"__shared__",    "extern",    "using",  "typedef",
                                           "static_assert", "constexpr", "static", "struct",
                                           "enum",          "union",     "class"};
  return words.count(s) > 0;
}
// Math functions whose value depends on their arguments alone (CUDA's math API and intrinsics).
bool is_pure_math(const std::string& s) {
  static const std::set<std::string> words{"min",
                                           "max",
                                           "umin",
                                           "umax",
                                           "llmin",
                                           "llmax",
                                           "abs",
                                           "labs",
                                           "llabs",
                                           "fabs",
                                           "fabsf",
                                           "fmin",
                                           "fminf",
                                           "fmax",
                                           "fmaxf",
                                           "sqrt",
                                           "sqrtf",
                                           "cbrt",
                                           "cbrtf",
                                           "log",
                                           "logf",
                                           "__logf",
                                           "log2",
                                           "log2f",
                                           "__log2f",
                                           "log10",
                                           "log10f",
                                           "__log10f",
                                           "exp",
                                           "expf",
                                           "__expf",
                                           "exp2",
                                           "exp2f",
                                           "pow",
                                           "powf",
                                           "__powf",
                                           "floor",
                                           "floorf",
                                           "ceil",
                                           "ceilf",
                                           "round",
                                           "roundf",
                                           "trunc",
                                           "truncf",
                                           "rint",
                                           "rintf",
                                           "__clz",
                                           "__clzll",
                                           "__popc",
                                           "__popcll",
                                           "__ffs",
                                           "__ffsll",
                                           "__float2int_rn",
                                           "__float2int_rz",
                                           "__float2int_rd",
                                           "__float2int_ru",
                                           "__int2float_rn",
                                           "__fdividef"};
  return words.count(s) > 0;
}
// A number without a fraction or an exponent.
std::size_t callee(const std::vector<jit::Token>& t, std::size_t open) {
  if (open == 0 || open > t.size()) return t.size();
  std::size_t at = open - 1;
  if (jit::is_punct(t[at], ">")) {
    for (int depth = 0;; --at) {
      if (jit::is_punct(t[at], ">")) ++depth;
      if (jit::is_punct(t[at], "<") && --depth == 0) break;
      if (at == 0 || jit::is_punct(t[at], ";") || jit::is_punct(t[at], "{") ||
          jit::is_punct(t[at], "}"))
        return t.size();
    }
    if (at == 0) return t.size();
    --at;
  }
  return t[at].kind == jit::Token::ident ? at : t.size();
}

bool is_integer_literal(const jit::Token& t) {
  if (t.kind != jit::Token::number) return false;
  const std::string& s = t.text;
  const bool hex = s.size() > 1 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
  for (char c : s)
    if (c == '.' || (hex ? (c == 'p' || c == 'P') : (c == 'e' || c == 'E' || c == 'f' || c == 'F')))
      return false;
  return true;
}
// A keyword that starts a statement (or makes one) rather than a declaration.
bool is_statement_keyword(const std::string& s) {
  static const std::set<std::string> words{
      "return",   "if",     "for",          "while",    "do",       "switch",   "break",
      "continue", "goto",   "case",         "default",  "else",     "try",      "throw",
      "auto",     "extern", "thread_local", "typename", "template", "operator", "co_return",
      "co_await", "new",    "delete",       "sizeof",   "this"};
  return words.count(s) > 0;
}

// Object-like macros of the source whose expansion names threadIdx (or such a macro).
std::set<std::string> thread_macros(const std::vector<Token>& toks) {
  std::set<std::string> out{"threadIdx"};
  for (bool grew = true; grew;) {
    grew = false;
    for (std::size_t i = 0; i + 2 < toks.size(); ++i) {
      if (!toks[i].directive || !is_ident(toks[i], "define") || !toks[i + 1].directive) continue;
      const int line = toks[i].line;
      for (std::size_t k = i + 2; k < toks.size() && toks[k].directive && toks[k].line == line; ++k)
        if (out.count(toks[k].text) && out.insert(toks[i + 1].text).second) grew = true;
    }
  }
  return out;
}

// Object-like macros of the source that expand to constants: numbers, operators and type words
// and such macros. (A directive's logical line ends at a newline without a backslash before it.)
std::set<std::string> constant_macros(std::string_view src, const std::vector<Token>& toks) {
  std::set<std::string> out;
  for (bool grew = true; grew;) {
    grew = false;
    for (std::size_t i = 0; i + 1 < toks.size(); ++i) {
      if (!toks[i].directive || !is_ident(toks[i], "define") || toks[i + 1].kind != Token::ident ||
          out.count(toks[i + 1].text))
        continue;
      std::size_t eol = toks[i].end;
      while (eol < src.size() && !(src[eol] == '\n' && src[eol - 1] != '\\')) ++eol;
      const std::size_t k0 = i + 2;
      if (k0 < toks.size() && is_punct(toks[k0], "(") && toks[k0].begin == toks[i + 1].end)
        continue;  // function-like
      bool constant = k0 < toks.size() && toks[k0].directive && toks[k0].begin < eol;
      for (std::size_t k = k0;
           constant && k < toks.size() && toks[k].directive && toks[k].begin < eol; ++k) {
        const Token& t = toks[k];
        constant = t.kind == Token::number ||
                   (t.kind == Token::punct && !is_punct(t, "[") && !is_punct(t, "{") &&
                    !is_punct(t, "=") && !is_punct(t, ";") && !is_punct(t, ".")) ||
                   (t.kind == Token::ident && (is_keyword_type(t.text) || out.count(t.text)));
      }
      if (constant) grew = out.insert(toks[i + 1].text).second || grew;
    }
  }
  return out;
}

std::set<std::string> value_macros(std::string_view src, const std::vector<Token>& toks,
                                   const std::set<std::string>& constants) {
  std::set<std::string> out;
  for (bool grew = true; grew;) {
    grew = false;
    for (std::size_t i = 0; i + 2 < toks.size(); ++i) {
      if (!toks[i].directive || !is_ident(toks[i], "define") || toks[i + 1].kind != Token::ident ||
          out.count(toks[i + 1].text) || !is_punct(toks[i + 2], "(") ||
          toks[i + 2].begin != toks[i + 1].end)
        continue;  // not function-like
      std::size_t eol = toks[i].end;
      while (eol < src.size() && !(src[eol] == '\n' && src[eol - 1] != '\\')) ++eol;
      std::set<std::string> params;
      std::size_t k = i + 3;
      for (; k < toks.size() && toks[k].directive && !is_punct(toks[k], ")"); ++k)
        if (toks[k].kind == Token::ident) params.insert(toks[k].text);
      bool value = k < toks.size() && toks[k].directive && ++k < toks.size() && toks[k].directive &&
                   toks[k].begin < eol;
      for (std::size_t j = k; value && j < toks.size() && toks[j].directive && toks[j].begin < eol;
           ++j) {
        const Token& t = toks[j];
        const Token* p = j > k ? &toks[j - 1] : nullptr;
        const bool after_operand =
            p && (p->kind != Token::punct || is_punct(*p, ")") || is_punct(*p, "]"));
        const bool next_is =
            j + 1 < toks.size() && toks[j + 1].directive && toks[j + 1].begin == t.end;
        if (t.kind == Token::string) {
          value = false;
        } else if (t.kind == Token::ident) {
          const bool call = j + 1 < toks.size() && is_punct(toks[j + 1], "(");
          value = params.count(t.text) || is_keyword_type(t.text) || constants.count(t.text) ||
                  (out.count(t.text) && call);
          if (call && !is_keyword_type(t.text) && !out.count(t.text)) value = false;
        } else if (t.kind == Token::punct) {
          if (is_punct(t, "[") || is_punct(t, "{") || is_punct(t, ";") || is_punct(t, ".") ||
              is_punct(t, "#"))
            value = false;
          const bool logical_and =
              is_punct(t, "&") && ((next_is && is_punct(toks[j + 1], "&")) ||
                                   (p && is_punct(*p, "&") && p->end == t.begin));
          if ((is_punct(t, "&") || is_punct(t, "*")) && !after_operand && !logical_and)
            value = false;  // unary: an address, a dereference
          if (is_punct(t, "=") &&
              !(p && p->end == t.begin &&
                (is_punct(*p, "=") || is_punct(*p, "<") || is_punct(*p, ">") ||
                 is_punct(*p, "!"))) &&
              !(next_is && is_punct(toks[j + 1], "=")))
            value = false;  // an assignment
          if ((is_punct(t, "+") || is_punct(t, "-")) && next_is && is_punct(toks[j + 1], t.text))
            value = false;  // ++ or --
          if (is_punct(t, ">") && p && is_punct(*p, "-") && p->end == t.begin) value = false;
        }
      }
      if (value) grew = out.insert(toks[i + 1].text).second || grew;
    }
  }
  return out;
}

}  // namespace kiln::cpu::regions
