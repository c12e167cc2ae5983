// Parameter types, argument marshalling and template-argument deduction for kernel launches.
#include "jit/signature.h"

#include <cxxabi.h>

#include <functional>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <memory>
#include <sstream>

#include "jit/kernel_decl.h"
#include "runtime/error.h"

namespace kiln::jit {
namespace {

// Splits a C++ type spelling into words and the punctuators * & < > , ( ) [ ] ::.
std::vector<std::string> type_words(std::string_view s) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++i;
    } else if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') {
      std::size_t b = i;
      while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '_')) ++i;
      out.emplace_back(s.substr(b, i - b));
    } else if (c == ':' && i + 1 < s.size() && s[i + 1] == ':') {
      out.emplace_back("::");
      i += 2;
    } else {
      out.emplace_back(1, c);
      ++i;
    }
  }
  return out;
}

// Qualifiers that do not change what a parameter takes.
bool is_ignorable_qualifier(const std::string& w) {
  return w == "volatile" || w == "__restrict__" || w == "__restrict" || w == "restrict" ||
         w == "register";
}

// Joins words with single spaces, "::" glued to its neighbours: {"std","::","size_t"} ->
// "std::size_t".
std::string join_words(const std::vector<std::string>& words, std::size_t b, std::size_t e) {
  std::string out;
  for (std::size_t k = b; k < e; ++k) {
    bool glue = words[k] == "::" || (k > b && words[k - 1] == "::");
    if (k > b && !glue) out += ' ';
    out += words[k];
  }
  return out;
}

// Whether words spell `void` with qualifiers (`const void`, `void const volatile`); sets
// *is_const when const.
bool void_words(const std::vector<std::string>& words, bool* is_const) {
  bool seen = false;
  for (const std::string& w : words)
    if (w == "void" && !seen)
      seen = true;
    else if (w == "const")
      *is_const = true;
    else if (!is_ignorable_qualifier(w))
      return false;
  return seen;
}

// The element type of a scalar spelling such as "const float" or "float const": its dtype and
// whether it was const. nullopt when not a kiln scalar.
std::optional<DType> scalar_of(const std::vector<std::string>& words, bool* is_const) {
  std::vector<std::string> rest;
  for (const std::string& w : words) {
    if (w == "const")
      *is_const = true;
    else if (!is_ignorable_qualifier(w))
      rest.push_back(w);
  }
  if (rest.empty()) return std::nullopt;
  for (const std::string& w : rest)
    if (w != "::" && !(std::isalpha(static_cast<unsigned char>(w[0])) || w[0] == '_'))
      return std::nullopt;
  return dtype_of_cpp(join_words(rest, 0, rest.size()));
}

// Matches [::] [kiln ::] Array < ELEM , N > in words; fills elem words and N.
bool match_array(const std::vector<std::string>& words, std::vector<std::string>* elem,
                 std::string* extent) {
  std::size_t i = 0;
  if (i < words.size() && words[i] == "::") ++i;
  if (i + 1 < words.size() && words[i] == "kiln" && words[i + 1] == "::") i += 2;
  if (i + 1 >= words.size() || words[i] != "Array" || words[i + 1] != "<") return false;
  i += 2;
  std::size_t comma = words.size();
  int depth = 0;
  for (std::size_t k = i; k < words.size(); ++k) {
    if (words[k] == "<" || words[k] == "(") ++depth;
    if (words[k] == ">" || words[k] == ")") --depth;
    if (depth == 0 && words[k] == ",") {
      comma = k;
      break;
    }
  }
  if (comma == words.size() || words.back() != ">") return false;
  elem->assign(words.begin() + static_cast<std::ptrdiff_t>(i),
               words.begin() + static_cast<std::ptrdiff_t>(comma));
  *extent = join_words(words, comma + 1, words.size() - 1);
  return true;
}

// Describes a Lua value for an error message: "a float32 device array", "an integer (3)".
// with_ndim adds the rank ("a 1-d float32 device array") where it matters.
std::string describe(const ArgValue& v, bool with_ndim = false) {
  std::string rank = with_ndim ? std::to_string(v.ndim) + "-d " : "";
  std::string article = with_ndim || dtype_info(v.dtype).name.starts_with("int") ? "an " : "a ";
  if (with_ndim) article = v.ndim == 8 ? "an " : "a ";
  switch (v.kind) {
    case ArgValue::Kind::device_array:
      return article + rank + std::string(dtype_info(v.dtype).name) + " device array";
    case ArgValue::Kind::host_array:
      return article + rank + std::string(dtype_info(v.dtype).name) + " host array";
    case ArgValue::Kind::integer:
      return "an integer (" + std::to_string(v.integer) + ")";
    case ArgValue::Kind::number: {
      char buf[64];
      auto r = std::to_chars(buf, buf + sizeof buf, v.number);  // shortest round-trip form
      return "a number (" + std::string(buf, r.ptr) + ")";
    }
    case ArgValue::Kind::boolean:
      return std::string("a boolean (") + (v.boolean ? "true" : "false") + ")";
    case ArgValue::Kind::null_pointer:
      return "a null pointer (cuda.null, or a parameter's default)";
    case ArgValue::Kind::table:
      if (v.lanes.empty() && !v.fields.empty()) return "a table of named fields";
      return "a table of " + std::to_string(v.lanes.size()) + " values";
    case ArgValue::Kind::other:
      const std::string type = v.lua_type ? v.lua_type : "";
      if (type.empty()) return "an unsupported value";
      if (type == "nil" || type == "no value") return type;
      return "a " + type;
  }
  return "an unsupported value";
}

