// Warp-synchronous stores split around __syncwarp() (lockstep_stores.h), over jit/lexer.h's
// tokens: for each lockstep pointer, parse the function holding it statement by statement,
// collect the stores through it, and rewrite them all or none.
#include "jit/cpu/lockstep_stores.h"

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

struct Edit {
  std::size_t begin, end;
  std::string text;
};

// The barrier a split store emits, marked so that keeps_split_stores can find it.
constexpr std::string_view kSplitSync = "__syncwarp(/*kiln: split store*/)";

// Whether t[k...] is an assignment operator (`=`, `+=`, `<<=`) or `++`/`--`; *width its tokens.
bool assignment_at(const std::vector<Token>& t, std::size_t k, std::size_t* width = nullptr) {
  const std::size_t w = jit::assignment_width(t, k);
  if (width) *width = w;
  return w != 0;
}

// One lockstep pointer's stores, rewritten over the function body holding it.
class Splitter {
 public:
  Splitter(std::string_view src, const std::vector<Token>& t, const std::vector<std::size_t>& match,
           const jit::LockstepPointer& p, int serial)
      : src_(src), t_(t), match_(match), p_(p), name_(t[p.name].text), serial_(serial) {}

  // The edits that split every store through the pointer, or nullopt where one cannot be.
  std::optional<std::vector<Edit>> run() {
    const std::size_t body = function_body();
    if (body >= t_.size() || match_[body] >= t_.size()) return std::nullopt;
    declared_in_function(body);
    if (!only_subscripted(body) || in_a_macro()) return std::nullopt;
    statements(body + 1, match_[body], true);
    if (failed_ || edits_.empty()) return std::nullopt;
    return std::move(edits_);
  }

  // The '{' of the function body holding the pointer: a parameter's, or the outermost brace
  // after a ')' around a local (t.size() if none).
  std::size_t function_body() const {
    if (p_.body) return p_.body;
    for (std::size_t k = 1; k < p_.name; ++k)
      if (is_punct(t_[k], "{") && !t_[k].directive && match_[k] < t_.size() &&
          match_[k] > p_.name && is_punct(t_[k - 1], ")"))
        return k;
    return t_.size();
  }

 private:
  // Names the function declares (locals and parameters): each identifier after a type word, a
  // '*' or a '&', from its parameter list's '(' to its body's '}'.
  void declared_in_function(std::size_t body) {
    std::size_t from = body;
    if (body > 0 && is_punct(t_[body - 1], ")"))
      for (std::size_t k = body - 1; k-- > 0;)
        if (is_punct(t_[k], "(") && match_[k] == body - 1) {
          from = k;
          break;
        }
    static const std::set<std::string> not_types{"return", "case",   "else",  "goto", "sizeof",
                                                 "new",    "delete", "throw", "do"};
    for (std::size_t k = from + 1; k < match_[body]; ++k)
      if (t_[k].kind == Token::ident && !t_[k].directive &&
          ((t_[k - 1].kind == Token::ident && !not_types.count(t_[k - 1].text)) ||
           is_punct(t_[k - 1], "*") || is_punct(t_[k - 1], "&")))
        declared_.insert(t_[k].text);
  }

  // Parses the statements in [k, end); lockstep: whether every lane that reaches them runs
  // them the same number of times (no loop between that lanes may leave apart).
  void statements(std::size_t k, std::size_t end, bool lockstep) {
    while (k < end && !failed_) k = statement(k, end, lockstep);
  }

