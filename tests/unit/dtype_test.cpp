#include "runtime/dtype.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace kiln {

TEST(DType, ParsesLongNamesAndAliases) {
  EXPECT_EQ(parse_dtype("float32"), DType::float32);
  EXPECT_EQ(parse_dtype("f64"), DType::float64);
  EXPECT_EQ(parse_dtype("u8"), DType::uint8);
  EXPECT_EQ(parse_dtype("bool"), DType::boolean);
  EXPECT_FALSE(parse_dtype("float"));
  EXPECT_FALSE(parse_dtype(""));
  for (DType t : kAllDTypes) EXPECT_EQ(parse_dtype(dtype_info(t).name), t);
}

TEST(DType, MapsCppSpellings) {
  EXPECT_EQ(dtype_of_cpp("float"), DType::float32);
  EXPECT_EQ(dtype_of_cpp("unsigned  char"), DType::uint8);
  EXPECT_EQ(dtype_of_cpp("long"), DType::int64);
  EXPECT_EQ(dtype_of_cpp("std::int8_t"), DType::int8);  // (the standard's names, qualified)
  EXPECT_EQ(dtype_of_cpp("::cuda::std::size_t"), DType::uint64);
  EXPECT_FALSE(dtype_of_cpp("std::array<float, 3>"));
  EXPECT_EQ(dtype_of_cpp("long long int"), DType::int64);
  EXPECT_EQ(dtype_of_cpp("unsigned long long"), DType::uint64);
  EXPECT_EQ(dtype_of_cpp("size_t"), DType::uint64);
  EXPECT_EQ(dtype_of_cpp("std::int32_t"), DType::int32);
  EXPECT_EQ(dtype_of_cpp("clock_t"), DType::int64);
  EXPECT_EQ(dtype_of_cpp("unsigned short int"), DType::uint16);
  EXPECT_EQ(dtype_of_cpp("__half"), DType::float16);
  EXPECT_EQ(dtype_of_cpp("half"), DType::float16);
  EXPECT_EQ(dtype_of_cpp("__nv_bfloat16"), DType::bfloat16);
  EXPECT_EQ(dtype_of_cpp("half2"), DType::half2);
  EXPECT_EQ(parse_dtype("f16"), DType::float16);
  EXPECT_EQ(parse_dtype("bf16"), DType::bfloat16);
  EXPECT_FALSE(dtype_of_cpp("float*"));
  EXPECT_FALSE(dtype_of_cpp("Foo"));
  for (DType t : kAllDTypes) EXPECT_EQ(dtype_of_cpp(dtype_info(t).cpp), t);
}

TEST(DType, ElementSizesAreTheCppTypes) {
  // Written out, not taken from dtype_info or dispatch_dtype: a wrong size there must show here.
  EXPECT_EQ(dtype_info(DType::float32).size, sizeof(float));
  EXPECT_EQ(dtype_info(DType::float64).size, sizeof(double));
  EXPECT_EQ(dtype_info(DType::int8).size, sizeof(std::int8_t));
  EXPECT_EQ(dtype_info(DType::uint8).size, sizeof(std::uint8_t));
  EXPECT_EQ(dtype_info(DType::int16).size, sizeof(std::int16_t));
  EXPECT_EQ(dtype_info(DType::uint16).size, sizeof(std::uint16_t));
  EXPECT_EQ(dtype_info(DType::int32).size, sizeof(std::int32_t));
  EXPECT_EQ(dtype_info(DType::uint32).size, sizeof(std::uint32_t));
  EXPECT_EQ(dtype_info(DType::int64).size, sizeof(std::int64_t));
  EXPECT_EQ(dtype_info(DType::uint64).size, sizeof(std::uint64_t));
  EXPECT_EQ(dtype_info(DType::boolean).size, sizeof(bool));
  EXPECT_EQ(dtype_info(DType::float16).size, 2u);
  EXPECT_EQ(dtype_info(DType::bfloat16).size, 2u);
  EXPECT_EQ(std::size(kAllDTypes), 13u);  // a new dtype needs a line above
}

TEST(DType, VectorsAreTheirLanes) {
  // Sizes and alignments as CUDA's vector_types.h declares them (float3: 12 bytes, 4-aligned).
  struct Expected {
    DType t;
    DType base;
    int lanes;
    std::size_t size, align;
  };
  const Expected expected[] = {
      {DType::float2, DType::float32, 2, 8, 8},   {DType::float3, DType::float32, 3, 12, 4},
      {DType::float4, DType::float32, 4, 16, 16}, {DType::double2, DType::float64, 2, 16, 16},
      {DType::int2, DType::int32, 2, 8, 8},       {DType::int3, DType::int32, 3, 12, 4},
      {DType::int4, DType::int32, 4, 16, 16},     {DType::uint2, DType::uint32, 2, 8, 8},
      {DType::uint3, DType::uint32, 3, 12, 4},    {DType::uint4, DType::uint32, 4, 16, 16},
      {DType::char4, DType::int8, 4, 4, 4},       {DType::uchar4, DType::uint8, 4, 4, 4},
      {DType::short2, DType::int16, 2, 4, 4},     {DType::ushort2, DType::uint16, 2, 4, 4},
      {DType::double3, DType::float64, 3, 24, 8}, {DType::double4, DType::float64, 4, 32, 16},
      {DType::half2, DType::float16, 2, 4, 4},    {DType::bfloat162, DType::bfloat16, 2, 4, 4},
      {DType::char2, DType::int8, 2, 2, 2},       {DType::char3, DType::int8, 3, 3, 1},
      {DType::uchar2, DType::uint8, 2, 2, 2},     {DType::uchar3, DType::uint8, 3, 3, 1},
      {DType::short3, DType::int16, 3, 6, 2},     {DType::short4, DType::int16, 4, 8, 8},
      {DType::ushort3, DType::uint16, 3, 6, 2},   {DType::ushort4, DType::uint16, 4, 8, 8}};
  ASSERT_EQ(std::size(expected), std::size(kVectorDTypes));
  for (const Expected& e : expected) {
    const DTypeInfo& i = dtype_info(e.t);
    EXPECT_EQ(i.base, e.base) << i.name;
    EXPECT_EQ(i.lanes, e.lanes) << i.name;
    EXPECT_EQ(i.size, e.size) << i.name;
    EXPECT_EQ(i.align, e.align) << i.name;
    EXPECT_TRUE(is_vector(e.t));
    EXPECT_EQ(parse_dtype(i.name), e.t);
    EXPECT_EQ(dtype_of_cpp(i.cpp), e.t);
    EXPECT_EQ(dtype_of_cpp("struct " + std::string(i.cpp)), e.t);
  }
  for (DType t : kAllDTypes) EXPECT_FALSE(is_vector(t));
}

}  // namespace kiln