// "kernel 'scale': parameter 1 'x' (float*)".
std::string param_where(const std::string& kernel, int position, const std::string& name,
                        const ParamType& p) {
  std::string s = "kernel '" + kernel + "': parameter " + std::to_string(position);
  if (!name.empty()) s += " '" + name + "'";
  return s + " (" + p.spelling + ")";
}

bool is_array_value(const ArgValue& v) {
  return v.kind == ArgValue::Kind::device_array || v.kind == ArgValue::Kind::host_array;
}

// The inclusive range of an integer dtype, as long double (exact for all 64-bit bounds).
void integer_range(DType t, long double* lo, long double* hi) {
  switch (t) {
    case DType::int8:
      *lo = -128;
      *hi = 127;
      return;
    case DType::uint8:
      *lo = 0;
      *hi = 255;
      return;
    case DType::int16:
      *lo = -32768;
      *hi = 32767;
      return;
    case DType::uint16:
      *lo = 0;
      *hi = 65535;
      return;
    case DType::int32:
      *lo = -2147483648.0L;
      *hi = 2147483647.0L;
      return;
    case DType::uint32:
      *lo = 0;
      *hi = 4294967295.0L;
      return;
    case DType::int64:
      *lo = -9223372036854775808.0L;
      *hi = 9223372036854775807.0L;
      return;
    case DType::uint64:
      *lo = 0;
      *hi = 18446744073709551615.0L;
      return;
    default:
      *lo = 0;
      *hi = 1;
      return;
  }
}

// Writes integer value v into out as dtype t (v already range-checked).
void store_integer(DType t, long double v, std::byte* out) {
  auto put = [out](auto x) { std::memcpy(out, &x, sizeof x); };
  switch (t) {
    case DType::int8:
      put(static_cast<std::int8_t>(v));
      return;
    case DType::uint8:
      put(static_cast<std::uint8_t>(v));
      return;
    case DType::int16:
      put(static_cast<std::int16_t>(v));
      return;
    case DType::uint16:
      put(static_cast<std::uint16_t>(v));
      return;
    case DType::int32:
      put(static_cast<std::int32_t>(v));
      return;
    case DType::uint32:
      put(static_cast<std::uint32_t>(v));
      return;
    case DType::int64:
      put(static_cast<std::int64_t>(v));
      return;
    case DType::uint64:
      put(static_cast<std::uint64_t>(v));
      return;
    default:
      return;
  }
}