  // Parses the statement at k; returns one past it.
  std::size_t statement(std::size_t k, std::size_t end, bool lockstep) {
    const Token& w = t_[k];
    auto header = [&](std::size_t open) {  // a header's '(' must close before end
      if (open >= end || !is_punct(t_[open], "(") || match_[open] >= end) failed_ = true;
      return failed_ ? end : match_[open];
    };
    if (w.directive) return k + 1;
    if (is_punct(w, "{")) {
      if (match_[k] >= end) return failed_ = true, end;
      statements(k + 1, match_[k], lockstep);
      return match_[k] + 1;
    }
    if (is_ident(w, "if")) {
      const std::size_t open = k + 1 + (k + 1 < end && is_ident(t_[k + 1], "constexpr"));
      const std::size_t close = header(open);
      no_store(open, close);
      std::size_t next = close < end ? statement(close + 1, end, lockstep) : end;
      if (next < end && is_ident(t_[next], "else")) next = statement(next + 1, end, lockstep);
      return next;
    }
    if (is_ident(w, "for")) {
      const std::size_t close = header(k + 1);
      no_store(k + 1, close);
      if (close >= end) return end;
      const std::size_t next =
          statement(close + 1, end, lockstep && header_same_in_lanes(k + 1, close));
      if (!failed_ && stores(close + 1, next) && steps_loop(k + 1, close, next)) failed_ = true;
      return next;
    }
    if (is_ident(w, "while") || is_ident(w, "switch")) {
      const std::size_t close = header(k + 1);
      no_store(k + 1, close);
      return close < end ? statement(close + 1, end, false) : end;
    }
    if (is_ident(w, "do")) {
      const std::size_t next = statement(k + 1, end, false);
      if (next >= end || !is_ident(t_[next], "while")) return failed_ = true, end;
      const std::size_t close = header(next + 1);
      no_store(next + 1, close);
      return close + 2 <= end ? close + 2 : end;  // (past `);`)
    }
    if (is_ident(w, "case") || is_ident(w, "default") ||
        (w.kind == Token::ident && k + 1 < end && is_punct(t_[k + 1], ":") &&
         !(k + 2 < end && is_punct(t_[k + 2], ":")))) {
      std::size_t colon = k + 1;
      while (colon < end && !is_punct(t_[colon], ":")) ++colon;
      return colon + 1;
    }
    std::size_t semi = k;  // a simple statement: to its ';', past bracket groups
    while (semi < end && !is_punct(t_[semi], ";"))
      semi = (is_punct(t_[semi], "(") || is_punct(t_[semi], "[") || is_punct(t_[semi], "{")) &&
                     match_[semi] < end
                 ? match_[semi] + 1
                 : semi + 1;
    if (semi >= end) return failed_ = true, end;
    simple(k, semi, lockstep);
    return semi + 1;
  }

  // The token after the pointer's subscripts (or after the name itself) at k.
  std::size_t past_subscripts(std::size_t k) const {
    std::size_t after = k + 1;
    while (after < t_.size() && is_punct(t_[after], "[") && match_[after] < t_.size())
      after = match_[after] + 1;
    return after;
  }

  // Whether token k names the pointer (not a member or another scope's name).
  bool names_pointer(std::size_t k) const {
    return is_ident(t_[k], name_) &&
           !(k > 0 && (is_punct(t_[k - 1], ".") || is_punct(t_[k - 1], "::") ||
                       (k > 1 && is_punct(t_[k - 1], ">") && is_punct(t_[k - 2], "-"))));
  }

  // Whether the function body at body names the pointer only as `P[...]` (besides its
  // declaration): a store through `*(P + i)`, an alias or a callee is one the split cannot see.
  // A read through a C-style cast (`((int*)s)[0]`, to drop the volatile) is one too.
  bool only_subscripted(std::size_t body) const {
    const std::size_t from = p_.body ? p_.name + 1 : body + 1;
    for (std::size_t k = from; k < match_[body]; ++k)
      if (k != p_.name && names_pointer(k) && !is_punct(t_[k + 1], "[") && !cast_read(k))
        return false;
    return true;
  }

  // Whether the pointer at k is read through a cast: `((T*)P)[i]` not assigned.
  bool cast_read(std::size_t k) const {
    if (!is_punct(t_[k - 1], ")") || !is_punct(t_[k + 1], ")") || !is_punct(t_[k + 2], "["))
      return false;
    std::size_t after = k + 2;
    while (after < t_.size() && is_punct(t_[after], "[") && match_[after] < t_.size())
      after = match_[after] + 1;
    return !assignment_at(t_, after);
  }

  // Whether a directive names the pointer (a macro that may store through it, unseen).
  bool in_a_macro() const {
    return std::any_of(t_.begin(), t_.end(),
                       [&](const Token& x) { return x.directive && x.text == name_; });
  }

  // Whether [b, e) reads the pointer or calls a function: a subscript the split evaluates
  // twice (before the lanes' barrier and after it) must give the same element both times.
  bool varies_between(std::size_t b, std::size_t e) const {
    for (std::size_t k = b; k < e; ++k)
      if (names_pointer(k) || (t_[k].kind == Token::ident && is_punct(t_[k + 1], "(") &&
                               !regions::is_keyword_type(t_[k].text)))
        return true;
    return false;
  }

