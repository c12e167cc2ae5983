// Inline PTX as C++ (inline_ptx.h): find each asm statement over jit/lexer.h's tokens, read its
// template and operands as GCC does, lex the template as PTX, and write each instruction as a
// statement over kernels_src/kiln/cpu_ptx.h's operations, or leave the asm with the reason.
#include "jit/cpu/inline_ptx.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>

#include "jit/cpu/edits.h"
#include "jit/lexer.h"

namespace kiln::cpu {
namespace {

using jit::is_ident;
using jit::is_punct;
using jit::Token;

// Thrown while translating one statement: why it stays as written.
struct Untranslatable {
  std::string why;
};

// Thrown for a template with no instructions (`asm volatile("" ::: "memory")`, a compiler
// barrier): it stays, as the host compiler reads it.
struct Empty {};

struct Edit {
  std::size_t begin, end;
  std::string text;
};

// One `[name] "constraint" (expression)` of an asm statement.
struct Binding {
  std::string name, constraint, expr;
  bool output;
  bool bound = false;  // read through a local (kiln_ptx_N), not as the expression itself
  std::string type;    // an input's register type, from its constraint (its copy's type)
};

// ---- The template: GCC's string literal, then PTX tokens ----

// The bytes a C string literal's source text (quotes included) stands for.
std::string literal_bytes(std::string_view raw) {
  if (raw.find("R\"") != std::string_view::npos && raw.find("R\"") < raw.find('"'))
    throw Untranslatable{"a raw-string template"};
  const std::size_t open = raw.find('"');
  std::string out;
  for (std::size_t i = open + 1; i + 1 < raw.size(); ++i) {
    if (raw[i] != '\\') {
      out += raw[i];
      continue;
    }
    const char c = raw[++i];
    switch (c) {
      case 'n':
        out += '\n';
        break;
      case 't':
        out += '\t';
        break;
      case 'r':
        out += '\r';
        break;
      case '\n':
        break;
      case 'x': {
        int v = 0;
        while (i + 1 < raw.size() && std::isxdigit((unsigned char)raw[i + 1]))
          v = v * 16 + std::stoi(std::string(1, raw[++i]), nullptr, 16);
        out += char(v);
        break;
      }
      default:
        if (c >= '0' && c <= '7') {
          int v = c - '0';
          for (int k = 0; k < 2 && i + 1 < raw.size() && raw[i + 1] >= '0' && raw[i + 1] <= '7';
               ++k)
            v = v * 8 + (raw[++i] - '0');
          out += char(v);
        } else {
          out += c;
        }
    }
  }
  return out;
}

struct PtxToken {
  enum Kind { word, operand, number, punct } kind;
  std::string text;  // a word (`add.cc.u32`, `%laneid`, `p`), an operand's index, a number
};

bool word_char(char c) {
  return std::isalnum((unsigned char)c) || c == '_' || c == '$' || c == '.' || c == '%';
}

// The PTX tokens of a GCC template: `%N` and `%[name]` are operands (their index), `%%x` the
// register %x; comments dropped.
std::vector<PtxToken> ptx_tokens(std::string_view s, const std::vector<Binding>& bindings) {
  std::vector<PtxToken> out;
  std::size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (std::isspace((unsigned char)c)) {
      ++i;
    } else if (s.substr(i, 2) == "//") {
      while (i < s.size() && s[i] != '\n') ++i;
    } else if (s.substr(i, 2) == "/*") {
      const std::size_t e = s.find("*/", i + 2);
      i = e == std::string_view::npos ? s.size() : e + 2;
    } else if (c == '%' && i + 1 < s.size() && std::isdigit((unsigned char)s[i + 1])) {
      std::size_t j = i + 1;
      while (j < s.size() && std::isdigit((unsigned char)s[j])) ++j;
      const std::size_t n = std::stoul(std::string(s.substr(i + 1, j - i - 1)));
      if (n >= bindings.size())
        throw Untranslatable{"operand %" + std::to_string(n) + " is not given"};
      out.push_back({PtxToken::operand, std::to_string(n)});
      i = j;
    } else if (c == '%' && i + 1 < s.size() && s[i + 1] == '[') {
      const std::size_t e = s.find(']', i);
      if (e == std::string_view::npos) throw Untranslatable{"an unclosed %["};
      const std::string name(s.substr(i + 2, e - i - 2));
      std::size_t n = 0;
      while (n < bindings.size() && bindings[n].name != name) ++n;
      if (n == bindings.size()) throw Untranslatable{"operand %[" + name + "] is not given"};
      out.push_back({PtxToken::operand, std::to_string(n)});
      i = e + 1;
    } else if (c == '%' && s.substr(i, 2) != "%%") {
      throw Untranslatable{"the template's `" + std::string(s.substr(i, 2)) + "`"};
    } else if (c == '%' || std::isalpha((unsigned char)c) || c == '_' || c == '.' || c == '$') {
      std::size_t j = c == '%' ? i + 1 : i;  // (%% is one % in the PTX text)
      const std::size_t start = j;
      while (j < s.size() && (word_char(s[j]) || (s.substr(j, 2) == "::" && (j += 1)))) ++j;
      out.push_back({PtxToken::word, std::string(s.substr(start, j - start))});
      i = j;
    } else if (std::isdigit((unsigned char)c)) {
      std::size_t j = i;
      while (j < s.size() && (std::isalnum((unsigned char)s[j]) || s[j] == '.')) ++j;
      out.push_back({PtxToken::number, std::string(s.substr(i, j - i))});
      i = j;
    } else {
      out.push_back({PtxToken::punct, std::string(1, c)});
      ++i;
    }
  }
  return out;
}

// ---- Operands ----

// One PTX operand as C++: a bound operand, a local register, a special register or a number.
struct Scalar {
  std::string text;
  bool immediate = false, writable = false, negated = false, sink = false;
  int float_bits = 0;  // an 0f (32) or 0d (64) literal: text is its bits
  bool wide = true;  // (a register of 64 bits, or a bound operand not given as a 32-bit "r")
};

struct Operand {
  enum Kind { scalar, address, vector, pair } kind = scalar;
  std::vector<Scalar> parts;  // one, or a vector's elements, or p|q
  long long offset = 0;       // an address's [base+offset]
};

// The C++ type of a PTX type suffix (`u32`, `f64`, `pred`), or "".
std::string cpp_type(std::string_view t) {
  static const std::map<std::string, std::string, std::less<>> types{
      {"u8", "uint8_t"}, {"u16", "uint16_t"}, {"u32", "uint32_t"}, {"u64", "uint64_t"},
      {"s8", "int8_t"},  {"s16", "int16_t"},  {"s32", "int32_t"},  {"s64", "int64_t"},
      {"b8", "uint8_t"}, {"b16", "uint16_t"}, {"b32", "uint32_t"}, {"b64", "uint64_t"},
      {"f32", "float"},  {"f64", "double"},   {"pred", "bool"}};
  const auto it = types.find(t);
  return it == types.end() ? "" : it->second;
}
bool is_float(std::string_view type) {
  return type == "float" || type == "double";
}
bool is_signed(std::string_view type) {
  return type.starts_with("int");
}
int type_bits(std::string_view type) {
  if (type == "bool") return 1;
  if (type == "float") return 32;
  if (type == "double") return 64;
  return std::stoi(std::string(type.substr(type.find("int") + 3, 2)));
}
std::string unsigned_of_bits(int bits) {
  return "uint" + std::to_string(bits) + "_t";
}

// A special register as a C++ expression, or "".
std::string special_register(std::string_view name) {
  static const std::string linear =
      "(threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z))";
  static const std::map<std::string, std::string, std::less<>> regs{
      {"%tid.x", "threadIdx.x"},
      {"%tid.y", "threadIdx.y"},
      {"%tid.z", "threadIdx.z"},
      {"%ntid.x", "blockDim.x"},
      {"%ntid.y", "blockDim.y"},
      {"%ntid.z", "blockDim.z"},
      {"%ctaid.x", "blockIdx.x"},
      {"%ctaid.y", "blockIdx.y"},
      {"%ctaid.z", "blockIdx.z"},
      {"%nctaid.x", "gridDim.x"},
      {"%nctaid.y", "gridDim.y"},
      {"%nctaid.z", "gridDim.z"},
      {"%laneid", "(" + linear + " & 31u)"},
      {"%warpid", "(" + linear + " >> 5)"},
      {"%lanemask_eq", "__lanemask_eq()"},
      {"%lanemask_lt", "__lanemask_lt()"},
      {"%lanemask_le", "__lanemask_le()"},
      {"%lanemask_gt", "__lanemask_gt()"},
      {"%lanemask_ge", "__lanemask_ge()"},
      {"%smid", "0u"},
      {"%nsmid", "1u"},
      {"%gridid", "0ull"},
      {"%clock", "uint32_t(clock64())"},
      {"%clock_hi", "uint32_t(uint64_t(clock64()) >> 32)"},
      {"%clock64", "uint64_t(clock64())"},
      {"%globaltimer", "uint64_t(__globaltimer())"},
      {"%globaltimer_lo", "uint32_t(__globaltimer())"},
      {"%globaltimer_hi", "uint32_t(__globaltimer() >> 32)"}};
  const auto it = regs.find(name);
  return it == regs.end() ? "" : it->second;
}

// A PTX number as C++: 0f/0d hexadecimal floats as their bits, others as written.
// (0f/0d: *bits is 32 or 64, and the text the bits as an integer)
std::string number_text(const std::string& n, int* bits) {
  if (n.size() == 10 && (n[1] == 'f' || n[1] == 'F')) return *bits = 32, "0x" + n.substr(2) + "u";
  if (n.size() == 18 && (n[1] == 'd' || n[1] == 'D')) return *bits = 64, "0x" + n.substr(2) + "ull";
  return n;
}

// The C++ name of a .reg register (`%r1` -> kiln_reg__r1).
std::string local_name(const std::string& name) {
  std::string out = "kiln_reg_";
  for (char c : name) out += c == '%' || c == '$' ? '_' : c;
  return out;
}

// Whether an instruction's translation reads modifier m (types aside): another (`min.NaN`,
// `max.relu`, `mad.hi.sat`) would change what it computes, so its statement stays as written.
// Memory, barrier and hint instructions take their many cache and scope modifiers as hints.
bool known_modifier(const std::string& base, const std::string& m, bool floating) {
  static const std::map<std::string, std::string> known{
      {"add", "cc sat rn rz rm rp ftz"},
      {"sub", "cc sat rn rz rm rp ftz"},
      {"addc", "cc"},
      {"subc", "cc"},
      {"mul", "lo hi wide rn rz rm rp ftz sat"},
      {"mad", "lo hi wide cc rn rz rm rp ftz sat"},
      {"madc", "lo hi cc"},
      {"fma", "rn rz rm rp ftz sat"},
      {"div", "rn rz rm rp ftz approx full"},
      {"rem", ""},
      {"min", "ftz"},
      {"max", "ftz"},
      {"abs", "ftz"},
      {"neg", "ftz"},
      {"rcp", "rn rz rm rp approx ftz"},
      {"sqrt", "rn rz rm rp approx ftz"},
      {"rsqrt", "approx ftz"},
      {"sin", "approx ftz"},
      {"cos", "approx ftz"},
      {"lg2", "approx ftz"},
      {"ex2", "approx ftz"},
      {"tanh", "approx"},
      {"copysign", ""},
      {"testp", "finite infinite number notanumber normal subnormal"},
      {"setp", "eq ne lt le gt ge lo ls hi hs equ neu ltu leu gtu geu num nan ftz and or xor"},
      {"selp", ""},
      {"mov", ""},
      {"dp4a", ""},
      {"dp2a", "lo hi"},
      {"mul24", "lo hi"},
      {"mad24", "lo hi"},
      {"sad", ""},
      {"bmsk", "clamp wrap"},
      {"fns", ""},
      {"szext", "clamp wrap"},
      {"vadd", "add min max"},
      {"vsub", "add min max"},
      {"vabsdiff", "add min max"},
      {"vmin", "add min max"},
      {"vmax", "add min max"},
      {"vshl", "clamp wrap add min max"},
      {"vshr", "clamp wrap add min max"},
      {"and", ""},
      {"or", ""},
      {"xor", ""},
      {"not", ""},
      {"cnot", ""},
      {"shl", ""},
      {"shr", ""},
      {"shf", "l r wrap clamp"},
      {"lop3", ""},
      {"prmt", "f4e b4e rc8 ecl ecr rc16"},
      {"bfe", ""},
      {"bfi", ""},
      {"bfind", "shiftamt"},
      {"brev", ""},
      {"popc", ""},
      {"clz", ""},
      {"cvt", "rn rz rm rp rni rzi rmi rpi ftz sat f16 bf16 f16x2 bf16x2"},
      {"cvta", "to global"},
      {"shfl", "sync up down bfly idx"},
      {"vote", "sync all any uni ballot"},
      {"match", "sync any all"},
      {"redux", "sync add min max and or xor"},
      {"activemask", ""},
      {"nanosleep", ""},
      {"trap", ""}};
  const auto it = known.find(base);
  if (it == known.end() || !cpp_type(m).empty()) return true;
  if (m == "sat" && (base == "mul" || base == "mad") && !floating) return false;  // mad.hi.sat
  return (" " + it->second + " ").find(" " + m + " ") != std::string::npos;
}

// ---- One statement's translation ----

class Translator {
 public:
  // (id: a name unique to the statement, for its locals the region rewrite keeps per thread)
  Translator(std::vector<Binding> bindings, std::string id)
      : bindings_(std::move(bindings)), id_(std::move(id)) {}