// Converts a scalar argument to the parameter's type into out (dtype_info(p.dtype).size bytes).
template <typename Where>
void convert_scalar(const Where& where, const ParamType& p, const ArgValue& v,
                    std::byte* out) {
  const DTypeInfo& info = dtype_info(p.dtype);
  // A dim3 given fewer numbers (`4`, `{4, 2}`) has CUDA's defaults, 1, for the rest.
  const bool dim3 = info.lanes == 3 && p.spelling.find("dim3") != std::string::npos;
  if (dim3 &&
      (v.kind == ArgValue::Kind::integer || (v.kind == ArgValue::Kind::table && v.fields.empty() &&
                                             !v.lanes.empty() && v.lanes.size() < 3))) {
    ArgValue padded;
    padded.kind = ArgValue::Kind::table;
    padded.lanes = v.kind == ArgValue::Kind::table ? v.lanes : std::vector<ArgValue>{v};
    ArgValue one;
    one.kind = ArgValue::Kind::integer;
    one.integer = 1;
    padded.lanes.resize(3, one);
    return convert_scalar(where, p, padded, out);
  }
  if (info.lanes > 1) {  // a vector by value, lane by lane from a Lua table
    const std::string lanes = std::string("xyzw").substr(0, static_cast<std::size_t>(info.lanes));
    if (v.kind != ArgValue::Kind::table || v.lanes.size() != static_cast<std::size_t>(info.lanes)) {
      std::string fields;
      for (char c : lanes) fields += (fields.empty() ? "" : ", ") + std::string(1, c);
      throw Error(where() + " expects a " + std::string(info.name) + ": a table {" + fields +
                  "} of numbers, got " + describe(v));
    }
    ParamType lane = p;
    lane.dtype = info.base;
    for (int k = 0; k < info.lanes; ++k) {
      // A std::function, whatever Where is: one more instantiation, not one per nesting.
      const std::function<std::string()> lane_where = [&] {
        return where() + ", lane " + lanes[static_cast<std::size_t>(k)];
      };
      convert_scalar(lane_where, lane, v.lanes[static_cast<std::size_t>(k)],
                     out + k * dtype_info(info.base).size);
    }
    return;
  }
  if (p.dtype == DType::boolean) {
    if (v.kind != ArgValue::Kind::boolean)
      throw Error(where() + " expects a boolean (true or false; numbers are not converted), got " +
                  describe(v));
    out[0] = std::byte{v.boolean ? std::uint8_t{1} : std::uint8_t{0}};
    return;
  }
  if (v.kind != ArgValue::Kind::integer && v.kind != ArgValue::Kind::number) {
    std::string want = info.is_integer ? "an integer" : "a number";
    throw Error(where() + " expects " + want + ", got " + describe(v));
  }
  if (!info.is_integer) {
    double d = v.kind == ArgValue::Kind::integer ? static_cast<double>(v.integer) : v.number;
    if (p.dtype == DType::float32) {
      float f = static_cast<float>(d);
      std::memcpy(out, &f, sizeof f);
    } else if (p.dtype == DType::float16 || p.dtype == DType::bfloat16) {
      const std::uint16_t bits = p.dtype == DType::float16 ? Float16(d).bits() : BFloat16(d).bits();
      std::memcpy(out, &bits, sizeof bits);
    } else {
      std::memcpy(out, &d, sizeof d);
    }
    return;
  }
  if (p.dtype == DType::uint64 && v.kind == ArgValue::Kind::integer && v.integer < 0) {
    // Lua's integers are signed: a value past 2^63 - 1 is the integer of its bits, as Lua
    // writes 0xFFFFFFFFFFFFFFFF (-1) and a uint64 element reads back (two's complement).
    const auto bits = static_cast<std::uint64_t>(v.integer);
    std::memcpy(out, &bits, sizeof bits);
    return;
  }
  long double x;
  if (v.kind == ArgValue::Kind::integer) {
    x = static_cast<long double>(v.integer);
  } else {
    if (!std::isfinite(v.number) || std::trunc(v.number) != v.number)
      throw Error(where() + " expects an integer, got " + describe(v));
    x = static_cast<long double>(v.number);
  }
  long double lo, hi;
  integer_range(p.dtype, &lo, &hi);
  if (x < lo || x > hi) {
    std::ostringstream range;
    range.precision(20);
    range << lo << ".." << hi;
    throw Error(where() + " expects an integer in " + range.str() + ", got " + describe(v));
  }
  store_integer(p.dtype, x, out);
}

// Lays a Lua table out as a struct: each field by name (every field given, no other key), each
// converted to its declared type at the offset the compiler chose; arrays from a table of
// count values. A layout of one unnamed field (a cuda::std::array) takes that table itself.
template <typename Where>
void convert_struct(const Where& where, const StructLayout& layout, const ArgValue& v,
                    std::byte* out) {
  const bool elements = layout.fields.size() == 1 && layout.fields[0].name.empty();
  if (v.kind != ArgValue::Kind::table)
    throw Error(where() + " expects a " + layout.name +
                (elements ? ", a table of its elements" : ", a table of its fields") + ", got " +
                describe(v));
  if (elements && !v.fields.empty())
    throw Error(where() + " expects a " + layout.name +
                ", a table of its elements, got a table "
                "with key '" +
                v.fields.front().first + "'");
  for (const auto& [key, value] : v.fields) {
    bool known = false;
    for (const StructLayout::Field& f : layout.fields) known = known || f.name == key;
    if (!known) {
      std::string names;
      for (const StructLayout::Field& f : layout.fields) names += (names.empty() ? "" : ", ") + f.name;
      throw Error(where() + ": " + layout.name + " has no field '" + key + "' (its fields: " +
                  names + ")");
    }
  }
  for (const StructLayout::Field& f : layout.fields) {
    const ArgValue* value = elements ? &v : nullptr;
    for (const auto& [key, given] : v.fields)
      if (!elements && key == f.name) value = &given;
    const std::function<std::string()> field_where = [&] {
      return elements ? where() : where() + ", field '" + f.name + "'";
    };
    if (!value) throw Error(field_where() + " (" + f.type + ") is not given");
    if (f.pointer) {  // (a device array's address; a host array would need staging)
      const std::string_view dtype = dtype_info(f.dtype).name;
      if (value->kind != ArgValue::Kind::null_pointer &&
          (value->kind != ArgValue::Kind::device_array || (value->dtype != f.dtype && !f.untyped)))
        throw Error(field_where() + " (" + f.type + ") expects " +
                    (f.untyped ? "a" : "a " + std::string(dtype)) +
                    " device array (or cuda.null), got " + describe(*value));
      const void* address = value->kind == ArgValue::Kind::null_pointer ? nullptr : value->data;
      std::memcpy(out + f.offset, &address, sizeof address);
      continue;
    }
    if (!f.settable)
      throw Error(field_where() + " has type " + f.type + ", which kiln cannot set from Lua");
    ParamType element;
    element.kind = ParamKind::scalar;
    element.dtype = f.dtype;
    const std::size_t size = dtype_info(f.dtype).size;
    if (f.count == 1 && !elements) {  // (`double v[1]` may be given as a table of one)
      const bool one = value->kind == ArgValue::Kind::table && value->lanes.size() == 1 &&
                       value->fields.empty() && dtype_info(f.dtype).lanes == 1;
      convert_scalar(field_where, element, one ? value->lanes[0] : *value, out + f.offset);
      continue;
    }
    if (value->kind != ArgValue::Kind::table || value->lanes.size() != f.count)
      throw Error(field_where() + " is " + std::to_string(f.count) + " " +
                  std::string(dtype_info(f.dtype).name) + ": expects a table of " +
                  std::to_string(f.count) + " values, got " + describe(*value));
    for (std::size_t k = 0; k < f.count; ++k)
      convert_scalar(field_where, element, value->lanes[k], out + f.offset + k * size);
  }
}

}  // namespace