  // Whether [b, e) has a comma outside brackets (`s[t] = v, d = 7;`: two expressions).
  bool comma(std::size_t b, std::size_t e) const {
    for (std::size_t k = b; k < e; ++k) {
      if ((is_punct(t_[k], "(") || is_punct(t_[k], "[") || is_punct(t_[k], "{")) && match_[k] < e)
        k = match_[k];
      else if (is_punct(t_[k], ","))
        return true;
    }
    return false;
  }

  // Whether [b, e) stores through the pointer (a subscript or `*p` assigned or stepped).
  bool stores(std::size_t b, std::size_t e) const {
    for (std::size_t k = b; k < e; ++k)
      if (k != p_.name && names_pointer(k) && assignment_at(t_, past_subscripts(k))) return true;
    return false;
  }
  void no_store(std::size_t b, std::size_t e) {
    if (stores(b, std::min(e, t_.size()))) failed_ = true;
  }

  // The statement [b, semi): a store through the pointer at its start becomes an edit (a
  // lockstep one); any other store fails the pointer.
  void simple(std::size_t b, std::size_t semi, bool lockstep) {
    if (!stores(b, semi)) return;
    const std::size_t op = past_subscripts(b);
    std::size_t width = 0;
    const std::size_t subscripts = op - b - 1;
    if (!lockstep || !names_pointer(b) || subscripts == 0 || !assignment_at(t_, op, &width) ||
        (is_punct(t_[op], "+") && is_punct(t_[op + 1], "+")) ||  // (`P[i]++`)
        (is_punct(t_[op], "-") && is_punct(t_[op + 1], "-")) || stores(op + width, semi) ||
        steps(b + 1, op) || stores(b + 1, op) || varies_between(b + 1, op) || comma(b, semi) ||
        elements_of(b) != extents())
      return void(failed_ = true);
    const std::string target = text(b, op), value = text(op + width, semi);
    const std::string compound = width > 1 ? text(op, op + width - 1) : "";
    const std::string temp =
        "kiln_ls" + std::to_string(serial_) + "_" + std::to_string(edits_.size()) + "_";
    std::string out = "{ " + element_type() + " " + temp + " = " +
                      (compound.empty() ? value : target + " " + compound + " (" + value + ")") +
                      "; " + std::string(kSplitSync) + "; " + target + " = " + temp + "; " +
                      std::string(kSplitSync) + "; }";
    const std::size_t begin = t_[b].begin, end = t_[semi].end;
    out += std::string(std::count(src_.begin() + begin, src_.begin() + end, '\n'), '\n');
    edits_.push_back({begin, end, std::move(out)});
  }

  // Whether [b, e) assigns or steps anything (a subscript evaluated twice must not).
  bool steps(std::size_t b, std::size_t e) const {
    for (std::size_t k = b; k < e; ++k)
      if (assignment_at(t_, k) &&
          !(k > b && (is_punct(t_[k - 1], "=") || is_punct(t_[k - 1], "!") ||
                      is_punct(t_[k - 1], "<") || is_punct(t_[k - 1], ">"))))
        return true;
    return false;
  }

  // The subscripts of the access at k, and the pointer's (1, or an array's extents).
  std::size_t elements_of(std::size_t k) const {
    std::size_t n = 0;
    for (std::size_t a = k + 1; a < t_.size() && is_punct(t_[a], "[") && match_[a] < t_.size();
         a = match_[a] + 1)
      ++n;
    return n;
  }
  std::size_t extents() const {
    if (!p_.array) return 1;
    std::size_t n = 0;
    for (std::size_t a = p_.name + 1; a <= p_.last && is_punct(t_[a], "["); a = match_[a] + 1) ++n;
    return n;
  }

  // The element's type: the declaration's words but its qualifiers and storage.
  std::string element_type() const {
    std::string type;
    for (std::size_t k = p_.first; k < (p_.array ? p_.name : p_.last); ++k) {
      if (is_ident(t_[k], "volatile") || is_ident(t_[k], "const") ||
          is_ident(t_[k], "__shared__") || is_ident(t_[k], "static") || is_ident(t_[k], "extern"))
        continue;
      if (!type.empty()) type += ' ';
      type += std::string(src_.substr(t_[k].begin, t_[k].end - t_[k].begin));
    }
    return type;
  }

