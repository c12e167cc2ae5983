#include "jit/cpu/header_votes.h"

#include <algorithm>
#include <vector>

#include "jit/cpu/edits.h"
#include "jit/lexer.h"

namespace kiln::cpu {
namespace {

using jit::is_ident;
using jit::is_punct;
using jit::Token;

bool is_vote(const Token& t) {
  return is_ident(t, "__syncthreads_or") || is_ident(t, "__syncthreads_and") ||
         is_ident(t, "__syncthreads_count");
}

class Hoister {
 public:
  explicit Hoister(std::string_view source)
      : s_(source), t_(jit::lex(source)), closer_(jit::pair_groups(t_)) {}

  std::string run() {
    // (a goto may jump past a hoisted if's declaration: those ifs stay)
    const bool jumps =
        std::any_of(t_.begin(), t_.end(), [](const Token& t) { return is_ident(t, "goto"); });
    std::vector<bool> do_tail(t_.size());  // the `while` of each do statement
    for (std::size_t k = 0; k + 1 < t_.size(); ++k) {
      if (t_[k].directive) continue;
      if (is_ident(t_[k], "do"))
        if (const std::size_t end = statement_end(k + 1); end + 1 < t_.size())
          do_tail[end + 1] = true;
      if (is_ident(t_[k], "if") && !jumps) hoist_if(k);
      if (is_ident(t_[k], "while") && !do_tail[k]) hoist_loop(k, false);
      if (is_ident(t_[k], "for")) hoist_loop(k, true);
      if (is_ident(t_[k], "do")) hoist_do(k);
    }
    if (edits_.empty()) return std::string(s_);
    // (an insertion before a replacement at the same place: `...; }if (...)`)
    std::stable_sort(edits_.begin(), edits_.end(), [](const TextEdit& a, const TextEdit& b) {
      return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
    });
    return apply_edits(s_, edits_);
  }

 private:
  // The source text of tokens [b, e).
  std::string text(std::size_t b, std::size_t e) const {
    return b >= e ? "" : std::string(s_.substr(t_[b].begin, t_[e - 1].end - t_[b].begin));
  }

  // The vote of condition [b, e) that may be hoisted: its name token, or 0 for none. The
  // condition evaluates it first and always: nothing before it after && || ?:, no comma
  // operator (`(x = f()), V(x)`).
  std::size_t vote_in(std::size_t b, std::size_t e) const {
    std::size_t vote = 0;
    int depth = 0;
    for (std::size_t k = b; k < e; ++k) {
      const Token& t = t_[k];
      if (is_punct(t, "{") || t.directive) return 0;  // (a lambda)
      depth += (is_punct(t, "(") || is_punct(t, "[")) - (is_punct(t, ")") || is_punct(t, "]"));
      if (depth == 0 && is_punct(t, ",")) return 0;
      if (is_vote(t)) {
        if (vote || k + 1 >= e || !is_punct(t_[k + 1], "(") || closer_[k + 1] >= e) return 0;
        vote = k;
      } else if (!vote && (is_punct(t, "?") || ((is_punct(t, "&") || is_punct(t, "|")) &&
                                                k + 1 < e && is_punct(t_[k + 1], t.text)))) {
        return 0;  // (a vote after && || ?: is cast by some threads only)
      }
    }
    return vote;
  }

  // `int v = V(p);` for the vote at `vote`, and the condition [b, e) with v in its place (its
  // spacing kept: b - 1 and e are the tokens around it).
  std::pair<std::string, std::string> split(std::size_t vote, std::size_t b, std::size_t e) {
    const std::string name = "kiln_vote" + std::to_string(++counter_) + "_";
    const std::size_t close = closer_[vote + 1];
    auto between = [&](std::size_t from, std::size_t to) {  // the bytes from token to token
      return std::string(s_.substr(t_[from].end, t_[to].begin - t_[from].end));
    };
    return {"int " + name + " = " + text(vote, close + 1) + ";",
            between(b - 1, vote) + name + between(close, e)};
  }

  // Replaces source bytes [begin, end) with text, ending it with the line breaks it lacks.
  void edit(std::size_t begin, std::size_t end, std::string text) {
    const auto breaks = [](std::string_view v) { return std::count(v.begin(), v.end(), '\n'); };
    const auto missing = breaks(s_.substr(begin, end - begin)) - breaks(text);
    if (missing > 0) text.append(std::size_t(missing), '\n');
    edits_.push_back({begin, end, std::move(text)});
  }

  void hoist_if(std::size_t k) {
    if (!is_punct(t_[k + 1], "(") || closer_[k + 1] >= t_.size()) return;
    if (k > 0 &&
        !(is_punct(t_[k - 1], ";") || is_punct(t_[k - 1], "{") || is_punct(t_[k - 1], "}")))
      return;  // (`else if`, a body without braces: no statement list to put the vote in)
    const std::size_t close = closer_[k + 1];
    for (std::size_t j = k + 2; j < close; j = closer_[j] < close ? closer_[j] + 1 : j + 1)
      if (is_punct(t_[j], ";")) return;  // (an init-statement: `if (int a = f(); V(a))`)
    const std::size_t vote = vote_in(k + 2, close);
    if (!vote || in_switch(k)) return;
    auto [declare, condition] = split(vote, k + 2, close);
    edit(t_[k].begin, t_[close].end, declare + " if (" + condition + ")");
  }

