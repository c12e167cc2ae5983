// Block-level cooperative groups lowered (block_groups.h), over jit/lexer.h's tokens: name the
// namespace's aliases and the block variables, then account for every token that names either,
// each by one of the forms the lowering takes. One token left over in a kernel body (or outside
// them) and nothing of that body is rewritten, nor the #includes and aliases.
#include "jit/cpu/block_groups.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>
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

constexpr const char* kSync = "__syncthreads()";
// (functional casts: the region rewrite takes `unsigned(...)` in a loop header as no call)
constexpr const char* kRank =
    "(unsigned(threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)))";
constexpr const char* kSize = "(unsigned(blockDim.x * blockDim.y * blockDim.z))";
// A tile of width lanes: the thread's rank in it, the tile's rank in the block, their count.
std::string tile_lane(int width) {
  return "(" + std::string(kRank) + " % " + std::to_string(width) + "u)";
}
std::string tile_rank(int width) {
  return "(" + std::string(kRank) + " / " + std::to_string(width) + "u)";
}
std::string tile_count(int width) {
  const std::string w = std::to_string(width);
  return "((" + std::string(kSize) + " + " + std::to_string(width - 1) + "u) / " + w + "u)";
}

struct Edit {
  std::size_t begin, end;  // source offsets replaced
  std::string text;
  int unit;  // the kernel body it is in (kOutside: none; kDeclaration: an #include, an alias;
             // kFunction - n: the n-th device function outside the bodies)
};
constexpr int kOutside = -1, kDeclaration = -2, kFunction = -3;

class Lowering {
 public:
  explicit Lowering(std::string_view source) : src_(source), t_(jit::lex(source)) {
    for (int s = 0; s < 8; ++s)  // sentinels: lookahead stays in range
      t_.push_back({Token::punct, "", source.size(), source.size(), 0, false});
    taken_.assign(t_.size(), false);
    unit_.assign(t_.size(), kOutside);
    const std::vector<jit::KernelBody> bodies = jit::find_kernel_bodies(source);
    for (std::size_t k = 0, b = 0; k < t_.size(); ++k) {
      while (b < bodies.size() && bodies[b].close < t_[k].begin) ++b;
      if (b < bodies.size() && bodies[b].open <= t_[k].begin) unit_[k] = int(b);
    }
    function_units();
  }

  // Each function defined outside the kernel bodies is a unit of its own, from the first token
  // of its declaration to its body's '}': one function's use the lowering does not take keeps
  // that function as written, and the kernels passing it their groups, not all of them.
  void function_units() {
    int count = 0;
    for (std::size_t k = 1; k + 1 < t_.size(); ++k) {
      if (unit_[k] != kOutside || t_[k].kind != Token::ident || !is_punct(t_[k + 1], "(")) continue;
      const std::size_t close = closing(k + 1);
      if (close >= t_.size() || !is_punct(t_[close + 1], "{") || unit_[close + 1] != kOutside)
        continue;
      const std::size_t end = body_end(close + 1);
      if (end >= t_.size()) continue;
      const int unit = kFunction - count++;
      for (std::size_t j = statement_start(k); j <= end; ++j)
        if (unit_[j] == kOutside) unit_[j] = unit;
      auto [at, fresh] = function_unit_.try_emplace(t_[k].text, std::pair{unit, k});
      if (!fresh) at->second = {kOutside, t_.size()};  // overloads: as all outside code
      k = end;
    }
  }

  // The first token of the declaration or statement holding token k (after ';', '{', '}' or a
  // directive line).
  std::size_t statement_start(std::size_t k) const {
    while (k > 0 && !is_punct(t_[k - 1], ";") && !is_punct(t_[k - 1], "}") &&
           !is_punct(t_[k - 1], "{") && !t_[k - 1].directive)
      --k;
    return k;
  }

  // The unit of the function a call names (kOutside where the source defines none, or more
  // than one, of that name).
  int function_unit(const std::string& name) const {
    auto f = function_unit_.find(name);
    return f == function_unit_.end() ? kOutside : f->second.first;
  }

  // The source with each kernel body's uses lowered where the lowering takes all of them (and
  // the #includes and aliases where it takes every use), or source itself.
  std::string run() {
    if (!find_groups()) return std::string(src_);
    tile_parameters();
    if (!mentions_groups()) return std::string(src_);
    for (std::size_t k = 0; k < t_.size(); ++k) {
      if (taken_[k] || t_[k].kind != Token::ident) continue;
      bool lowered = true;
      if (names_.count(t_[k].text))
        lowered =
            include_line(k) || group_sync(k) || group_reduce(k) || group_scan(k) || group_copy(k);
      else if (block(k) && !member(k))
        lowered = block_member_call(k) || block_argument(k);
      else if (tile(k) && !member(k))
        lowered = tile_member_call(k) || tile_argument(k);
      else if (coalesced(k) && !member(k))
        lowered = coalesced_member_call(k);
      if (!lowered) kept_.insert(unit_[k]);
    }
    return edited();
  }

 private:
  // Names the namespace's aliases, the block and tile variables; false where it cannot read a
  // using-directive of the namespace.
  bool find_groups() {
    names_.insert("cooperative_groups");
    for (std::size_t k = 0; k + 4 < t_.size(); ++k) {
      if (is_ident(t_[k], "using") && is_ident(t_[k + 1], "namespace")) {
        // (qualified_uses wrote the names it follows out in full; it goes with the #include)
        const std::size_t ns = k + (is_punct(t_[k + 2], "::") ? 3 : 2);
        if (!is_ident(t_[ns], "cooperative_groups")) continue;
        if (!is_punct(t_[ns + 1], ";")) return false;
        take(k, ns + 1, "", true);
      }
      if (is_ident(t_[k], "namespace") && t_[k + 1].kind == Token::ident &&
          is_punct(t_[k + 2], "=")) {  // namespace cg = [::]cooperative_groups;
        const std::size_t ns = k + (is_punct(t_[k + 3], "::") ? 4 : 3);
        if (!is_ident(t_[ns], "cooperative_groups") || !is_punct(t_[ns + 1], ";")) continue;
        names_.insert(t_[k + 1].text);
        take(k, ns + 1, "", true);
      }
    }
    for (std::size_t k = 0; k < t_.size(); ++k) block_declaration(k);
    for (std::size_t k = 0; k < t_.size(); ++k) block_parameter(k);
    for (std::size_t k = 0; k < t_.size(); ++k) tile_declaration(k);
    for (std::size_t k = 0; k < t_.size(); ++k) coalesced_declaration(k);
    return true;
  }