ParamType classify_param(std::string_view cpp_type) {
  ParamType p;
  p.spelling = std::string(cpp_type);
  // (as the user wrote it: the cpu backend's prelude declares dim3 and uint3 in kiln_cpu)
  for (std::size_t at; (at = p.spelling.find("kiln_cpu::")) != std::string::npos;)
    p.spelling.erase(at, 10);
  std::vector<std::string> words = type_words(cpp_type);
  // Top-level const and qualifiers of the parameter itself ("const kiln::Array<...>") and
  // references ("float&": kiln has no way to pass one).
  std::vector<std::string> core;
  int angle = 0;
  for (const std::string& w : words) {
    if (w == "<") ++angle;
    if (w == ">") --angle;
    if (angle == 0 && (w == "&" || w == "[" || w == "("))
      return p;  // references, arrays, functions
    core.push_back(w);
  }
  std::vector<std::string> elem;
  std::string extent;
  {
    std::vector<std::string> unqualified;  // top-level qualifiers only: Array<const T, N> stays
    int depth = 0;
    for (const std::string& w : core) {
      if (w == "<") ++depth;
      if (w == ">") --depth;
      if (depth > 0 || (w != "const" && !is_ignorable_qualifier(w))) unqualified.push_back(w);
    }
    if (match_array(unqualified, &elem, &extent)) {
      char* end = nullptr;
      long n = std::strtol(extent.c_str(), &end, 10);
      bool is_const = false;
      std::optional<DType> dt = scalar_of(elem, &is_const);
      if (!dt || extent.empty() || *end != '\0' || n < 1 || n > 8) return p;
      p.kind = ParamKind::array;
      p.dtype = *dt;
      p.is_const = is_const;
      p.ndim = static_cast<int>(n);
      return p;
    }
  }
  std::size_t star = core.size();
  int stars = 0;
  for (std::size_t k = 0; k < core.size(); ++k) {
    if (core[k] == "*") {
      if (stars++ == 0) star = k;
    }
  }
  if (stars == 2 && core.back() == "*" && core[core.size() - 2] == "*") {
    // A pointer to pointers (CUDA by Example's `Entry** entries`): an array of addresses,
    // uint64 (zeros are null pointers; the kernel fills them in).
    p.kind = ParamKind::pointer;
    p.dtype = DType::uint64;
    return p;
  }
  if (stars > 1) return p;  // (`float* const*`, deeper pointers)
  if (stars == 1) {
    for (std::size_t k = star + 1; k < core.size(); ++k)  // "* const", "* __restrict__"
      if (core[k] != "const" && !is_ignorable_qualifier(core[k])) return p;
    bool is_const = false;
    const std::vector<std::string> pointee(core.begin(),
                                           core.begin() + static_cast<std::ptrdiff_t>(star));
    std::optional<DType> dt = scalar_of(pointee, &is_const);
    if (!dt && void_words(pointee, &is_const)) {  // `void*`, `const void*`: bytes of any array
      p.kind = ParamKind::pointer;
      p.dtype = DType::uint8;
      p.untyped = true;
      p.is_const = is_const;
      return p;
    }
    if (!dt) return p;
    p.kind = ParamKind::pointer;
    p.dtype = *dt;
    p.is_const = is_const;
    return p;
  }
  bool is_const = false;
  std::optional<DType> dt = scalar_of(core, &is_const);
  if (!dt) return p;
  p.kind = ParamKind::scalar;
  p.dtype = *dt;
  return p;
}

std::string demangle(std::string_view lowered_name) {
  std::string name(lowered_name);
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(
      abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status), std::free);
  if (status != 0 || !out) return name;
  return out.get();
}