  // The C++ for the whole template.
  std::string translate(const std::vector<PtxToken>& t) {
    std::string body;
    std::size_t k = 0;
    while (k < t.size()) {
      if (t[k].kind == PtxToken::punct && (t[k].text == "{" || t[k].text == "}")) {
        body += t[k++].text + " ";
        continue;
      }
      std::size_t e = k;
      while (e < t.size() && !(t[e].kind == PtxToken::punct && t[e].text == ";")) ++e;
      if (e > k) body += statement(std::vector<PtxToken>(t.begin() + k, t.begin() + e)) + " ";
      k = e + 1;
    }
    std::string head = "{ ";
    for (std::size_t i = 0; i < bindings_.size(); ++i) {
      const Binding& b = bindings_[i];
      const std::string name = "kiln_ptx_" + std::to_string(i);
      if (b.bound && b.output) head += "auto& " + name + " = (" + b.expr + "); ";
      if (b.bound && !b.output)  // (typed, not auto: the region rewrite keeps it per thread)
        head +=
            "const " + b.type + " " + name + " = kiln_ptx::get<" + b.type + ">((" + b.expr + ")); ";
    }
    if (uses_carry_) head += "unsigned& kiln_ptx_cc = kiln_ptx::carry_flag(); ";
    return head + body + "}";
  }

 private:
  std::vector<Binding> bindings_;
  std::map<std::string, std::string> locals_;  // a .reg name -> its C++ type
  std::string id_;
  int reductions_ = 0;  // bar.red results declared so far
  bool uses_carry_ = false;
  bool ftz_ = false;    // the statement at hand flushes f32 subnormals (.ftz): inputs and result
  std::string result_;  // its result's type, where it computes a number
  // the statement at hand
  std::string base_;
  std::vector<std::string> mods_;
  std::vector<Operand> args_;

  bool has(std::string_view m) const {
    for (const std::string& x : mods_)
      if (x == m) return true;
    return false;
  }
  [[noreturn]] void refuse(const std::string& why) const { throw Untranslatable{why}; }