 public:
  // The source with a copy of each device function to which some calls pass tiles of one width
  // at an argument and others something else (NVIDIA's cg_reduce_n, given a warp's tile by
  // cg_reduce and a 128-thread group by multi_warp_cg_reduce): the copy, named
  // <function>_kiln_tile<W>, joins the line of the original's '}' (lines kept), and the calls
  // passing tiles call it, so that it can be lowered for them while the original stays as
  // written for the rest. The source itself when there is none.
  std::string with_tile_clones() {
    if (!find_groups()) return std::string(src_);
    std::vector<Edit> clones;
    for (const auto& [call, use] : tile_calls()) {
      const auto& [name, index] = call;
      const auto [width, passes] = use;
      if (width <= 0 || passes == calls_of(name)) continue;
      const std::size_t def = definition(name);
      if (def == t_.size() || !tile_parameter_form(def, index, width)) continue;
      const std::size_t first = statement_start(def), last = body_end(closing(def + 1) + 1);
      if (last >= t_.size() || std::any_of(t_.begin() + first, t_.begin() + last,
                                           [](const Token& x) { return x.directive; }))
        continue;
      const std::string clone = name + "_kiln_tile" + std::to_string(width);
      std::string copy;
      for (std::size_t j = first; j <= last; ++j) {  // (one space where the source has any)
        if (j > first && t_[j - 1].end != t_[j].begin) copy += ' ';
        copy += j == def ? clone : std::string(src_.substr(t_[j].begin, t_[j].end - t_[j].begin));
      }
      clones.push_back({t_[last].end, t_[last].end, " " + copy, 0});
      for (std::size_t k = 1; k + 1 < t_.size(); ++k) {  // the calls passing tiles
        if (unit_[k] < 0 || member(k) || tile(k) != width) continue;
        const auto [open, at] = argument_of(k);
        const std::size_t callee = open == t_.size() ? t_.size() : regions::callee(t_, open);
        if (callee < t_.size() && at == index && t_[callee].text == name)
          clones.push_back({t_[callee].begin, t_[callee].end, clone, 0});
      }
    }
    if (clones.empty()) return std::string(src_);
    std::sort(clones.begin(), clones.end(),
              [](const Edit& a, const Edit& b) { return a.begin < b.begin; });
    clones.erase(std::unique(clones.begin(), clones.end(),
                             [](const Edit& a, const Edit& b) { return a.begin == b.begin; }),
                 clones.end());
    return apply_edits(src_, clones);
  }

 private:
  // Whether the source names cooperative groups at all.
  bool mentions_groups() const {
    return std::any_of(t_.begin(), t_.end(), [&](const Token& x) {
      return x.kind == Token::ident && names_.count(x.text);
    });
  }

  // Whether token k is `NS :: name` with NS the namespace or an alias of it.
  bool qualified(std::size_t k, const char* name) const {
    return t_[k].kind == Token::ident && names_.count(t_[k].text) && is_punct(t_[k + 1], "::") &&
           is_ident(t_[k + 2], name);
  }

  // Whether token k is reached as a member or a qualified name (`a.k`, `x::k`).
  bool member(std::size_t k) const {
    return k > 0 && (is_punct(t_[k - 1], ".") || is_punct(t_[k - 1], "::") ||
                     (k > 1 && is_punct(t_[k - 1], ">") && is_punct(t_[k - 2], "-")));
  }

  // The name's token of a declaration `[const] NS::type name =` (NS::type<32> when warp_sized)
  // or `[const] auto name =` at k, after a statement's start; 0 when there is none there.
  std::size_t declared_name(std::size_t k, const char* type, bool warp_sized) const {
    if (k > 0 &&
        !(is_punct(t_[k - 1], ";") || is_punct(t_[k - 1], "{") || is_punct(t_[k - 1], "}")))
      return 0;
    std::size_t d = k;
    if (is_ident(t_[d], "const")) ++d;
    if (qualified(d, type) && (!warp_sized || tile_width(d + 3)))
      d += warp_sized ? 6 : 3;
    else if (is_ident(t_[d], "auto"))
      d += 1;
    else
      return 0;
    return t_[d].kind == Token::ident && is_punct(t_[d + 1], "=") ? d : 0;
  }

  // `[const] NS::thread_block b = NS::this_thread_block();` or `[const] auto b = ...;` at k,
  // after a statement's start: b is a block variable, the declaration goes.
  void block_declaration(std::size_t k) {
    const std::size_t name = declared_name(k, "thread_block", false);
    if (!name || !qualified(name + 2, "this_thread_block") || !is_punct(t_[name + 5], "(") ||
        !is_punct(t_[name + 6], ")") || !is_punct(t_[name + 7], ";"))
      return;
    blocks_.insert({unit_[k], t_[name].text});
    take(k, name + 7, "");
    declarations_.push_back({edits_.size() - 1, t_[name].text});
  }

  // A parameter `[const] NS::thread_block [&] b` at k (after '(' or ','): b is a block
  // variable of the function, its type an empty kiln_cpu::block_group (the function then takes
  // the lowered block that a kernel passes it, and may be inlined).
  // So is `NS::thread_group [&] g` where every call passes a block there (simpleCooperative-
  // Groups' sumReduction, whose calls passing a tile call a copy: with_tile_clones).
  void block_parameter(std::size_t k) {
    if (k == 0 || !(is_punct(t_[k - 1], "(") || is_punct(t_[k - 1], ","))) return;
    std::size_t d = is_ident(t_[k], "const") ? k + 1 : k;
    const bool group = qualified(d, "thread_group");
    if (!qualified(d, "thread_block") && !group) return;
    d += 3;
    if (is_punct(t_[d], "&")) ++d;
    if (t_[d].kind != Token::ident || !(is_punct(t_[d + 1], ",") || is_punct(t_[d + 1], ")")))
      return;
    const std::string function = called(k);
    if (function.empty() || (group && !blocks_passed(function, parameter_index(k)))) return;
    blocks_.insert({unit_[k], t_[d].text});
    take(k, d - 1, "kiln_cpu::block_group ");
    taken_[d] = true;  // (the name stays)
    block_functions_.insert(function);
  }

  // The index of the parameter (or argument) whose first token is k, counting the commas
  // before it in its parentheses.
  int parameter_index(std::size_t k) const {
    int index = 0;
    for (std::size_t j = k, depth = 0; j-- > 0;) {
      if (is_punct(t_[j], ")") || is_punct(t_[j], "]") || is_punct(t_[j], ">")) ++depth;
      if (is_punct(t_[j], "(") || is_punct(t_[j], "[") || is_punct(t_[j], "<")) {
        if (depth == 0) break;
        --depth;
      }
      if (depth == 0 && is_punct(t_[j], ",")) ++index;
    }
    return index;
  }

  // Whether every call of function name passes a block variable whole at argument index (the
  // blocks its kernel bodies declare).
  bool blocks_passed(const std::string& name, int index) const {
    int passes = 0;
    for (std::size_t k = 1; k + 1 < t_.size(); ++k) {
      if (unit_[k] < 0 || t_[k].kind != Token::ident || member(k) || !block(k)) continue;
      const auto [open, at] = argument_of(k);
      const std::size_t callee = open == t_.size() ? t_.size() : regions::callee(t_, open);
      passes += callee < t_.size() && at == index && t_[callee].text == name;
    }
    return passes > 0 && passes == calls_of(name);
  }

  // The name of the function whose parentheses hold token k (its template arguments passed
  // over: `f<N>(a, k)`), or "".
  std::string called(std::size_t k) const {
    std::size_t j = k;
    for (int depth = 0; j-- > 0;) {
      if (is_punct(t_[j], ";") || is_punct(t_[j], "{") || is_punct(t_[j], "}")) return "";
      if (is_punct(t_[j], ")")) ++depth;
      if (is_punct(t_[j], "(") && depth-- == 0) break;
    }
    if (j == std::size_t(-1)) return "";
    const std::size_t name = regions::callee(t_, j);
    return name < t_.size() ? t_[name].text : "";
  }

