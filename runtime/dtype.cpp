#include "runtime/dtype.h"

#include <array>
#include <string>

namespace kiln {
namespace {

using enum DType;
constexpr std::array<DTypeInfo, kDTypeCount + kVectorDTypeCount> kInfo = {{
    {"float32", "f32", "float", 4, false, true, float32, 1, 4},
    {"float64", "f64", "double", 8, false, true, float64, 1, 8},
    {"int8", "i8", "signed char", 1, true, true, int8, 1, 1},
    {"uint8", "u8", "unsigned char", 1, true, false, uint8, 1, 1},
    {"int16", "i16", "short", 2, true, true, int16, 1, 2},
    {"uint16", "u16", "unsigned short", 2, true, false, uint16, 1, 2},
    {"int32", "i32", "int", 4, true, true, int32, 1, 4},
    {"uint32", "u32", "unsigned int", 4, true, false, uint32, 1, 4},
    {"int64", "i64", "long", 8, true, true, int64, 1, 8},
    {"uint64", "u64", "unsigned long", 8, true, false, uint64, 1, 8},
    {"bool", "", "bool", 1, true, false, boolean, 1, 1},
    {"float2", "", "float2", 8, false, true, float32, 2, 8},
    {"float3", "", "float3", 12, false, true, float32, 3, 4},
    {"float4", "", "float4", 16, false, true, float32, 4, 16},
    {"double2", "", "double2", 16, false, true, float64, 2, 16},
    {"int2", "", "int2", 8, true, true, int32, 2, 8},
    {"int3", "", "int3", 12, true, true, int32, 3, 4},
    {"int4", "", "int4", 16, true, true, int32, 4, 16},
    {"uint2", "", "uint2", 8, true, false, uint32, 2, 8},
    {"uint3", "", "uint3", 12, true, false, uint32, 3, 4},
    {"uint4", "", "uint4", 16, true, false, uint32, 4, 16},
    {"char4", "", "char4", 4, true, true, int8, 4, 4},
    {"uchar4", "", "uchar4", 4, true, false, uint8, 4, 4},
    {"short2", "", "short2", 4, true, true, int16, 2, 4},
    {"ushort2", "", "ushort2", 4, true, false, uint16, 2, 4},
    {"double3", "", "double3", 24, false, true, float64, 3, 8},
    {"double4", "", "double4", 32, false, true, float64, 4, 16},
    {"float16", "f16", "__half", 2, false, true, float16, 1, 2},
    {"bfloat16", "bf16", "__nv_bfloat16", 2, false, true, bfloat16, 1, 2},
    {"half2", "", "__half2", 4, false, true, float16, 2, 4},
    {"bfloat162", "", "__nv_bfloat162", 4, false, true, bfloat16, 2, 4},
    {"char2", "", "char2", 2, true, true, int8, 2, 2},
    {"char3", "", "char3", 3, true, true, int8, 3, 1},
    {"uchar2", "", "uchar2", 2, true, false, uint8, 2, 2},
    {"uchar3", "", "uchar3", 3, true, false, uint8, 3, 1},
    {"short3", "", "short3", 6, true, true, int16, 3, 2},
    {"short4", "", "short4", 8, true, true, int16, 4, 8},
    {"ushort3", "", "ushort3", 6, true, false, uint16, 3, 2},
    {"ushort4", "", "ushort4", 8, true, false, uint16, 4, 8},
}};

// Collapses runs of blanks and drops "std::" and a trailing " int" of multi-word integer names.
std::string normalise(std::string_view s) {
  std::string out;
  for (char c : s) {
    bool blank = c == ' ' || c == '\t' || c == '\n';
    if (blank) {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += c;
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  if (out.rfind("std::", 0) == 0) out.erase(0, 5);
  if (out.rfind("::", 0) == 0) out.erase(0, 2);
  if (out.size() > 4 && out.ends_with(" int") && out != "unsigned int" && out != "signed int")
    out.resize(out.size() - 4);  // "long long int" -> "long long", "unsigned short int" -> ...
  return out;
}

}  // namespace

const DTypeInfo& dtype_info(DType t) { return kInfo[static_cast<std::size_t>(t)]; }

std::optional<DType> parse_dtype(std::string_view name) {
  for (const DTypeInfo& i : kInfo)
    if (name == i.name || (!i.alias.empty() && name == i.alias))
      return static_cast<DType>(&i - kInfo.data());
  return std::nullopt;
}

std::optional<DType> dtype_of_cpp(std::string_view spelling) {
  // LP64 (Linux x86-64 and aarch64, and CUDA device code on them): long is 64 bits.
  struct Alias { std::string_view cpp; DType t; };
  static constexpr Alias kAliases[] = {
      {"float", DType::float32},
      {"double", DType::float64},
      {"char", DType::int8},
      {"signed char", DType::int8},
      {"int8_t", DType::int8},
      {"unsigned char", DType::uint8},
      {"uint8_t", DType::uint8},
      {"short", DType::int16},
      {"signed short", DType::int16},
      {"int16_t", DType::int16},
      {"unsigned short", DType::uint16},
      {"uint16_t", DType::uint16},
      {"int", DType::int32},
      {"signed", DType::int32},
      {"signed int", DType::int32},
      {"int32_t", DType::int32},
      {"unsigned", DType::uint32},
      {"unsigned int", DType::uint32},
      {"uint32_t", DType::uint32},
      {"long", DType::int64},
      {"signed long", DType::int64},
      {"long long", DType::int64},
      {"signed long long", DType::int64},
      {"int64_t", DType::int64},
      {"ptrdiff_t", DType::int64},
      {"ssize_t", DType::int64},
      {"clock_t", DType::int64},
      {"intptr_t", DType::int64},
      {"long long", DType::int64},
      {"unsigned long", DType::uint64},
      {"unsigned long long", DType::uint64},
      {"uint64_t", DType::uint64},
      {"size_t", DType::uint64},
      {"uintptr_t", DType::uint64},
      {"bool", DType::boolean},
      {"__half", DType::float16},
      {"half", DType::float16},
      {"__nv_bfloat16", DType::bfloat16},
      {"nv_bfloat16", DType::bfloat16},
      {"half2", DType::half2},
      {"nv_bfloat162", DType::bfloat162},
      {"dim3", DType::uint3},  // (three unsigned ints, as uint3)
  };
  std::string s = normalise(spelling);
  // (the standard's names in their namespaces: std::int8_t, ::cuda::std::size_t; and uint3 and
  // dim3 as the cpu backend's prelude declares them, in kiln_cpu)
  for (std::string_view space : {"::", "kiln_cpu::", "cuda::", "std::"})
    if (s.starts_with(space)) s.erase(0, space.size());
  for (const Alias& a : kAliases)
    if (s == a.cpp) return a.t;
  for (DType t : kVectorDTypes)  // "float4", "struct float4" as some demanglers print it
    if (s == dtype_info(t).cpp || s == "struct " + std::string(dtype_info(t).cpp)) return t;
  return std::nullopt;
}

}  // namespace kiln
