#include "runtime/dtype.h"

#include <gtest/gtest.h>

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

}  // namespace kiln