  // A block variable at k passed to a function of the source with a block parameter, `f(x,
  // b)`: the lowered block goes with it, and its unit then needs the code outside the kernel
  // bodies lowered too (f among it).
  bool block_argument(std::size_t k) {
    if (!(is_punct(t_[k - 1], "(") || is_punct(t_[k - 1], ",")) ||
        !(is_punct(t_[k + 1], ",") || is_punct(t_[k + 1], ")")) ||
        !block_functions_.count(called(k)))
      return false;
    passes_to_[unit_[k]].insert(function_unit(called(k)));
    taken_[k] = true;
    return true;
  }

  // `[const] NS::thread_block_tile<W> t = NS::tiled_partition<W>(b);` (or `auto t`), W 2, 4, 8,
  // 16 or 32, b a block variable or `NS::this_thread_block()`, at k after a statement's start: t
  // is a tile of W lanes of a warp, the declaration goes.
  void tile_declaration(std::size_t k) {
    const std::size_t name = declared_name(k, "thread_block_tile", true), call = name + 2;
    const int width = name ? tile_width(call + 3) : 0;
    if (!name || !qualified(call, "tiled_partition") || !width || !is_punct(t_[call + 6], "(") ||
        (!is_ident(t_[k], "auto") && !is_ident(t_[k + 1], "auto") &&
         tile_width(name - 3) != width))  // thread_block_tile<W> t = tiled_partition<W>(...)
      return;
    std::size_t close = call + 7;
    if (block(close))
      close += 1;
    else if (qualified(close, "this_thread_block") && is_punct(t_[close + 3], "(") &&
             is_punct(t_[close + 4], ")"))
      close += 5;
    else
      return;
    if (!is_punct(t_[close], ")") || !is_punct(t_[close + 1], ";")) return;
    tiles_[{unit_[k], t_[name].text}] = width;
    take(k, close + 1, "");
    declarations_.push_back({edits_.size() - 1, t_[name].text});
  }

  // `[const] NS::coalesced_group g = NS::coalesced_threads();` (or `auto g`) at k, after a
  // statement's start: g is a coalesced group, the declaration `const unsigned g =
  // __activemask();`, its lane mask (the lanes that reach it), which its members then read.
  void coalesced_declaration(std::size_t k) {
    const std::size_t name = declared_name(k, "coalesced_group", false), call = name + 2;
    if (!name || !qualified(call, "coalesced_threads") || !is_punct(t_[call + 3], "(") ||
        !is_punct(t_[call + 4], ")") || !is_punct(t_[call + 5], ";"))
      return;
    coalesced_.insert({unit_[k], t_[name].text});
    take(k, call + 5, "const unsigned " + t_[name].text + " = __activemask();");
  }

  // The '(' of the call whose argument list holds token k at depth 0, and k's argument index
  // there; {t_.size(), 0} when k is not a whole argument of a call.
  std::pair<std::size_t, int> argument_of(std::size_t k) const {
    if (k == 0 || !(is_punct(t_[k - 1], "(") || is_punct(t_[k - 1], ",")) ||
        !(is_punct(t_[k + 1], ",") || is_punct(t_[k + 1], ")")))
      return {t_.size(), 0};
    int index = 0;
    for (std::size_t j = k, depth = 0; j-- > 0;) {
      if (is_punct(t_[j], ";") || is_punct(t_[j], "{") || is_punct(t_[j], "}")) break;
      if (is_punct(t_[j], ")") || is_punct(t_[j], "]")) ++depth;
      if ((is_punct(t_[j], "(") || is_punct(t_[j], "[")) && depth-- == 0)
        return is_punct(t_[j], "(") ? std::pair{j, index} : std::pair{t_.size(), 0};
      if (depth == 0 && is_punct(t_[j], ",")) ++index;
    }
    return {t_.size(), 0};
  }

  // Tiles passed to device functions of the source (`v = cg_reduce_n(v, tile);`, NVIDIA's
  // reduction sample): where every call of a function passes tiles of one width W at an
  // argument, and that parameter is `[const] NS::thread_block_tile<W> [&] g` or `[const] G
  // [&] g` with G a template type parameter of the function, g becomes a tile of W lanes of
  // the function's body, passed by value (an empty kiln_cpu::block_group, as a block is: the
  // lowered function may then be inlined, and a reference parameter would not be).
  void tile_parameters() {
    // Every call of the function must pass such a tile there (NVIDIA's multi_warp_cg_reduce
    // passes the same function a 128-thread group: with_tile_clones gives cg_reduce a copy).
    for (const auto& [call, use] : tile_calls())
      if (use.first > 0 && calls_of(call.first) == use.second)
        tile_parameter(call.first, call.second, use.first);
  }

  // The calls in kernel bodies passing a tile variable as a whole argument: (function,
  // argument) -> (the tiles' width, or -1 where they differ; how many calls).
  std::map<std::pair<std::string, int>, std::pair<int, int>> tile_calls() const {
    std::map<std::pair<std::string, int>, std::pair<int, int>> calls;
    for (std::size_t k = 1; k + 1 < t_.size(); ++k) {
      if (unit_[k] < 0 || t_[k].kind != Token::ident || member(k)) continue;
      const int width = tile(k);
      if (!width) continue;
      const auto [open, index] = argument_of(k);
      if (open == t_.size()) continue;
      const std::size_t name = regions::callee(t_, open);
      if (name >= t_.size()) continue;
      auto [at, fresh] = calls.try_emplace({t_[name].text, index}, std::pair{width, 0});
      if (at->second.first != width) at->second.first = -1;
      ++at->second.second;
    }
    return calls;
  }

  // The name's token of function name's one definition outside the kernel bodies, or
  // t_.size() (none, overloads, or a return type ending in punctuation: `T* f(`).
  std::size_t definition(const std::string& name) const {
    auto f = function_unit_.find(name);
    if (f == function_unit_.end()) return t_.size();
    const std::size_t def = f->second.second;
    return def < t_.size() && t_[def - 1].kind != Token::punct ? def : t_.size();
  }

  // How many times the source calls function name (`name(` or `name<...>(`, not as a member,
  // nor its definition).
  int calls_of(const std::string& name) const {
    int calls = 0;
    for (std::size_t k = 1; k + 1 < t_.size(); ++k) {
      if (!is_ident(t_[k], name.c_str()) || member(k)) continue;
      std::size_t open = k + 1;
      if (is_punct(t_[open], "<"))
        while (open < t_.size() && !is_punct(t_[open], ">") && !is_punct(t_[open], ";")) ++open;
      if (is_punct(t_[open], ">")) ++open;
      if (!is_punct(t_[open], "(")) continue;
      const std::size_t close = closing(open);
      if (close < t_.size() && is_punct(t_[close + 1], "{")) continue;  // the definition
      ++calls;
    }
    return calls;
  }

  // Parameter index of function name's one definition outside the kernel bodies as a tile of
  // width lanes, where its form allows (tile_parameters).
  void tile_parameter(const std::string& name, int index, int width) {
    const std::size_t def = definition(name);
    if (def == t_.size()) return;
    const auto form = tile_parameter_form(def, index, width);
    if (!form) return;
    const auto [b, param, type_text] = *form;
    take(b, param - 1, type_text);
    taken_[param] = true;  // (the name stays)
    tiles_[{unit_[param], t_[param].text}] = width;
    tile_functions_.insert({name, index});
  }

