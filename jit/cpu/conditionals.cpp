#include "jit/cpu/conditionals.h"

#include <cctype>
#include <cstdlib>
#include <optional>

#include "jit/kernel_decl.h"

namespace kiln::cpu {

namespace {

// A directive's logical line, [begin, end) (continuations included, not its '\n'): its keyword
// ("if", "ifdef", "define", ...) and the text after it, comments and continuations removed.
struct Directive {
  std::size_t begin, end;
  std::string keyword, rest;
};

bool blank(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}
bool word_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// The directive on the line that starts at offset at, if that line is one.
std::optional<Directive> directive_at(std::string_view s, std::size_t at) {
  std::size_t k = at;
  while (k < s.size() && blank(s[k])) ++k;
  if (k >= s.size() || s[k] != '#') return std::nullopt;
  ++k;
  while (k < s.size() && blank(s[k])) ++k;
  Directive d{at, at, "", ""};
  while (k < s.size() && word_char(s[k])) d.keyword += s[k++];
  std::size_t end = k;
  for (;;) {  // the logical line: a '\' before the newline continues it
    end = s.find('\n', end);
    if (end == std::string_view::npos) {
      end = s.size();
      break;
    }
    std::size_t last = end;
    while (last > k && s[last - 1] == '\r') --last;
    if (last == k || s[last - 1] != '\\') break;
    ++end;
  }
  d.end = end;
  for (std::size_t j = k; j < end; ++j) {
    if (s[j] == '\\' && j + 1 < end && (s[j + 1] == '\n' || s[j + 1] == '\r')) continue;
    if (s.substr(j, 2) == "//") break;
    if (s.substr(j, 2) == "/*") {
      const std::size_t close = s.find("*/", j + 2);
      if (close == std::string_view::npos || close >= end) break;
      d.rest += ' ';
      j = close + 1;
      continue;
    }
    d.rest += s[j] == '\n' || s[j] == '\r' ? ' ' : s[j];
  }
  return d;
}

// The offsets at which the lines of [from, to) start.
std::vector<std::size_t> line_starts(std::string_view s, std::size_t from, std::size_t to) {
  std::vector<std::size_t> starts;
  for (std::size_t at = from; at < to;) {
    starts.push_back(at);
    const std::size_t nl = s.find('\n', at);
    if (nl == std::string_view::npos) break;
    at = nl + 1;
  }
  return starts;
}

// The directives of [from, to), in order (a line that starts before from is not one).
std::vector<Directive> directives(std::string_view s, std::size_t from, std::size_t to) {
  std::vector<Directive> out;
  const std::size_t first = from == 0 ? 0 : s.find('\n', from - 1);
  if (first == std::string_view::npos) return out;
  for (std::size_t at : line_starts(s, from == 0 ? 0 : first + 1, to))
    if (auto d = directive_at(s, at); d && d->end <= to) out.push_back(std::move(*d));
  return out;
}

struct Unknown {};  // a condition tests what kiln does not know

// The value of a #if expression over known macros (C's integer arithmetic, in long long);
// throws Unknown at a name it does not know or a form it does not read.
class Condition {
 public:
  Condition(const std::map<std::string, std::string>& known, int depth)
      : known_(known), depth_(depth) {}

  long long evaluate(std::string_view text) {
    text_ = text;
    at_ = 0;
    const long long v = ternary();
    skip();
    if (at_ != text_.size()) throw Unknown{};
    return v;
  }