  // The statement's type: its last type suffix (`add.cc.u32` -> uint32_t).
  std::string type() const {
    for (std::size_t i = mods_.size(); i-- > 0;)
      if (std::string t = cpp_type(mods_[i]); !t.empty()) return t;
    refuse("no type this translation knows");
  }
  // The destination of setp, shfl and match: a register, or a pair `p|q`.
  const Operand& dest() const {
    if (args_.empty() || (args_[0].kind != Operand::scalar && args_[0].kind != Operand::pair))
      refuse("its destination");
    return args_[0];
  }
  const Scalar& arg(std::size_t i) const {
    if (i >= args_.size() || args_[i].kind != Operand::scalar) refuse("its operands");
    return args_[i].parts[0];
  }
  // Operand i read as type T.
  std::string in(std::size_t i, const std::string& T) const {
    return ftz_ && T == "float" ? "kiln_ptx::ftz(" + read(arg(i), T) + ")" : read(arg(i), T);
  }
  static std::string read(const Scalar& s, const std::string& T) {
    if (T == "bool")
      return s.negated ? "!kiln_ptx::pred(" + s.text + ")" : "kiln_ptx::pred(" + s.text + ")";
    if (s.float_bits && is_float(T))  // (a float's bits, read as a float or as bits)
      return "static_cast<" + T + ">(kiln_cpu::bit_cast<" +
             (s.float_bits == 32 ? "float>(uint32_t(" : "double>(uint64_t(") + s.text + ")))";
    if (s.immediate) return "static_cast<" + T + ">(" + s.text + ")";
    return "kiln_ptx::get<" + T + ">(" + s.text + ")";
  }
  // Writes value into operand d.
  std::string write(const Scalar& d, const std::string& value) const {
    if (d.sink) return "(void)(" + value + ");";
    if (!d.writable) refuse("writes an operand that is not an output");
    return "kiln_ptx::set(" + d.text + ", " + value + ");";
  }
  // Writes value into operand 0 (a float result flushed where the statement says .ftz).
  std::string out(const std::string& value) const {
    return write(arg(0), ftz_ && result_ == "float" ? "kiln_ptx::ftz(" + value + ")" : value);
  }

  // The rounding modifier's code: 0 nearest (also none), 1 toward zero, 2 up, 3 down.
  int rounding() const {
    for (const std::string& m : mods_) {
      if (m == "rz" || m == "rzi") return 1;
      if (m == "rp" || m == "rpi") return 2;
      if (m == "rm" || m == "rmi") return 3;
    }
    return 0;
  }
  // The CUDA intrinsic for a directed float operation (`__fadd_rz`), or "" when rounding to
  // nearest.
  std::string directed(std::string_view op, const std::string& T) const {
    static const char* suffix[] = {"", "_rz", "_ru", "_rd"};
    const int r = rounding();
    // (an explicit .rn on mul, add and sub: never fused into a multiply-add, as CUDA's
    // __fmul_rn & co. promise)
    if (r == 0 && has("rn") && (op == "add" || op == "sub" || op == "mul"))
      return std::string(T == "float" ? "__f" : "__d") + std::string(op) + "_rn";
    if (r == 0) return "";
    if (op == "fma") return std::string(T == "float" ? "__fmaf" : "__fma") + suffix[r];
    return std::string(T == "float" ? "__f" : "__d") + std::string(op) + suffix[r];
  }