  // Parameter index of the function defined at token def where it can take a tile of width
  // lanes: its first token, its name's, and the text its type becomes; nullopt otherwise.
  std::optional<std::tuple<std::size_t, std::size_t, std::string>> tile_parameter_form(
      std::size_t def, int index, int width) const {
    // The parameter's tokens [b, e).
    std::size_t b = def + 2, e = b;
    for (int i = 0, depth = 0;; ++e) {
      if (e >= t_.size() || t_[e].directive) return std::nullopt;
      if (is_punct(t_[e], "(") || is_punct(t_[e], "<") || is_punct(t_[e], "[")) ++depth;
      if (is_punct(t_[e], ">") || is_punct(t_[e], "]")) --depth;
      if (is_punct(t_[e], ")") && depth-- == 0) {
        if (i == index) break;
        return std::nullopt;
      }
      if (depth == 0 && is_punct(t_[e], ",") && i++ == index) break;
      if (depth == 0 && is_punct(t_[e], ",")) b = e + 1;
    }
    const std::size_t param = e - 1;  // its name
    if (param <= b || t_[param].kind != Token::ident) return std::nullopt;
    std::size_t type = is_ident(t_[b], "const") ? b + 1 : b, end = param;
    if (is_punct(t_[end - 1], "&")) --end;
    const std::string space = t_[param - 1].end == t_[param].begin ? " " : "";  // `G &g`
    if ((qualified(type, "thread_block_tile") && tile_width(type + 3) == width &&
         type + 6 == end) ||
        (qualified(type, "thread_group") && type + 3 == end))
      return std::tuple{b, param, "kiln_cpu::block_group" + space};
    if (type + 1 == end && t_[type].kind == Token::ident &&
        template_type_parameter(def, t_[type].text))
      return std::tuple{b, param, t_[type].text + space};
    return std::nullopt;
  }

  // Whether `template <... typename|class name ...>` stands before the declaration of the
  // function named at token f.
  bool template_type_parameter(std::size_t f, const std::string& name) const {
    const std::size_t j = statement_start(f);
    if (!is_ident(t_[j], "template") || !is_punct(t_[j + 1], "<")) return false;
    for (std::size_t k = j + 2; k < f && !is_punct(t_[k], ">"); ++k)
      if ((is_ident(t_[k], "typename") || is_ident(t_[k], "class")) &&
          is_ident(t_[k + 1], name.c_str()))
        return true;
    return false;
  }

  // The '}' matching the '{' at k, or t_.size().
  std::size_t body_end(std::size_t k) const {
    int depth = 0;
    for (std::size_t j = k; j < t_.size(); ++j) {
      if (is_punct(t_[j], "{")) ++depth;
      if (is_punct(t_[j], "}") && --depth == 0) return j;
    }
    return t_.size();
  }

  // A tile variable at k passed whole to a function whose parameter there is lowered as a tile
  // (tile_parameters): it goes on as the block_group its declaration becomes.
  bool tile_argument(std::size_t k) {
    const auto [open, index] = argument_of(k);
    if (open == t_.size()) return false;
    const std::size_t name = regions::callee(t_, open);
    if (name >= t_.size() || !tile_functions_.count({t_[name].text, index})) return false;
    passes_to_[unit_[k]].insert(function_unit(t_[name].text));
    taken_[k] = true;
    return true;
  }

  // The width W of tokens k.. `<W>`, W 2, 4, 8, 16 or 32 (`8u` too: a template's unsigned
  // argument bound, template_args.h); else 0.
  int tile_width(std::size_t k) const {
    if (!is_punct(t_[k], "<") || t_[k + 1].kind != Token::number || !is_punct(t_[k + 2], ">"))
      return 0;
    for (int w : {2, 4, 8, 16, 32})
      for (const char* suffix : {"", "u", "U"})
        if (t_[k + 1].text == std::to_string(w) + suffix) return w;
    return 0;
  }

  // A member call of a tile at k: its shuffles as the warp's, within segments of its width
  // (`__shfl_down_sync(0xffffffffu, v, d, W)`), its votes as the warp's (a narrower tile's
  // masked to its own lanes), sync as __syncwarp(), its ranks and sizes as indices.
  bool tile_member_call(std::size_t k) {
    if (!is_punct(t_[k + 1], ".") || !is_punct(t_[k + 3], "(")) return false;
    const std::string& m = t_[k + 2].text;
    const int width = tile(k);
    const std::string w = std::to_string(width);
    static const std::pair<const char*, const char*> kWarpOps[] = {
        {"shfl", "__shfl_sync"},       {"shfl_down", "__shfl_down_sync"},
        {"shfl_up", "__shfl_up_sync"}, {"shfl_xor", "__shfl_xor_sync"},
        {"any", "__any_sync"},         {"all", "__all_sync"},
        {"ballot", "__ballot_sync"}};
    for (const auto& [member, op] : kWarpOps) {
      if (m != member) continue;
      const std::size_t close = closing(k + 3);
      if (close == t_.size() || is_punct(t_[k + 4], ")")) return false;
      const bool shuffle = m.rfind("shfl", 0) == 0;
      if (!shuffle && width != 32) return narrow_vote(k, close, width);
      take(k, k + 3, std::string(op) + "(0xffffffffu, ");
      if (shuffle) {  // (the width, as the tile's own shuffles pass it: its segment of lanes)
        taken_[close] = true;
        edits_.push_back({t_[close].begin, t_[close].end, ", " + w + ")", unit_[k]});
      }
      return true;
    }
    if (!is_punct(t_[k + 4], ")")) return false;
    // (a narrower tile syncs with its whole warp: the same where the warp's tiles all sync)
    const std::string text = m == "sync"                           ? "__syncwarp()"
                             : m == "thread_rank"                  ? tile_lane(width)
                             : (m == "size" || m == "num_threads") ? w + "u"
                             : m == "meta_group_rank"              ? tile_rank(width)
                             : m == "meta_group_size"              ? tile_count(width)
                                                                   : "";
    if (text.empty()) return false;
    take(k, k + 4, text);
    return true;
  }

  // `t.ballot(p)`, `t.any(p)` or `t.all(p)` of a tile of width lanes (less than a warp) at k,
  // its ')' at close: the warp's ballot, shifted to the tile's lanes and masked to them (bit i
  // for the tile's lane i, as the tile's own ballot has it); `all` as no lane voting `!(p)`, so
  // that a lane that has returned counts for neither, as in the warp's own votes.
  bool narrow_vote(std::size_t k, std::size_t close, int width) {
    const std::string& m = t_[k + 2].text;
    const std::string shift = "(" + tile_lane(32) + " & ~" + std::to_string(width - 1) + "u)",
                      mask = std::to_string((1u << width) - 1) + "u";
    const std::string tail = ") >> " + shift + ") & " + mask + ")";
    std::string open, end;
    if (m == "ballot")
      open = "((__ballot_sync(0xffffffffu, ", end = tail;
    else if (m == "any")
      open = "(((__ballot_sync(0xffffffffu, ", end = tail + " != 0u)";
    else
      open = "(((__ballot_sync(0xffffffffu, !(", end = ")" + tail + " == 0u)";
    take(k, k + 3, open);
    taken_[close] = true;
    edits_.push_back({t_[close].begin, t_[close].end, end, unit_[k]});
    return true;
  }