 private:
  void skip() {
    while (at_ < text_.size() && (blank(text_[at_]) || text_[at_] == '\n')) ++at_;
  }
  bool eat(std::string_view op) {
    skip();
    if (text_.substr(at_, op.size()) != op) return false;
    // "<" is not the start of "<<" or "<=", "&" of "&&", and so on.
    if (op.size() == 1 && at_ + 1 < text_.size()) {
      const char next = text_[at_ + 1];
      if ((op == "<" || op == ">") && (next == op[0] || next == '=')) return false;
      if ((op == "&" || op == "|") && next == op[0]) return false;
      if ((op == "!" || op == "=") && next == '=') return false;
    }
    at_ += op.size();
    return true;
  }
  std::string word() {
    skip();
    std::string w;
    while (at_ < text_.size() && word_char(text_[at_])) w += text_[at_++];
    return w;
  }
  long long ternary() {
    const long long c = binary(0);
    if (!eat("?")) return c;
    const long long a = ternary();
    if (!eat(":")) throw Unknown{};
    const long long b = ternary();
    return c ? a : b;
  }
  // The binary operators by precedence, loosest first; within a level, longer ones first (so
  // that "<=" is not read as "<").
  static constexpr std::string_view kLevels[][4] = {
      {"||"},       {"&&"},     {"|"},          {"^"}, {"&"}, {"==", "!="}, {"<=", ">=", "<", ">"},
      {"<<", ">>"}, {"+", "-"}, {"*", "/", "%"}};
  // An expression of operators of precedence level and tighter, left to right.
  long long binary(std::size_t level) {
    if (level == std::size(kLevels)) return unary();
    long long v = binary(level + 1);
    for (;;) {
      std::string_view op;
      for (std::string_view o : kLevels[level])
        if (!o.empty() && eat(o)) {
          op = o;
          break;
        }
      if (op.empty()) return v;
      if (op == "||" || op == "&&") {  // both sides are read, as they are pure here
        const long long w = binary(level + 1);
        v = op == "||" ? (v || w) : (v && w);
        continue;
      }
      v = apply(op, v, binary(level + 1));
    }
  }
  // v op w in C's integer arithmetic; throws Unknown where C's is undefined.
  static long long apply(std::string_view op, long long v, long long w) {
    if ((op == "/" || op == "%") && w == 0) throw Unknown{};
    if ((op == "<<" || op == ">>") && (w < 0 || w > 62)) throw Unknown{};
    if (op == "|") return v | w;
    if (op == "^") return v ^ w;
    if (op == "&") return v & w;
    if (op == "==") return v == w;
    if (op == "!=") return v != w;
    if (op == "<=") return v <= w;
    if (op == ">=") return v >= w;
    if (op == "<") return v < w;
    if (op == ">") return v > w;
    if (op == "<<") return v << w;
    if (op == ">>") return v >> w;
    if (op == "+") return v + w;
    if (op == "-") return v - w;
    if (op == "*") return v * w;
    return op == "/" ? v / w : v % w;
  }
  long long unary() {
    if (eat("!")) return !unary();
    if (eat("~")) return ~unary();
    if (eat("-")) return -unary();
    if (eat("+")) return unary();
    return primary();
  }
  long long primary() {
    skip();
    if (eat("(")) {
      const long long v = ternary();
      if (!eat(")")) throw Unknown{};
      return v;
    }
    if (at_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[at_]))) {
      const std::string digits = word();  // with its suffix: 800, 0x10, 1u, 2L
      char* end = nullptr;
      const long long v = std::strtoll(digits.c_str(), &end, 0);
      for (; *end; ++end)
        if (std::string_view("uUlL").find(*end) == std::string_view::npos) throw Unknown{};
      return v;
    }
    const std::string name = word();
    if (name.empty()) throw Unknown{};
    if (name == "true") return 1;
    if (name == "false") return 0;
    if (name == "defined") {
      const bool paren = eat("(");
      const std::string macro = word();
      if (macro.empty() || (paren && !eat(")"))) throw Unknown{};
      if (!known_.count(macro)) throw Unknown{};  // a header may define it
      return 1;
    }
    auto it = known_.find(name);
    if (it == known_.end() || it->second.empty() || depth_ >= 8) throw Unknown{};
    return Condition(known_, depth_ + 1).evaluate(it->second);
  }

  const std::map<std::string, std::string>& known_;
  int depth_;
  std::string_view text_;
  std::size_t at_ = 0;
};

// Whether the branch a directive opens is taken: nullopt when it is not known.
std::optional<bool> taken(const Directive& d, const std::map<std::string, std::string>& known) {
  try {
    if (d.keyword == "else") return true;
    if (d.keyword == "ifdef" || d.keyword == "ifndef") {
      std::size_t b = d.rest.find_first_not_of(" \t");
      if (b == std::string::npos) return std::nullopt;
      std::size_t e = b;
      while (e < d.rest.size() && word_char(d.rest[e])) ++e;
      if (!known.count(d.rest.substr(b, e - b))) return std::nullopt;
      return d.keyword == "ifdef";
    }
    return Condition(known, 0).evaluate(d.rest) != 0;
  } catch (const Unknown&) {
    return std::nullopt;
  }
}