  std::string statement(const std::vector<PtxToken>& t);
  Operand operand(const std::vector<PtxToken>& t, std::size_t& k);
  Scalar scalar(const std::vector<PtxToken>& t, std::size_t& k);
  std::string declare(const std::vector<PtxToken>& t);
  std::string instruction();
  std::string arithmetic(const std::string& T);
  std::string bits(const std::string& T);
  std::string conversion();
  std::string narrow_conversion();
  std::string packed();
  std::string memory();
  std::string synchronization();
};

// A scalar operand at t[k]: `%N`, a register, `!p`, a number, `-1`, `_`.
Scalar Translator::scalar(const std::vector<PtxToken>& t, std::size_t& k) {
  Scalar s;
  if (k < t.size() && t[k].kind == PtxToken::punct && t[k].text == "!") s.negated = true, ++k;
  std::string sign;
  if (k < t.size() && t[k].kind == PtxToken::punct && t[k].text == "-") sign = "-", ++k;
  if (k >= t.size()) refuse("an operand is missing");
  const PtxToken& x = t[k++];
  if (x.kind == PtxToken::operand) {
    const Binding& b = bindings_[std::stoul(x.text)];
    s.text = b.bound ? "kiln_ptx_" + x.text : "(" + b.expr + ")";
    s.writable = b.output;
    s.wide =
        b.constraint.find('r') == std::string::npos && b.constraint.find('h') == std::string::npos;
    s.immediate = b.constraint.find('n') != std::string::npos && !b.output;
  } else if (x.kind == PtxToken::number) {
    s.text = number_text(x.text, &s.float_bits);
    if (!sign.empty() && s.float_bits) refuse("a negated float literal");
    s.text = sign + s.text;
    s.immediate = true;
  } else if (x.kind == PtxToken::word && x.text == "_") {
    s.sink = true;
  } else if (x.kind == PtxToken::word && locals_.count(x.text)) {
    s.text = local_name(x.text);
    s.writable = true;
    s.wide = locals_[x.text] != "bool" && type_bits(locals_[x.text]) == 64;
  } else if (x.kind == PtxToken::word && !special_register(x.text).empty()) {
    s.text = special_register(x.text);
  } else {
    refuse("`" + x.text + "` is not an operand this translation knows");
  }
  if (!sign.empty() && !s.immediate) refuse("a negated register");
  return s;
}

// An operand at t[k]: a scalar, `p|q`, `{a, b, ...}` or `[address+offset]`.
Operand Translator::operand(const std::vector<PtxToken>& t, std::size_t& k) {
  auto punct = [&](std::string_view p) {
    return k < t.size() && t[k].kind == PtxToken::punct && t[k].text == p;
  };
  Operand o;
  if (punct("[")) {
    ++k;
    o.kind = Operand::address;
    o.parts.push_back(scalar(t, k));
    if (punct("+") || punct("-")) {
      const bool minus = t[k++].text == "-";
      if (punct("-")) refuse("an address offset");
      if (k >= t.size() || t[k].kind != PtxToken::number) refuse("an address offset");
      o.offset = std::stoll(t[k++].text, nullptr, 0) * (minus ? -1 : 1);
    }
    if (!punct("]")) refuse("an address");
    ++k;
  } else if (punct("{")) {
    ++k;
    o.kind = Operand::vector;
    while (!punct("}")) {
      o.parts.push_back(scalar(t, k));
      if (punct(","))
        ++k;
      else if (!punct("}"))
        refuse("a vector operand");
    }
    if (o.parts.empty()) refuse("an empty vector operand");
    ++k;
  } else {
    o.parts.push_back(scalar(t, k));
    if (punct("|")) {
      ++k;
      o.kind = Operand::pair;
      o.parts.push_back(scalar(t, k));
    }
  }
  return o;
}

// A `.reg .type name, name<N>;` declaration as C++ locals.
std::string Translator::declare(const std::vector<PtxToken>& t) {
  if (t.size() < 3 || t[1].kind != PtxToken::word || t[1].text.empty() || t[1].text[0] != '.')
    refuse("a declaration");
  const std::string T = cpp_type(std::string_view(t[1].text).substr(1));
  if (T.empty()) refuse("a `.reg " + t[1].text + "` register");
  std::vector<std::string> names;
  for (std::size_t k = 2; k < t.size(); ++k) {
    if (t[k].kind == PtxToken::punct && t[k].text == ",") continue;
    if (t[k].kind != PtxToken::word) refuse("a declaration");
    if (k + 1 < t.size() && t[k + 1].text == "<") {
      if (k + 3 >= t.size() || t[k + 2].kind != PtxToken::number || t[k + 3].text != ">")
        refuse("a declaration");
      const int n = t[k + 2].text.size() > 4 ? 100000 : std::stoi(t[k + 2].text);
      if (n > 1024) refuse("more than 1024 registers in one declaration");
      for (int i = 0; i < n; ++i) names.push_back(t[k].text + std::to_string(i));
      k += 3;
    } else {
      names.push_back(t[k].text);
    }
  }
  std::string out;
  for (const std::string& n : names) {
    locals_[n] = T;
    out += T + " " + local_name(n) + "{}; ";
  }
  return out;
}

// One statement (no `;`): a declaration, or `[@p] opcode operands`.
std::string Translator::statement(const std::vector<PtxToken>& t) {
  if (t[0].kind == PtxToken::word && t[0].text == ".reg") return declare(t);
  std::size_t k = 0;
  std::string guard;
  if (t[0].kind == PtxToken::punct && t[0].text == "@") {
    ++k;
    const Scalar p = scalar(t, k);
    guard = read(p, "bool");
  }
  if (k >= t.size() || t[k].kind != PtxToken::word) refuse("a statement");
  const std::string opcode = t[k++].text;
  try {
    if (opcode.starts_with(".")) refuse("a directive");
    if (k < t.size() && t[k].kind == PtxToken::punct && t[k].text == ":") refuse("a label");
    mods_.clear();
    for (std::size_t b = 0, e; b <= opcode.size(); b = e + 1) {
      e = opcode.find('.', b);
      if (e == std::string::npos) e = opcode.size();
      mods_.push_back(opcode.substr(b, e - b));
    }
    base_ = mods_.front();
    ftz_ = has("ftz");
    result_.clear();
    bool floating = false;
    for (const std::string& m : mods_) floating = floating || m == "f32" || m == "f64";
    for (std::size_t i = 1; i < mods_.size(); ++i)
      if (!known_modifier(base_, mods_[i], floating)) refuse("its ." + mods_[i] + " modifier");
    args_.clear();
    while (k < t.size()) {
      args_.push_back(operand(t, k));
      if (k < t.size() && !(t[k].kind == PtxToken::punct && t[k].text == ","))
        refuse("its operands");
      if (k < t.size()) ++k;
    }
    const std::string code = instruction();
    return guard.empty() ? code : "if (" + guard + ") { " + code + " }";
  } catch (const Untranslatable& u) {
    throw Untranslatable{"`" + opcode + "`: " + u.why};
  }
}

// The instruction base_.mods_ args_ as C++.
std::string Translator::instruction() {
  static const std::set<std::string> arithmetic_ops{
      "add", "sub", "addc", "subc", "mul",      "mad",   "madc", "fma",   "div",
      "rem", "min", "max",  "abs",  "neg",      "rcp",   "sqrt", "rsqrt", "sin",
      "cos", "lg2", "ex2",  "tanh", "copysign", "testp", "setp", "selp",  "mov"};
  static const std::set<std::string> bit_ops{"and",   "or",   "xor",  "not",  "cnot", "shl",
                                             "shr",   "shf",  "lop3", "prmt", "bfe",  "bfi",
                                             "bfind", "brev", "popc", "clz"};
  static const std::set<std::string> packed_ops{
      "mul24", "mad24", "sad",  "bmsk", "fns",  "dp4a", "dp2a", "isspacep",
      "szext", "vadd",  "vsub", "vmin", "vmax", "vshl", "vshr", "vabsdiff"};
  if (packed_ops.count(base_)) return packed();
  if (base_ == "cvt" || base_ == "cvta") return conversion();
  if (base_ == "ld" || base_ == "ldu" || base_ == "st" || base_ == "atom" || base_ == "red")
    return memory();
  if (arithmetic_ops.count(base_))
    return arithmetic(base_ == "setp" || base_ == "testp" ? "" : type());
  if (bit_ops.count(base_)) return bits(type());
  return synchronization();
}

// Arithmetic, comparisons, selects and moves of type T.
std::string Translator::arithmetic(const std::string& T) {
  result_ = T;
  const bool fp = is_float(T);
  auto sat = [&](const std::string& v) {
    return fp && has("sat") ? "kiln_ptx::saturate(" + v + ")" : v;
  };
  auto binary = [&](std::string_view op, const std::string& nearest) {
    const std::string d = fp ? directed(op, T) : "";
    return out(sat(d.empty() ? nearest : d + "(" + in(1, T) + ", " + in(2, T) + ")"));
  };
  const std::string a =
      args_.size() > 1 && args_[1].kind == Operand::scalar ? in(1, T.empty() ? "int" : T) : "";
  if (base_ == "mov") {
    if (args_.size() != 2) refuse("its operands");
    const int bits = type_bits(T);
    if (args_[1].kind == Operand::vector) {  // pack: {lo, hi} into one register
      const int w = bits / int(args_[1].parts.size());
      std::string v;
      for (std::size_t i = 0; i < args_[1].parts.size(); ++i)
        v += (i ? " | (" : "(") + T + "(" + read(args_[1].parts[i], unsigned_of_bits(w)) + ") << " +
             std::to_string(w * i) + ")";
      return out(T + "(" + v + ")");
    }
    if (args_[0].kind == Operand::vector) {  // unpack
      const int w = bits / int(args_[0].parts.size());
      std::string code;
      for (std::size_t i = 0; i < args_[0].parts.size(); ++i)
        code += write(args_[0].parts[i],
                      unsigned_of_bits(w) + "(" + in(1, T) + " >> " + std::to_string(w * i) + ")") +
                " ";
      return code;
    }
    return out(a);
  }
  if (base_ == "add" || base_ == "sub") {
    const bool add = base_ == "add";
    if (!fp && has("cc")) {
      uses_carry_ = true;
      return out(std::string(add ? "kiln_ptx::add_carry<" : "kiln_ptx::sub_borrow<") + T + ">(" +
                 a + ", " + in(2, T) + ", kiln_ptx_cc, false, true)");
    }
    if (!fp && has("sat"))
      return out(std::string(add ? "kiln_ptx::add_sat(" : "kiln_ptx::sub_sat(") + a + ", " +
                 in(2, T) + ")");
    return binary(add ? "add" : "sub", std::string(add ? "kiln_ptx::add(" : "kiln_ptx::sub(") + a +
                                           ", " + in(2, T) + ")");
  }
  if (base_ == "addc" || base_ == "subc") {
    uses_carry_ = true;
    return out(std::string(base_ == "addc" ? "kiln_ptx::add_carry<" : "kiln_ptx::sub_borrow<") + T +
               ">(" + a + ", " + in(2, T) + ", kiln_ptx_cc, true, " +
               (has("cc") ? "true" : "false") + ")");
  }
  auto product = [&]() -> std::string {  // mul's and mad's product, by .lo/.hi/.wide
    if (has("hi")) return "kiln_ptx::mul_hi<" + T + ">(" + a + ", " + in(2, T) + ")";
    if (has("wide")) return "kiln_ptx::mul_wide<" + T + ">(" + a + ", " + in(2, T) + ")";
    return "kiln_ptx::mul_lo<" + T + ">(" + a + ", " + in(2, T) + ")";
  };
  if (base_ == "mul") {
    if (fp) return binary("mul", "(" + a + " * " + in(2, T) + ")");
    if (has("24")) refuse("24-bit multiplies");
    return out(product());
  }
  if (base_ == "fma" || (base_ == "mad" && fp)) {
    const std::string d = directed("fma", T);
    return out(
        sat((d.empty() ? "std::fma(" : d + "(") + a + ", " + in(2, T) + ", " + in(3, T) + ")"));
  }
  if (base_ == "mad" || base_ == "madc") {
    const std::string W =
        has("wide") ? (is_signed(T) ? "int" : "uint") + std::to_string(2 * type_bits(T)) + "_t" : T;
    const bool carry_in = base_ == "madc", carry_out = has("cc");
    if (carry_in || carry_out) {
      uses_carry_ = true;
      return out("kiln_ptx::add_carry<" + W + ">(" + product() + ", " + in(3, W) +
                 ", kiln_ptx_cc, " + (carry_in ? "true" : "false") + ", " +
                 (carry_out ? "true" : "false") + ")");
    }
    return out("kiln_ptx::add<" + W + ">(" + product() + ", " + in(3, W) + ")");
  }
  if (base_ == "div")
    return fp ? binary("div", "(" + a + " / " + in(2, T) + ")")
              : out("kiln_ptx::div<" + T + ">(" + a + ", " + in(2, T) + ")");
  if (base_ == "rem") return out("kiln_ptx::rem<" + T + ">(" + a + ", " + in(2, T) + ")");
  if (base_ == "min" || base_ == "max") {
    const bool mn = base_ == "min";
    if (fp) return out(std::string(mn ? "std::fmin(" : "std::fmax(") + a + ", " + in(2, T) + ")");
    return out("(" + a + (mn ? " < " : " > ") + in(2, T) + " ? " + a + " : " + in(2, T) + ")");
  }
  if (base_ == "abs") return out("kiln_ptx::abs<" + T + ">(" + a + ")");
  if (base_ == "neg") return out("kiln_ptx::neg<" + T + ">(" + a + ")");
  if (!fp && base_ != "setp" && base_ != "selp" && base_ != "testp") refuse("an integer type");
  if (base_ == "rcp") {
    const std::string d = directed("rcp", T);
    return out(d.empty() ? "(" + T + "(1) / " + a + ")" : d + "(" + a + ")");
  }
  if (base_ == "sqrt") {
    const std::string d = directed("sqrt", T);
    return out(d.empty() ? "std::sqrt(" + a + ")" : d + "(" + a + ")");
  }
  if (base_ == "rsqrt") return out("(" + T + "(1) / std::sqrt(" + a + "))");
  if (base_ == "sin" || base_ == "cos" || base_ == "tanh")
    return out("std::" + base_ + "(" + a + ")");
  if (base_ == "lg2") return out("std::log2(" + a + ")");
  if (base_ == "ex2") return out("std::exp2(" + a + ")");
  if (base_ == "copysign") return out("std::copysign(" + in(2, T) + ", " + a + ")");
  if (base_ == "selp") return out("(" + in(3, "bool") + " ? " + a + " : " + in(2, T) + ")");
  if (base_ == "testp") {
    static const std::vector<std::string> classes{"finite",     "infinite", "number",
                                                  "notanumber", "normal",   "subnormal"};
    const std::string F = type();
    for (std::size_t c = 0; c < classes.size(); ++c)
      if (has(classes[c]))
        return out("kiln_ptx::testp(" + in(1, F) + ", " + std::to_string(c) + ")");
    refuse("its class");
  }
  // setp.cmp[.ftz][.and|.or|.xor].T p[|q], a, b[, {!}c]
  const std::string S = type();
  const std::string x = in(1, S), y = in(2, S);
  static const std::map<std::string, std::string> compare{{"eq", "(X == Y)"},
                                                          {"ne", "(X != Y && X == X && Y == Y)"},
                                                          {"lt", "(X < Y)"},
                                                          {"le", "(X <= Y)"},
                                                          {"gt", "(X > Y)"},
                                                          {"ge", "(X >= Y)"},
                                                          {"lo", "(X < Y)"},
                                                          {"ls", "(X <= Y)"},
                                                          {"hi", "(X > Y)"},
                                                          {"hs", "(X >= Y)"},
                                                          {"equ", "!(X < Y || X > Y)"},
                                                          {"neu", "(X != Y)"},
                                                          {"ltu", "!(X >= Y)"},
                                                          {"leu", "!(X > Y)"},
                                                          {"gtu", "!(X <= Y)"},
                                                          {"geu", "!(X < Y)"},
                                                          {"num", "(X == X && Y == Y)"},
                                                          {"nan", "(X != X || Y != Y)"}};
  const auto c = compare.find(mods_.size() > 1 ? mods_[1] : "");
  if (c == compare.end()) refuse("its comparison");
  std::string test;  // (the operands put in by position: their text may hold any letter)
  for (char ch : c->second) test += ch == 'X' ? x : ch == 'Y' ? y : std::string(1, ch);
  if (!is_float(S) && c->first == "ne") test = "(" + x + " != " + y + ")";
  std::string join, with;
  for (const char* op : {"and", "or", "xor"})
    if (has(op))
      join = op == std::string("and") ? " && " : op == std::string("or") ? " || " : " != ";
  if (!join.empty()) {
    if (args_.size() != 4) refuse("its operands");
    with = in(3, "bool");
  }
  auto combine = [&](const std::string& v) {
    return join.empty() ? v : "(" + v + join + with + ")";
  };
  const Operand& d = dest();
  std::string code = "{ const bool kiln_t = " + test + "; " + write(d.parts[0], combine("kiln_t"));
  if (d.kind == Operand::pair) code += " " + write(d.parts[1], combine("!kiln_t"));
  return code + " }";
}

// Logic, shifts and bit fields of type T.
std::string Translator::bits(const std::string& T) {
  if (is_float(T)) refuse("a floating-point type");
  const std::string a = in(1, T);
  if (T == "bool") {
    if (base_ == "not") return out("!" + a);
    const std::string op = base_ == "and"   ? " && "
                           : base_ == "or"  ? " || "
                           : base_ == "xor" ? " != "
                                            : "";
    if (op.empty()) refuse("a predicate");
    return out("(" + a + op + in(2, T) + ")");
  }
  const std::string U = unsigned_of_bits(type_bits(T));
  if (base_ == "not") return out(T + "(~" + U + "(" + a + "))");
  if (base_ == "cnot") return out(T + "(" + a + " == 0 ? 1 : 0)");
  if (base_ == "and" || base_ == "or" || base_ == "xor") {
    const char* op = base_ == "and" ? " & " : base_ == "or" ? " | " : " ^ ";
    return out(T + "(" + U + "(" + a + ")" + op + U + "(" + in(2, T) + "))");
  }
  if (base_ == "shl" || base_ == "shr")
    return out("kiln_ptx::" + base_ + "<" + T + ">(" + a + ", " + in(2, "uint32_t") + ")");
  if (base_ == "shf") {
    if (T != "uint32_t" || !(has("l") || has("r"))) refuse("its form");
    return out(std::string("__funnelshift_") + (has("l") ? "l" : "r") + (has("clamp") ? "c" : "") +
               "(" + a + ", " + in(2, T) + ", " + in(3, "uint32_t") + ")");
  }
  if (base_ == "lop3") {
    if (args_.size() != 5) refuse("its predicate form");
    return out("kiln_ptx::lop3(" + a + ", " + in(2, T) + ", " + in(3, T) + ", " + in(4, T) + ")");
  }
  if (base_ == "prmt") {
    static const std::vector<std::string> modes{"", "f4e", "b4e", "rc8", "ecl", "ecr", "rc16"};
    std::size_t mode = modes.size();
    while (--mode > 0 && !has(modes[mode])) {
    }
    return out("kiln_ptx::prmt(" + a + ", " + in(2, T) + ", " + in(3, T) + ", " +
               std::to_string(mode) + ")");
  }
  if (base_ == "bfe")
    return out("kiln_ptx::bfe<" + T + ">(" + a + ", " + in(2, "uint32_t") + ", " +
               in(3, "uint32_t") + ")");
  if (base_ == "bfi")
    return out("kiln_ptx::bfi<" + T + ">(" + a + ", " + in(2, T) + ", " + in(3, "uint32_t") + ", " +
               in(4, "uint32_t") + ")");
  if (base_ == "bfind")
    return out("kiln_ptx::bfind<" + T + ">(" + a + ", " + (has("shiftamt") ? "true" : "false") +
               ")");
  const bool wide = type_bits(T) == 64;
  if (base_ == "brev") return out(std::string(wide ? "__brevll(" : "__brev(") + a + ")");
  if (base_ == "popc")
    return out(std::string("uint32_t(") + (wide ? "__popcll(" : "__popc(") + a + "))");
  return out(std::string("uint32_t(") + (wide ? "__clzll(" : "__clz(") + a + "))");  // clz
}

// The 24-bit multiplies, sad, bmsk, fns, the byte dot products and isspacep.
std::string Translator::packed() {
  if (base_ == "isspacep")  // (one address space here: every address is a global one)
    return out(has("global") ? "true" : "false");
  if (base_ == "fns")
    return out("__fns(" + in(1, "uint32_t") + ", " + in(2, "uint32_t") + ", " + in(3, "int32_t") +
               ")");
  if (base_ == "szext")
    return out("kiln_ptx::szext(" + in(1, "uint32_t") + ", " + in(2, "uint32_t") + ", " +
               (has("clamp") ? "true" : "false") + ", " + (has("s32") ? "true" : "false") + ")");
  if (base_[0] == 'v') {  // the scalar video instructions, without byte or half selectors
    std::vector<std::string> types;  // d's, a's, b's
    for (const std::string& m : mods_)
      if (m == "u32" || m == "s32") types.push_back(m);
    if (types.size() != 3) refuse("its types");
    static const std::vector<std::string> ops{"vadd", "vsub", "vabsdiff", "vmin",
                                              "vmax", "vshl", "vshr"};
    const std::size_t op = std::find(ops.begin(), ops.end(), base_) - ops.begin();
    const int second = has("add") ? 1 : has("min") ? 2 : has("max") ? 3 : 0;
    if ((second != 0) != (args_.size() == 4)) refuse("its operands");
    return out("kiln_ptx::video(" + std::to_string(op) + ", " + std::to_string(second) + ", " +
               in(1, "uint32_t") + ", " + in(2, "uint32_t") + ", " +
               (second ? in(3, "uint32_t") : std::string("0u")) + ", " +
               (types[1] == "s32" ? "true" : "false") + ", " +
               (types[2] == "s32" ? "true" : "false") + ", " +
               (types[0] == "s32" ? "true" : "false") + ", " + (has("clamp") ? "true" : "false") +
               ")");
  }
  if (base_ == "bmsk")
    return out("kiln_ptx::bmsk(" + in(1, "uint32_t") + ", " + in(2, "uint32_t") + ", " +
               (has("clamp") ? "true" : "false") + ")");
  if (base_ == "dp4a" || base_ == "dp2a") {
    std::vector<std::string> types;  // a's and b's
    for (const std::string& m : mods_)
      if (m == "u32" || m == "s32") types.push_back(m);
    if (types.size() != 2) refuse("its types");
    const std::string signs = std::string("<") + (types[0] == "s32" ? "true" : "false") + ", " +
                              (types[1] == "s32" ? "true" : "false") + ">(";
    const std::string half = base_ == "dp2a" ? (has("hi") ? ", true" : ", false") : "";
    return out("kiln_ptx::" + base_ + signs + in(1, "uint32_t") + ", " + in(2, "uint32_t") + ", " +
               in(3, "uint32_t") + half + ")");
  }
  const std::string T = type();
  if (base_ == "sad")
    return out("kiln_ptx::sad<" + T + ">(" + in(1, T) + ", " + in(2, T) + ", " + in(3, T) + ")");
  if (T != "uint32_t" && T != "int32_t") refuse("its type");
  const std::string product = "kiln_ptx::mul24<" + T + ">(" + in(1, T) + ", " + in(2, T) + ", " +
                              (has("hi") ? "true" : "false") + ")";
  if (base_ == "mul24") return out(product);
  return out("kiln_ptx::add<" + T + ">(" + product + ", " + in(3, T) + ")");  // mad24
}

// cvt.{rnd}{.ftz}{.sat}.dtype.atype and cvta.to.global.
std::string Translator::conversion() {
  if (base_ == "cvta") {
    if (!has("global")) refuse("an address window other than global");
    return out(in(1, "uint64_t"));
  }
  if (has("f16") || has("bf16") || has("f16x2") || has("bf16x2")) return narrow_conversion();
  std::vector<std::string> types;
  for (const std::string& m : mods_)
    if (std::string t = cpp_type(m); !t.empty()) types.push_back(t);
  if (types.size() != 2 || types[0] == "bool" || types[1] == "bool") refuse("its types");
  const std::string D = types[0], A = types[1], a = in(1, A);
  result_ = D;
  const int r = rounding();
  const bool integral_rounding = has("rni") || has("rzi") || has("rmi") || has("rpi");
  if (!is_float(D) && !is_float(A))
    return out(has("sat") ? "kiln_ptx::int_saturate<" + D + ">(" + a + ")" : D + "(" + a + ")");
  if (!is_float(D))
    return out("kiln_ptx::float_to_int<" + D + ">(" + a + ", " + std::to_string(r) + ")");
  std::string v;
  if (is_float(A) && integral_rounding) {  // to an integral value in the same format
    static const char* fn[] = {"std::nearbyint(", "std::trunc(", "std::ceil(", "std::floor("};
    v = D + "(" + fn[r] + a + "))";
  } else {
    v = "kiln_ptx::round_to<" + D + ">(" + a + ", " + std::to_string(r) + ")";
  }
  return out(has("sat") ? "kiln_ptx::saturate(" + v + ")" : v);
}

// cvt to and from half and bfloat16, whose bits a 16-bit register holds (`"h"`), and to their
// pairs in a 32-bit one (`cvt.rn.f16x2.f32 d, a, b`: a's in the upper half).
std::string Translator::narrow_conversion() {
  std::vector<std::string> types;  // destination, source
  for (std::size_t i = 1; i < mods_.size(); ++i)
    if (mods_[i] == "f16" || mods_[i] == "bf16" || mods_[i] == "f16x2" || mods_[i] == "bf16x2" ||
        mods_[i] == "f32" || mods_[i] == "f64")
      types.push_back(mods_[i]);
    else if (mods_[i] != "rn" && mods_[i] != "rz" && mods_[i] != "rm" && mods_[i] != "rp")
      refuse("its ." + mods_[i] + " form");
  if (types.size() != 2) refuse("its types");
  const std::string& to = types[0];
  const std::string& from = types[1];
  const std::string r = std::to_string(rounding());
  auto wide = [](const std::string& t) { return t == "f32" ? "float" : "double"; };
  if ((to == "f16" || to == "bf16") && (from == "f32" || from == "f64"))
    return out("kiln_ptx::" + to + "_bits(" + in(1, wide(from)) + ", " + r + ")");
  if ((to == "f16x2" || to == "bf16x2") && from == "f32") {
    const std::string f = to == "f16x2" ? "f16" : "bf16";
    return out("uint32_t(uint32_t(kiln_ptx::" + f + "_bits(" + in(1, "float") + ", " + r +
               ")) << 16 | kiln_ptx::" + f + "_bits(" + in(2, "float") + ", " + r + "))");
  }
  if ((from == "f16" || from == "bf16") && (to == "f32" || to == "f64"))
    return out(std::string(wide(to)) + "(kiln_ptx::" + from + "_value(" + in(1, "uint16_t") + "))");
  refuse("its types");
}

// ld, ldu, st, atom and red on generic or global addresses.
std::string Translator::memory() {
  for (const char* window : {"shared", "local", "param", "tex", "surf"})
    if (has(window) || has(std::string(window) + "::cta") || has(std::string(window) + "::cluster"))
      refuse(std::string("a .") + window +
             " address (a GPU's memory window, which the cpu backend does not have)");
  const bool store = base_ == "st" || base_ == "red";
  const std::size_t at = store ? 0 : 1;
  if (args_.size() <= at || args_[at].kind != Operand::address) refuse("its address");
  const Operand& address = args_[at];
  if (!address.parts[0].wide)
    refuse("a 32-bit address (a GPU's shared window; a generic address is 64-bit, \"l\")");
  const std::string T = type(), base = address.parts[0].text;
  auto element = [&](std::size_t i, const std::string& E) {
    return "kiln_ptx::at<" + E + ">(" + base + ", " + std::to_string(address.offset) + "LL, " +
           std::to_string(i) + ")";
  };
  if (base_ == "ld" || base_ == "ldu" || base_ == "st") {
    const bool acquire = has("acquire"), release = has("release");
    const bool relaxed = has("relaxed") || has("volatile");
    if (args_.size() < 2 || args_[store ? 1 : 0].kind == Operand::address ||
        args_[store ? 1 : 0].kind == Operand::pair)
      refuse("its operands");
    const Operand& value = args_[store ? 1 : 0];
    std::string code;
    for (std::size_t i = 0; i < value.parts.size(); ++i) {
      const std::string e = element(i, T);
      // (a plain access copies bytes: the memory may hold another type, `unsigned long long`
      // read as uint64_t, which C++'s aliasing rules would let the compiler assume apart)
      const std::string at =
          base + ", " + std::to_string(address.offset) + "LL, " + std::to_string(i);
      if (store) {
        const std::string v = read(value.parts[i], T);
        code += release   ? "kiln_ptx::store_release(" + e + ", " + v + "); "
                : relaxed ? "kiln_ptx::store_relaxed(" + e + ", " + v + "); "
                          : "kiln_ptx::store<" + T + ">(" + at + ", " + v + "); ";
      } else {
        code += write(value.parts[i], acquire   ? "kiln_ptx::load_acquire(" + e + ")"
                                      : relaxed ? "kiln_ptx::load_relaxed(" + e + ")"
                                                : "kiln_ptx::load<" + T + ">(" + at + ")") +
                " ";
      }
    }
    return code;
  }
  // atom / red: CUDA's atomic functions on the C type CUDA gives them
  static const std::map<std::string, std::string> atomic_type{
      {"uint32_t", "unsigned int"}, {"int32_t", "int"}, {"uint64_t", "unsigned long long"},
      {"int64_t", "long long"},     {"float", "float"}, {"double", "double"}};
  const auto c = atomic_type.find(T);
  if (c == atomic_type.end()) refuse("its type");
  const std::string C = c->second, v = in(store ? 1 : 2, C);
  static const std::map<std::string, std::string> ops{
      {"add", "atomicAdd"},   {"min", "atomicMin"}, {"max", "atomicMax"}, {"inc", "atomicInc"},
      {"dec", "atomicDec"},   {"and", "atomicAnd"}, {"or", "atomicOr"},   {"xor", "atomicXor"},
      {"exch", "atomicExch"}, {"cas", "atomicCAS"}};
  for (const auto& [op, fn] : ops) {
    if (!has(op)) continue;
    const std::string call = fn + "(&" + element(0, C) + ", " + v +
                             (op == "cas" ? ", " + in(3, C) : std::string()) + ")";
    return store ? "(void)" + call + ";" : out(call);
  }
  refuse("its operation");
}

// Barriers, fences, warp operations and the rest.
std::string Translator::synchronization() {
  auto none = [&] {
    if (!args_.empty()) refuse("its operands");
    return std::string("(void)0;");
  };
  if (base_ == "bar" || base_ == "barrier") {
    if (has("warp")) return "__syncwarp(" + in(0, "uint32_t") + ");";
    if (has("arrive")) refuse("a barrier arrival without a wait");
    if (has("red")) {
      const char* fn = has("popc")  ? "__syncthreads_count("
                       : has("and") ? "__syncthreads_and("
                                    : "__syncthreads_or(";
      if (args_.size() != 3) refuse("a reduction with a thread count");
      // (as a declaration of its own, `int v = __syncthreads_count(p);`, the form regions take)
      // (and read by an assignment, not a call, which the rewrite would take for a write)
      const std::string name = "kiln_red" + id_ + "_" + std::to_string(++reductions_);
      const Scalar& d = arg(0);
      if (!d.writable || d.sink) refuse("its destination");
      return "int " + name + " = " + fn + in(2, "bool") + "); " + d.text + " = " +
             (has("popc") ? name : "(" + name + " != 0)") + ";";
    }
    if (args_.size() != 1) refuse("a named barrier with a thread count");
    return "__syncthreads();";
  }
  if (base_ == "membar" || base_ == "fence") {
    if (has("proxy")) return none();
    if (has("cta")) return "__threadfence_block();";
    if (has("sys")) return "__threadfence_system();";
    return "__threadfence();";
  }
  if (base_ == "shfl") {
    static const std::vector<std::string> modes{"up", "down", "bfly", "idx"};
    int mode = -1;
    for (std::size_t m = 0; m < modes.size(); ++m)
      if (has(modes[m])) mode = int(m);
    if (mode < 0 || args_.size() < 4) refuse("its form");
    const std::string mask = args_.size() > 4 ? in(4, "uint32_t") : "0xffffffffu";
    const Operand& d = dest();
    const std::string lane = special_register("%laneid");
    std::string code =
        "{ bool kiln_in = true; const int kiln_j = kiln_ptx::shfl_lane(" + std::to_string(mode) +
        ", " + lane + ", " + in(2, "uint32_t") + ", " + in(3, "uint32_t") + ", kiln_in); " +
        write(d.parts[0], "__shfl_sync(" + mask + ", " + in(1, "uint32_t") + ", kiln_j)");
    if (d.kind == Operand::pair) code += " " + write(d.parts[1], "kiln_in");
    return code + " }";
  }
  if (base_ == "vote") {
    const std::string mask = args_.size() > 2 ? in(2, "uint32_t") : "0xffffffffu";
    const std::string p = in(1, "bool");
    if (has("ballot")) return out("__ballot_sync(" + mask + ", " + p + ")");
    if (has("all")) return out("bool(__all_sync(" + mask + ", " + p + "))");
    if (has("any")) return out("bool(__any_sync(" + mask + ", " + p + "))");
    if (has("uni")) return out("bool(__uni_sync(" + mask + ", " + p + "))");
    refuse("its form");
  }
  if (base_ == "activemask") return out("__activemask()");
  if (base_ == "match") {
    const std::string T = type();
    if (has("any")) return out("__match_any_sync(" + in(2, "uint32_t") + ", " + in(1, T) + ")");
    const Operand& d = dest();
    std::string code =
        "{ int kiln_p = 0; " +
        write(d.parts[0], "__match_all_sync(" + in(2, "uint32_t") + ", " + in(1, T) + ", &kiln_p)");
    if (d.kind == Operand::pair) code += " " + write(d.parts[1], "kiln_p != 0");
    return code + " }";
  }
  if (base_ == "redux") {
    const std::string T = type();
    for (const char* op : {"add", "min", "max", "and", "or", "xor"})
      if (has(op))
        return out("__reduce_" + std::string(op) + "_sync(" + in(2, "uint32_t") + ", " + in(1, T) +
                   ")");
    refuse("its operation");
  }
  if (base_ == "nanosleep") return "__nanosleep(" + in(0, "uint32_t") + ");";
  if (base_ == "trap") return "__trap();";
  if (base_ == "prefetch" || base_ == "prefetchu" || base_ == "discard" ||
      base_ == "applypriority" || base_ == "brkpt" || base_ == "pmevent")
    return "(void)0;";
  if (base_ == "createpolicy") return out("uint64_t(0)");
  if (base_ == "cp" || base_ == "ldmatrix" || base_ == "stmatrix" || base_ == "mbarrier" ||
      base_ == "mma" || base_ == "wgmma")
    refuse("a GPU's shared-memory or tensor-core operation, which the cpu backend does not have");
  if (base_ == "bra" || base_ == "call" || base_ == "ret" || base_ == "exit")
    refuse("control flow (branches, calls and exits)");
  refuse("no cpu translation");
}

// ---- asm statements ----

// The index of the bracket closing the one at k, or t.size().
std::size_t closing(const std::vector<Token>& t, std::size_t k) {
  int depth = 0;
  for (std::size_t j = k; j < t.size(); ++j) {
    if (is_punct(t[j], "(") || is_punct(t[j], "[") || is_punct(t[j], "{")) ++depth;
    if (is_punct(t[j], ")") || is_punct(t[j], "]") || is_punct(t[j], "}"))
      if (--depth == 0) return j;
  }
  return t.size();
}

// Whether output expression tokens [b, e) only name an lvalue: no call, assignment, increment
// or comma. Such an operand is written in place of its PTX name; another is bound to a
// reference once (kiln_ptx_N), as the asm evaluates it once. (Inputs are always copied, before
// any instruction runs, as GCC reads them.)
bool plain(const std::vector<Token>& t, std::size_t b, std::size_t e) {
  for (std::size_t j = b; j < e; ++j) {
    const bool call = j + 1 < e && is_punct(t[j + 1], "(") &&
                      (t[j].kind == Token::ident || is_punct(t[j], ">") || is_punct(t[j], ")"));
    if (call || t[j].directive || is_punct(t[j], ",") ||
        (is_punct(t[j], "+") && j + 1 < e && is_punct(t[j + 1], "+")) ||
        (is_punct(t[j], "-") && j + 1 < e && is_punct(t[j + 1], "-")))
      return false;
    if (is_punct(t[j], "=")) {  // (`==`, `!=`, `<=`, `>=` compare; `<<=`, `+=` assign)
      const bool second = j > b && (is_punct(t[j - 1], "=") || is_punct(t[j - 1], "!") ||
                                    ((is_punct(t[j - 1], "<") || is_punct(t[j - 1], ">")) &&
                                     !(j > b + 1 && t[j - 2].text == t[j - 1].text)));
      if (!(j + 1 < e && is_punct(t[j + 1], "=")) && !second) return false;
    }
  }
  return true;
}

// The C++ type of an input's register, by its constraint: "r" 32 bits, "l" 64, "h" 16, "f",
// "d"; "" for an immediate ("n").
std::string register_type(const std::string& constraint) {
  if (constraint.find('n') != std::string::npos) return "";
  if (constraint.find('r') != std::string::npos) return "uint32_t";
  if (constraint.find('l') != std::string::npos) return "uint64_t";
  if (constraint.find('h') != std::string::npos) return "uint16_t";
  if (constraint.find('f') != std::string::npos) return "float";
  if (constraint.find('d') != std::string::npos) return "double";
  throw Untranslatable{"the operand constraint \"" + constraint + "\""};
}

// The text of tokens [b, e) on one line, comments dropped: an operand written several times
// keeps the statement's line count.
std::string one_line(std::string_view source, const std::vector<Token>& t, std::size_t b,
                     std::size_t e) {
  std::string text;
  for (std::size_t k = b; k < e; ++k)
    text.append(k > b && t[k].begin != t[k - 1].end ? " " : "")  // (`i++` stays one operator)
        .append(source.substr(t[k].begin, t[k].end - t[k].begin));
  return text;
}

// Whether the asm statement whose `(` is t[open] holds PTX: its template has a dotted opcode
// (`cp.async`) or a `%%` register; x86's (`pause`, `rdtsc`) has neither.
bool looks_like_ptx(const std::vector<Token>& t, std::size_t open, std::size_t close) {
  std::string text;
  for (std::size_t k = open + 1; k < close && t[k].kind == Token::string; ++k) text += t[k].text;
  if (text.find("%%") != std::string::npos) return true;
  for (std::size_t i = 0; i + 1 < text.size(); ++i)
    if (std::isalpha((unsigned char)text[i]) && text[i + 1] == '.' && i + 2 < text.size() &&
        std::isalpha((unsigned char)text[i + 2]))
      return true;
  return false;
}

// text as a C string literal.
std::string c_string(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c == '\n' ? ' ' : c;
  }
  return out + "\"";
}