  // A member call of a coalesced group g (its lane mask) at k: its shuffles as the warp's over
  // g from the lane of the rank they name, its votes and sync the warp's over g (a ballot's
  // bits by rank), its rank and size counted in g; a meta group of its own.
  bool coalesced_member_call(std::size_t k) {
    if (!is_punct(t_[k + 1], ".") || !is_punct(t_[k + 3], "(")) return false;
    const std::string &m = t_[k + 2].text, &g = t_[k].text;
    if (is_punct(t_[k + 4], ")")) {
      const std::string text = m == "sync"                           ? "__syncwarp(" + g + ")"
                               : m == "thread_rank"                  ? rank(g)
                               : (m == "size" || m == "num_threads") ? size(g)
                               : m == "meta_group_rank"              ? "0u"
                               : m == "meta_group_size"              ? "1u"
                               : m == "get_mask"                     ? "(" + g + ")"
                                                                     : "";
      if (text.empty()) return false;
      take(k, k + 4, text);
      return true;
    }
    const std::size_t close = closing(k + 3);
    if (close == t_.size()) return false;
    if (m == "any" || m == "all" || m == "ballot") {
      take(k, k + 3,
           m == "ballot" ? "::kiln_cpu::group_bits(" + g + ", __ballot_sync(" + g + ", "
                         : "__" + m + "_sync(" + g + ", ");
      if (m == "ballot") {
        taken_[close] = true;
        edits_.push_back({t_[close].begin, t_[close].end, "))", unit_[k]});
      }
      return true;
    }
    if (m != "shfl" && m != "shfl_down" && m != "shfl_up") return false;
    const std::size_t comma = argument_end(k + 4, close);  // between the value and the rank
    if (comma >= close) return false;
    const std::string from = m == "shfl" ? "" : rank(g) + (m == "shfl_down" ? " + " : " - ");
    take(k, k + 3, "__shfl_sync(" + g + ", ");
    take(comma, comma, ", ::kiln_cpu::group_lane(" + g + ", " + from + "(");
    taken_[close] = true;
    edits_.push_back({t_[close].begin, t_[close].end, "), " + tile_lane(32) + "))", unit_[k]});
    return true;
  }

  // The ',' at depth 0 that ends the argument starting at token from, or close (its call's ')').
  std::size_t argument_end(std::size_t from, std::size_t close) const {
    for (int depth = 0; from < close; ++from) {
      if (is_punct(t_[from], "(") || is_punct(t_[from], "[") || is_punct(t_[from], "{")) ++depth;
      if (is_punct(t_[from], ")") || is_punct(t_[from], "]") || is_punct(t_[from], "}")) --depth;
      if (depth == 0 && is_punct(t_[from], ",")) break;
    }
    return from;
  }

  // The ')' that closes the '(' at k, or t_.size().
  std::size_t closing(std::size_t k) const {
    int depth = 0;
    for (std::size_t j = k; j < t_.size(); ++j) {
      if (t_[j].directive) return t_.size();
      if (is_punct(t_[j], "(")) ++depth;
      if (is_punct(t_[j], ")") && --depth == 0) return j;
      if (is_punct(t_[j], ";") || ((is_punct(t_[j], "{") || is_punct(t_[j], "}")) && depth == 0))
        return t_.size();  // (braces inside: `cg::plus<float>{}`)
    }
    return t_.size();
  }

  // The '(' that opens the ')' at k, or t_.size().
  std::size_t open_of(std::size_t k) const {
    for (std::size_t j = k + 1, depth = 0; j-- > 0;) {
      if (is_punct(t_[j], ")")) ++depth;
      if (is_punct(t_[j], "(") && --depth == 0) return j;
    }
    return t_.size();
  }

  // `#include <cooperative_groups.h>` around token k: the line goes (nothing else of the
  // header remains).
  // (and `<cooperative_groups/reduce.h>` and `<cooperative_groups/scan.h>`)
  bool include_line(std::size_t k) {
    if (!t_[k].directive || k < 2 || !t_[k - 2].directive || !is_ident(t_[k - 2], "include") ||
        !is_punct(t_[k - 1], "<") || !is_ident(t_[k], "cooperative_groups"))
      return false;
    std::size_t dot = k + 1;
    if (is_punct(t_[dot], "/") &&
        (is_ident(t_[dot + 1], "reduce") || is_ident(t_[dot + 1], "scan")))
      dot += 2;
    if (!is_punct(t_[dot], ".") || !is_ident(t_[dot + 1], "h") || !is_punct(t_[dot + 2], ">"))
      return false;
    const std::size_t hash = src_.rfind('#', t_[k - 2].begin);  // (the lexer skips the '#')
    take(k - 2, dot + 2, "", true);
    if (hash != std::string_view::npos) edits_.back().begin = hash;
    return true;
  }

  // `NS::sync(b)` with b a block variable, or `NS::this_thread_block().sync()`, at k.
  bool group_sync(std::size_t k) {
    if (qualified(k, "sync") && is_punct(t_[k + 3], "(") && block(k + 4) &&
        is_punct(t_[k + 5], ")")) {
      take(k, k + 5, kSync);
      return true;
    }
    if (qualified(k, "sync") && is_punct(t_[k + 3], "(") && tile(k + 4) &&
        is_punct(t_[k + 5], ")")) {  // NS::sync(tile), as tile.sync()
      take(k, k + 5, "__syncwarp()");
      return true;
    }
    if (qualified(k, "this_thread_block") && is_punct(t_[k + 3], "(") && is_punct(t_[k + 4], ")") &&
        is_punct(t_[k + 5], ".") && is_ident(t_[k + 6], "sync") && is_punct(t_[k + 7], "(") &&
        is_punct(t_[k + 8], ")")) {
      take(k, k + 8, kSync);
      return true;
    }
    return false;
  }

  // `NS::memcpy_async(b, ...)` with b a block variable: the block's threads' strided shares of
  // the copy, done at once (`::kiln_cpu::block_memcpy(...)`, both of its forms); `NS::wait(b)`
  // and `NS::wait_prior<N>(b)`: the barrier after which every thread sees the whole copy.
  bool group_copy(std::size_t k) {
    if (qualified(k, "memcpy_async") && is_punct(t_[k + 3], "(") && block(k + 4) &&
        is_punct(t_[k + 5], ",")) {
      take(k, k + 5, "::kiln_cpu::block_memcpy(");
      return true;
    }
    if (qualified(k, "wait") && is_punct(t_[k + 3], "(") && block(k + 4) &&
        is_punct(t_[k + 5], ")")) {
      take(k, k + 5, kSync);
      return true;
    }
    if (qualified(k, "wait_prior") && is_punct(t_[k + 3], "<") && k + 8 < t_.size() &&
        is_punct(t_[k + 5], ">") && is_punct(t_[k + 6], "(") && block(k + 7) &&
        is_punct(t_[k + 8], ")")) {
      take(k, k + 8, kSync);
      return true;
    }
    return false;
  }