std::vector<std::string> parameter_types(std::string_view demangled) {
  // The last parenthesised group at the top level (outside template argument lists) is the
  // parameter list: "void k<(int)3>(float*)", "void (*)(float*, int)".
  std::size_t open = std::string_view::npos, close = std::string_view::npos;
  int paren = 0, angle = 0;
  std::size_t group_open = 0;
  for (std::size_t i = 0; i < demangled.size(); ++i) {
    char c = demangled[i];
    if (c == '<' && paren == 0)
      ++angle;
    else if (c == '>' && paren == 0 && angle > 0)
      --angle;
    else if (c == '(') {
      if (paren++ == 0) group_open = i;
    } else if (c == ')' && paren > 0) {
      if (--paren == 0 && angle == 0) {
        open = group_open;
        close = i;
      }
    }
  }
  std::vector<std::string> out;
  if (open == std::string_view::npos) return out;
  std::string_view inner = demangled.substr(open + 1, close - open - 1);
  auto trim = [](std::string_view s) {
    while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
    while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
    return std::string(s);
  };
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= inner.size(); ++i) {
    char c = i < inner.size() ? inner[i] : ',';
    if (c == '<' || c == '(' || c == '[')
      ++depth;
    else if ((c == '>' || c == ')' || c == ']') && depth > 0)
      --depth;
    else if (c == ',' && depth == 0) {
      out.push_back(trim(inner.substr(start, i - start)));
      start = i + 1;
    }
  }
  if (out.size() == 1 && (out[0].empty() || out[0] == "void")) out.clear();
  return out;
}

namespace {

// The elements of array v: the product of its extents.
std::size_t element_count(const ArgValue& v) {
  std::size_t elements = 1;
  for (auto extent : v.shape) elements *= static_cast<std::size_t>(extent);
  return elements;
}

// Throws unless array v starts at a multiple of align bytes, as `what` (the expected arrays, for
// the message) must.
template <typename Where>
void check_aligned(const Where& where, const std::string& what, std::size_t align,
                   const ArgValue& v) {
  if (reinterpret_cast<std::uintptr_t>(v.data) % align != 0)
    throw Error(where() + " expects " + what + (align == 8 ? " at an " : " at a ") +
                std::to_string(align) + "-byte boundary, got a view that starts between two (" +
                describe(v) + ")");
}

// Throws unless v is an array whose bytes are whole structs of layout, at its alignment: a
// pointer to a struct takes any dtype's memory, but never a part of a struct.
template <typename Where>
void check_whole_structs(const Where& where, const StructLayout& layout, const ArgValue& v) {
  const std::string structs = "an array of whole " + layout.name + " structs (" +
                              std::to_string(layout.size) + " bytes each)";
  if (!is_array_value(v)) throw Error(where() + " expects " + structs + ", got " + describe(v));
  const std::size_t elements = element_count(v), bytes = elements * dtype_info(v.dtype).size;
  if (layout.size == 0 || bytes % layout.size != 0)
    throw Error(where() + " expects " + structs + ", got " + describe(v) + " of " +
                std::to_string(elements) + " elements (" + std::to_string(bytes) + " bytes)");
  check_aligned(where, structs, layout.align, v);
}

// Whether v is an array of the lane type of the vector dtype `vector` (float32 for float4*).
bool lanes_of_vector(DType vector, const ArgValue& v) {
  const DTypeInfo& info = dtype_info(vector);
  return info.lanes > 1 && is_array_value(v) && v.dtype == info.base;
}

// Throws unless v (an array of a vector's lanes) holds whole vectors at the vector's alignment.
template <typename Where>
void check_whole_vectors(const Where& where, DType vector, const ArgValue& v) {
  const DTypeInfo& info = dtype_info(vector);
  const std::string whole = "whole " + std::string(info.name) + " vectors (" +
                            std::to_string(info.lanes) + " " +
                            std::string(dtype_info(info.base).name) + " each)";
  if (const std::size_t elements = element_count(v);
      elements % static_cast<std::size_t>(info.lanes) != 0)
    throw Error(where() + " expects a " + std::string(info.name) + " array, or one of " + whole +
                ", got " + describe(v) + " of " + std::to_string(elements) + " elements");
  check_aligned(where, whole, info.align, v);
}

}  // namespace

