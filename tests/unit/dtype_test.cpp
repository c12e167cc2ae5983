#include "runtime/dtype.h"

#include <gtest/gtest.h>

#include <cstdint>

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
  EXPECT_EQ(dtype_of_cpp("long long int"), DType::int64);
  EXPECT_EQ(dtype_of_cpp("unsigned long long"), DType::uint64);
  EXPECT_EQ(dtype_of_cpp("size_t"), DType::uint64);
  EXPECT_EQ(dtype_of_cpp("std::int32_t"), DType::int32);
  EXPECT_EQ(dtype_of_cpp("clock_t"), DType::int64);
  EXPECT_EQ(dtype_of_cpp("unsigned short int"), DType::uint16);
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
  EXPECT_EQ(std::size(kAllDTypes), 11u);  // a new dtype needs a line above
}

}  // namespace kiln