  // A collective `NS::fn(g, value[, NS::op<T>()])` at k, g a tile or a coalesced group and op
  // plus, less, greater, bit_and, bit_or or bit_xor, as a whole statement `[type] name = ...;`
  // after a statement's start, or `return ...;` (a device function's whole result).
  struct Collective {
    std::size_t start, value_end, close;  // the statement's first token, the value's end, ')'
    bool returned;
    std::string target;   // `[type] name` ("" when returned)
    std::string type;     // the op's type, else the value's declared type ("": unknown)
    std::string combine;  // the op of A and B
    bool op_given;
  };
  std::optional<Collective> collective(std::size_t k, const char* fn, bool op_optional) const {
    const bool returned =
        k >= 2 && is_ident(t_[k - 1], "return") &&
        (is_punct(t_[k - 2], ";") || is_punct(t_[k - 2], "{") || is_punct(t_[k - 2], "}"));
    if (!qualified(k, fn) || !is_punct(t_[k + 3], "(") || !(tile(k + 4) || coalesced(k + 4)) ||
        !is_punct(t_[k + 5], ",") || k < 3 ||
        !(returned || (is_punct(t_[k - 1], "=") && t_[k - 2].kind == Token::ident)))
      return std::nullopt;
    const std::size_t close = closing(k + 3);
    if (close == t_.size() || !is_punct(t_[close + 1], ";")) return std::nullopt;
    // value: up to the comma at depth 0; then NS::op<T>() or NS::op<T>{}
    const std::size_t comma = argument_end(k + 6, close);
    if (comma == k + 6) return std::nullopt;
    Collective c{0, comma, close, returned, "", "", "A + B", comma < close};
    if (c.op_given) {
      if (!names_.count(t_[comma + 1].text) || !is_punct(t_[comma + 2], "::") ||
          !is_punct(t_[comma + 4], "<"))
        return std::nullopt;
      static const std::pair<const char*, const char*> kOps[] = {
          {"plus", "A + B"},    {"less", "(B < A ? B : A)"}, {"greater", "(A < B ? B : A)"},
          {"bit_and", "A & B"}, {"bit_or", "A | B"},         {"bit_xor", "A ^ B"}};
      c.combine.clear();
      for (const auto& [op, text] : kOps)
        if (is_ident(t_[comma + 3], op)) c.combine = text;
      std::size_t angle = comma + 5;
      while (angle < close && t_[angle].kind == Token::ident) ++angle;  // `unsigned int`
      const bool made = (is_punct(t_[angle + 1], "(") && is_punct(t_[angle + 2], ")")) ||
                        (is_punct(t_[angle + 1], "{") && is_punct(t_[angle + 2], "}"));  // (llm.c)
      if (c.combine.empty() || angle == comma + 5 || !is_punct(t_[angle], ">") ||
          angle + 3 != close || !made)
        return std::nullopt;
      c.type = text(comma + 5, angle);
    } else if (!op_optional) {
      return std::nullopt;
    } else {
      c.type = value_type(k + 6, comma);
      if (c.type.empty()) return std::nullopt;
    }
    // the statement: `name =` or `type... name =` after a statement's start
    c.start = returned ? k - 1 : k - 2;
    while (c.start > 0 &&
           (t_[c.start - 1].kind == Token::ident || is_punct(t_[c.start - 1], "::")) &&
           !t_[c.start - 1].directive)
      --c.start;
    if (c.start > 0 && !(is_punct(t_[c.start - 1], ";") || is_punct(t_[c.start - 1], "{") ||
                         is_punct(t_[c.start - 1], "}")))
      return std::nullopt;
    static const std::set<std::string> statement_words{"return", "else",  "case",    "goto",
                                                       "do",     "throw", "typedef", "using"};
    for (std::size_t j = c.start; j < k - 2 && !returned; ++j)
      if (statement_words.count(t_[j].text)) return std::nullopt;
    if (!returned) c.target = text(c.start, k - 1);
    return c;
  }

  // Tokens [a, b) on one line.
  std::string text(std::size_t a, std::size_t b) const {
    std::string out;
    for (std::size_t j = a; j < b; ++j) out += (j > a ? " " : "") + t_[j].text;
    return out;
  }

  // The type a collective without an op deduces from its value, tokens [b, e): an unsuffixed
  // integer literal's int, or a variable's type as its kernel body or function declares it
  // (`int v = ...;`, a parameter `float v`); "" for anything else (the collective is kept).
  std::string value_type(std::size_t b, std::size_t e) const {
    if (e != b + 1) return "";
    if (t_[b].kind == Token::number)
      return t_[b].text.find_first_not_of("0123456789") == std::string::npos ? "int" : "";
    if (t_[b].kind != Token::ident) return "";
    // (back through the body, then a kernel's parameters: the ')' before its '{' to its '(')
    std::size_t params = t_.size();
    for (std::size_t j = b; j-- > 0;) {
      if (unit_[j] != unit_[b] && params == t_.size()) {
        if (!is_punct(t_[j], ")") || unit_[b] < 0) return "";
        params = open_of(j);
        if (params == t_.size()) return "";
        continue;
      }
      if (params != t_.size() && j <= params) return "";
      if (!is_ident(t_[j], t_[b].text) || member(j) || !visible(j, b)) continue;
      // The nearest declaration in scope: `T v =`, `T v;`, `T v{`, a parameter `T v,` or
      // `T v)`, `const T& v`; one that reads otherwise (a later declarator, `float a, v = 1;`)
      // gives no type, rather than an outer declaration's that it hides.
      const Token& next = t_[j + 1];
      const bool declarator_end = is_punct(next, "=") || is_punct(next, ";") ||
                                  is_punct(next, ",") || is_punct(next, ")") ||
                                  is_punct(next, "{") || is_punct(next, "[");
      const Token& before = t_[j - 1];
      const bool declared = declarator_end && (before.kind == Token::ident ||
                                               is_punct(before, "&") || is_punct(before, "*") ||
                                               is_punct(before, ",") || is_punct(before, ">"));
      if (!declared || regions::is_statement_keyword(before.text)) continue;
      if (is_punct(before, ",") && in_call(j)) continue;  // an argument: f(a, v)
      std::size_t first = j;  // the type's words, after a statement's start or '(' or ','
      while (first > 0 && (t_[first - 1].kind == Token::ident || is_punct(t_[first - 1], "&")) &&
             !t_[first - 1].directive)
        --first;
      if (first == j || first == 0 || t_[first - 1].directive ||
          !(is_punct(t_[first - 1], ";") || is_punct(t_[first - 1], "{") ||
            is_punct(t_[first - 1], "}") || is_punct(t_[first - 1], "(") ||
            is_punct(t_[first - 1], ",")) ||
          is_punct(next, "["))
        return "";
      std::string type;
      for (std::size_t w = first; w < j; ++w) {
        if (is_ident(t_[w], "auto") || regions::is_statement_keyword(t_[w].text)) return "";
        static const std::set<std::string> storage{"const",      "volatile",     "static",
                                                   "__shared__", "__constant__", "__device__",
                                                   "extern",     "register"};
        if (storage.count(t_[w].text) || is_punct(t_[w], "&"))
          continue;  // (the scan takes its value as T: decayed, its storage aside)
        type += (type.empty() ? "" : " ") + t_[w].text;
      }
      return type;
    }
    return "";
  }

  // Whether token k is inside parentheses within its statement, other than a for header's.
  bool in_call(std::size_t k) const {
    for (std::size_t j = k, depth = 0; j-- > 0;) {
      if (is_punct(t_[j], "{") || is_punct(t_[j], "}")) return false;
      if (is_punct(t_[j], ")")) ++depth;
      if (is_punct(t_[j], "(") && depth-- == 0) return j == 0 || !is_ident(t_[j - 1], "for");
    }
    return false;
  }