  // Whether the statement at k is in a switch's block (where a later case label would jump
  // past a declaration put before it).
  bool in_switch(std::size_t k) const {
    for (std::size_t j = k, depth = 0; j-- > 0;) {
      if (is_punct(t_[j], "}")) ++depth;
      if (!is_punct(t_[j], "{")) continue;
      if (depth-- > 0) continue;
      if (j == 0 || !is_punct(t_[j - 1], ")")) return false;
      for (std::size_t open = j - 1; open-- > 0;)
        if (closer_[open] == j - 1) return open > 0 && is_ident(t_[open - 1], "switch");
      return false;
    }
    return false;
  }

  // `while (c) B` / `for (i; c; n) B` with a vote in c; B a block or a plain statement.
  void hoist_loop(std::size_t k, bool is_for) {
    if (!is_punct(t_[k + 1], "(") || closer_[k + 1] >= t_.size()) return;
    const std::size_t close = closer_[k + 1];
    // (`while (c);`: a do statement's end, however its body is written)
    if (close + 1 >= t_.size() || is_punct(t_[close + 1], ";")) return;
    const std::size_t body_end = statement_end(close + 1);  // its last token
    if (body_end >= t_.size()) return;
    std::size_t b = k + 2, e = close;  // the condition
    if (is_for) {
      std::vector<std::size_t> semis;
      for (std::size_t j = k + 2; j < close; j = closer_[j] < close ? closer_[j] + 1 : j + 1)
        if (is_punct(t_[j], ";")) semis.push_back(j);
      if (semis.size() != 2) return;  // (a range for)
      b = semis[0] + 1, e = semis[1];
    }
    const std::size_t vote = vote_in(b, e);
    if (!vote) return;
    auto [declare, condition] = split(vote, b, e);
    const std::string head = is_for ? "for (" + text(k + 2, b) + " " + text(e, close) + ")"
                                    : std::string("while (true)");
    edit(t_[k].begin, t_[close].end,
         head + " { " + declare + " if (!(" + condition + ")) break; {");
    edit(t_[body_end].end, t_[body_end].end, " } }");
  }

  // The last token of the statement at b: a block's '}', a plain statement's ';' (t_.size() for
  // any other: a control statement, a declaration of a type).
  std::size_t statement_end(std::size_t b) const {
    if (b >= t_.size()) return t_.size();
    if (is_punct(t_[b], "{")) return closer_[b];
    for (const char* word : {"if", "for", "while", "do", "switch", "struct", "class", "case"})
      if (is_ident(t_[b], word)) return t_.size();
    for (std::size_t j = b; j < t_.size(); ++j) {
      if (is_punct(t_[j], ";")) return j;
      if (is_punct(t_[j], "}") || t_[j].directive) return t_.size();
      if (closer_[j] < t_.size()) j = closer_[j];
    }
    return t_.size();
  }

  // `do { B } while (c);` with a vote in c and no continue of its own in B.
  void hoist_do(std::size_t k) {
    const std::size_t body = k + 1;
    if (!is_punct(t_[body], "{") || closer_[body] >= t_.size()) return;
    const std::size_t end = closer_[body], w = end + 1;
    if (w + 1 >= t_.size() || !is_ident(t_[w], "while") || !is_punct(t_[w + 1], "(") ||
        closer_[w + 1] + 1 >= t_.size() || !is_punct(t_[closer_[w + 1] + 1], ";"))
      return;
    const std::size_t close = closer_[w + 1];
    const std::size_t vote = vote_in(w + 2, close);
    if (!vote || continues(body + 1, end)) return;
    auto [declare, condition] = split(vote, w + 2, close);
    edit(t_[body].begin, t_[body].end, "{ {");
    edit(t_[end].end, t_[close].end,
         " " + declare + " if (!(" + condition + ")) break; } while (true)");
  }

  // Whether [b, e) holds a continue of the loop around it (not of a loop inside).
  bool continues(std::size_t b, std::size_t e) const {
    for (std::size_t j = b; j < e; ++j) {
      if (is_ident(t_[j], "continue")) return true;
      if (is_ident(t_[j], "for") || is_ident(t_[j], "while") || is_ident(t_[j], "do")) {
        // (skip the inner loop: its header, then its body)
        std::size_t next = j + 1;
        if (next < e && is_punct(t_[next], "(") && closer_[next] < e) next = closer_[next] + 1;
        if (next < e && is_punct(t_[next], "{") && closer_[next] < e) j = closer_[next];
      }
    }
    return false;
  }

  std::string_view s_;
  std::vector<Token> t_;
  std::vector<std::size_t> closer_;
  std::vector<TextEdit> edits_;
  int counter_ = 0;
};

}  // namespace

std::string hoist_header_votes(std::string_view source) {
  if (source.find("__syncthreads_") == std::string_view::npos) return std::string(source);
  return Hoister(source).run();
}

}  // namespace kiln::cpu
