// Element types of kiln arrays: the dtype names of lua-api.md and their C++ spellings.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace kiln {

// The scalars, then CUDA's vector types (float4 is four float32 lanes, laid out and aligned as
// CUDA declares them), which arrays hold and kernels take by pointer or by value.
enum class DType : std::uint8_t {
  float32,
  float64,
  int8,
  uint8,
  int16,
  uint16,
  int32,
  uint32,
  int64,
  uint64,
  boolean,
  float2,
  float3,
  float4,
  double2,
  int2,
  int3,
  int4,
  uint2,
  uint3,
  uint4,
  char4,
  uchar4,
  short2,
  ushort2,
  double3,
  double4,
  // Scalars added after the vectors, so that the numbers of the others (in cache keys) stay.
  float16,    // IEEE binary16, CUDA's __half
  bfloat16,   // CUDA's __nv_bfloat16
  half2,      // CUDA's __half2: two float16 lanes
  bfloat162,  // CUDA's __nv_bfloat162
  // Vectors of narrow lanes added later (interleaved RGB as uchar3)
  char2,
  char3,
  uchar2,
  uchar3,
  short3,
  short4,
  ushort3,
  ushort4
};
inline constexpr int kDTypeCount = 13;        // scalars
inline constexpr int kVectorDTypeCount = 26;  // vectors

struct DTypeInfo {
  std::string_view name;   // the long name, as a.dtype returns it ("float32")
  std::string_view alias;  // the short alias ("f32"); "bool" has none
  std::string_view cpp;    // the canonical C++ spelling, as the demangler prints it ("float")
  std::size_t size;        // bytes per element
  bool is_integer;         // integers and bool: exact arithmetic, Lua integers
  bool is_signed;
  DType base;              // a vector's lane type; a scalar's own
  int lanes;               // 1 for scalars, 2..4 for vectors
  std::size_t align;       // bytes, as CUDA aligns the type
};

// The facts about one dtype.
const DTypeInfo& dtype_info(DType t);

// A dtype from its long name or alias ("float32", "f32"); nullopt when unknown.
std::optional<DType> parse_dtype(std::string_view name);

// A dtype from a C++ scalar or vector type spelling, normalised or not ("float", "unsigned char", "long",
// "size_t", "std::int64_t", "clock_t", "signed char", "long long int"); nullopt when not a scalar.
std::optional<DType> dtype_of_cpp(std::string_view spelling);

// All scalar dtypes, for iteration.
inline constexpr DType kAllDTypes[kDTypeCount] = {
    DType::float32, DType::float64, DType::int8,    DType::uint8, DType::int16,
    DType::uint16,  DType::int32,   DType::uint32,  DType::int64, DType::uint64,
    DType::boolean, DType::float16, DType::bfloat16};
// All vector dtypes.
inline constexpr DType kVectorDTypes[kVectorDTypeCount] = {
    DType::float2,  DType::float3,  DType::float4,  DType::double2, DType::int2,   DType::int3,
    DType::int4,    DType::uint2,   DType::uint3,   DType::uint4,   DType::char4,  DType::uchar4,
    DType::short2,  DType::ushort2, DType::double3, DType::double4, DType::half2,  DType::bfloat162,
    DType::char2,   DType::char3,   DType::uchar2,  DType::uchar3,  DType::short3, DType::short4,
    DType::ushort3, DType::ushort4};

// Whether t is a vector type (float4, ...).
inline bool is_vector(DType t) { return dtype_info(t).lanes > 1; }

}  // namespace kiln
