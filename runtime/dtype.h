// Element types of kiln arrays: the dtype names of lua-api.md and their C++ spellings.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace kiln {

enum class DType : std::uint8_t {
  float32, float64, int8, uint8, int16, uint16, int32, uint32, int64, uint64, boolean
};
inline constexpr int kDTypeCount = 11;

struct DTypeInfo {
  std::string_view name;   // the long name, as a.dtype returns it ("float32")
  std::string_view alias;  // the short alias ("f32"); "bool" has none
  std::string_view cpp;    // the canonical C++ spelling, as the demangler prints it ("float")
  std::size_t size;        // bytes per element
  bool is_integer;         // integers and bool: exact arithmetic, Lua integers
  bool is_signed;
};

// The facts about one dtype.
const DTypeInfo& dtype_info(DType t);

// A dtype from its long name or alias ("float32", "f32"); nullopt when unknown.
std::optional<DType> parse_dtype(std::string_view name);

// A dtype from a C++ scalar type spelling, normalised or not ("float", "unsigned char", "long",
// "size_t", "std::int64_t", "clock_t", "signed char", "long long int"); nullopt when not a scalar.
std::optional<DType> dtype_of_cpp(std::string_view spelling);

// All dtypes, for iteration.
inline constexpr DType kAllDTypes[kDTypeCount] = {
    DType::float32, DType::float64, DType::int8,   DType::uint8,  DType::int16,  DType::uint16,
    DType::int32,   DType::uint32,  DType::int64,  DType::uint64, DType::boolean};

}  // namespace kiln