void ArgPack::add(const std::string& kernel, int position, const std::string& param_name,
                  const ParamType& param, const ArgValue& value) {
  // The parameter's description, made only when an error needs it (launches are hot).
  auto where = [&] { return param_where(kernel, position, param_name, param); };
  std::size_t size = 0, align = 1;
  switch (param.kind) {
    case ParamKind::scalar:
      size = dtype_info(param.dtype).size;
      align = dtype_info(param.dtype).align;
      break;
    case ParamKind::pointer:
    case ParamKind::struct_pointer:
      size = align = sizeof(void*);
      break;
    case ParamKind::array:
      size = sizeof(void*) + sizeof(long long) * static_cast<std::size_t>(param.ndim);
      align = 8;
      break;
    case ParamKind::structure:
      size = param.layout->size;
      align = param.layout->align;
      break;
    case ParamKind::unsupported:
      if (!param.refusal.empty()) throw Error(where() + ": " + param.refusal);
      throw Error(where() +
                  " has a type kiln cannot pass from Lua (it passes scalars, vectors, pointers "
                  "to them, kiln::Array<T, N>, and structs and enumerations the kernel's "
                  "source declares, by value or by pointer)");
  }
  std::byte small[sizeof(void*) + 8 * sizeof(long long)] = {};
  std::vector<std::byte> large(param.kind == ParamKind::structure ? size : 0);
  std::byte* bytes = param.kind == ParamKind::structure ? large.data() : small;
  if (param.kind == ParamKind::structure) {
    convert_struct(where, *param.layout, value, bytes);
  } else if (param.kind == ParamKind::scalar) {
    convert_scalar(where, param, value, bytes);
  } else if (value.kind == ArgValue::Kind::null_pointer &&
             (param.kind == ParamKind::pointer || param.kind == ParamKind::struct_pointer)) {
    const void* null = nullptr;  // cuda.null, or a default argument `= NULL`
    std::memcpy(bytes, &null, sizeof null);
  } else if (param.kind == ParamKind::struct_pointer) {
    check_whole_structs(where, *param.layout, value);
    std::memcpy(bytes, &value.data, sizeof(void*));
  } else if (param.kind == ParamKind::pointer && param.untyped && is_array_value(value)) {
    std::memcpy(bytes, &value.data, sizeof(void*));  // (`void*`: the kernel casts it)
  } else if (param.kind == ParamKind::pointer && lanes_of_vector(param.dtype, value)) {
    check_whole_vectors(where, param.dtype, value);  // (`const uchar3* rgb` of an {h, w, 3} uint8)
    std::memcpy(bytes, &value.data, sizeof(void*));
  } else {
    if (!is_array_value(value) || value.dtype != param.dtype ||
        (param.kind == ParamKind::array && value.ndim != param.ndim)) {
      std::string elem = std::string(dtype_info(param.dtype).name);
      std::string article = elem.starts_with("int") ? "an " : "a ";
      std::string want = param.kind == ParamKind::array
                             ? (param.ndim == 8 ? "an " : "a ") + std::to_string(param.ndim) +
                                   "-d " + elem + " array"
                         : param.untyped ? "an array of any dtype"
                                         : article + elem + " array";
      throw Error(where() + " expects " + want +
                  (param.kind == ParamKind::pointer ? " (or cuda.null)" : "") + ", got " +
                  describe(value, param.kind == ParamKind::array));
    }
    std::memcpy(bytes, &value.data, sizeof(void*));
    if (param.kind == ParamKind::array) {
      for (int d = 0; d < param.ndim; ++d) {
        long long extent = d < static_cast<int>(value.shape.size()) ? value.shape[d] : 0;
        std::memcpy(bytes + sizeof(void*) + sizeof(long long) * d, &extent, sizeof extent);
      }
    }
  }
  std::size_t offset = (storage_.size() + align - 1) / align * align;
  storage_.resize(offset + size);
  std::memcpy(storage_.data() + offset, bytes, size);
  offsets_.push_back(offset);
}

void** ArgPack::pointers() {
  pointers_.clear();
  for (std::size_t off : offsets_) pointers_.push_back(storage_.data() + off);
  return pointers_.data();
}

namespace {

// What a parameter type spelling says about template parameters: the element type name when it
// is T*, const T*, T const*, T* __restrict__ or kiln::Array<T, N> (and N's spelling).
struct Pattern {
  std::string elem;    // "T" (empty when not a pointer or array of one name)
  std::string extent;  // "N" or "2" for kiln::Array; empty otherwise
  bool is_array = false;
};

// Recognises deducible parameter spellings.
std::optional<Pattern> deducible(const std::string& type) {
  std::vector<std::string> words;
  for (const std::string& w : type_words(type))
    if (w != "const" && !is_ignorable_qualifier(w)) words.push_back(w);
  Pattern p;
  std::vector<std::string> elem;
  if (match_array(words, &elem, &p.extent)) {
    if (elem.size() != 1) return std::nullopt;
    p.elem = elem[0];
    p.is_array = true;
    return p;
  }
  if (words.size() == 2 && words[1] == "*") {
    p.elem = words[0];
    return p;
  }
  return std::nullopt;
}

// Whether the headers every kernel sees (CUDA's math API, the C library) also declare name in
// the global namespace, so that a kernel of that name is one of an overload set.
bool header_declared(const std::string& name) {
  static const std::set<std::string, std::less<>> names{
      "abs",   "acos",  "acosf", "asin",  "asinf", "atan",   "atan2", "atan2f", "atanf", "cbrt",
      "cbrtf", "ceil",  "ceilf", "cos",   "cosf",  "cosh",   "coshf", "erf",    "erff",  "exp",
      "exp2",  "exp2f", "expf",  "fabs",  "fabsf", "floor",  "floorf", "fma",   "fmaf",  "fmax",
      "fmaxf", "fmin",  "fminf", "fmod",  "fmodf", "free",   "isinf", "isnan",  "labs",  "llabs",
      "llmax", "llmin", "log",   "log10", "log2",  "logf",   "malloc", "max",   "memcpy", "memset",
      "min",   "pow",   "powf",  "printf", "rint", "round",  "roundf", "rsqrt", "rsqrtf", "signbit",
      "sin",   "sinf",  "sinh",  "sinhf", "sqrt",  "sqrtf",  "tan",   "tanf",   "tanh",  "tanhf",
      "trunc", "truncf", "ullmax", "ullmin", "umax", "umin"};
  return names.count(name) != 0;
}

// "(void(*)(int*, float))name": the kernel among name's overloads, picked by its parameters.
std::string cast_expression(const KernelDecl& decl) {
  std::string types;
  for (const ParamDecl& p : decl.params) types += (types.empty() ? "" : ", ") + p.type;
  return "(void(*)(" + types + "))" + decl.scope + decl.name;
}

}  // namespace