// Blanks [begin, end) of out, keeping its line breaks.
void blank_out(std::string& out, std::size_t begin, std::size_t end) {
  for (std::size_t k = begin; k < end && k < out.size(); ++k)
    if (out[k] != '\n') out[k] = ' ';
}

// Resolves the conditional groups of the directives ds (one kernel body's) into out.
void resolve(const std::vector<Directive>& ds, const std::map<std::string, std::string>& known,
             std::string& out) {
  std::vector<std::vector<std::size_t>> open;  // each open group: its directives' indices
  for (std::size_t i = 0; i < ds.size(); ++i) {
    const std::string& k = ds[i].keyword;
    if (k == "if" || k == "ifdef" || k == "ifndef") {
      open.push_back({i});
    } else if (k == "elif" || k == "else") {
      if (open.empty()) return;  // unbalanced within the body: left as written
      open.back().push_back(i);
    } else if (k == "endif") {
      if (open.empty()) return;
      std::vector<std::size_t> group = std::move(open.back());
      open.pop_back();
      group.push_back(i);
      // The first branch taken; every condition before it must be known.
      std::optional<std::size_t> branch;
      bool known_group = true;
      for (std::size_t b = 0; b + 1 < group.size() && !branch; ++b) {
        std::optional<bool> t = taken(ds[group[b]], known);
        if (!t) known_group = false;
        if (!known_group) break;
        if (*t) branch = b;
      }
      if (!known_group) continue;
      for (std::size_t b = 0; b + 1 < group.size(); ++b) {
        blank_out(out, ds[group[b]].begin, ds[group[b]].end);
        if (branch != b) blank_out(out, ds[group[b]].end, ds[group[b + 1]].begin);
      }
      blank_out(out, ds[group.back()].begin, ds[group.back()].end);
    }
  }
}

// Adds the value macros the file-level directives ds define to known, and removes those they
// undefine or define under a condition or with parameters; depth counts the conditionals open.
void absorb_defines(const std::vector<Directive>& ds, int& depth,
                    std::map<std::string, std::string>& known) {
  for (const Directive& d : ds) {
    if (d.keyword == "if" || d.keyword == "ifdef" || d.keyword == "ifndef") ++depth;
    if (d.keyword == "endif" && depth > 0) --depth;
    if (d.keyword != "define" && d.keyword != "undef") continue;
    std::size_t b = d.rest.find_first_not_of(" \t"), e = b;
    if (b == std::string::npos) continue;
    while (e < d.rest.size() && word_char(d.rest[e])) ++e;
    const std::string name = d.rest.substr(b, e - b);
    const bool function_like = e < d.rest.size() && d.rest[e] == '(';
    if (d.keyword == "undef" || depth > 0 || function_like) {
      known.erase(name);
      continue;
    }
    const std::size_t first = d.rest.find_first_not_of(" \t", e);
    const std::size_t last = d.rest.find_last_not_of(" \t");
    known[name] = first == std::string::npos ? "" : d.rest.substr(first, last + 1 - first);
  }
}

}  // namespace

std::map<std::string, std::string> known_macros(const std::vector<std::string>& options,
                                                int cuda_arch) {
  std::map<std::string, std::string> known{{"__CUDACC__", "1"},
                                           {"__CUDA_ARCH__", std::to_string(cuda_arch)}};
  for (const std::string& o : options) {
    if (o.starts_with("-D") && o.size() > 2) {
      const std::size_t eq = o.find('=');
      known[o.substr(2, eq == std::string::npos ? std::string::npos : eq - 2)] =
          eq == std::string::npos ? "1" : o.substr(eq + 1);
    } else if (o.starts_with("-U")) {
      known.erase(o.substr(2));
    }
  }
  return known;
}

std::string resolve_kernel_conditionals(std::string_view source,
                                        std::map<std::string, std::string> known) {
  std::string out(source);
  if (source.find('#') == std::string_view::npos) return out;
  std::size_t scanned = 0;
  int depth = 0;
  for (const jit::KernelBody& body : jit::find_kernel_bodies(source)) {
    if (body.open < scanned || body.close > source.size()) continue;
    absorb_defines(directives(source, scanned, body.open), depth, known);
    if (depth == 0) resolve(directives(source, body.open + 1, body.close), known, out);
    scanned = body.close;
  }
  return out;
}

}  // namespace kiln::cpu
