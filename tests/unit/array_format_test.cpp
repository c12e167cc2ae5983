// runtime/array_format: numpy's printed layout, checked against numpy's own output for the same
// arrays (numpy 1.26 and 2.x print these identically).
#include "runtime/array_format.h"

#include <gtest/gtest.h>

#include <cmath>

namespace kiln {
namespace {

TEST(FormatArray, NumpyLayout) {
  HostArray f({3}, DType::float32);
  f.set_number(0, 1), f.set_number(1, 2.5), f.set_number(2, -3);
  EXPECT_EQ(format_array(f), "array([ 1. ,  2.5, -3. ], dtype=float32)");
  HostArray i({2, 2}, DType::int64);
  i.set_integer(3, -40);
  EXPECT_EQ(format_array(i), "array([[  0,   0],\n       [  0, -40]], dtype=int64)");
  HostArray u({2}, DType::uint64);
  u.set_number(0, 18446744073709549568.0);
  EXPECT_EQ(format_array(u), "array([18446744073709549568,                    0], dtype=uint64)");
  HostArray e({1, 2}, DType::float64);
  e.set_number(0, 1e-7), e.set_number(1, 12.5);
  EXPECT_EQ(format_array(e), "array([[1.00e-07, 1.25e+01]], dtype=float64)");
  EXPECT_EQ(format_array(HostArray({2000}, DType::int8)),
            "array([0, 0, 0, ..., 0, 0, 0], shape=(2000,), dtype=int8)");
}

TEST(FormatArray, NonFiniteAndBoolAndZeroD) {
  HostArray f({3}, DType::float64);
  f.set_number(0, NAN), f.set_number(1, -INFINITY), f.set_number(2, 0.5);
  EXPECT_EQ(format_array(f), "array([ nan, -inf,  0.5], dtype=float64)");
  HostArray b({2}, DType::boolean);
  b.as<bool>()[0] = true;
  EXPECT_EQ(format_array(b), "array([ true, false], dtype=bool)");
  HostArray z({0, 3}, DType::float32);
  EXPECT_EQ(format_array(z), "array([], shape=(0, 3), dtype=float32)");
}

TEST(FormatArrayHtml, TableElidedLikeTheText) {
  HostArray f({2, 2}, DType::float32);
  f.set_number(0, 1), f.set_number(1, 2.5), f.set_number(2, -3);
  EXPECT_EQ(format_array_html(f),
            "<table class=\"kiln-array\"><caption>array of shape (2, 2), float32</caption>"
            "<tr><th></th><th>1</th><th>2</th></tr>"
            "<tr><th>1</th><td>1.</td><td>2.5</td></tr>"
            "<tr><th>2</th><td>-3.</td><td>0.</td></tr></table>");
  std::string big = format_array_html(HostArray({40, 50}, DType::int32));
  EXPECT_NE(big.find("<th>3</th><th>&hellip;</th><th>48</th>"), std::string::npos);
  EXPECT_NE(big.find("<tr><th>&vellip;</th>"), std::string::npos);
  EXPECT_NE(big.find("<th>40</th>"), std::string::npos);
  EXPECT_EQ(big.find("<th>4</th>"), std::string::npos);
  // Rows of a 3-d array carry the index of each leading axis.
  EXPECT_NE(format_array_html(HostArray({2, 3, 2}, DType::uint8)).find("<th>2, 3</th>"),
            std::string::npos);
  EXPECT_EQ(format_array_html(HostArray({0}, DType::int8)),
            "<table class=\"kiln-array\"><caption>array of shape (0,), int8</caption></table>");
  EXPECT_NE(format_array_html(HostArray({2}, DType::float4)).find("float4</caption>"),
            std::string::npos);
}

}  // namespace
}  // namespace kiln
