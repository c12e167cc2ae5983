// Block barriers lowered (block_barriers.h), over jit/lexer.h's tokens: name the barrier types
// and aliases, the shared variables of those types, then account for every token that names a
// variable; one use of another kind and the source stays as written.
#include "jit/cpu/block_barriers.h"

#include <algorithm>
#include <set>
#include <vector>

#include "jit/cpu/edits.h"
#include "jit/lexer.h"

namespace kiln::cpu {
namespace {

using jit::is_ident;
using jit::is_punct;
using jit::Token;

constexpr const char* kType = "::kiln_cpu::block_barrier";

struct Edit {
  std::size_t begin, end;
  std::string text;
};

class Lowering {
 public:
  explicit Lowering(std::string_view source) : src_(source), t_(jit::lex(source)) {
    for (int s = 0; s < 12; ++s)  // sentinels: lookahead stays in range
      t_.push_back({Token::punct, "", source.size(), source.size(), 0, false});
  }

  std::string run() {
    if (!find_types() || !find_variables() || variables_.empty() || !uses())
      return std::string(src_);
    std::sort(edits_.begin(), edits_.end(),
              [](const Edit& a, const Edit& b) { return a.begin < b.begin; });
    return apply_edits(src_, edits_);
  }

 private:
  bool punct(std::size_t k, std::string_view p) const { return is_punct(t_[k], p); }

  // One past `[::]cuda::barrier<[::]cuda::thread_scope_block>` at k, or 0.
  std::size_t block_barrier_type(std::size_t k) const {
    if (punct(k, "::")) ++k;
    if (!is_ident(t_[k], "cuda") || !punct(k + 1, "::") || !is_ident(t_[k + 2], "barrier") ||
        !punct(k + 3, "<"))
      return 0;
    std::size_t s = k + 4 + (punct(k + 4, "::") ? 1 : 0);
    if (!is_ident(t_[s], "cuda") || !punct(s + 1, "::") ||
        !is_ident(t_[s + 2], "thread_scope_block") || !punct(s + 3, ">"))
      return 0;
    return s + 4;
  }

  // Every `cuda::barrier<...>` becomes kType (any other scope: false); `using A = <it>;` and
  // `typedef <it> A;` name aliases.
  bool find_types() {
    for (std::size_t k = 0; k + 12 < t_.size(); ++k) {
      if (t_[k].directive || !is_ident(t_[k + (punct(k, "::") ? 1 : 0)], "cuda")) continue;
      const std::size_t start = k;
      const std::size_t name = k + (punct(k, "::") ? 1 : 0);
      if (!punct(name + 1, "::") || !is_ident(t_[name + 2], "barrier")) continue;
      const std::size_t end = block_barrier_type(start);
      if (end == 0) return false;  // a barrier of another scope, or unread
      edits_.push_back({t_[start].begin, t_[end - 1].end, kType});
      if (start >= 3 && is_ident(t_[start - 3], "using") && punct(start - 1, "=") &&
          punct(end, ";"))
        types_.insert(t_[start - 2].text);
      if (start >= 1 && is_ident(t_[start - 1], "typedef") && t_[end].kind == Token::ident &&
          punct(end + 1, ";"))
        types_.insert(t_[end].text);
      k = end - 1;
    }
    return !edits_.empty();
  }

  // The shared variables of those types: `[static] __shared__ T name;` (or `T __shared__`).
  bool find_variables() {
    for (std::size_t k = 0; k + 3 < t_.size(); ++k) {
      if (t_[k].directive || !is_ident(t_[k], "__shared__")) continue;
      std::size_t j = k + 1;
      if (is_ident(t_[j], "static")) ++j;
      std::size_t name = 0;
      if (types_.count(t_[j].text) && t_[j].kind == Token::ident) {
        name = j + 1;
      } else if (std::size_t end = block_barrier_type(j)) {
        name = end;
      } else {
        continue;
      }
      if (t_[name].kind != Token::ident || !punct(name + 1, ";")) return false;
      variables_.insert(t_[name].text);
      declarations_.insert(name);
    }
    return true;
  }

  // Whether every use of the variables is one of the lowering's forms (edits made for them).
  bool uses() {
    for (std::size_t k = 1; k + 8 < t_.size(); ++k) {
      if (t_[k].kind != Token::ident || !variables_.count(t_[k].text) || declarations_.count(k) ||
          punct(k - 1, ".") || punct(k - 1, "::") || (punct(k - 1, ">") && punct(k - 2, "-")))
        continue;
      const bool statement_start = punct(k - 1, ";") || punct(k - 1, "{") || punct(k - 1, "}") ||
                                   punct(k - 1, ")") || is_ident(t_[k - 1], "else") ||
                                   t_[k - 1].directive;
      // init(&bar, count);
      if (punct(k - 1, "&") && punct(k - 2, "(") && is_ident(t_[k - 3], "init") &&
          punct(k + 1, ","))
        continue;
      if (!punct(k + 1, ".")) return false;
      const std::string& member = t_[k + 2].text;
      // T token = bar.arrive();
      if (member == "arrive" && punct(k + 3, "(") && punct(k + 4, ")") && punct(k + 5, ";") &&
          punct(k - 1, "="))
        continue;
      std::size_t semi = 0;
      if (member == "arrive_and_wait" && punct(k + 3, "(") && punct(k + 4, ")") &&
          punct(k + 5, ";")) {
        semi = k + 5;
      } else if (member == "wait" && punct(k + 3, "(")) {  // bar.wait(std::move(token));
        int depth = 0;
        std::size_t j = k + 3;
        for (; j < t_.size(); ++j) {
          if (punct(j, "(")) ++depth;
          if (punct(j, ")") && --depth == 0) break;
        }
        if (j + 1 >= t_.size() || !punct(j + 1, ";")) return false;
        semi = j + 1;
      } else {
        return false;
      }
      if (!statement_start) return false;
      edits_.push_back({t_[k].begin, t_[semi].end,
                        "{ " + t_[k].text + ".kiln_whole_block(); __syncthreads(); }" +
                            newlines(t_[k].begin, t_[semi].end)});
    }
    return true;
  }

  // The newlines of source [b, e), to keep lines where that text is replaced.
  std::string newlines(std::size_t b, std::size_t e) const {
    return std::string(std::count(src_.begin() + b, src_.begin() + e, '\n'), '\n');
  }

  std::string_view src_;
  std::vector<Token> t_;
  std::set<std::string> types_, variables_;
  std::set<std::size_t> declarations_;
  std::vector<Edit> edits_;
};

}  // namespace

std::string lower_block_barriers(std::string_view source) {
  if (source.find("barrier") == std::string_view::npos) return std::string(source);
  return Lowering(source).run();
}

}  // namespace kiln::cpu