// The asm statement whose `(` is t[open] and `)` t[close], as C++.
std::string translate_statement(std::string_view source, const std::vector<Token>& t,
                                std::size_t open, std::size_t close) {
  std::size_t k = open + 1;
  std::string text;
  for (; k < close && t[k].kind == Token::string; ++k)
    text += literal_bytes(source.substr(t[k].begin, t[k].end - t[k].begin));
  // (in a macro, `#x` or a macro between the strings builds the asm as the preprocessor runs,
  // and kiln reads the source before that)
  const std::string in_macro =
      t[open].directive ? " (built by the preprocessor: `#`, or a macro among its strings)" : "";
  if (k == open + 1) throw Untranslatable{"a template that is not a string literal" + in_macro};
  if (k < close && t[k].kind == Token::ident)
    throw Untranslatable{
        "a template with a macro among its strings (`\"add.\" TYPE`), which kiln "
        "reads before the preprocessor runs"};
  std::vector<Binding> bindings;
  int section = 0;
  while (k < close) {
    if (is_punct(t[k], "::"))
      section += 2, ++k;
    else if (is_punct(t[k], ":"))
      ++section, ++k;
    else if (is_punct(t[k], ","))
      ++k;
    else if (section >= 3)
      ++k;  // clobbers
    else {
      Binding b;
      if (is_punct(t[k], "[")) {
        if (k + 2 >= close || !is_punct(t[k + 2], "]")) throw Untranslatable{"an operand's name"};
        b.name = t[k + 1].text;
        k += 3;
      }
      for (; k < close && t[k].kind == Token::string; ++k) b.constraint += t[k].text;
      if (k >= close || !is_punct(t[k], "(")) throw Untranslatable{"an operand" + in_macro};
      const std::size_t e = closing(t, k);
      if (e >= close) throw Untranslatable{"an operand" + in_macro};
      b.expr = one_line(source, t, k + 1, e);
      b.output = section == 1;
      if (section > 2 || b.constraint.find_first_of("mogiXVp<>") != std::string::npos)
        throw Untranslatable{"the operand constraint \"" + b.constraint + "\""};
      if (!b.output) b.type = register_type(b.constraint);
      // (in a macro, a parameter's name may stand for anything: `LD(p++)`)
      b.bound = b.output ? !plain(t, k + 1, e) || t[k].directive : !b.type.empty();
      bindings.push_back(std::move(b));
      k = e + 1;
    }
  }
  const std::vector<PtxToken> tokens = ptx_tokens(text, bindings);
  if (tokens.empty()) throw Empty{};
  return Translator(std::move(bindings), std::to_string(t[open].begin)).translate(tokens);
}

}  // namespace