  // Whether a name declared at token j is in scope at token b after it: no scope holding j
  // closes before b (a block's '}', or the ')' of a header or parameters, whose braced body
  // must then hold b).
  bool visible(std::size_t j, std::size_t b) const {
    int braces = 0, parens = 0;
    for (std::size_t k = j + 1; k < b; ++k) {
      if (is_punct(t_[k], "{")) ++braces;
      if (is_punct(t_[k], "}") && --braces < 0) return false;
      if (is_punct(t_[k], "(")) ++parens;
      if (is_punct(t_[k], ")") && --parens < 0)
        return is_punct(t_[k + 1], "{") && b < body_end(k + 1);
    }
    return true;
  }

  // `NS::reduce(t, value, NS::op<T>())` at k (collective), t a tile of W lanes: a butterfly of
  // xor shuffles over the tile, which leaves every lane the whole tile's result, as NS::reduce
  // does. The statement becomes
  //   T kiln_g<N> = (value); for (int kiln_o<N> = W / 2; ...; kiln_o<N> /= 2) {
  //     T kiln_x<N> = __shfl_xor_sync(0xffffffffu, kiln_g<N>, kiln_o<N>, W);
  //     kiln_g<N> = op(kiln_g<N>, kiln_x<N>); } [type] name = kiln_g<N>;
  // in T, the op's own type, statements the region rewrite runs as warp steps. Over a coalesced
  // group g (a lane mask): __reduce_<op>_sync(g, v) where T is int or unsigned, else a tree of
  // shuffles by rank that leaves the result at rank 0, then handed to every rank.
  bool group_reduce(std::size_t k) {
    const std::optional<Collective> c = collective(k, "reduce", false);
    if (!c) return false;
    const std::string n = std::to_string(++reductions_), g = "kiln_g" + n, o = "kiln_o" + n,
                      x = "kiln_x" + n, &type = c->type;
    std::string body;
    if (const int width = tile(k + 4)) {
      body = "for (int " + o + " = " + std::to_string(width / 2) + "; " + o + " > 0; " + o +
             " /= 2) { " + type + " " + x + " = __shfl_xor_sync(0xffffffffu, " + g + ", " + o +
             ", " + std::to_string(width) + "); " + g + " = " + combined(c->combine, g, x) + "; }";
    } else {
      const std::string& mask = t_[k + 4].text;
      static const std::map<std::string, const char*> kWarpReduce{{"A + B", "add"},
                                                                  {"(B < A ? B : A)", "min"},
                                                                  {"(A < B ? B : A)", "max"},
                                                                  {"A & B", "and"},
                                                                  {"A | B", "or"},
                                                                  {"A ^ B", "xor"}};
      if (type == "int" || type == "unsigned" || type == "unsigned int")
        body = g + " = " + type + "(__reduce_" + kWarpReduce.at(c->combine) + "_sync(" + mask +
               ", " + g + "));";
      else
        body = "for (unsigned " + o + " = 1u; " + o + " < 32u; " + o + " *= 2u) { " + type + " " +
               x + " = __shfl_sync(" + mask + ", " + g + ", " +
               group_lane(mask, rank(mask) + " + " + o) + "); if (" + rank(mask) + " + " + o +
               " < " + size(mask) + ") " + g + " = " + combined(c->combine, g, x) + "; } " + g +
               " = __shfl_sync(" + mask + ", " + g + ", " + group_lane(mask, "0u") + ");";
    }
    write_collective(k, *c, g, body, g);
    return true;
  }

  // `NS::inclusive_scan(g, value[, NS::op<T>()])` or `NS::exclusive_scan(...)` at k
  // (collective), g a tile or a coalesced group: Hillis-Steele steps of shuffles up by rank (a
  // tile's within its segment, `__shfl_up_sync(0xffffffffu, v, d, W)`), in T, the op's type
  // or the value's; an exclusive scan then takes the rank before's (rank 0: T{}), as NS's do.
  bool group_scan(std::size_t k) {
    const bool inclusive = qualified(k, "inclusive_scan");
    const std::optional<Collective> c =
        collective(k, inclusive ? "inclusive_scan" : "exclusive_scan", true);
    if (!c) return false;
    const std::string n = std::to_string(++reductions_), g = "kiln_g" + n, o = "kiln_o" + n,
                      x = "kiln_x" + n, p = "kiln_p" + n, &type = c->type;
    const int width = tile(k + 4);
    const std::string mask = width ? "0xffffffffu" : t_[k + 4].text,
                      w = std::to_string(width) + "u",
                      my_rank = width ? tile_lane(width) : rank(mask);
    auto up = [&](const std::string& v, const std::string& d) {  // the value d ranks before
      return width ? "__shfl_up_sync(0xffffffffu, " + v + ", " + d + ", " + w + ")"
                   : "__shfl_sync(" + mask + ", " + v + ", " +
                         group_lane(mask, my_rank + " - " + d) + ")";
    };
    std::string body = "for (unsigned " + o + " = 1u; " + o + " < " + (width ? w : "32u") + "; " +
                       o + " *= 2u) { " + type + " " + x + " = " + up(g, o) + "; if (" + my_rank +
                       " >= " + o + ") " + g + " = " + combined(c->combine, x, g) + "; }";
    std::string result = g;
    if (!inclusive) {
      body += " " + type + " " + p + " = " + up(g, "1u") + ";";
      result = "(" + my_rank + " == 0u ? ::kiln_cpu::same_t<" + type + ">{} : " + p + ")";
    }
    write_collective(k, *c, g, body, result);
    return true;
  }

  // The edits of collective c at k: `T g = (value); body [type] name = result;` (or `return
  // result;`), the value's tokens kept in place (to be lowered themselves: `t.thread_rank()`).
  void write_collective(std::size_t k, const Collective& c, const std::string& g,
                        const std::string& body, const std::string& result) {
    take(c.start, k + 5, c.type + " " + g + " = (");
    take(c.value_end, c.close + 1,
         "); " + body + " " + (c.returned ? "return " + result : c.target + " = " + result) + ";");
  }

  // An op's text of A and B (Collective::combine) with a and b in their places.
  static std::string combined(std::string op, const std::string& a, const std::string& b) {
    for (std::size_t at; (at = op.find('A')) != std::string::npos;) op.replace(at, 1, a);
    for (std::size_t at; (at = op.find('B')) != std::string::npos;) op.replace(at, 1, b);
    return op;
  }

  // A coalesced group of lane mask g: the thread's rank in it, its size, and the lane of rank
  // (the caller's own where the group has no such rank).
  static std::string rank(const std::string& g) {
    return "unsigned(__popc(" + g + " & ((1u << " + tile_lane(32) + ") - 1u)))";
  }
  static std::string size(const std::string& g) { return "unsigned(__popc(" + g + "))"; }
  static std::string group_lane(const std::string& g, const std::string& rank) {
    return "::kiln_cpu::group_lane(" + g + ", " + rank + ", " + tile_lane(32) + ")";
  }

  // `b.sync()`, `b.thread_rank()`, `b.size()` or `b.num_threads()` at k; `b.group_index()`,
  // `b.thread_index()` and `b.dim_threads()` (`group_dim()` before CUDA 12) are the block's
  // index, the thread's and the block's shape.
  bool block_member_call(std::size_t k) {
    if (!is_punct(t_[k + 1], ".") || !is_punct(t_[k + 3], "(") || !is_punct(t_[k + 4], ")"))
      return false;
    const std::string& m = t_[k + 2].text;
    const char* text = m == "sync"                                ? kSync
                       : m == "thread_rank"                       ? kRank
                       : (m == "size" || m == "num_threads")      ? kSize
                       : m == "group_index"                       ? "blockIdx"
                       : m == "thread_index"                      ? "threadIdx"
                       : (m == "dim_threads" || m == "group_dim") ? "blockDim"
                                                                  : nullptr;
    if (!text) return false;
    take(k, k + 4, text);
    return true;
  }

