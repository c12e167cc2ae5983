// Non-type template arguments bound in kernel bodies (template_args.h).
#include "jit/cpu/template_args.h"

#include <algorithm>
#include <map>
#include <regex>

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

// Whether text is an integer or bool literal (what a non-type argument is bound to).
bool literal(const std::string& text) {
  static const std::regex pattern("-?(0[xX][0-9a-fA-F]+|[0-9]+)[uUlL]*|true|false");
  return std::regex_match(text, pattern);
}

}  // namespace

std::string bind_template_arguments(std::string_view source,
                                    const std::vector<std::string>& name_expressions) {
  std::map<std::string, int> instances;  // kernel name -> instances in this compile
  for (const std::string& e : name_expressions) ++instances[e.substr(0, e.find('<'))];
  std::vector<jit::KernelDecl> decls;
  std::vector<jit::KernelBody> bodies;
  std::vector<Edit> edits;
  for (const std::string& expr : name_expressions) {
    const std::string name = expr.substr(0, expr.find('<'));
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
    const jit::KernelDecl& decl = *std::find_if(decls.begin(), decls.end(), named);
    const jit::KernelBody& body = *std::find_if(bodies.begin(), bodies.end(), named);
    std::map<std::string, std::string> values;  // parameter -> its literal
    for (std::size_t i = 0; i < decl.template_params.size(); ++i) {
      const jit::TemplateParam& p = decl.template_params[i];
      const std::string value = i < args.size() ? args[i] : p.default_value;
      if (p.kind != "typename" && !p.name.empty() && literal(value))
        values[p.name] = value[0] == '-' ? "(" + value + ")" : value;
    }
    if (values.empty() || body.close <= body.open) continue;
    const std::string_view text = source.substr(body.open, body.close - body.open);
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