PtxTranslation translate_inline_ptx(std::string_view source, const std::string& file) {
  PtxTranslation result;
  if (source.find("asm") == std::string_view::npos) {
    result.source = source;
    return result;
  }
  const std::vector<Token> t = jit::lex(source);
  std::vector<Edit> edits;
  int depth = 0;
  for (std::size_t k = 0; k < t.size(); ++k) {
    if (!t[k].directive) {
      if (is_punct(t[k], "{")) ++depth;
      if (is_punct(t[k], "}")) --depth;
    }
    if (!(is_ident(t[k], "asm") || is_ident(t[k], "__asm__") || is_ident(t[k], "__asm"))) continue;
    if (!t[k].directive && depth == 0) continue;  // (a file-scope asm: not a statement)
    std::size_t open = k + 1;
    while (open < t.size() && t[open].kind == Token::ident &&
           (t[open].text == "volatile" || t[open].text == "__volatile__" ||
            t[open].text == "inline" || t[open].text == "goto"))
      ++open;
    if (open >= t.size() || !is_punct(t[open], "(")) continue;
    const std::size_t close = closing(t, open);
    if (close >= t.size()) continue;
    // A statement becomes a block, its `;` included (so `if (c) asm(...); else` stays whole);
    // in a macro, whose user writes the `;`, a do-while.
    const bool statement = close + 1 < t.size() && is_punct(t[close + 1], ";");
    const std::size_t end = statement ? t[close + 1].end : t[close].end;
    auto replace = [&](std::string text) {
      if (!statement) text = "do " + text + " while (0)";
      for (char c : source.substr(t[k].begin, end - t[k].begin))
        if (c == '\n') text += t[k].directive ? " \\\n" : "\n";
      edits.push_back({t[k].begin, end, std::move(text)});
    };
    std::string why;
    try {
      if (open > k + 1 && t[open - 1].text == "goto") throw Untranslatable{"asm goto"};
      replace(translate_statement(source, t, open, close));
    } catch (const Untranslatable& u) {
      why = u.why;
    } catch (const Empty&) {
    } catch (const std::exception&) {  // (a number std::stoi & co. cannot read)
      why = "a number out of range";
    }
    if (!why.empty()) {
      result.left.push_back({t[k].line, why, looks_like_ptx(t, open, close)});
      // PTX (a dotted opcode, a %% register) the cpu cannot run stops the thread that reaches
      // it, with the reason, and lets the module's other kernels build; other asm (x86's own,
      // under #ifdef KILN_CPU) is the host compiler's.
      if (result.left.back().trapped)
        replace("{ ::kiln_cpu::trap(" +
                c_string(file + ":" + std::to_string(t[k].line) +
                         ": inline PTX the cpu backend cannot run: " + why) +
                "); }");
    }
    k = close;
  }
  result.source = apply_edits(source, edits);
  return result;
}

}  // namespace kiln::cpu