  // Whether token k names a coalesced group variable of its kernel body (or function).
  bool coalesced(std::size_t k) const { return coalesced_.count({unit_[k], t_[k].text}) > 0; }
  // Whether token k names a block variable of its kernel body (or of the code outside them).
  bool block(std::size_t k) const { return blocks_.count({unit_[k], t_[k].text}) > 0; }
  // The width of the tile variable token k names in its body, or 0.
  int tile(std::size_t k) const {
    auto t = tiles_.find({unit_[k], t_[k].text});
    return t == tiles_.end() ? 0 : t->second;
  }

  // Tokens [first, last] replaced by text (in the unit of first; declaration: an #include or
  // an alias, which goes only where every use goes).
  void take(std::size_t first, std::size_t last, std::string text, bool declaration = false) {
    for (std::size_t j = first; j <= last; ++j) taken_[j] = true;
    edits_.push_back({t_[first].begin, t_[last].end, std::move(text),
                      declaration ? kDeclaration : unit_[first]});
  }

  // The source with the edits made, each keeping the newlines of what it replaces: those of
  // each unit none of whose uses was kept, and the declarations when none was.
  std::string edited() {
    // A unit that passes its groups on keeps them (block_groups) where the functions it calls
    // take them; where a function is kept as written, so is the unit (it must pass the real
    // group), and where the unit is kept, so is the function (it gets the real group). The
    // code outside every function (kOutside) kept keeps them all.
    for (bool changed = true; changed;) {
      changed = false;
      for (const auto& [unit, functions] : passes_to_)
        for (int f : functions)
          if ((kept_.count(unit) > 0) != (kept_.count(f) > 0 || kept_.count(kOutside) > 0)) {
            kept_.insert(unit);
            kept_.insert(f);
            changed = true;
          }
    }
    for (const auto& [edit, name] : declarations_)
      if (passes_to_.count(edits_[edit].unit))
        edits_[edit].text = "kiln_cpu::block_group " + name + ";";
    std::vector<Edit> edits;
    for (const Edit& e : edits_)
      if (e.unit == kDeclaration ? kept_.empty() : !kept_.count(e.unit)) edits.push_back(e);
    if (edits.empty()) return std::string(src_);
    std::sort(edits.begin(), edits.end(),
              [](const Edit& a, const Edit& b) { return a.begin < b.begin; });
    std::string out;
    std::size_t at = 0;
    for (const Edit& e : edits) {
      const std::size_t begin = e.begin, end = e.end;
      out.append(src_.substr(at, begin - at));
      out += e.text;
      out.append(std::count(src_.begin() + begin, src_.begin() + end, '\n'), '\n');
      at = end;
    }
    out.append(src_.substr(at));
    return out;
  }

  std::string_view src_;
  std::vector<Token> t_;
  std::vector<bool> taken_;
  std::vector<int> unit_;                             // each token's kernel body (kOutside: none)
  std::set<std::string> names_;                       // cooperative_groups and its aliases
  std::set<std::pair<int, std::string>> blocks_;      // the block variables, by unit
  std::map<std::pair<int, std::string>, int> tiles_;  // the tile variables: widths (lanes)
  std::set<std::pair<int, std::string>> coalesced_;   // the coalesced group variables
  // The functions outside the bodies: each one's unit and its name's token (overloads:
  // kOutside and t_.size()).
  std::map<std::string, std::pair<int, std::size_t>> function_unit_;
  std::map<int, std::set<int>> passes_to_;    // a unit: the function units it passes groups to
  std::set<std::pair<std::string, int>> tile_functions_;  // (function, parameter) taking tiles
  std::set<int> kept_;                     // the units with a use the lowering does not take
  std::set<std::string> block_functions_;  // the functions with a block parameter lowered
  std::vector<std::pair<std::size_t, std::string>> declarations_;  // of groups: edit, name
  int reductions_ = 0;                // NS::reduce calls lowered (their variables' numbers)
  std::vector<Edit> edits_;
};

}  // namespace

// After `using namespace cooperative_groups;` (cuda-samples' simpleCooperativeGroups, forum
// code): each unqualified use of a name of the namespace the lowering knows, written out in
// full (`thread_block b = this_thread_block();` -> `cooperative_groups::thread_block b =
// cooperative_groups::this_thread_block();`), so that the lowering reads it as it reads
// `cg::`. A name the source declares itself (`__device__ int reduce(...)`), a member
// (`b.sync()`) and a qualified name are left alone. Columns shift; lines stay.
std::string qualified_uses(std::string_view source) {
  if (source.find("using") == std::string_view::npos) return std::string(source);
  const std::set<std::string>& names = lowered_group_names();
  const std::vector<Token> t = jit::lex(source);
  bool directive = false;
  for (std::size_t k = 0; k + 3 < t.size(); ++k)
    directive = directive || (is_ident(t[k], "using") && is_ident(t[k + 1], "namespace") &&
                              is_ident(t[k + 2], "cooperative_groups") && is_punct(t[k + 3], ";"));
  if (!directive) return std::string(source);
  std::set<std::string> declared;  // `int reduce(`, `float plus =`: the source's own
  for (std::size_t k = 1; k < t.size(); ++k)
    if (t[k].kind == Token::ident && names.count(t[k].text) && t[k - 1].kind == Token::ident &&
        !regions::is_statement_keyword(t[k - 1].text))
      declared.insert(t[k].text);
  std::vector<Edit> edits;
  for (std::size_t k = 0; k < t.size(); ++k) {
    if (t[k].kind != Token::ident || t[k].directive || !names.count(t[k].text) ||
        declared.count(t[k].text))
      continue;
    if (k > 0 && (is_punct(t[k - 1], ".") || is_punct(t[k - 1], "::") ||
                  (k > 1 && is_punct(t[k - 1], ">") && is_punct(t[k - 2], "-"))))
      continue;
    edits.push_back({t[k].begin, t[k].begin, "cooperative_groups::", 0});
  }
  return apply_edits(source, edits);
}

const std::set<std::string>& lowered_group_names() {
  static const std::set<std::string> names{"thread_block",
                                           "thread_block_tile",
                                           "thread_group",
                                           "this_thread_block",
                                           "tiled_partition",
                                           "sync",
                                           "reduce",
                                           "memcpy_async",
                                           "wait",
                                           "wait_prior",
                                           "plus",
                                           "less",
                                           "greater",
                                           "bit_and",
                                           "bit_or",
                                           "bit_xor",
                                           "inclusive_scan",
                                           "exclusive_scan",
                                           "coalesced_group",
                                           "coalesced_threads"};
  return names;
}

std::string lower_block_groups(std::string_view source) {
  // (no token can name the namespace, nor an alias of it: nothing to lex twice)
  if (source.find("cooperative_groups") == std::string_view::npos) return std::string(source);
  const std::string qualified = qualified_uses(source);
  const std::string cloned = Lowering(qualified).with_tile_clones();
  std::string lowered = Lowering(cloned).run();
  return lowered == cloned ? std::string(source) : lowered;  // (copies only to be lowered)
}

}  // namespace kiln::cpu
