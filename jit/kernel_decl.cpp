// The kernel-declaration scan over jit/lexer.h's tokens: "__global__" in comments, strings and
// preprocessor lines is ignored; brackets are matched to find parameter and template lists.
#include "jit/kernel_decl.h"

#include "jit/lexer.h"

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace kiln::jit {
namespace {

// The code tokens (preprocessor lines dropped).
std::vector<Token> code_tokens(std::string_view source) {
  std::vector<Token> all = lex(source);
  std::vector<Token> out;
  out.reserve(all.size());
  for (Token& t : all)
    if (!t.directive) out.push_back(std::move(t));
  return out;
}

constexpr std::size_t kNone = static_cast<std::size_t>(-1);

// Pairs brackets: for each opening ( [ { < the index of its closer (toks.size() when
// unbalanced), for every other token kNone. '<' opens a template list only after an identifier
// or "template" (so "a < b" in a condition is an operator unless a '>' follows it at the same
// depth); a '>' closes only a '<'; a ) ] } closes its opener, dropping unclosed '<' between.
std::vector<std::size_t> pair_brackets(const std::vector<Token>& toks) {
  std::vector<std::size_t> match(toks.size(), kNone);
  std::vector<std::size_t> stack;
  auto opener_of = [](std::string_view close) {
    return close == ")" ? "(" : close == "]" ? "[" : close == "}" ? "{" : "<";
  };
  for (std::size_t k = 0; k < toks.size(); ++k) {
    const Token& t = toks[k];
    if (t.kind != Token::punct) continue;
    if (t.text == "(" || t.text == "[" || t.text == "{") {
      stack.push_back(k);
      match[k] = toks.size();
    } else if (t.text == "<") {
      bool after_name = k > 0 && toks[k - 1].kind == Token::ident && toks[k - 1].text != "return" &&
                        toks[k - 1].text != "operator";
      if (after_name) {
        stack.push_back(k);
        match[k] = toks.size();
      }
    } else if (t.text == ">") {
      if (!stack.empty() && toks[stack.back()].text == "<") {
        match[stack.back()] = k;
        stack.pop_back();
      }
    } else if (t.text == ")" || t.text == "]" || t.text == "}") {
      std::string_view want = opener_of(t.text);
      std::size_t s = stack.size();
      while (s > 0 && toks[stack[s - 1]].text == "<") --s;
      if (s > 0 && toks[stack[s - 1]].text == want) {
        stack.resize(s);
        match[stack.back()] = k;
        stack.pop_back();
      }
    }
  }
  return match;
}

// Splits [begin, end) at commas outside any brackets.
std::vector<std::pair<std::size_t, std::size_t>> split_commas(const std::vector<Token>& toks,
                                                              const std::vector<std::size_t>& match,
                                                              std::size_t begin, std::size_t end) {
  std::vector<std::pair<std::size_t, std::size_t>> parts;
  std::size_t start = begin;
  for (std::size_t k = begin; k < end; ++k) {
    if (match[k] != kNone) {
      k = match[k];
    } else if (is_punct(toks[k], ",")) {
      parts.emplace_back(start, k);
      start = k + 1;
    }
  }
  if (start < end || !parts.empty()) parts.emplace_back(start, end);
  return parts;
}

// The first top-level "=" in [begin, end), or end.
std::size_t find_equals(const std::vector<Token>& toks, const std::vector<std::size_t>& match,
                        std::size_t begin, std::size_t end) {
  for (std::size_t k = begin; k < end; ++k) {
    if (match[k] != kNone)
      k = match[k];
    else if (is_punct(toks[k], "="))
      return k;
  }
  return end;
}

// The source text of tokens [begin, end) with each gap between tokens (blanks, comments) shown
// as one space: "const  float *" -> "const float *", "float*" stays "float*".
std::string token_text(std::string_view src, const std::vector<Token>& toks, std::size_t begin,
                       std::size_t end) {
  std::string out;
  for (std::size_t k = begin; k < end; ++k) {
    if (k > begin && toks[k].begin > toks[k - 1].end) out += ' ';
    out += src.substr(toks[k].begin, toks[k].end - toks[k].begin);
  }
  return out;
}

// Words that are part of a type, never a parameter's name.
bool is_type_word(const std::string& w) {
  static const char* const kWords[] = {
      "const",    "volatile", "__restrict__", "__restrict", "restrict", "unsigned", "signed",
      "int",      "long",     "short",        "char",       "float",    "double",   "bool",
      "void",     "auto",     "struct",       "class",      "typename", "enum",     "union",
      "register", "__half",   "wchar_t",      "char16_t",   "char32_t", "char8_t"};
  for (const char* k : kWords)
    if (w == k) return true;
  return false;
}

// Splits one parameter (tokens [begin, end)) into type text, name and default argument.
ParamDecl parse_param(std::string_view src, const std::vector<Token>& toks,
                      const std::vector<std::size_t>& match, std::size_t begin, std::size_t end) {
  const std::size_t equals = find_equals(toks, match, begin, end);
  std::string default_value = equals < end ? token_text(src, toks, equals + 1, end) : "";
  end = equals;
  std::string array_suffix;                    // "float x[4]": the name is before the brackets
  std::size_t type_end = end;
  while (type_end > begin && is_punct(toks[type_end - 1], "]")) {
    std::size_t k = type_end - 1;
    int depth = 0;
    for (; k > begin; --k) {
      if (is_punct(toks[k], "]")) ++depth;
      if (is_punct(toks[k], "[") && --depth == 0) break;
    }
    array_suffix = token_text(src, toks, k, type_end) + array_suffix;
    type_end = k;
  }
  ParamDecl p;
  std::size_t last = type_end > begin ? type_end - 1 : begin;
  bool named = type_end > begin + 1 && toks[last].kind == Token::ident &&
               !is_type_word(toks[last].text) && !is_punct(toks[last - 1], "::");
  if (named) {
    // "const T": T alone after qualifiers is the type, not a name.
    bool only_qualifiers = true;
    for (std::size_t k = begin; k < last; ++k)
      if (!(is_ident(toks[k], "const") || is_ident(toks[k], "volatile"))) only_qualifiers = false;
    named = !only_qualifiers;
  }
  if (named) {
    p.name = toks[last].text;
    p.type = token_text(src, toks, begin, last);
  } else {
    p.type = token_text(src, toks, begin, type_end);
  }
  if (!array_suffix.empty()) p.type += array_suffix;
  p.default_value = std::move(default_value);
  return p;
}

// Parses "template < ... >" whose '<' is at open and '>' at close.
std::vector<TemplateParam> parse_template_params(std::string_view src,
                                                 const std::vector<Token>& toks,
                                                 const std::vector<std::size_t>& match,
                                                 std::size_t open, std::size_t close) {
  std::vector<TemplateParam> out;
  for (auto [b, e] : split_commas(toks, match, open + 1, close)) {
    if (b == e) continue;
    TemplateParam tp;
    std::size_t eq = find_equals(toks, match, b, e);
    if (eq < e) tp.default_value = token_text(src, toks, eq + 1, e);
    std::size_t name_at = eq;
    while (name_at > b && toks[name_at - 1].kind != Token::ident) --name_at;
    bool has_name = name_at > b + 1 && toks[name_at - 1].kind == Token::ident &&
                    !is_type_word(toks[name_at - 1].text);
    if (has_name) tp.name = toks[name_at - 1].text;
    std::size_t kind_end = has_name ? name_at - 1 : eq;
    if (is_ident(toks[b], "typename") || is_ident(toks[b], "class")) {
      bool pack = kind_end > b + 1 && is_punct(toks[kind_end - 1], ".");
      tp.kind = pack ? "typename..." : "typename";
    } else {
      tp.kind = token_text(src, toks, b, kind_end);
    }
    out.push_back(std::move(tp));
  }
  return out;
}

// Linkage of the braces enclosing a point: each '{' records whether it opened an extern "C"
// block (true), an extern "C++" block (false), or inherits the outer linkage.
struct Scope {
  bool extern_c;
  std::string name;  // a named namespace's ("clover", "a::b"), else ""
};

// A parameter type as the function's type sees it: without restrict and without the const or
// volatile of the parameter itself ("const int", "float* const" are int and float*).
std::string type_key(const std::string& type) {
  const std::size_t last_declarator = type.find_last_of("*&[");
  std::string key;
  std::size_t i = 0;
  while (i < type.size()) {
    if (std::isalnum(static_cast<unsigned char>(type[i])) || type[i] == '_') {
      std::size_t e = i;
      while (e < type.size() &&
             (std::isalnum(static_cast<unsigned char>(type[e])) || type[e] == '_'))
        ++e;
      const std::string word = type.substr(i, e - i);
      const bool own_qualifier = (word == "const" || word == "volatile") &&
                                 (last_declarator == std::string::npos || i > last_declarator);
      if (word != "__restrict__" && word != "__restrict" && word != "restrict" && !own_qualifier)
        key += (key.empty() || !std::isalnum(static_cast<unsigned char>(key.back())) ? "" : " ") +
               word;
      i = e;
    } else {
      if (type[i] != ' ') key += type[i];
      ++i;
    }
  }
  return key;
}

// Whether a and b declare the same function (a declaration and its definition), not overloads.
bool same_function(const KernelDecl& a, const KernelDecl& b) {
  if (a.name != b.name || a.scope != b.scope || a.params.size() != b.params.size()) return false;
  for (std::size_t k = 0; k < a.params.size(); ++k)
    if (type_key(a.params[k].type) != type_key(b.params[k].type)) return false;
  return true;
}

// Fills in what a declaration lacks (parameter names, template defaults) from a redeclaration.
void merge(KernelDecl& first, const KernelDecl& again, bool again_is_definition) {
  for (std::size_t k = 0; k < first.params.size() && k < again.params.size(); ++k)
    if (first.params[k].name.empty()) first.params[k].name = again.params[k].name;
  for (std::size_t k = 0; k < first.template_params.size() && k < again.template_params.size();
       ++k) {
    TemplateParam& tp = first.template_params[k];
    if (tp.default_value.empty()) tp.default_value = again.template_params[k].default_value;
    if (tp.name.empty()) tp.name = again.template_params[k].name;
  }
  if (again_is_definition) {  // (its types as the definition spells them: a typedef's struct)
    first.line = again.line;
    for (std::size_t k = 0; k < first.params.size() && k < again.params.size(); ++k)
      first.params[k].type = again.params[k].type;
  }
  first.extern_c = first.extern_c || again.extern_c;
}

// One __global__ declaration or definition as written, before redeclarations are merged.
struct KernelSite {
  KernelDecl decl;
  std::size_t body = kNone;  // token index of the body's '{'; kNone for a declaration
};

// Every __global__ function declaration and definition in toks, in order of appearance.
std::vector<KernelSite> kernel_sites(std::string_view source, const std::vector<Token>& toks,
                                     const std::vector<std::size_t>& match) {
  std::vector<KernelSite> found;
  std::vector<Scope> scopes;
  std::size_t stmt_start = 0;  // first token of the current declaration
  const std::size_t n = toks.size();
  for (std::size_t k = 0; k < n; ++k) {
    const Token& t = toks[k];
    if (is_punct(t, ";")) {
      stmt_start = k + 1;
    } else if (is_punct(t, "{")) {
      bool outer = !scopes.empty() && scopes.back().extern_c;
      bool c_block = k >= 2 && is_ident(toks[k - 2], "extern") && toks[k - 1].kind == Token::string;
      std::string name;  // `namespace clover {`, `namespace a::b {`
      std::size_t j = k;
      while (j > 0 && (toks[j - 1].kind == Token::ident || is_punct(toks[j - 1], "::")) &&
             !is_ident(toks[j - 1], "namespace"))
        --j;
      if (j > 0 && j < k && is_ident(toks[j - 1], "namespace"))
        for (std::size_t i = j; i < k; ++i) name += toks[i].text;
      scopes.push_back({c_block ? toks[k - 1].text == "C" : outer, name});
      stmt_start = k + 1;
    } else if (is_punct(t, "}")) {
      if (!scopes.empty()) scopes.pop_back();
      stmt_start = k + 1;
    } else if (is_ident(t, "__global__")) {
      KernelDecl d;
      d.line = t.line;
      d.extern_c = !scopes.empty() && scopes.back().extern_c;
      for (std::size_t j = stmt_start; j < k; ++j) {
        if (is_ident(toks[j], "extern") && j + 1 < k && toks[j + 1].kind == Token::string)
          d.extern_c = toks[j + 1].text == "C";
        if (is_ident(toks[j], "template") && j + 1 < k && is_punct(toks[j + 1], "<")) {
          std::size_t close = std::min(match[j + 1], k);
          d.template_params = parse_template_params(source, toks, match, j + 1, close);
          j = close;
        }
      }
      // The name is the identifier before the parameter list; skip attribute argument lists.
      std::size_t j = k + 1;
      std::size_t name_at = n;
      for (; j < n; ++j) {
        const Token& u = toks[j];
        if (u.kind == Token::ident &&
            (u.text == "__launch_bounds__" || u.text == "__attribute__" || u.text == "__declspec" ||
             u.text == "alignas" || u.text == "__maxnreg__" || u.text == "__cluster_dims__") &&
            j + 1 < n && is_punct(toks[j + 1], "(")) {
          j = match[j + 1];
          continue;
        }
        if (is_punct(u, "[") && j + 1 < n && is_punct(toks[j + 1], "[")) {  // [[attributes]]
          j = match[j];
          continue;
        }
        if (u.kind == Token::ident) name_at = j;
        if (is_punct(u, "<") && match[j] != kNone) {  // "k<float>(": explicit specialisation
          j = match[j];
          continue;
        }
        if (is_punct(u, "(") || is_punct(u, ";") || is_punct(u, "{")) break;
      }
      if (j >= n || !is_punct(toks[j], "(") || name_at == n) continue;  // not a function
      d.name = toks[name_at].text;
      for (const Scope& s : scopes)
        if (!s.name.empty()) d.scope += s.name + "::";
      std::size_t close = match[j];
      auto parts = split_commas(toks, match, j + 1, close);
      bool only_void = parts.size() == 1 && parts[0].second == parts[0].first + 1 &&
                       is_ident(toks[parts[0].first], "void");
      if (!only_void)
        for (auto [b, e] : parts) d.params.push_back(parse_param(source, toks, match, b, e));
      // A definition has its body after the parameter list (and any trailing attributes).
      std::size_t after = close + 1;
      while (after < n && !is_punct(toks[after], "{") && !is_punct(toks[after], ";") &&
             !is_punct(toks[after], "}"))
        ++after;
      bool defined = after < n && is_punct(toks[after], "{");
      found.push_back({std::move(d), defined ? after : kNone});
      k = close;  // the body, if any, is scanned on: its braces keep the scope stack right
    }
  }
  return found;
}

}  // namespace

std::vector<bool> conditional_lines(std::string_view source) {
  const std::vector<Token> toks = lex(source);
  std::vector<bool> inside(std::count(source.begin(), source.end(), '\n') + 2, false);
  struct Group {
    int line;
    bool guard;
  };
  std::vector<Group> open;
  auto mark = [&](const Group& g, int last) {
    if (!g.guard)
      for (int l = g.line; l <= last && l < int(inside.size()); ++l) inside[l] = true;
  };
  // Whether token i is a directive's name: `#` and blanks before it on its line.
  auto directive = [&](std::size_t i) {
    if (!toks[i].directive) return false;
    const std::size_t line_start = source.rfind('\n', toks[i].begin) + 1;  // (npos + 1 is 0)
    const std::string_view lead = source.substr(line_start, toks[i].begin - line_start);
    return lead.find_first_not_of(" \t#") == std::string_view::npos &&
           std::count(lead.begin(), lead.end(), '#') == 1;
  };
  for (std::size_t i = 0; i < toks.size(); ++i) {
    if (!directive(i)) continue;
    const std::string& word = toks[i].text;
    if (word == "if" || word == "ifdef" || word == "ifndef") {
      const bool guard = word == "ifndef" && open.empty() && i + 3 < toks.size() &&
                         directive(i + 2) && is_ident(toks[i + 2], "define") &&
                         toks[i + 3].text == toks[i + 1].text;
      open.push_back({toks[i].line, guard});
    } else if (word == "endif" && !open.empty()) {
      mark(open.back(), toks[i].line);
      open.pop_back();
    }
  }
  for (const Group& g : open) mark(g, int(inside.size()) - 1);  // (unclosed: to the end)
  return inside;
}

std::string plain_lambdas(std::string_view source) {
  std::string out(source);
  bool annotated = false;  // (a quick look first: `]`, blanks, `__`)
  for (std::size_t at = source.find(']'); at != std::string_view::npos && !annotated;
       at = source.find(']', at + 1)) {
    const std::size_t next = source.find_first_not_of(" \t\r\n", at + 1);
    annotated = next != std::string_view::npos && source.substr(next, 2) == "__";
  }
  if (!annotated) return out;
  const std::vector<Token> t = code_tokens(source);
  for (std::size_t k = 0; k + 1 < t.size(); ++k) {
    if (!is_punct(t[k], "]")) continue;
    std::size_t e = k + 1;  // past the lambda's execution-space words
    while (e < t.size() && (is_ident(t[e], "__device__") || is_ident(t[e], "__host__"))) ++e;
    if (e == k + 1 || e == t.size() ||
        !(is_punct(t[e], "(") || is_punct(t[e], "{") || is_ident(t[e], "mutable") ||
          is_punct(t[e], "-")))
      continue;
    for (std::size_t w = k + 1; w < e; ++w)
      std::fill(out.begin() + t[w].begin, out.begin() + t[w].end, ' ');
  }
  return out;
}

std::string substitute_words(std::string type, const std::vector<std::string>& params,
                             const std::vector<std::string>& args) {
  for (std::size_t t = 0; t < params.size() && t < args.size(); ++t) {
    const std::string& word = params[t];
    for (std::size_t at = 0; (at = type.find(word, at)) != std::string::npos;) {
      auto part_of_word = [&](std::size_t k) {
        return k < type.size() &&
               (std::isalnum(static_cast<unsigned char>(type[k])) || type[k] == '_');
      };
      if ((at > 0 && part_of_word(at - 1)) || part_of_word(at + word.size())) {
        at += word.size();
        continue;
      }
      type.replace(at, word.size(), args[t]);
      at += args[t].size();
    }
  }
  return type;
}

std::string parameter_list(const KernelDecl& decl) {
  std::string list;
  for (const ParamDecl& p : decl.params)
    list += (list.empty() ? "" : ", ") + p.type + (p.name.empty() ? "" : " " + p.name);
  return "(" + list + ")";
}

std::vector<KernelDecl> find_kernels(std::string_view source) {
  std::vector<Token> toks = code_tokens(source);
  std::vector<KernelSite> sites = kernel_sites(source, toks, pair_brackets(toks));
  // A declaration's definition: the one of its parameter types (type_key), else the only one
  // of its name and arity, however it spells them (`float const*`, `unsigned int`, a typedef).
  std::vector<std::size_t> definition(sites.size(), kNone);
  for (std::size_t i = 0; i < sites.size(); ++i) {
    if (sites[i].body != kNone) continue;
    std::vector<std::size_t> candidates, elsewhere;  // (elsewhere: `void A::f(...) {` outside A)
    for (std::size_t j = 0; j < sites.size(); ++j) {
      const KernelDecl &a = sites[i].decl, &b = sites[j].decl;
      if (sites[j].body != kNone && a.name == b.name && a.params.size() == b.params.size())
        (a.scope == b.scope ? candidates : elsewhere).push_back(j);
    }
    if (candidates.empty() && elsewhere.size() == 1) candidates = elsewhere;
    for (std::size_t j : candidates)
      if (same_function(sites[i].decl, sites[j].decl)) definition[i] = j;
    if (definition[i] == kNone && candidates.size() == 1) definition[i] = candidates[0];
  }
  std::vector<KernelDecl> found;
  std::vector<bool> found_defined;
  std::map<std::size_t, std::size_t> found_of;  // a definition's site -> its entry in found
  for (std::size_t i = 0; i < sites.size(); ++i) {
    KernelSite& site = sites[i];
    const bool defined = site.body != kNone;
    const std::size_t def = defined ? i : definition[i];
    std::size_t f = def != kNone && found_of.count(def) ? found_of[def] : found.size();
    for (std::size_t g = 0; f == found.size() && g < found.size(); ++g)
      if (same_function(found[g], site.decl) && (def == kNone || !found_defined[g])) f = g;
    if (f < found.size()) {
      merge(found[f], site.decl, defined && !found_defined[f]);
      found_defined[f] = found_defined[f] || defined;
    } else {
      found.push_back(std::move(site.decl));
      found_defined.push_back(defined);
    }
    if (def != kNone) found_of[def] = f;
  }
  for (KernelDecl& d : found)
    d.overloaded = std::count_if(found.begin(), found.end(), [&](const KernelDecl& o) {
                     return o.name == d.name && o.scope == d.scope;
                   }) > 1;
  return found;
}

std::vector<KernelBody> find_kernel_bodies(std::string_view source) {
  std::vector<Token> toks = code_tokens(source);
  std::vector<std::size_t> match = pair_brackets(toks);
  std::vector<KernelBody> out;
  for (const KernelSite& site : kernel_sites(source, toks, match)) {
    if (site.body == kNone) continue;
    std::size_t close = match[site.body];
    std::vector<std::string> params, types;
    for (const ParamDecl& p : site.decl.params) params.push_back(p.name), types.push_back(p.type);
    out.push_back({site.decl.name, std::move(params), toks[site.body].begin,
                   close < toks.size() ? toks[close].begin : source.size(), std::move(types)});
  }
  return out;
}

SyncUse scan_sync(std::string_view source, bool lockstep) {
  static constexpr std::string_view kBlockBarriers[] = {"__syncthreads", "__syncthreads_count",
                                                        "__syncthreads_and", "__syncthreads_or"};
  static constexpr std::string_view kOtherPrefixes[] = {
      "__syncthreads",   "__syncwarp",        "__shfl",           "__ballot_sync",
      "__any_sync",      "__all_sync",        "__uni_sync",       "__activemask",
      "__match_",        "__reduce_",         "__barrier_sync",   "cooperative_groups",
      "tiled_partition", "this_thread_block", "coalesced_threads"};
  std::vector<Token> toks = lex(source);  // directives count: macros and #includes
  auto punct_at = [&](std::size_t k, std::string_view p) {
    return k < toks.size() && is_punct(toks[k], p);
  };
  SyncUse use;
  // The construct a reason names is the first use; an #include of the library or a namespace
  // alias of it (`namespace cg = cooperative_groups;`) only stands in until one appears.
  bool named_use = false;
  auto other = [&](const Token& t, std::string construct, bool declaration = false) {
    if (!use.other_sync || (!declaration && !named_use))
      use.first_other = std::move(construct), use.first_other_line = t.line;
    named_use = named_use || !declaration;
    use.other_sync = true;
    use.other_used = named_use;
  };
  auto declaration =
      [&](std::size_t k) {  // `#include <...>`, `namespace cg = [::]...`, `using ...`
        const std::size_t q = k >= 1 && is_punct(toks[k - 1], "::") ? k - 1 : k;
        return toks[k].directive || (k >= 1 && is_ident(toks[k - 1], "namespace")) ||
               (q >= 3 && is_punct(toks[q - 1], "=") && is_ident(toks[q - 3], "namespace"));
      };
  for (std::size_t k = 0; k < toks.size(); ++k) {
    const Token& t = toks[k];
    if (is_punct(t, "]")) {  // "](", "]{", "] mutable", "] ->": a lambda's introducer ends
      const bool lambda = punct_at(k + 1, "(") || punct_at(k + 1, "{") ||
                          (k + 1 < toks.size() && is_ident(toks[k + 1], "mutable")) ||
                          (punct_at(k + 1, "-") && punct_at(k + 2, ">"));
      if (lambda && !use.lambda) use.first_lambda_line = t.line;
      use.lambda = use.lambda || lambda;
      continue;
    }
    if (t.kind != Token::ident) continue;
    if (std::find(std::begin(kBlockBarriers), std::end(kBlockBarriers), t.text) !=
        std::end(kBlockBarriers)) {
      if (!use.block_barriers) use.first_barrier_line = t.line;
      use.block_barriers = true;
      continue;
    }
    for (std::string_view p : kOtherPrefixes)
      if (std::string_view(t.text).starts_with(p)) other(t, t.text, declaration(k));
    if (t.text == "cub") other(t, "cub", declaration(k));  // its collectives synchronise inside
    // libcu++'s barriers (<cuda/barrier>, <cuda/std/barrier>) wait inside their members.
    // A block's cuda::pipeline (made over a pipeline_shared_state) waits in its members too.
    if (t.text == "arrive_and_wait" || t.text == "arrive_and_drop" ||
        t.text == "pipeline_shared_state" ||
        (t.text == "barrier" && k > 0 && is_punct(toks[k - 1], "::")))
      other(t, t.text);
    if (t.text == "sync" && k > 0 && is_punct(toks[k - 1], ".") && punct_at(k + 1, "("))
      other(t, ".sync()");  // cooperative groups: g.sync()
  }
  if (const SyncUse l = lockstep ? lockstep_sync(toks) : SyncUse{}; l.other_sync)
    other(Token{Token::ident, "", 0, 0, l.first_other_line, false}, l.first_other);
  for (const SpinWait& s : spin_waits(toks))
    if ((s.shared || lockstep) && !s.between_blocks) {
      other(toks[s.condition], "a spin-wait on " +
                                   std::string(s.shared ? "__shared__" : "volatile") + " '" +
                                   s.name + "' (another thread sets it)");
      break;
    }
  return use;
}

namespace {

// Whether tokens from k are an assignment (`=`, `+=`, `<<=`, ...) or an increment.
bool assigns_at(const std::vector<Token>& t, std::size_t k) {
  return assignment_width(t, k) != 0;
}

// One past the bracket group opening at k (match: pair_brackets'), or t.size().
std::size_t past_group(const std::vector<Token>& t, const std::vector<std::size_t>& match,
                       std::size_t k) {
  return match[k] < t.size() ? match[k] + 1 : t.size();
}

// The scope of a name declared at token n: a parameter's function body (its '{' in *body), or
// the rest of the block holding a local ([n + 1, end)).
std::size_t scope_end(const std::vector<Token>& t, const std::vector<std::size_t>& match,
                      std::size_t n, std::size_t* body = nullptr) {
  if (n + 1 < t.size() && (is_punct(t[n + 1], ")") || is_punct(t[n + 1], ","))) {
    for (std::size_t k = n + 1; k < t.size(); ++k) {  // a parameter list's ')', then '{'
      if (is_punct(t[k], "(")) k = past_group(t, match, k) - 1;
      if (!is_punct(t[k], ")")) continue;
      if (k + 1 >= t.size() || !is_punct(t[k + 1], "{")) return n + 1;
      if (body) *body = k + 1;
      return past_group(t, match, k + 1);
    }
    return n + 1;
  }
  int depth = 0;
  for (std::size_t k = n + 1; k < t.size(); ++k) {
    if (is_punct(t[k], "{")) ++depth;
    if (is_punct(t[k], "}") && --depth < 0) return k;
  }
  return t.size();
}

// The '(' opening the parenthesised group that ends at token close (a ')'), or kNone.
std::size_t opening_paren(const std::vector<Token>& t, std::size_t close) {
  int depth = 0;
  for (std::size_t k = close + 1; k-- > 0;) {
    if (is_punct(t[k], ")")) ++depth;
    if (is_punct(t[k], "(") && --depth == 0) return k;
  }
  return kNone;
}

// A __global__ function: its parameter list's '(' and its body's '{' and '}'.
struct KernelSpan {
  std::size_t params, open, close;
};

// The __global__ function holding token k (a parameter, or in its body: the outermost brace
// group around k that follows a ')'), or nullopt (a device function; outside any function).
std::optional<KernelSpan> enclosing_kernel(const std::vector<Token>& t,
                                           const std::vector<std::size_t>& match, std::size_t k,
                                           std::size_t body) {
  std::size_t open = body;
  for (std::size_t j = 1; open == 0 && j < k; ++j)
    if (is_punct(t[j], "{") && match[j] > k && match[j] < t.size() && is_punct(t[j - 1], ")"))
      open = j;
  if (open == 0 || match[open] >= t.size()) return std::nullopt;
  const std::size_t params = opening_paren(t, open - 1);
  if (params == kNone) return std::nullopt;
  for (std::size_t j = params; j-- > 0;) {
    if (t[j].directive || is_punct(t[j], ";") || is_punct(t[j], "{") || is_punct(t[j], "}")) break;
    if (is_ident(t[j], "__global__")) return KernelSpan{params, open, match[open]};
  }
  return std::nullopt;
}

// Whether token k of t (brackets paired in match) starts a branch or loop with a header: `if (`,
// `for (`, `while (`, `switch (` (a do loop's `while` follows its body: it controls nothing
// after it).
bool control_at(const std::vector<Token>& t, const std::vector<std::size_t>& match, std::size_t k) {
  return (is_ident(t[k], "if") || is_ident(t[k], "for") || is_ident(t[k], "while") ||
          is_ident(t[k], "switch")) &&
         is_punct(t[k + 1], "(") && match[k + 1] < t.size() &&
         !(is_ident(t[k], "while") && is_punct(t[match[k + 1] + 1], ";"));
}

// One past the statement of t starting at k (a block, a branch with its else, a loop, or up to
// its ';'), at most limit.
std::size_t statement_end(const std::vector<Token>& t, const std::vector<std::size_t>& match,
                          std::size_t k, std::size_t limit) {
  if (k >= limit) return limit;
  if (is_punct(t[k], "{")) return std::min(match[k] + 1, limit);
  if (control_at(t, match, k)) {
    std::size_t e = statement_end(t, match, match[k + 1] + 1, limit);
    if (is_ident(t[k], "if") && e < limit && is_ident(t[e], "else"))
      e = statement_end(t, match, e + 1, limit);
    return e;
  }
  if (is_ident(t[k], "do")) {  // do body while (...);
    const std::size_t e = statement_end(t, match, k + 1, limit);
    return e + 1 < limit && is_punct(t[e + 1], "(") ? std::min(match[e + 1] + 2, limit) : e;
  }
  for (std::size_t j = k; j < limit; ++j) {
    if ((is_punct(t[j], "(") || is_punct(t[j], "[") || is_punct(t[j], "{")) && match[j] < limit)
      j = match[j];
    else if (is_punct(t[j], ";"))
      return j + 1;
  }
  return limit;
}

// Which values of a kernel may differ between its threads. A name varies when it is assigned
// (or declared with, or stepped by ++/--) a value that names threadIdx, a call or a varying
// name, or is assigned inside a branch or loop whose header varies; when it is declared and
// never given a value (a lambda's parameter); when its address is taken, a reference is bound
// to it, or it is passed to a call (which may write it). The kernel's parameters, what is
// computed from them alone, blockIdx & co., its __shared__ variables (one per block) and the
// source's object-like macros of such things are the same in every thread. Any other name (a
// header's macro, a template parameter) counts as varying. Names, not scopes: a name of each
// thread anywhere is one everywhere.
class ThreadValues {
 public:
  ThreadValues(const std::vector<Token>& t, const std::vector<std::size_t>& match,
               const KernelSpan& kernel)
      : t_(t), match_(match) {
    read_macros();
    // The parameters: each declarator's last name, before its ',' or ')' (or its '[').
    for (std::size_t k = kernel.params + 1, depth = 0; k + 1 < kernel.open; ++k) {
      if (is_punct(t[k], "(") || is_punct(t[k], "<") || is_punct(t[k], "[")) ++depth;
      if (is_punct(t[k], ")") || is_punct(t[k], ">") || is_punct(t[k], "]")) --depth;
      if (depth == 0 && t[k].kind == Token::ident &&
          (is_punct(t[k + 1], ",") || is_punct(t[k + 1], ")") || is_punct(t[k + 1], "[")))
        known_.insert(t[k].text);
    }
    std::set<std::string> declared, assigned, arrays;
    std::vector<std::size_t> parens;  // the '(' around the token at hand
    for (std::size_t k = kernel.open + 1; k < kernel.close; ++k) {
      const Token& x = t[k];
      if (is_punct(x, "(")) parens.push_back(k);
      if (is_punct(x, ")") && !parens.empty()) parens.pop_back();
      if (x.directive) continue;
      if (is_control(k)) {
        // (a for loop's step runs under its condition: the header counts as controlled too)
        const bool for_loop = is_ident(x, "for");
        const Kind kind = is_ident(x, "if")       ? Kind::branch
                          : is_ident(x, "switch") ? Kind::selection
                                                  : Kind::loop;
        controls_.push_back({k + 2, match[k + 1], for_loop ? k + 2 : match[k + 1] + 1,
                             statement_end(match[k + 1] + 1, kernel.close), kind});
      }
      if (is_ident(x, "do")) {  // do body while (header);
        const std::size_t end = statement_end(k + 1, kernel.close);
        if (end + 1 < kernel.close && is_ident(t[end], "while") && is_punct(t[end + 1], "("))
          controls_.push_back({end + 2, match[end + 1], k + 1, end, Kind::loop});
      }
      if (is_ident(x, "break") || is_ident(x, "continue") || is_ident(x, "return") ||
          is_ident(x, "goto"))
        exits_.push_back(k);
      if (std::size_t n = assignment_size(k)) {
        const std::size_t base = lvalue_base(k);
        std::size_t end = k + n;
        while (end < kernel.close && !is_punct(t[end], ";") && !is_punct(t[end], ",") &&
               !is_punct(t[end], ")") && !is_punct(t[end], "}")) {
          if (is_punct(t[end], "(") || is_punct(t[end], "[") || is_punct(t[end], "{"))
            end = std::min(match[end], kernel.close);
          ++end;
        }
        // (a store through a pointer, `p[i] = v` or `*p = v`, leaves the pointer as it was)
        if (base != kNone && (whole_variable(base, k) || arrays.count(t[base].text))) {
          assignments_.push_back({t[base].text, base, end});
          assigned.insert(t[base].text);
          // `T& r = x;`: r is x by another name
          if (base > 1 && is_punct(t[base - 1], "&") && t[base - 2].kind == Token::ident)
            for (std::size_t j = k + 1; j < end; ++j)
              if (t[j].kind == Token::ident) varying_.insert(t[j].text);
        }
        continue;
      }
      if (x.kind != Token::ident || member(k)) continue;
      const Token& prev = t[k - 1];
      if (stepped(k)) assignments_.push_back({x.text, k, k + 1});  // (++v: only where it runs)
      static const std::set<std::string> not_types{"return", "else",   "case",     "do",
                                                   "goto",   "sizeof", "new",      "delete",
                                                   "throw",  "typeid", "co_return"};
      const bool after_type = (prev.kind == Token::ident && !not_types.count(prev.text)) ||
                              ((is_punct(prev, "*") || is_punct(prev, "&")) &&
                               t[k - 2].kind == Token::ident && !not_types.count(t[k - 2].text));
      static const std::set<std::string> ends{"=", ";", ",", ")", "[", ":", "{"};
      if (after_type && ends.count(t[k + 1].text)) {
        declared.insert(x.text);
        declarations_.emplace(x.text, k);
      }
      if (after_type && is_punct(t[k + 1], "[")) arrays.insert(x.text);  // a local array
      const Token& before = t[k - 2];  // (`&v`, not `a & v` nor `a && v`)
      const bool address =
          is_punct(prev, "&") &&
          !(before.kind == Token::ident || before.kind == Token::number || is_punct(before, ")") ||
            is_punct(before, "]") || (is_punct(before, "&") && before.end == prev.begin));
      const bool argument =
          !parens.empty() && parens.back() > 0 && t[parens.back() - 1].kind == Token::ident &&
          !is_keyword(t[parens.back() - 1].text) && !is_math(t[parens.back() - 1].text) &&
          (is_punct(prev, "(") || is_punct(prev, ",")) &&
          (is_punct(t[k + 1], ")") || is_punct(t[k + 1], ","));
      if (address || (argument && !after_type)) varying_.insert(x.text);
    }
    for (const std::string& d : declared)
      if (!assigned.count(d)) varying_.insert(d);
    known_.insert(declared.begin(), declared.end());
    // A __shared__ variable is one for the block: every thread reads the same (unless a
    // thread's own variable elsewhere in the kernel has its name).
    std::set<std::size_t> shared_names;
    for (std::size_t k = kernel.open + 1; k < kernel.close; ++k) {
      if (!is_ident(t[k], "__shared__")) continue;
      std::size_t name = kNone;
      for (; k < kernel.close && !is_punct(t[k], ";"); ++k)
        if (t[k].kind == Token::ident &&
            (is_punct(t[k + 1], "[") || is_punct(t[k + 1], ";") || is_punct(t[k + 1], "=")))
          name = name == kNone ? k : name;
      if (name != kNone) shared_.insert(t[name].text), shared_names.insert(name);
    }
    for (auto s = shared_.begin(); s != shared_.end();) {
      bool only_shared = true;
      for (auto [d, e] = declarations_.equal_range(*s); d != e; ++d)
        only_shared = only_shared && shared_names.count(d->second);
      if (only_shared)
        varying_.erase(*s), known_.insert(*s), ++s;
      else
        s = shared_.erase(s);
    }
    for (bool changed = true; changed;) {
      changed = false;
      for (const Assignment& a : assignments_)
        if (!varying_.count(a.name) && !shared_.count(a.name) &&
            (!same_in_threads(a.begin + 1, a.end) || in_varying_control(a)))
          changed = varying_.insert(a.name).second || changed;
    }
  }

  // Whether tokens [b, e) compute the same value in every thread of a block.
  bool same_in_threads(std::size_t b, std::size_t e, int depth = 0) const {
    static const std::set<std::string> block_wide{"blockIdx", "blockDim", "gridDim", "warpSize",
                                                  "true",     "false",    "nullptr"};
    for (std::size_t k = b; k < e; ++k) {
      const Token& x = t_[k];
      if (is_punct(x, "(") && k > b &&
          (is_punct(t_[k - 1], ">") || is_punct(t_[k - 1], ")") || is_punct(t_[k - 1], "]")))
        return false;  // (a call through a template, a pointer or an array)
      if (x.kind != Token::ident || member(k)) continue;
      if (k + 1 < e && is_punct(t_[k + 1], "(") && !is_keyword(x.text) && !is_math(x.text))
        return false;  // a call
      if (macros_.count(x.text)) {
        if (!macro_same(x.text, depth)) return false;
        continue;
      }
      if (varying_.count(x.text)) return false;
      if (!(known_.count(x.text) || block_wide.count(x.text) || is_keyword(x.text) ||
            is_math(x.text)))
        return false;  // (threadIdx, anything not known)
    }
    return true;
  }

  bool varies(const std::string& name) const {
    return varying_.count(name) != 0 || !known_.count(name);
  }

  // The tokens [begin, end) of the innermost branch, loop or switch holding token k whose
  // header varies between threads (what only some threads run), or {0, 0} where none does.
  // Whether token k runs in at most one lane of a warp: in the then-part of an `if` testing
  // `threadIdx.x == N` (either way round, or `!threadIdx.x`), or the same of a variable only
  // ever assigned threadIdx.x (`int tid = threadIdx.x; ... if (tid == 0)`). Such code, a
  // block's leader publishing or awaiting a flag, has no lanes to keep in step.
  bool in_one_lane(std::size_t k) const { return !one_lane_header(k).empty(); }
  // The tests of every branch around token k whose header varies between threads, each of
  // their `&&` operands that varies, as text and in order, when one of them makes k run in at
  // most one lane (`threadIdx.x==0`, `threadIdx.y==1`...); else "". Two tokens with the same run
  // in the same thread of each block.
  std::string leader_tests(std::size_t k) const {
    if (!in_one_lane(k)) return "";
    std::string tests;
    for (const Control& c : controls_) {
      if (!c.holds(k)) continue;
      if (c.kind != Kind::branch) {  // (a varying loop: its iterations are not one thread's)
        if (!same_in_threads(c.header_begin, c.header_end)) return "";
        continue;
      }
      for (const auto& [b, e] : conjuncts(c.header_begin, c.header_end)) {
        if (same_in_threads(b, e)) continue;
        for (std::size_t j = b; j < e; ++j) tests += t_[j].text;
        tests += ";";
      }
    }
    return tests;
  }
  // The test of such an `if` around token k, as text (`threadIdx.x==0`, of `threadIdx.x == 0 &&
  // blockIdx.x > 0` too), the innermost, or "".
  std::string one_lane_header(std::size_t k) const {
    std::string header;
    for (const Control& c : controls_) {
      if (c.kind != Kind::branch || !c.holds(k)) continue;
      for (const auto& [b, e] : conjuncts(c.header_begin, c.header_end))
        if (one_lane_test(b, e)) {
          header.clear();
          for (std::size_t j = b; j < e; ++j) header += t_[j].text;
          break;
        }
    }
    return header;
  }

  std::pair<std::size_t, std::size_t> varying_control(std::size_t k) const {
    std::pair<std::size_t, std::size_t> inner{0, 0};
    for (const Control& c : controls_)
      if (c.holds(k) && c.body_begin >= inner.first &&
          !same_in_threads(c.header_begin, c.header_end))
        inner = {c.body_begin, c.body_end};
    return inner;
  }

 private:
  struct Assignment {
    std::string name;
    std::size_t begin, end;  // the lvalue's first token, one past the value's last
  };
  // A branch, loop or switch: its header's tokens, and the tokens it controls (a for loop's
  // header among them).
  enum class Kind { branch, loop, selection };
  struct Control {
    std::size_t header_begin, header_end, body_begin, body_end;
    Kind kind;
    bool holds(std::size_t k) const { return k >= body_begin && k < body_end; }
  };

  // The source's #defines: each object-like macro's replacement, read where it is used as
  // the kernel's own tokens would be (`#define BLOCK 256` is the same in every thread,
  // `#define IDX tid` is what tid is). A function-like macro's uses are calls.
  void read_macros() {
    for (std::size_t k = 0; k + 1 < t_.size(); ++k) {  // (the lexer drops the '#')
      if (!t_[k].directive || !is_ident(t_[k], "define")) continue;
      const std::size_t name = k + 1;
      if (!t_[name].directive || t_[name].line != t_[k].line || t_[name].kind != Token::ident)
        continue;
      std::size_t j = name + 1;
      while (j < t_.size() && t_[j].directive && t_[j].line == t_[name].line) ++j;
      // (a body continued on the next line, `\`, is not read: not taken as uniform)
      static const std::set<std::string> directives{"define", "undef",  "include", "if",
                                                    "ifdef",  "ifndef", "elif",    "else",
                                                    "endif",  "pragma", "error",   "line"};
      const bool continued = j < t_.size() && t_[j].directive && !directives.count(t_[j].text);
      const bool function_like = is_punct(t_[name + 1], "(") && t_[name + 1].begin == t_[name].end;
      macros_.emplace(t_[name].text, continued || function_like || j == name + 1
                                         ? std::pair{name, name}
                                         : std::pair{name + 1, j});
      k = j - 1;
    }
  }
  // Whether macro name's every definition is the same in every thread (depth: how many
  // macros deep this use is, to stop at a macro that names itself).
  bool macro_same(const std::string& name, int depth) const {
    if (depth > 8) return false;
    for (auto [d, e] = macros_.equal_range(name); d != e; ++d)
      if (d->second.first == d->second.second ||
          !same_in_threads(d->second.first, d->second.second, depth + 1))
        return false;
    return true;
  }
  // Whether tokens [b, e) are `threadIdx.x`, or a variable whose one assignment is that.
  bool thread_x(std::size_t b, std::size_t e) const {
    if (e == b + 3 && is_ident(t_[b], "threadIdx") && is_punct(t_[b + 1], ".") &&
        is_ident(t_[b + 2], "x"))
      return true;
    if (e != b + 1 || t_[b].kind != Token::ident || t_[b].text == "threadIdx") return false;
    int assigned = 0;
    for (const Assignment& a : assignments_) {
      if (a.name != t_[b].text) continue;
      std::size_t v = a.begin + 1;  // (its `=`: `+=` and `++` are no plain assignment)
      if (v >= a.end || !is_punct(t_[v], "=") || a.end != v + 4 || !thread_x(v + 1, a.end))
        return false;
      ++assigned;
    }
    return assigned == 1;
  }
  // Whether a branch's condition [b, e) holds in one thread of a row: `x == N`, `N == x`, `!x`
  // for x threadIdx.x (thread_x).
  // The operands of the top-level `&&`s of [b, e) (itself, when it has none).
  std::vector<std::pair<std::size_t, std::size_t>> conjuncts(std::size_t b, std::size_t e) const {
    std::vector<std::pair<std::size_t, std::size_t>> parts;
    std::size_t from = b;
    for (std::size_t k = b; k + 1 < e; ++k) {
      if ((is_punct(t_[k], "(") || is_punct(t_[k], "[")) && match_[k] < e)
        k = match_[k];
      else if (is_punct(t_[k], "&") && is_punct(t_[k + 1], "&") && t_[k].end == t_[k + 1].begin) {
        parts.emplace_back(from, k);
        from = ++k + 1;
      }
    }
    parts.emplace_back(from, e);
    return parts;
  }
  bool one_lane_test(std::size_t b, std::size_t e) const {
    if (e > b + 1 && is_punct(t_[b], "!")) return thread_x(b + 1, e);
    for (std::size_t k = b; k + 2 < e; ++k)
      if (is_punct(t_[k], "=") && is_punct(t_[k + 1], "=")) {
        if (k + 3 == e && t_[k + 2].kind == Token::number) return thread_x(b, k);
        return k == b + 1 && t_[b].kind == Token::number && thread_x(k + 2, e);
      }
    return false;
  }

  // control_at and statement_end over the kernel's tokens.
  bool is_control(std::size_t k) const { return control_at(t_, match_, k); }
  std::size_t statement_end(std::size_t k, std::size_t limit) const {
    return jit::statement_end(t_, match_, k, limit);
  }
  // Whether assignment a runs under a branch or loop whose header varies between threads, to
  // a variable declared outside it: the threads that skip it keep another value. (One
  // declared inside is read only by the threads that take it, which all assign it alike:
  // `if (threadIdx.x == 0) { int look = tile - 1; ... }`.)
  // A loop that some threads leave early or skip an iteration of (a `break`, `continue`,
  // `return` or `goto` under a varying header inside it) runs its assignments a different
  // number of times in different threads, as if its own header varied.
  bool in_varying_control(const Assignment& a) const {
    for (const Control& c : controls_) {
      if (!c.holds(a.begin)) continue;
      bool inside = false;
      for (auto [d, e] = declarations_.equal_range(a.name); d != e && !inside; ++d)
        inside = d->second >= c.body_begin && d->second <= a.begin;
      if (inside) continue;
      if (!same_in_threads(c.header_begin, c.header_end)) return true;
      if (c.kind == Kind::loop && exits_unevenly(c)) return true;
    }
    return false;
  }
  // Whether some thread may leave loop l early or skip an iteration of it: an exit that ends
  // it (a `break` or `continue` whose innermost loop or switch it is; any `return` or `goto`)
  // under a varying header inside it.
  bool exits_unevenly(const Control& l) const {
    for (std::size_t x : exits_) {
      if (!l.holds(x)) continue;
      if (is_ident(t_[x], "break") || is_ident(t_[x], "continue")) {
        const Control* target = nullptr;  // the innermost loop (or switch, for break)
        for (const Control& c : controls_)
          if (c.holds(x) &&
              (c.kind == Kind::loop || (c.kind == Kind::selection && is_ident(t_[x], "break"))) &&
              (!target || c.body_begin > target->body_begin))
            target = &c;
        if (target != &l) continue;
      }
      for (const Control& c : controls_)
        if (&c != &l && c.holds(x) && c.body_begin > l.body_begin && c.body_end <= l.body_end &&
            !same_in_threads(c.header_begin, c.header_end))
          return true;
    }
    return false;
  }
  // Whether the identifier at k is stepped: `++v`, `v++`, `--v`, `v--`.
  bool stepped(std::size_t k) const {
    auto twice = [&](std::size_t a) {
      return (is_punct(t_[a], "+") || is_punct(t_[a], "-")) && is_punct(t_[a + 1], t_[a].text) &&
             t_[a].end == t_[a + 1].begin;
    };
    return (k >= 2 && twice(k - 2)) || twice(k + 1);
  }
  // Keywords and keyword types, which are neither calls nor callees (`int(x)`, `if (`).
  static bool is_keyword(const std::string& s) {
    static const std::set<std::string> words{
        "if",       "for",      "while", "switch", "return", "sizeof",   "alignof",     "int",
        "unsigned", "signed",   "char",  "short",  "long",   "float",    "double",      "bool",
        "size_t",   "decltype", "catch", "void",   "const",  "volatile", "static_cast", "uint"};
    return words.count(s) != 0;
  }
  // A math function of its arguments alone, which it takes by value.
  static bool is_math(const std::string& s) {
    static const std::set<std::string> words{"min",   "max",   "abs",     "fabs",    "fabsf",
                                             "fminf", "fmaxf", "__mul24", "__umul24"};
    return words.count(s) != 0;
  }
  // Whether the identifier at k is a member's name (after . -> or ::).
  bool member(std::size_t k) const {
    const Token& p = t_[k - 1];
    return is_punct(p, ".") || is_punct(p, "::") || (is_punct(p, ">") && is_punct(t_[k - 2], "-"));
  }
  // The length of an assignment operator at k (`=`, `+=`, `<<=`), 0 for none.
  std::size_t assignment_size(std::size_t k) const {
    const Token& p = t_[k - 1];  // (the `=` of `<=`, `==`, `+=`: part of the operator before)
    if (is_punct(t_[k], "=") && p.kind == Token::punct && p.end == t_[k].begin &&
        std::string_view("+-*/%&|^<>!=").find(p.text) != std::string_view::npos)
      return 0;
    if (!assigns_at(t_, k) || (is_punct(t_[k], "+") && is_punct(t_[k + 1], "+")) ||
        (is_punct(t_[k], "-") && is_punct(t_[k + 1], "-")))
      return 0;  // (increments: stepped)
    if (is_punct(t_[k], "=")) return 1;
    return is_punct(t_[k + 1], "=") ? 2 : 3;
  }
  // Whether the lvalue from name to operator k is the variable itself or its member (`v`,
  // `v.x`), not an element or what it points to.
  bool whole_variable(std::size_t name, std::size_t k) const {
    if (name > 1 && is_punct(t_[name - 1], "*") && t_[name - 2].kind != Token::ident)
      return false;  // (`*p = v`; `int* p = v` declares p)
    for (std::size_t j = name + 1; j < k; ++j)
      if (is_punct(t_[j], "[") || (is_punct(t_[j], "-") && is_punct(t_[j + 1], ">"))) return false;
    return true;
  }
  // The variable an assignment at operator k writes: the first name of its lvalue (`v`,
  // `a[i].x`, `*p`), or kNone.
  std::size_t lvalue_base(std::size_t k) const {
    std::size_t j = k;
    while (j > 0) {
      const Token& p = t_[j - 1];
      if (is_punct(p, ";") || is_punct(p, "{") || is_punct(p, "}") || is_punct(p, ",") ||
          is_punct(p, "(") || is_punct(p, ")") || is_punct(p, "?") || is_punct(p, ":") ||
          is_punct(p, "=") || is_ident(p, "else") || is_ident(p, "do") || p.directive)
        break;  // (`if (c) v = 1;`: the lvalue starts after the header)
      --j;
    }
    for (; j < k; ++j)
      if (t_[j].kind == Token::ident && !member(j) && !is_keyword(t_[j].text) &&
          !(j + 1 < k && t_[j + 1].kind == Token::ident))
        return j;
    return kNone;
  }

  const std::vector<Token>& t_;
  const std::vector<std::size_t>& match_;
  std::vector<Assignment> assignments_;
  std::vector<Control> controls_;
  std::vector<std::size_t> exits_;                        // break, continue, return, goto
  std::multimap<std::string, std::size_t> declarations_;  // each name's declarations' tokens
  // Each object-like macro's replacements (one per #define), as token ranges; a definition
  // the scan cannot read (continued with `\`, function-like) as an empty range.
  std::multimap<std::string, std::pair<std::size_t, std::size_t>> macros_;
  std::set<std::string> varying_, shared_, known_;
};

}  // namespace

std::size_t assignment_width(const std::vector<Token>& t, std::size_t k) {
  auto p = [&](std::size_t i, std::string_view s) { return i < t.size() && is_punct(t[i], s); };
  if (p(k, "=")) return p(k + 1, "=") ? 0 : 1;
  if ((p(k, "<") && p(k + 1, "<") && p(k + 2, "=")) ||
      (p(k, ">") && p(k + 1, ">") && p(k + 2, "=")))
    return 3;
  if ((p(k, "+") && p(k + 1, "+")) || (p(k, "-") && p(k + 1, "-"))) return 2;
  for (std::string_view op : {"+", "-", "*", "/", "%", "&", "|", "^"})
    if (p(k, op) && p(k + 1, "=")) return 2;
  return 0;
}

std::vector<LockstepPointer> lockstep_pointers(const std::vector<Token>& t) {
  static constexpr std::string_view kBarriers[] = {"__syncthreads", "__syncthreads_count",
                                                   "__syncthreads_and", "__syncthreads_or",
                                                   "__syncwarp"};
  std::vector<LockstepPointer> found;
  if (std::none_of(t.begin(), t.end(), [](const Token& x) { return is_ident(x, "volatile"); }))
    return found;
  const std::vector<std::size_t> match = pair_brackets(t);
  std::map<std::size_t, ThreadValues> kernel_values;  // by body '{': read once per kernel
  for (std::size_t v = 0; v < t.size(); ++v) {
    if (!is_ident(t[v], "volatile") || t[v].directive) continue;
    std::size_t first = v;  // (`const`, and an array's `__shared__` or `static`, before it)
    while (first > 0 && (is_ident(t[first - 1], "const") || is_ident(t[first - 1], "__shared__") ||
                         is_ident(t[first - 1], "static")))
      --first;
    std::size_t k = v + 1;  // T: names, `::`, `unsigned int`, `const`
    while (k < t.size() && (t[k].kind == Token::ident || is_punct(t[k], "::"))) ++k;
    if (k == v + 1 || k + 1 >= t.size()) continue;
    std::size_t last = k, n = k + 1, inner = 0, body = 0;
    const bool array = is_punct(t[k], "[") && k >= v + 3 && t[k - 1].kind == Token::ident;
    if (array) {  // `__shared__ volatile T name[N];`, `... name[W][2];`: any extents
      bool shared = false;
      for (std::size_t j = first; j < k; ++j) shared = shared || is_ident(t[j], "__shared__");
      n = k - 1;
      last = past_group(t, match, k) - 1;
      inner = last + 1;
      while (last + 1 < t.size() && is_punct(t[last + 1], "["))
        last = past_group(t, match, last + 1) - 1;
      if (!shared || last + 1 >= t.size() || !is_punct(t[last + 1], ";")) continue;
    } else if (!is_punct(t[k], "*") || is_punct(t[k + 1], "*") || n + 1 >= t.size() ||
               t[n].kind != Token::ident ||
               !(is_punct(t[n + 1], "=") || is_punct(t[n + 1], ",") || is_punct(t[n + 1], ")") ||
                 is_punct(t[n + 1], ";"))) {
      continue;
    }
    if (!array) first = v > 0 && is_ident(t[v - 1], "const") ? v - 1 : v;
    const std::size_t end = scope_end(t, match, n, &body);
    // In a kernel, through a pointer the same in every thread (`volatile int* flags =
    // flags_p;`), stores and reads whose subscripts are the same in every thread (`flags[tile]
    // = 1; ... f = flags[look];`) go between blocks, not between a warp's lanes: they need no
    // lockstep. (A device function's parameters may be anything.)
    const ThreadValues* values = nullptr;
    if (auto kernel = enclosing_kernel(t, match, n, body))
      values = &kernel_values.try_emplace(kernel->open, t, match, *kernel).first->second;
    const bool uniform_pointer = values && !values->varies(t[n].text);
    auto same_in_threads = [&](std::size_t b, std::size_t e) {
      return uniform_pointer && values->same_in_threads(b, e);
    };
    // A pointer that only a block's leader names (`if (threadIdx.x == 0) { agg[tile] = x;
    // flag[tile] = 1; ... while (ld_flag(flag, look) == 0) {} }`, a decoupled look-back)
    // carries nothing between a warp's lanes.
    bool leader_only = values != nullptr;
    for (std::size_t k = n + 1; k < end && leader_only; ++k)
      if (is_ident(t[k], t[n].text) && !is_punct(t[k - 1], ".") && !is_punct(t[k - 1], "::"))
        leader_only = values->in_one_lane(k);
    if (leader_only) continue;
    bool stored_varying = false;  // a store since the last barrier whose subscript varies
    // A read after a store, before a barrier, of an element other than those stored (`s[t] +=
    // s[t + 16]; s[t] += s[t + 8];`, not `s[t] = v; ... return s[t];`: the subscripts' text)
    // finds one. Read in the statement of the store, it finds one unless a barrier comes before
    // the next access (a tree reduction's `s[t] += s[t + half]; __syncthreads();`). A member
    // access (`s[i].x`, which a lockstep pointer cannot give) or another declaration of the name
    // leaves it alone.
    std::set<std::string> stored;  // the subscripts stored through since the last barrier
    // Subscripts the same in every thread stored through by only some threads (`if (lane ==
    // 5) s[0] = v;`), each with the branch that stores: read outside it, the element goes from
    // those lanes to the others (a broadcast), which only lockstep gives.
    std::map<std::string, std::pair<std::size_t, std::size_t>> stored_by_some;
    std::size_t statement = 0, stored_in = 0;
    bool member = false;
    int line = 0, pending = 0;
    for (std::size_t k = n + 1; k < end && !member && line == 0; ++k) {
      if (is_punct(t[k], ";") || is_punct(t[k], "{") || is_punct(t[k], "}")) ++statement;
      if (t[k].kind != Token::ident) continue;
      if (std::find(std::begin(kBarriers), std::end(kBarriers), t[k].text) != std::end(kBarriers) ||
          (t[k].text == "sync" && k + 1 < t.size() && is_punct(t[k + 1], "("))) {  // cg's too
        stored.clear();
        stored_by_some.clear();
        stored_varying = false;
        pending = 0;
      }
      if (t[k].text != t[n].text || is_punct(t[k - 1], ".") || is_punct(t[k - 1], "::") ||
          (is_punct(t[k - 1], ">") && is_punct(t[k - 2], "-")))
        continue;
      const Token& before = t[k - 1];
      const bool declarator =
          k + 1 < t.size() && (is_punct(t[k + 1], "=") || is_punct(t[k + 1], ";"));
      if ((before.kind == Token::ident && before.text != "return" && before.text != "else" &&
           before.text != "do" && before.text != "case") ||
          (declarator && is_punct(before, "*") && t[k - 2].kind == Token::ident))
        member = true;  // (declared again: `int* s = ...`)
      const bool subscript = k + 1 < t.size() && is_punct(t[k + 1], "[");
      std::size_t after = subscript ? past_group(t, match, k + 1) : k + 1;
      // (an array's further extents: `b[w][1]`, its subscripts all of the element's text)
      while (array && subscript && after < t.size() && is_punct(t[after], "["))
        after = past_group(t, match, after);
      member = member || (after < t.size() && is_punct(t[after], ".")) ||
               (after + 1 < t.size() && is_punct(t[after], "-") && is_punct(t[after + 1], ">"));
      const bool deref = !subscript && is_punct(t[k - 1], "*") &&
                         !(t[k - 2].kind == Token::ident || t[k - 2].kind == Token::number ||
                           is_punct(t[k - 2], ")") || is_punct(t[k - 2], "]"));
      if (!subscript && !deref) continue;  // (the pointer itself: passed on, compared)
      std::string index;
      for (std::size_t j = k + 2; subscript && j + 1 < after; ++j) index += t[j].text + " ";
      const bool varying = !same_in_threads(subscript ? k + 2 : k, subscript ? after - 1 : k);
      if (pending) {
        line = pending;
      } else if (assigns_at(t, after)) {
        stored.insert(index);
        stored_in = statement;
        stored_varying = stored_varying || varying;
        if (!varying)  // (so values is the kernel's)
          if (const auto branch = values->varying_control(k); branch.second != 0)
            stored_by_some[index] = branch;
      } else if (!stored.empty() && !stored.count(index) && (varying || stored_varying)) {
        (stored_in == statement ? pending : line) = t[k].line;
      } else if (const auto by = stored_by_some.find(index);
                 by != stored_by_some.end() && (k < by->second.first || k >= by->second.second)) {
        line = t[k].line;
      }
    }
    if (line == 0) line = pending;
    if (line != 0 && !member) found.push_back({first, last, n, line, array, inner, body, end});
  }
  return found;
}

std::vector<SpinWait> spin_waits(const std::vector<Token>& t) {
  std::vector<SpinWait> found;
  // Each token's function body: the '{' of the outermost function body around it (a '{' after
  // a ')', or the text's first token: the plan reads a kernel's body alone), or kNone.
  const std::vector<std::size_t> match = pair_brackets(t);
  std::vector<std::size_t> function_of(t.size(), kNone);
  {
    std::vector<std::size_t> braces;  // open braces; the outermost function body's first
    std::size_t function = kNone;
    for (std::size_t k = 0; k < t.size(); ++k) {
      if (t[k].directive) continue;
      if (is_punct(t[k], "{")) {
        braces.push_back(k);
        if (function == kNone && (k == 0 || is_punct(t[k - 1], ")"))) function = k;
      } else if (is_punct(t[k], "}") && !braces.empty()) {
        if (braces.back() == function) function = kNone;
        braces.pop_back();
      }
      function_of[k] = function;
    }
  }
  // The volatile __shared__ variables function bodies declare: each declarator's name (before
  // '[', ';', '=' or ','), with those bodies (one at file scope is not followed).
  std::map<std::string, std::set<std::size_t>> flags, shared;  // (volatile ones, the others)
  for (std::size_t k = 0; k < t.size(); ++k) {
    if (!is_ident(t[k], "__shared__") || t[k].directive || function_of[k] == kNone) continue;
    const std::size_t function = function_of[k];
    std::size_t j = k;
    while (j > 0 && t[j - 1].kind == Token::ident && !t[j - 1].directive) --j;
    bool is_volatile = false;
    std::vector<std::string> names;
    for (int depth = 0; j < t.size() && !is_punct(t[j], ";") && !is_punct(t[j], "{"); ++j) {
      is_volatile = is_volatile || is_ident(t[j], "volatile");
      if (is_punct(t[j], "[") || is_punct(t[j], "(")) ++depth;
      if (is_punct(t[j], "]") || is_punct(t[j], ")")) --depth;
      if (depth == 0 && t[j].kind == Token::ident && j + 1 < t.size() &&
          (is_punct(t[j + 1], "[") || is_punct(t[j + 1], ";") || is_punct(t[j + 1], "=") ||
           is_punct(t[j + 1], ",")))
        names.push_back(t[j].text);
    }
    for (const std::string& n : names) (is_volatile ? flags : shared)[n].insert(function);
    k = j;
  }
  // A volatile pointer a function body sets to its shared memory (`volatile int* f = &flag;`,
  // `= s + 4`) is a flag too; one set to anything else, or a function's volatile pointer
  // parameter (`volatile int* ready`: sync-free triangular solves, flags between blocks), is a
  // flag in global memory.
  std::map<std::string, std::set<std::size_t>> global_flags;
  for (std::size_t k = 0; k + 4 < t.size(); ++k) {
    if (!is_ident(t[k], "volatile") || t[k].directive) continue;
    std::size_t j = k + 1;
    while (j < t.size() && (t[j].kind == Token::ident || is_punct(t[j], "::"))) ++j;
    if (j + 2 >= t.size() || !is_punct(t[j], "*")) continue;
    ++j;
    while (j + 1 < t.size() && t[j].kind == Token::ident && t[j + 1].kind == Token::ident) ++j;
    // (j: the declarator's name: `* const p`)
    if (t[j].kind != Token::ident || j + 3 >= t.size()) continue;
    if (function_of[k] == kNone) {  // a parameter: of the function whose body follows its list
      std::size_t open = k;
      while (open > 0 && !(is_punct(t[open], "(") && match[open] < t.size() && match[open] > j))
        --open;
      if (!is_punct(t[open], "(") || !(is_punct(t[j + 1], ",") || is_punct(t[j + 1], ")")))
        continue;
      std::size_t body = match[open] + 1;
      while (body < t.size() && t[body].kind == Token::ident) ++body;  // (`const`, `noexcept`)
      if (body < t.size() && is_punct(t[body], "{")) global_flags[t[j].text].insert(body);
      continue;
    }
    if (!is_punct(t[j + 1], "=")) continue;
    const std::size_t target = j + 2 + (is_punct(t[j + 2], "&") ? 1 : 0);
    bool in_shared = false;
    for (const auto* set : {&flags, &shared})
      if (auto s = set->find(t[target].text); s != set->end() && s->second.count(function_of[k]))
        in_shared = true;
    (in_shared ? flags : global_flags)[t[j].text].insert(function_of[k]);
  }
  if (flags.empty() && global_flags.empty() &&
      std::none_of(t.begin(), t.end(), [](const Token& w) { return is_ident(w, "volatile"); }))
    return found;
  // Whether [b, e) assigns, synchronises or calls a function that might (a waiting body does
  // none of these; it may pause or fence).
  auto acts = [&](std::size_t b, std::size_t e) {
    static const std::set<std::string> no_calls{
        "__nanosleep",
        "__threadfence",
        "__threadfence_block",
        "__threadfence_system",
        "clock",
        "clock64",
        "if",
        "while",
        "sizeof",
        "int",
        "unsigned",
        "bool",
        "float",
        "double",
        "spin_yield"};  // (kiln's own, once yield_in_spin_waits has run)
    for (std::size_t k = b; k < e; ++k) {
      if (t[k].kind == Token::ident && k + 1 < e && is_punct(t[k + 1], "(") &&
          !no_calls.count(t[k].text))
        return true;
      if (k > b && (assigns_at(t, k) || (is_punct(t[k], "+") && is_punct(t[k - 1], "+")) ||
                    (is_punct(t[k], "-") && is_punct(t[k - 1], "-"))))
        if (!(is_punct(t[k], "=") &&
              (is_punct(t[k - 1], "=") || is_punct(t[k - 1], "!") || is_punct(t[k - 1], "<") ||
               is_punct(t[k - 1], ">") || is_punct(t[k + 1], "="))))
          return true;
    }
    return false;
  };
  // Whether a spin on global flag in condition [b, e) waits for another block alone: in a
  // kernel, by the block's leader (`if (threadIdx.x == 0)`), through a pointer and subscripts
  // the same in every thread, whose stores (`flags[tile] = 1`) the kernel makes at subscripts
  // the same in every thread too, by the same leader (a chained scan's look-back, a grid
  // barrier's counter). A store of each thread's own element (`ready[w] = 1`), or one by another
  // thread (`if (threadIdx.x == 32) flag[0] = 1;`), may be what the waiter waits for.
  // Whether the name at k is dereferenced (`*flag = 1`), not declared (`volatile int* flag =`).
  auto dereferenced = [&](std::size_t k) {
    if (k < 2 || !is_punct(t[k - 1], "*")) return false;
    const Token& before = t[k - 2];
    return !(before.kind == Token::ident && !is_ident(before, "else") && !is_ident(before, "do") &&
             !is_ident(before, "return")) &&
           !is_punct(before, ">") && !is_punct(before, "*");
  };
  std::map<std::size_t, ThreadValues> kernel_values;  // by body '{': read once per kernel
  auto between_blocks = [&](std::size_t b, std::size_t e, const std::string& flag) {
    const auto kernel = enclosing_kernel(t, match, b, function_of[b]);
    if (!kernel) return false;
    const ThreadValues& values =
        kernel_values.try_emplace(kernel->open, t, match, *kernel).first->second;
    // (a parameter passed to a call, `atomicAdd(count, 1)`, still points where it did: only an
    // assignment, below, would move it)
    bool parameter = false;
    for (std::size_t k = kernel->params + 1; k < kernel->open; ++k)
      parameter = parameter || is_ident(t[k], flag.c_str());
    if (!parameter && values.varies(flag)) return false;
    for (std::size_t k = b; k < e; ++k)  // (the subscripts it reads at)
      if (is_punct(t[k], "[") && !values.same_in_threads(k + 1, match[k])) return false;
    const std::string leader = values.leader_tests(b);
    if (leader.empty()) return false;
    // Every other use of the flag: a read, its declaration, or a store (an element, `*flag`,
    // an atomic's target) by the same leader. Anything else (passed to a call, an alias, an
    // address computed from it) may be another thread's store: not between blocks.
    std::string declared_from;  // (`volatile int* flags = flags_p;`: flags_p is it too)
    for (std::size_t k = kernel->open + 1; k + 1 < kernel->close; ++k) {
      if (k >= b && k < e) continue;  // (the spin's own read)
      const bool alias = !declared_from.empty() && is_ident(t[k], declared_from.c_str());
      if ((!is_ident(t[k], flag.c_str()) && !alias) || is_punct(t[k - 1], ".") ||
          is_punct(t[k - 1], "->"))
        continue;
      const std::size_t after = is_punct(t[k + 1], "[") ? match[k + 1] + 1 : k + 1;
      if (after + 3 >= t.size()) return false;  // (an unclosed subscript: unknown)
      if (!alias && after == k + 1 && is_punct(t[k + 1], "=") && !dereferenced(k) &&
          (t[k - 1].kind == Token::ident || is_punct(t[k - 1], "*"))) {
        if (t[k + 2].kind == Token::ident && (is_punct(t[k + 3], ";") || is_punct(t[k + 3], ",")))
          declared_from = t[k + 2].text;  // (its declaration)
        continue;
      }
      if (alias && is_punct(t[k + 1], ";") && is_punct(t[k - 1], "=")) continue;
      // An atomic's target: `atomicExch(flag, 1)`, `atomicAdd(&flag[i], 1)`.
      std::size_t call = k;
      while (call > kernel->open && (is_punct(t[call - 1], "&") || is_punct(t[call - 1], "(")))
        --call;
      const bool atomic_target = call < k && is_punct(t[call], "(") &&
                                 t[call - 1].kind == Token::ident &&
                                 t[call - 1].text.starts_with("atomic") &&
                                 (is_punct(t[after], ",") || is_punct(t[after], ")"));
      const bool stored = atomic_target || (after < kernel->close && assignment_width(t, after) &&
                                            (after > k + 1 || dereferenced(k)));
      if (stored) {
        if ((after > k + 1 && !values.same_in_threads(k + 2, after - 1)) ||
            values.leader_tests(k) != leader)
          return false;
        continue;
      }
      const bool read = after > k + 1 && !is_punct(t[k - 1], "&") && !is_punct(t[after], "=") &&
                        !(is_punct(t[after], "+") || is_punct(t[after], "-"));
      if (!read) return false;
    }
    return true;
  };
  // The flag a condition [b, e) reads, declared in the function body whose '{' is at body (or
  // its parameter list), whether it is __shared__; nullopt when it reads none. A read through a
  // volatile cast (`((volatile int*)p)[0]`) is one of global memory.
  auto reads_flag = [&](std::size_t b, std::size_t e,
                        std::size_t body) -> std::optional<std::pair<std::string, bool>> {
    for (std::size_t k = b; k < e; ++k) {
      if (k > 0 && (is_punct(t[k - 1], ".") || is_punct(t[k - 1], "::"))) continue;
      if (t[k].kind != Token::ident) continue;
      for (const auto* set : {&flags, &global_flags})
        if (auto f = set->find(t[k].text); f != set->end() && f->second.count(body))
          return std::pair{t[k].text, set == &flags};
      if (is_ident(t[k], "volatile")) {
        std::size_t cast_end = k;  // the cast's ')': what follows it is the pointer read
        while (cast_end < e && !is_punct(t[cast_end], ")")) ++cast_end;
        std::size_t name = cast_end + 1;
        while (name < e && (is_punct(t[name], "(") || is_punct(t[name], "&"))) ++name;
        const std::string read = name < e && t[name].kind == Token::ident ? t[name].text : "";
        const auto in_shared = shared.find(read);  // (a __shared__ array's, through the cast)
        return std::pair{read.empty() ? std::string("a volatile cast") : read,
                         in_shared != shared.end() && in_shared->second.count(body) > 0};
      }
    }
    return std::nullopt;
  };
  for (std::size_t k = 0; k + 1 < t.size(); ++k) {
    if (t[k].directive || !is_punct(t[k + 1], "(") || match[k + 1] >= t.size()) continue;
    const std::size_t open = k + 1, close = match[open];
    std::size_t cond = open + 1, cond_end = close, body = close + 1, body_stop = kNone;
    if (is_ident(t[k], "while")) {
      if (close + 1 < t.size() && is_punct(t[close + 1], ";") && k > 0 &&
          is_punct(t[k - 1], "}")) {  // do { ... } while (c);
        std::size_t brace = k - 1;
        while (brace > 0 && match[brace] != k - 1) --brace;
        if (match[brace] != k - 1 || brace == 0 || !is_ident(t[brace - 1], "do")) {
          body_stop = close + 1;  // `while (c);` after a block: an empty loop of its own
        } else {
          body = brace;
          body_stop = k;
        }
      }
    } else if (is_ident(t[k], "for")) {
      std::size_t semi = open + 1;
      while (semi < close && !is_punct(t[semi], ";"))
        semi = is_punct(t[semi], "(") ? match[semi] + 1 : semi + 1;
      if (semi >= close) continue;
      cond = semi + 1;
      cond_end = cond;
      while (cond_end < close && !is_punct(t[cond_end], ";")) ++cond_end;
      if (acts(cond_end, close)) continue;  // (its step: `i++`)
    } else {
      continue;
    }
    if (body_stop == kNone) body_stop = statement_end(t, match, body, t.size());
    const auto flag = reads_flag(cond, cond_end, function_of[k]);
    if (!flag || cond == cond_end || acts(body, std::min(body_stop, t.size())) ||
        acts(cond, cond_end))
      continue;
    const std::size_t fn = function_of[k];
    bool stored = false;  // (a plain store to the flag in its function: `flags[tile] = 1;`)
    for (std::size_t j = fn == kNone ? 0 : fn + 1;
         fn != kNone && j + 1 < match[fn] && j + 1 < t.size() && !stored; ++j) {
      if (!is_ident(t[j], flag->first.c_str()) || is_punct(t[j - 1], ".")) continue;
      const std::size_t after = is_punct(t[j + 1], "[") ? match[j + 1] + 1 : j + 1;
      stored = after < t.size() && assignment_width(t, after) && (after > j + 1 || dereferenced(j));
    }
    bool backward = false;  // (a subscript below another: `flags[tile - 1]`)
    for (std::size_t j = cond; j < cond_end; ++j)
      if (is_punct(t[j], "[") && match[j] < cond_end)
        for (std::size_t m = j + 1; m < match[j]; ++m)
          backward = backward || (is_punct(t[m], "-") && !is_punct(t[m + 1], ">") &&
                                  !is_punct(t[m + 1], "-") && !is_punct(t[m - 1], "-"));
    const bool between = !flag->second && between_blocks(cond, cond_end, flag->first);
    found.push_back({cond, flag->first, flag->second, between, between && stored && backward});
  }
  return found;
}

SyncUse lockstep_sync(const std::vector<Token>& toks) {
  SyncUse use;
  if (const auto found = lockstep_pointers(toks); !found.empty()) {
    use.other_sync = use.other_used = true;
    use.first_other = "warp-synchronous code through volatile '" + toks[found[0].name].text + "'";
    use.first_other_line = found[0].line;
  }
  return use;
}

bool uses_barriers(std::string_view source) {
  return scan_sync(source).any();
}

namespace {

// The first declarator's name of the declaration whose later declarator is toks[k] (after a
// `,`): back over the declarators before it (their extents and `= ...` or `{...}`
// initialisers) to the `,` after the first; toks.size() when it is no such list.
std::size_t first_declarator(const std::vector<Token>& toks, std::size_t k) {
  int depth = 0;
  std::size_t name = toks.size();
  for (std::size_t j = k; j-- > 0;) {
    const Token& t = toks[j];
    if (t.directive) break;
    if (is_punct(t, "]") || is_punct(t, ")") || is_punct(t, "}")) ++depth;
    if (is_punct(t, "[") || is_punct(t, "(") || is_punct(t, "{")) {
      if (depth == 0) break;
      --depth;
    }
    if (depth > 0) continue;
    if (is_punct(t, ";")) break;
    if (is_punct(t, ",") || is_punct(t, "=")) {  // (an initialiser's names are no declarator)
      name = toks.size();
      continue;
    }
    // (a declarator's name: an identifier after a `,`, or the last of the type's words)
    if (t.kind == Token::ident && name == toks.size()) name = j;
    if (t.kind == Token::ident && j > 0 && toks[j - 1].kind == Token::ident && name == j) break;
  }
  return name;
}

}  // namespace

std::vector<std::string> device_variables(std::string_view source) {
  std::vector<std::string> names;
  if (source.find("__device__") == std::string_view::npos) return names;
  const std::vector<Token> t = code_tokens(source);
  std::vector<bool> function_body;  // each open brace: whether it is a function's body
  int in_function = 0;
  for (std::size_t k = 0; k < t.size(); ++k) {
    if (is_punct(t[k], "{")) {
      function_body.push_back(k > 0 && (is_punct(t[k - 1], ")") || in_function > 0));
      in_function += function_body.back();
    } else if (is_punct(t[k], "}") && !function_body.empty()) {
      in_function -= function_body.back();
      function_body.pop_back();
    }
    if (in_function > 0 || !is_ident(t[k], "__device__")) continue;
    bool mutable_variable = true;
    std::size_t j = k + 1;
    for (; j < t.size() && (t[j].kind == Token::ident || is_punct(t[j], "::") ||
                            is_punct(t[j], "*") || is_punct(t[j], "&"));
         ++j)
      if (t[j].text == "const" || t[j].text == "constexpr" || t[j].text == "__constant__")
        mutable_variable = false;
    if (j < t.size() && is_punct(t[j], "<")) continue;  // (a template type: not read here)
    if (!mutable_variable || j >= t.size() || t[j - 1].kind != Token::ident ||
        t[j - 1].text == "operator" ||  // (`__device__ T& operator[](int i)`: a member function)
        !(is_punct(t[j], ";") || is_punct(t[j], "=") || is_punct(t[j], "[") ||
          is_punct(t[j], ",") || is_punct(t[j], "{")))
      continue;
    auto add = [&](const std::string& name) {
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    };
    add(t[j - 1].text);
    // Later declarators (`__device__ int hits, misses[4];`): the name after each ',' outside
    // brackets, up to the ';'.
    for (int depth = 0; j < t.size() && !(depth == 0 && is_punct(t[j], ";")); ++j) {
      if (is_punct(t[j], "(") || is_punct(t[j], "[") || is_punct(t[j], "{")) ++depth;
      if (is_punct(t[j], ")") || is_punct(t[j], "]") || is_punct(t[j], "}")) --depth;
      if (depth != 0 || !is_punct(t[j], ",")) continue;
      std::size_t n = j + 1;
      while (n < t.size() && (is_punct(t[n], "*") || is_punct(t[n], "&"))) ++n;
      if (n < t.size() && t[n].kind == Token::ident) add(t[n].text);
    }
  }
  return names;
}

std::optional<GlobalDecl> find_global(std::string_view source, std::string_view name) {
  // A qualified name (`cfg::weights`) is its last word in those namespaces; an unqualified one,
  // that word at namespace scope: the outermost first, else in one namespace or another.
  const bool outermost = name.starts_with("::");  // `::table`: the global namespace's
  if (outermost) name.remove_prefix(2);
  const std::size_t colons = name.rfind("::");
  const std::string word(colons == std::string_view::npos ? name : name.substr(colons + 2));
  const std::string wanted(colons == std::string_view::npos ? "" : name.substr(0, colons + 2));
  std::vector<Token> toks = lex(source);
  std::vector<std::string> scopes;  // for each open brace: its namespace's words + "::", or "{"
  std::string pending;              // a namespace's name whose '{' comes next
  bool namespace_next = false;
  std::optional<GlobalDecl> nested;  // an unqualified name's first match inside a namespace
  for (std::size_t k = 0; k < toks.size(); ++k) {
    if (toks[k].directive) continue;
    if (is_ident(toks[k], "namespace")) {
      namespace_next = true, pending.clear();
      continue;
    }
    if (namespace_next && (toks[k].kind == Token::ident || is_punct(toks[k], "::"))) {
      pending += toks[k].text;
      continue;
    }
    if (is_punct(toks[k], "{")) {  // (an anonymous namespace's names have no symbol: "{")
      const bool linkage = k >= 2 && is_ident(toks[k - 2], "extern") &&
                           toks[k - 1].kind == Token::string;  // extern "C" { ... }: no scope
      scopes.push_back(linkage ? "" : namespace_next && !pending.empty() ? pending + "::" : "{");
      namespace_next = false;
      continue;
    }
    namespace_next = false;
    if (is_punct(toks[k], "}") && !scopes.empty()) scopes.pop_back();
    if (!is_ident(toks[k], word)) continue;
    std::string scope;  // the namespaces around k, or "{" inside anything else
    for (const std::string& sc : scopes) scope = sc == "{" || scope == "{" ? "{" : scope + sc;
    if (scope == "{" || (!wanted.empty() && scope != wanted) ||
        (k > 0 && is_punct(toks[k - 1], "::")))
      continue;
    // A later declarator (`__constant__ float kx[N], ky[N];`) has the first one's type.
    const std::size_t declarator =
        k > 0 && is_punct(toks[k - 1], ",") ? first_declarator(toks, k) : k;
    if (declarator == toks.size()) continue;
    // Back over the type's words to the __constant__ / __device__ that makes it a global.
    std::size_t first = declarator;
    bool global = false;
    while (first > 0 && !toks[first - 1].directive &&
           (toks[first - 1].kind == Token::ident || is_punct(toks[first - 1], "::"))) {
      const std::string& w = toks[--first].text;
      if (w == "__constant__" || w == "__device__") global = true;
    }
    if (!global) continue;
    GlobalDecl decl;
    for (std::size_t j = first; j < declarator; ++j) {
      const std::string& w = toks[j].text;
      if (w == "__constant__" || w == "__device__" || w == "const" || w == "volatile" ||
          w == "static" || w == "extern" || w == "__managed__")
        continue;
      decl.type += (decl.type.empty() || w == "::" || decl.type.back() == ':' ? "" : " ") + w;
    }
    // The extents, then the end of the declarator.
    std::size_t j = k + 1;
    while (j < toks.size() && is_punct(toks[j], "[")) {
      std::size_t close = j + 1;
      while (close < toks.size() && !is_punct(toks[close], "]")) ++close;
      if (close >= toks.size()) break;
      decl.extents.emplace_back(source.substr(toks[j].end, toks[close].begin - toks[j].end));
      j = close + 1;
    }
    if (j < toks.size() && (is_punct(toks[j], ";") || is_punct(toks[j], "=") ||
                            is_punct(toks[j], ",") || is_punct(toks[j], "{"))) {
      decl.scope = scope;
      if (!wanted.empty() || scope.empty()) return decl;
      if (outermost) continue;
      if (!nested)
        nested = decl;
      else if (nested->scope != scope &&
               std::find(nested->also.begin(), nested->also.end(), scope) == nested->also.end())
        nested->also.push_back(scope);
    }
  }
  return nested;
}

std::vector<std::string> deduced_type_headers(const std::vector<std::string>& name_expressions) {
  static const std::pair<const char*, const char*> kNarrow[] = {
      {"__half", "cuda_fp16.h"}, {"__nv_bfloat16", "cuda_bf16.h"}, {"__nv_fp8_", "cuda_fp8.h"}};
  std::vector<std::string> out;
  for (const auto& narrow : kNarrow)  // (no structured binding: a lambda captures it)
    if (std::any_of(name_expressions.begin(), name_expressions.end(), [&](const std::string& n) {
          return n.find(narrow.first) != std::string::npos;
        }))
      out.push_back(narrow.second);
  return out;
}

std::string global_symbol(const GlobalDecl& decl, std::string_view name) {
  if (name.starts_with("::")) name.remove_prefix(2);
  const std::size_t colons = name.rfind("::");
  const std::string word(colons == std::string_view::npos ? name : name.substr(colons + 2));
  if (decl.scope.empty()) return word;
  std::string symbol = "_ZN";  // (the Itanium ABI's nested name: N <length><word>... E)
  for (std::size_t at = 0, next; at < decl.scope.size(); at = next + 2) {
    next = decl.scope.find("::", at);
    symbol += std::to_string(next - at) + decl.scope.substr(at, next - at);
  }
  return symbol + std::to_string(word.size()) + word + "E";
}

std::string settable_statics(std::string_view source) {
  std::string out(source);
  if (source.find("static") == std::string_view::npos) return out;
  const std::vector<Token> toks = lex(source);
  std::vector<bool> scopes;  // for each open brace: whether it opens a namespace (or extern "C")
  bool namespace_next = false;
  for (std::size_t k = 0; k < toks.size(); ++k) {
    const Token& t = toks[k];
    if (t.directive) continue;
    if (is_ident(t, "namespace") ||
        (is_ident(t, "extern") && k + 1 < toks.size() && toks[k + 1].kind == Token::string))
      namespace_next = true;
    if (is_punct(t, ";")) namespace_next = false;
    if (is_punct(t, "{")) {
      scopes.push_back(namespace_next);
      namespace_next = false;
    }
    if (is_punct(t, "}") && !scopes.empty()) scopes.pop_back();
    if (!is_ident(t, "static") || std::find(scopes.begin(), scopes.end(), false) != scopes.end())
      continue;
    // A variable: its words (__constant__ or __device__ among them), its name, then `[`, `;`,
    // `=`, `,` or `{`; a `(` first makes it a function.
    bool global = false;
    for (std::size_t b = k; b > 0 && toks[b - 1].kind == Token::ident && !toks[b - 1].directive;
         --b)  // (the words before it: `__constant__ static float w;`)
      global =
          global || is_ident(toks[b - 1], "__constant__") || is_ident(toks[b - 1], "__device__");
    std::size_t j = k + 1;
    for (; j < toks.size() && !toks[j].directive &&
           (toks[j].kind == Token::ident || is_punct(toks[j], "::") || is_punct(toks[j], "<") ||
            is_punct(toks[j], ">") || is_punct(toks[j], "*"));
         ++j)
      global = global || is_ident(toks[j], "__constant__") || is_ident(toks[j], "__device__");
    const bool variable = j < toks.size() && (is_punct(toks[j], "[") || is_punct(toks[j], ";") ||
                                              is_punct(toks[j], "=") || is_punct(toks[j], ",") ||
                                              is_punct(toks[j], "{"));
    if (global && variable) out.replace(t.begin, t.end - t.begin, t.end - t.begin, ' ');
  }
  return out;
}

namespace {

// The data members declared by the tokens of a struct body, toks[first, last).
std::vector<StructDecl::Member> struct_members(const std::vector<Token>& toks, std::size_t first,
                                               std::size_t last) {
  std::vector<StructDecl::Member> out;
  std::size_t start = first;
  int depth = 0;
  for (std::size_t k = first; k < last; ++k) {
    const Token& t = toks[k];
    if (t.directive) continue;
    if (is_punct(t, "{") || is_punct(t, "(")) ++depth;
    if (is_punct(t, "}") || is_punct(t, ")")) --depth;
    if (depth == 0 && is_punct(t, ":") && k > start && k == start + 1 &&
        (is_ident(toks[start], "public") || is_ident(toks[start], "private") ||
         is_ident(toks[start], "protected"))) {
      start = k + 1;  // an access label
      continue;
    }
    if (depth != 0 || !(is_punct(t, ";") || is_punct(t, "}"))) continue;
    // One declaration, toks[start, k): skip anything but data members.
    bool data = k > start;
    for (std::size_t j = start; j < k && data; ++j)
      if (is_punct(toks[j], "(") || is_punct(toks[j], "{") || is_ident(toks[j], "static") ||
          is_ident(toks[j], "using") || is_ident(toks[j], "typedef") ||
          is_ident(toks[j], "friend") || is_ident(toks[j], "template") || toks[j].directive)
        data = false;
    if (data) {
      // type declarator[, declarator...]: a declarator is a name and its [extents].
      std::string type;
      std::size_t j = start;
      std::vector<std::string> names;
      int angles = 0;  // (a template's arguments: `cuda::std::array<float, 3> w;`)
      for (std::size_t d = start; d <= k; ++d) {
        if (d < k && is_punct(toks[d], "<") && d > start && toks[d - 1].kind == Token::ident)
          ++angles;
        if (d < k && is_punct(toks[d], ">") && angles > 0) --angles;
        if (d < k && (!is_punct(toks[d], ",") || angles > 0)) continue;
        std::size_t end = d;  // back over [..] to the declarator's name
        int brackets = 0;
        std::size_t n = end;
        while (n > j) {
          --n;
          if (is_punct(toks[n], "]")) ++brackets;
          if (is_punct(toks[n], "[")) --brackets;
          if (brackets == 0 && toks[n].kind == Token::ident) break;
        }
        if (n < j || toks[n].kind != Token::ident) break;
        if (names.empty())
          for (std::size_t w = j; w < n; ++w) {
            const std::string& word = toks[w].text;
            if (word == "const" || word == "volatile" || word == "mutable") continue;
            type += (type.empty() || word == "::" || type.back() == ':' ? "" : " ") + word;
          }
        names.push_back(toks[n].text);
        j = d + 1;
      }
      for (const std::string& n : names) out.push_back({n, type});
    }
    start = k + 1;
  }
  return out;
}

}  // namespace

std::optional<std::string> find_type_alias(std::string_view source, std::string_view name) {
  std::vector<Token> toks = lex(source);
  auto words = [&](std::size_t b, std::size_t e) {
    std::string out;
    for (std::size_t k = b; k < e; ++k) out += (k > b ? " " : "") + toks[k].text;
    return out;
  };
  for (std::size_t k = 0; k + 2 < toks.size(); ++k) {
    const Token& t = toks[k];
    if (t.directive && is_ident(t, "define") && is_ident(toks[k + 1], name) &&
        !(is_punct(toks[k + 2], "(") && toks[k + 2].begin == toks[k + 1].end)) {
      std::size_t e = k + 2;  // the rest of the directive's line
      while (e < toks.size() && toks[e].directive && toks[e].line == t.line) ++e;
      if (e > k + 2) return words(k + 2, e);
    }
    if (t.directive) continue;
    if (is_ident(t, "using") && is_ident(toks[k + 1], name) && is_punct(toks[k + 2], "=")) {
      std::size_t e = k + 3;
      while (e < toks.size() && !is_punct(toks[e], ";")) ++e;
      if (e > k + 3) return words(k + 3, e);
    }
    if (is_ident(t, "typedef")) {
      std::size_t e = k + 1;  // `typedef double fp;`: the name is the word before ';'
      while (e < toks.size() && !is_punct(toks[e], ";") && !is_punct(toks[e], "{")) ++e;
      if (e < toks.size() && is_punct(toks[e], ";") && e > k + 2 && is_ident(toks[e - 1], name))
        return words(k + 1, e - 1);
    }
  }
  return std::nullopt;
}

namespace {

// The index of the first token at or after j that is not an attribute of a declaration:
// `alignas(16)`, `__align__(16)`, `__attribute__((aligned(8)))`, `__declspec(...)`, `[[...]]`.
std::size_t after_attributes(const std::vector<Token>& toks, std::size_t j) {
  auto closer = [&](std::size_t open, std::string_view o, std::string_view c) {
    for (int depth = 0; open < toks.size(); ++open) {
      if (is_punct(toks[open], o)) ++depth;
      if (is_punct(toks[open], c) && --depth == 0) return open + 1;
    }
    return toks.size();
  };
  while (j + 1 < toks.size()) {
    const Token& t = toks[j];
    if ((is_ident(t, "alignas") || is_ident(t, "__align__") || is_ident(t, "__attribute__") ||
         is_ident(t, "__declspec")) &&
        is_punct(toks[j + 1], "("))
      j = closer(j + 1, "(", ")");
    else if (is_punct(t, "[") && is_punct(toks[j + 1], "["))
      j = closer(j, "[", "]");
    else
      break;
  }
  return j;
}

}  // namespace

bool declares_enum(std::string_view source, std::string_view name) {
  std::vector<Token> toks = lex(source);
  for (std::size_t k = 0; k + 2 < toks.size(); ++k) {
    if (toks[k].directive || !is_ident(toks[k], "enum")) continue;
    std::size_t j = k + 1;
    if (is_ident(toks[j], "class") || is_ident(toks[j], "struct")) ++j;
    j = after_attributes(toks, j);
    if (j + 1 < toks.size() && is_ident(toks[j], name) &&
        (is_punct(toks[j + 1], "{") || is_punct(toks[j + 1], ":") || is_punct(toks[j + 1], ";")))
      return true;
    // typedef enum [tag] { ... } name;
    if (k == 0 || !is_ident(toks[k - 1], "typedef")) continue;
    while (j < toks.size() && !is_punct(toks[j], "{") && !is_punct(toks[j], ";")) ++j;
    while (j < toks.size() && !is_punct(toks[j], "}")) ++j;
    if (j + 1 < toks.size() && is_ident(toks[j + 1], name)) return true;
  }
  return false;
}

std::optional<StructDecl> find_struct(std::string_view source, std::string_view name) {
  std::vector<Token> toks = lex(source);
  // The matching '}' of the '{' at k.
  auto close_of = [&](std::size_t k) {
    int depth = 0;
    for (std::size_t j = k; j < toks.size(); ++j) {
      if (toks[j].directive) continue;
      if (is_punct(toks[j], "{")) ++depth;
      if (is_punct(toks[j], "}") && --depth == 0) return j;
    }
    return toks.size();
  };
  for (std::size_t k = 0; k + 1 < toks.size(); ++k) {
    if (toks[k].directive || !(is_ident(toks[k], "struct") || is_ident(toks[k], "class"))) continue;
    if (k > 0 && is_ident(toks[k - 1], "enum")) continue;  // (enum class Mode { ... })
    std::size_t open = after_attributes(toks, k + 1);      // struct alignas(16) Particle
    if (open >= toks.size()) return std::nullopt;
    bool named = is_ident(toks[open], name);
    if (toks[open].kind == Token::ident) ++open;
    while (open < toks.size() && toks[open].kind == Token::ident) ++open;  // final
    if (open >= toks.size() || !is_punct(toks[open], "{")) continue;
    std::size_t close = close_of(open);
    if (close >= toks.size()) return std::nullopt;
    // typedef struct { ... } name;
    if (!named && k > 0 && is_ident(toks[k - 1], "typedef") && close + 1 < toks.size() &&
        is_ident(toks[close + 1], name))
      named = true;
    if (!named) continue;
    StructDecl d{std::string(name), struct_members(toks, open + 1, close), {}};
    // template <typename T, int N = 4> struct ...: each parameter's name, before ',' '=' '>'
    if (k > 0 && is_punct(toks[k - 1], ">")) {
      std::size_t b = k - 1;
      for (int depth = 0; b > 0; --b) {
        if (is_punct(toks[b], ">")) ++depth;
        if (is_punct(toks[b], "<") && --depth == 0) break;
      }
      if (b > 0 && is_ident(toks[b - 1], "template"))
        for (std::size_t j = b + 1, depth = 0; j < k - 1; ++j) {
          if (is_punct(toks[j], "<") || is_punct(toks[j], "(")) ++depth;
          if (is_punct(toks[j], ">") || is_punct(toks[j], ")")) --depth;
          if (depth == 0 && toks[j].kind == Token::ident &&
              (is_punct(toks[j + 1], ",") || is_punct(toks[j + 1], "=") || j + 1 == k - 1))
            d.template_params.push_back(toks[j].text);
        }
    }
    return d;
  }
  return std::nullopt;
}

std::vector<std::size_t> find_identifier(std::string_view source, std::string_view word) {
  std::vector<std::size_t> at;
  for (const Token& t : lex(source))
    if (t.kind == Token::ident && t.text == word) at.push_back(t.begin);
  return at;
}

}  // namespace kiln::jit