std::optional<std::string> deduce_name_expression(const KernelDecl& decl,
                                                  const std::vector<ArgValue>& args,
                                                  std::string* why) {
  if (decl.template_params.empty())
    return decl.overloaded || (!decl.extern_c && header_declared(decl.name))
               ? cast_expression(decl)
               : decl.scope + decl.name;
  struct Deduced {
    std::string value;
    std::size_t from;  // parameter index
  };
  std::map<std::string, Deduced> deduced;
  auto param_label = [&](std::size_t i) {
    std::string s = "parameter " + std::to_string(i + 1);
    if (!decl.params[i].name.empty()) s += " '" + decl.params[i].name + "'";
    return s;
  };
  auto is_template_param = [&](const std::string& name, bool type_kind) {
    for (const TemplateParam& tp : decl.template_params)
      if (tp.name == name) return (tp.kind == "typename") == type_kind;
    return false;
  };
  // Records name = value from parameter i; false (why filled) on a conflict.
  auto record = [&](const std::string& name, const std::string& value, std::size_t i) {
    auto [it, fresh] = deduced.try_emplace(name, Deduced{value, i});
    if (fresh || it->second.value == value) return true;
    if (why)
      *why = "conflicting deductions for template parameter '" + name + "' of kernel '" +
             decl.name + "': " + it->second.value + " from " + param_label(it->second.from) +
             " and " + value + " from " + param_label(i);
    return false;
  };
  for (std::size_t i = 0; i < decl.params.size() && i < args.size(); ++i) {
    const ArgValue& a = args[i];
    if (!is_array_value(a)) continue;  // scalars deduce nothing (see the header)
    std::optional<Pattern> pat = deducible(decl.params[i].type);
    if (!pat) continue;
    if (is_template_param(pat->elem, true) &&
        !record(pat->elem, std::string(dtype_info(a.dtype).cpp), i))
      return std::nullopt;
    if (pat->is_array && is_template_param(pat->extent, false) &&
        !record(pat->extent, std::to_string(a.ndim), i))
      return std::nullopt;
  }
  // Explicit arguments up to the last one that must be given; trailing defaults are left out.
  std::vector<std::string> values;
  std::size_t needed = 0;
  for (std::size_t k = 0; k < decl.template_params.size(); ++k) {
    const TemplateParam& tp = decl.template_params[k];
    auto it = deduced.find(tp.name);
    if (it != deduced.end()) {
      values.push_back(it->second.value);
      needed = k + 1;
    } else if (!tp.default_value.empty()) {
      values.push_back(tp.default_value);
    } else {
      if (why) {
        std::string example = decl.name + "<";
        for (std::size_t j = 0; j < decl.template_params.size(); ++j) {
          const TemplateParam& t = decl.template_params[j];
          auto d = deduced.find(t.name);
          example += j ? ", " : "";
          example += d != deduced.end()         ? d->second.value
                     : t.kind == "typename"     ? std::string("float")
                     : !t.default_value.empty() ? t.default_value
                                                : std::string("256");
        }
        example += ">";
        // (append, not "#" + ...: GCC 12 warns falsely of an overlapping copy there, -Wrestrict)
        std::string name =
            tp.name.empty() ? std::string("#").append(std::to_string(k + 1)) : tp.name;
        *why = "cannot deduce template parameter '" + name + "' of kernel '" + decl.name +
               "'; give it explicitly: opts.name = \"" + example + "\"";
      }
      return std::nullopt;
    }
  }
  std::string out = decl.scope + decl.name + "<";
  for (std::size_t k = 0; k < needed; ++k) out += (k ? ", " : "") + values[k];
  out += ">";
  if (!decl.overloaded) return out;
  // (an overloaded template's instance by a cast too, its parameters' types with the arguments)
  std::vector<std::string> names;
  for (const TemplateParam& tp : decl.template_params) names.push_back(tp.name);
  std::string types;
  for (const ParamDecl& p : decl.params)
    types += (types.empty() ? "" : ", ") + substitute_words(p.type, names, values);
  return "(void(*)(" + types + "))" + out;
}