  // The tokens [b, e) as text on one line, spaced where the source spaces them (no comments).
  std::string text(std::size_t b, std::size_t e) const {
    std::string out;
    for (std::size_t k = b; k < e; ++k) {
      if (k > b && t_[k].begin > t_[k - 1].end) out += ' ';
      out += src_.substr(t_[k].begin, t_[k].end - t_[k].begin);
    }
    return out;
  }

  // The variables a `for` header (open, close) declares or assigns in its first part.
  std::set<std::string> loop_variables(std::size_t open, std::size_t close) const {
    std::set<std::string> own;
    for (std::size_t k = open + 1; k + 1 < close && !is_punct(t_[k], ";"); ++k)
      if (t_[k].kind == Token::ident && is_punct(t_[k + 1], "=")) own.insert(t_[k].text);
    return own;
  }

  // Whether a `for` header (open, close) is the same in every lane: it names only its own
  // variables, numbers, blockDim, gridDim, warpSize, and names the function does not declare.
  bool header_same_in_lanes(std::size_t open, std::size_t close) const {
    static const std::set<std::string> uniform{"blockDim", "gridDim", "warpSize", "sizeof"};
    const std::set<std::string> own = loop_variables(open, close);
    for (std::size_t k = open + 1; k < close; ++k) {
      if (t_[k].kind != Token::ident || is_punct(t_[k - 1], ".")) continue;
      const std::string& n = t_[k].text;
      if (!own.count(n) && !uniform.count(n) && !regions::is_keyword_type(n) &&
          !regions::is_qualifier(n) && declared_.count(n))
        return false;
    }
    return true;
  }

  // Whether a loop's body (close, next) assigns or steps a variable of its header (open, close).
  bool steps_loop(std::size_t open, std::size_t close, std::size_t next) const {
    const std::set<std::string> own = loop_variables(open, close);
    for (std::size_t k = close + 1; k < next && k < t_.size(); ++k)
      if (t_[k].kind == Token::ident && own.count(t_[k].text) && !is_punct(t_[k - 1], ".") &&
          (assignment_at(t_, k + 1) || (is_punct(t_[k - 1], "+") && is_punct(t_[k - 2], "+")) ||
           (is_punct(t_[k - 1], "-") && is_punct(t_[k - 2], "-"))))
        return true;
    return false;
  }

  std::string_view src_;
  const std::vector<Token>& t_;
  const std::vector<std::size_t>& match_;
  const jit::LockstepPointer& p_;
  const std::string& name_;
  int serial_;
  std::set<std::string> declared_;
  std::vector<Edit> edits_;
  bool failed_ = false;
};

}  // namespace

std::string split_lockstep_stores(std::string_view source) {
  if (source.find("volatile") == std::string_view::npos) return std::string(source);
  const std::vector<Token> t = jit::lex(source);
  const std::vector<std::size_t> match = jit::pair_groups(t);
  // A function's pointers are split together or not at all: one left as written makes its
  // kernel a lockstep pointers' (fibers), whose region rewrite must not meet split stores.
  struct Function {
    bool kept = false;
    std::vector<Edit> edits;
  };
  std::map<std::size_t, Function> functions;  // by body '{'
  int serial = 0;
  for (const jit::LockstepPointer& p : jit::lockstep_pointers(t)) {
    Splitter splitter(source, t, match, p, serial++);
    Function& f = functions[splitter.function_body()];
    if (auto split = splitter.run())
      f.edits.insert(f.edits.end(), split->begin(), split->end());
    else
      f.kept = true;
  }
  std::vector<Edit> edits;
  for (auto& [body, f] : functions)
    if (!f.kept) edits.insert(edits.end(), f.edits.begin(), f.edits.end());
  std::sort(edits.begin(), edits.end(),
            [](const Edit& a, const Edit& b) { return a.begin < b.begin; });
  return apply_edits(source, edits);
}

bool keeps_split_stores(std::string_view source) {
  return source.find(kSplitSync) != std::string_view::npos;
}

}  // namespace kiln::cpu
