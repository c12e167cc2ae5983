// A light lexer over CUDA C++ text: identifiers, numbers, string and character literals (raw
// strings too) and punctuators, with their offsets and lines. Comments never produce tokens;
// preprocessor lines' tokens are marked. Punctuators are single characters except "::" (so ">>"
// stays two '>' and nested template lists close). Used by the kernel-declaration scan and by
// the cpu backend's source rewrites.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::jit {

struct Token {
  enum Kind { ident, number, string, punct } kind;
  std::string text;   // an identifier, number or punctuator; a string literal's contents
  std::size_t begin;  // offsets in the source, for whitespace-preserving type text
  std::size_t end;
  int line;        // 1-based
  bool directive;  // inside a preprocessor line
};

// All tokens of source, in order.
std::vector<Token> lex(std::string_view source);

// Whether t is the punctuator p / the identifier name.
inline bool is_punct(const Token& t, std::string_view p) {
  return t.kind == Token::punct && t.text == p;
}
inline bool is_ident(const Token& t, std::string_view name) {
  return t.kind == Token::ident && t.text == name;
}

// For each ( [ { of t (preprocessor lines skipped) the index of its closer, t.size() when it is
// never closed; t.size() for every other token.
std::vector<std::size_t> pair_groups(const std::vector<Token>& t);

}  // namespace kiln::jit