namespace {

// How well parameter type takes argument a, as overload resolution ranks it: -1 not at all,
// 0 maybe (a type kiln does not know: a template's T*, a typedef), 1 by a conversion (an
// integer to a float or an unsigned parameter), 2 exactly (an array of the pointee's dtype).
int fit(const std::string& type, const ArgValue& a) {
  const ParamType p = classify_param(type);
  if (p.kind == ParamKind::unsupported || p.kind == ParamKind::structure ||
      p.kind == ParamKind::struct_pointer)
    return a.kind == ArgValue::Kind::integer || a.kind == ArgValue::Kind::number ||
                   a.kind == ArgValue::Kind::boolean
               ? (type.find_first_of("*&") == std::string::npos ? 0 : -1)
               : 0;
  const bool pointer = p.kind == ParamKind::pointer || p.kind == ParamKind::array;
  const DTypeInfo& d = dtype_info(p.dtype);
  switch (a.kind) {
    case ArgValue::Kind::device_array:
    case ArgValue::Kind::host_array:
      if (!pointer) return -1;
      if (p.kind == ParamKind::array) return p.dtype == a.dtype && p.ndim == a.ndim ? 2 : -1;
      return p.untyped ? 1 : p.dtype == a.dtype ? 2 : -1;
    case ArgValue::Kind::null_pointer:
      return pointer ? 2 : -1;
    case ArgValue::Kind::integer:  // (as C++ ranks an int literal: int exactly, else converted)
      if (pointer || d.lanes > 1 || p.dtype == DType::boolean) return -1;
      return p.dtype == DType::int32 ? 2 : 1;
    case ArgValue::Kind::number:  // (and a double literal: double exactly)
      if (pointer || d.lanes > 1 || p.dtype == DType::boolean) return -1;
      if (d.is_integer && std::floor(a.number) != a.number) return -1;
      return p.dtype == DType::float64 ? 2 : 1;
    case ArgValue::Kind::boolean:
      return !pointer && p.dtype == DType::boolean ? 2 : -1;
    case ArgValue::Kind::table:  // (a vector's lanes, {x, y} or {1, 2}; never a scalar)
      return !pointer && d.lanes > 1 && a.lanes.size() == std::size_t(d.lanes) ? 2 : -1;
    case ArgValue::Kind::other:
      return 0;
  }
  return 0;
}

}  // namespace

std::size_t choose_overload(const std::vector<KernelDecl>& decls,
                            const std::vector<ArgValue>& args) {
  if (decls.size() == 1) return 0;
  // Each fitting overload's fits, argument by argument; the best is at least as good as every
  // other in each argument (C++'s rule), and better in one.
  std::vector<std::pair<std::size_t, std::vector<int>>> fitting;
  for (std::size_t d = 0; d < decls.size(); ++d) {
    const std::vector<ParamDecl>& params = decls[d].params;
    if (args.size() > params.size() ||
        std::any_of(params.begin() + std::ptrdiff_t(args.size()), params.end(),
                    [](const ParamDecl& p) { return p.default_value.empty(); }))
      continue;
    std::vector<int> fits;
    for (std::size_t i = 0; i < args.size() && (fits.empty() || fits.back() >= 0); ++i)
      fits.push_back(fit(params[i].type, args[i]));
    if (fits.empty() || fits.back() >= 0) fitting.emplace_back(d, std::move(fits));
  }
  auto at_least = [](const std::vector<int>& a, const std::vector<int>& b) {
    for (std::size_t i = 0; i < a.size() && i < b.size(); ++i)
      if (a[i] < b[i]) return false;
    return true;
  };
  for (const auto& [d, fits] : fitting)
    if (std::all_of(fitting.begin(), fitting.end(), [&](const auto& other) {
          return other.first == d || (at_least(fits, other.second) && fits != other.second);
        }))
      return d;
  std::string given, listed;
  for (const ArgValue& a : args) given += (given.empty() ? "" : ", ") + describe(a);
  const bool ambiguous = fitting.size() > 1;
  for (std::size_t d = 0; d < decls.size(); ++d)
    if (!ambiguous ||
        std::any_of(fitting.begin(), fitting.end(), [&](const auto& f) { return f.first == d; }))
      listed += "\n  " + decls[d].name + parameter_list(decls[d]);
  throw Error("kernel '" + decls.front().name +
              "': " + (ambiguous ? "several overloads take " : "no overload takes ") + "(" + given +
              "); " + (ambiguous ? "they are:" : "its overloads are:") + listed);
}

}  // namespace kiln::jit
