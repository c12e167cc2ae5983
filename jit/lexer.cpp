#include "jit/lexer.h"

#include <cctype>

namespace kiln::jit {
namespace {

// Whether c may start (or continue) an identifier.
bool ident_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '$';
}
bool ident_char(char c) {
  return ident_start(c) || std::isdigit(static_cast<unsigned char>(c));
}

class Lexer {
 public:
  explicit Lexer(std::string_view src) : s_(src) {}

  // All tokens of the source, preprocessor lines' tokens marked as such.
  std::vector<Token> run() {
    std::vector<Token> out;
    bool line_start = true;  // only blanks seen since the last newline
    bool in_directive = false;
    while (i_ < s_.size()) {
      char c = s_[i_];
      if (c == '\n') {
        if (in_directive) in_directive = false;
        ++line_;
        ++i_;
        line_start = true;
        continue;
      }
      if (c == '\\' && i_ + 1 < s_.size() && (s_[i_ + 1] == '\n' || s_[i_ + 1] == '\r')) {
        i_ += s_[i_ + 1] == '\r' && i_ + 2 < s_.size() && s_[i_ + 2] == '\n' ? 3 : 2;
        ++line_;  // a continuation keeps the directive (and line_start) going
        continue;
      }
      if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
        ++i_;
        continue;
      }
      if (c == '/' && peek(1) == '/') {
        skip_line_comment();
        continue;
      }
      if (c == '/' && peek(1) == '*') {
        skip_block_comment();
        continue;
      }
      if (c == '#' && line_start) {
        in_directive = true;
        line_start = false;
        ++i_;
        continue;
      }
      line_start = false;
      std::size_t begin = i_;
      int line = line_;
      if (raw_string_start()) {
        out.push_back({Token::string, read_raw_string(), begin, i_, line, in_directive});
      } else if (c == '"' || c == '\'') {
        // An encoding prefix (u8, L, u, U) was lexed as an identifier: harmless.
        out.push_back({Token::string, read_quoted(c), begin, i_, line, in_directive});
      } else if (ident_start(c)) {
        while (i_ < s_.size() && ident_char(s_[i_])) ++i_;
        out.push_back({Token::ident, std::string(s_.substr(begin, i_ - begin)), begin, i_, line,
                       in_directive});
      } else if (std::isdigit(static_cast<unsigned char>(c)) ||
                 (c == '.' && std::isdigit(static_cast<unsigned char>(peek(1))))) {
        read_number();
        out.push_back({Token::number, std::string(s_.substr(begin, i_ - begin)), begin, i_, line,
                       in_directive});
      } else if (c == ':' && peek(1) == ':') {
        i_ += 2;
        out.push_back({Token::punct, "::", begin, i_, line, in_directive});
      } else {
        ++i_;  // single characters: ">>" stays two '>' so nested template lists close
        out.push_back({Token::punct, std::string(1, c), begin, i_, line, in_directive});
      }
    }
    return out;
  }

 private:
  char peek(std::size_t k) const { return i_ + k < s_.size() ? s_[i_ + k] : '\0'; }

  // Skips "// ..." up to (not including) the newline; a trailing backslash continues it.
  void skip_line_comment() {
    while (i_ < s_.size() && s_[i_] != '\n') {
      if (s_[i_] == '\\' && peek(1) == '\n') {
        ++line_;
        i_ += 2;
        continue;
      }
      ++i_;
    }
  }

  // Skips "/* ... */", counting the newlines inside.
  void skip_block_comment() {
    i_ += 2;
    while (i_ < s_.size() && !(s_[i_] == '*' && peek(1) == '/')) {
      if (s_[i_] == '\n') ++line_;
      ++i_;
    }
    i_ = i_ < s_.size() ? i_ + 2 : s_.size();
  }

  // Whether a raw string literal (R"x(, u8R"x(, LR"x(, ...) starts here.
  bool raw_string_start() const {
    std::size_t k = i_;
    if (k > 0 && ident_char(s_[k - 1])) return false;
    for (std::string_view p : {"u8R\"", "uR\"", "UR\"", "LR\"", "R\""})
      if (s_.substr(k, p.size()) == p) return true;
    return false;
  }

  // Reads a raw string literal; returns its contents.
  std::string read_raw_string() {
    while (s_[i_] != '"') ++i_;
    ++i_;
    std::size_t open = s_.find('(', i_);
    if (open == std::string_view::npos) {
      i_ = s_.size();
      return {};
    }
    std::string close(1, ')');  // ")delim\"" (built piecewise: GCC 12 -Wrestrict false alarm)
    close.append(s_.substr(i_, open - i_));
    close.push_back('"');
    std::size_t end = s_.find(close, open + 1);
    if (end == std::string_view::npos) end = s_.size();
    std::string body(s_.substr(open + 1, end - open - 1));
    for (char ch : body) line_ += ch == '\n';
    i_ = end == s_.size() ? end : end + close.size();
    return body;
  }

  // Reads a "..." or '...' literal with escapes; stops at an unescaped newline (unterminated).
  std::string read_quoted(char quote) {
    std::string body;
    ++i_;
    while (i_ < s_.size() && s_[i_] != quote && s_[i_] != '\n') {
      if (s_[i_] == '\\' && i_ + 1 < s_.size()) {
        if (s_[i_ + 1] == '\n') ++line_;
        body += s_[i_ + 1];
        i_ += 2;
        continue;
      }
      body += s_[i_++];
    }
    if (i_ < s_.size() && s_[i_] == quote) ++i_;
    return body;
  }

  // Reads a pp-number: digits, letters, '.', digit separators and exponent signs.
  void read_number() {
    while (i_ < s_.size()) {
      char c = s_[i_];
      if ((c == '+' || c == '-') && i_ > 0 &&
          (s_[i_ - 1] == 'e' || s_[i_ - 1] == 'E' || s_[i_ - 1] == 'p' || s_[i_ - 1] == 'P')) {
        ++i_;
      } else if (ident_char(c) || c == '.' || (c == '\'' && ident_char(peek(1)))) {
        ++i_;
      } else {
        break;
      }
    }
  }

  std::string_view s_;
  std::size_t i_ = 0;
  int line_ = 1;
};

}  // namespace

std::vector<Token> lex(std::string_view source) {
  return Lexer(source).run();
}

std::vector<std::size_t> pair_groups(const std::vector<Token>& t) {
  std::vector<std::size_t> match(t.size(), t.size()), open;
  for (std::size_t k = 0; k < t.size(); ++k) {
    if (t[k].kind != Token::punct || t[k].directive) continue;
    if (t[k].text == "(" || t[k].text == "[" || t[k].text == "{") open.push_back(k);
    if ((t[k].text == ")" || t[k].text == "]" || t[k].text == "}") && !open.empty()) {
      match[open.back()] = k;
      open.pop_back();
    }
  }
  return match;
}

}  // namespace kiln::jit
