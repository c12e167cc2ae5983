// Non-type template arguments bound in kernel bodies (template_args.h).
#include "jit/cpu/template_args.h"

#include <algorithm>
#include <map>
#include <optional>
#include <regex>
#include <stdexcept>

#include "jit/cpu/edits.h"
#include "jit/kernel_decl.h"
#include "jit/lexer.h"

namespace kiln::cpu {
namespace {

struct Edit {
  std::size_t begin, end;
  std::string text;
};

// The template arguments of a name expression ("k<8, float>": {"8", "float"}), split at
// top-level commas, trimmed; empty where it has none.
std::vector<std::string> template_arguments(const std::string& expr) {
  std::vector<std::string> args;
  const std::size_t open = expr.find('<');
  if (open == std::string::npos || expr.back() != '>') return args;
  std::string current;
  int depth = 0;
  for (std::size_t i = open + 1; i + 1 < expr.size(); ++i) {
    const char c = expr[i];
    if (c == '<' || c == '(') ++depth;
    if (c == '>' || c == ')') --depth;
    if (c == ',' && depth == 0) {
      args.push_back(current);
      current.clear();
    } else if (c != ' ') {
      current += c;
    }
  }
  args.push_back(current);
  return args;
}

// A non-type template parameter as its definition declares it.
struct Parameter {
  std::string kind;  // its type's words ("unsigned int"); "typename" for a type parameter
  std::string name;
  std::string default_value;
};

// The template parameters of the kernel whose body opens at token open of t (its own header:
// a declaration before it may name them otherwise), or nullopt: none, a pack, unread.
std::optional<std::vector<Parameter>> header_of(const std::vector<jit::Token>& t,
                                                std::size_t open) {
  std::size_t k = open;  // back to the declaration's start
  while (k > 0 && !jit::is_punct(t[k - 1], ";") && !jit::is_punct(t[k - 1], "}") &&
         !jit::is_punct(t[k - 1], "{") && !t[k - 1].directive)
    --k;
  while (k < open && !jit::is_ident(t[k], "template")) ++k;
  if (k >= open || !jit::is_punct(t[k + 1], "<")) return std::nullopt;
  std::vector<Parameter> params;
  std::vector<std::string> words;
  std::string value;
  bool in_default = false;
  int depth = 0;
  for (std::size_t j = k + 2; j < open; ++j) {
    const jit::Token& x = t[j];
    const bool end = depth == 0 && jit::is_punct(x, ">");
    if (depth == 0 && (jit::is_punct(x, ",") || end)) {
      if (words.empty()) return std::nullopt;
      Parameter p;
      p.name = words.back();
      words.pop_back();
      for (const std::string& w : words) p.kind += (p.kind.empty() ? "" : " ") + w;
      if (p.kind == "class") p.kind = "typename";
      p.default_value = value;
      params.push_back(std::move(p));
      words.clear();
      value.clear();
      in_default = false;
      if (end) return params;
      continue;
    }
    if (jit::is_punct(x, "<") || jit::is_punct(x, "(")) ++depth;
    if (jit::is_punct(x, ">") || jit::is_punct(x, ")")) --depth;
    if (jit::is_punct(x, ".")) return std::nullopt;  // (a pack: `int... Ns`)
    if (in_default) {
      value += x.text;
    } else if (depth == 0 && jit::is_punct(x, "=")) {
      in_default = true;
    } else if (x.kind == jit::Token::ident || jit::is_punct(x, "::")) {
      words.push_back(x.text);
    } else {
      return std::nullopt;  // (a template template parameter, a pointer type: not read)
    }
  }
  return std::nullopt;
}

// The argument text as a literal of the parameter's type, so that the body computes as it
// would with the parameter (`unsigned N` of `k<0>`: `0u`, whose N - 1 is large), or nullopt
// where the argument is no integer or bool literal, or does not fit an int parameter.
std::optional<std::string> typed_literal(const std::string& kind, const std::string& value) {
  static const std::regex integer("(-?)(0[xX][0-9a-fA-F]+|[0-9]+)[uUlL]*");
  std::smatch m;
  if (kind == "bool") {
    if (value == "true" || value == "1") return "true";
    if (value == "false" || value == "0") return "false";
    return std::nullopt;
  }
  if (!std::regex_match(value, m, integer)) return std::nullopt;
  const bool negative = !m[1].str().empty();
  const std::string digits = m[2].str();
  unsigned long long magnitude = 0;
  try {
    magnitude = std::stoull(digits, nullptr, 0);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  auto with = [&](const char* suffix) {
    return negative ? "(-" + digits + suffix + ")" : digits + suffix;
  };
  if (kind == "int" || kind == "signed" || kind == "signed int") {
    if (magnitude > (negative ? 2147483648ull : 2147483647ull)) return std::nullopt;
    return with("");
  }
  if (negative) return "(static_cast<" + kind + ">(-" + digits + "ll))";
  if (kind == "unsigned" || kind == "unsigned int") return digits + "u";
  if (kind == "long" || kind == "long int") return digits + "l";
  if (kind == "unsigned long") return digits + "ul";
  if (kind == "long long") return digits + "ll";
  if (kind == "unsigned long long") return digits + "ull";
  return "(static_cast<" + kind + ">(" + digits + "ull))";
}

}  // namespace

std::string bind_template_arguments(std::string_view source,
                                    const std::vector<std::string>& name_expressions) {
  // (a kernel's name without its namespaces: `clover::fill<4>` is fill's)
  auto kernel_of = [](const std::string& e) {
    const std::string base = e.substr(0, e.find('<'));
    const std::size_t colons = base.rfind("::");
    return colons == std::string::npos ? base : base.substr(colons + 2);
  };
  std::map<std::string, int> instances;  // kernel name -> instances in this compile
  for (const std::string& e : name_expressions) ++instances[kernel_of(e)];
  std::vector<jit::KernelDecl> decls;
  std::vector<jit::KernelBody> bodies;
  std::vector<jit::Token> all;  // (the source's tokens, lexed once where needed)
  std::vector<Edit> edits;
  for (const std::string& expr : name_expressions) {
    const std::string name = kernel_of(expr);
    const std::vector<std::string> args = template_arguments(expr);
    if (args.empty() || instances[name] != 1) continue;
    if (decls.empty()) {
      decls = jit::find_kernels(source);
      bodies = jit::find_kernel_bodies(source);
    }
    auto named = [&](const auto& x) { return x.name == name; };
    if (std::count_if(decls.begin(), decls.end(), named) != 1 ||
        std::count_if(bodies.begin(), bodies.end(), named) != 1)
      continue;
    const jit::KernelBody& body = *std::find_if(bodies.begin(), bodies.end(), named);
    if (body.close <= body.open) continue;
    // (in a discarded `if constexpr` branch or a static_assert, a bound value is no longer
    // dependent: `static_assert(N != 1)` would fail where the template's does not)
    const std::string_view text = source.substr(body.open, body.close - body.open);
    if (text.find("constexpr") != std::string_view::npos ||
        text.find("static_assert") != std::string_view::npos)
      continue;
    if (all.empty()) all = jit::lex(source);
    auto open = std::find_if(all.begin(), all.end(),
                             [&](const jit::Token& x) { return x.begin == body.open; });
    if (open == all.end()) continue;
    const auto header = header_of(all, std::size_t(open - all.begin()));
    if (!header) continue;
    std::map<std::string, std::string> values;  // parameter -> its literal
    for (std::size_t i = 0; i < header->size(); ++i) {
      const Parameter& p = (*header)[i];
      if (p.kind == "typename" || p.kind == "auto") continue;
      if (auto literal = typed_literal(p.kind, i < args.size() ? args[i] : p.default_value))
        values[p.name] = *literal;
    }
    if (values.empty()) continue;
    const std::vector<jit::Token> t = jit::lex(text);
    for (std::size_t k = 0; k < t.size(); ++k) {
      auto v = t[k].kind == jit::Token::ident ? values.find(t[k].text) : values.end();
      if (v == values.end() || t[k].directive ||
          (k > 0 && (jit::is_punct(t[k - 1], ".") || jit::is_punct(t[k - 1], "::") ||
                     (k > 1 && jit::is_punct(t[k - 1], ">") && jit::is_punct(t[k - 2], "-")))))
        continue;
      edits.push_back({body.open + t[k].begin, body.open + t[k].end, v->second});
    }
  }
  if (edits.empty()) return std::string(source);
  std::sort(edits.begin(), edits.end(),
            [](const Edit& a, const Edit& b) { return a.begin < b.begin; });
  return apply_edits(source, edits);
}

}  // namespace kiln::cpu
