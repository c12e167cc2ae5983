// runtime/array_format: numpy's printed layout, checked against numpy's own output for the same
// arrays (numpy 1.26 and 2.x print these identically).
#include "runtime/array_format.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

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

// The text from just the printed elements (what a device array copies) equals the whole array's,
// for arrays summarized along some axes and not others, vector dtypes and empty and scalar ones;
// and the reads stay small however large the array.
TEST(FormatArray, PrintedElementsGiveTheWholeArraysText) {
  const struct {
    Shape shape;
    DType dtype;
  } cases[] = {{{2000}, DType::float32},  {{40, 50}, DType::int32},   {{10, 3, 40}, DType::float64},
               {{1001, 1}, DType::int16}, {{5, 7}, DType::uint8},     {{300}, DType::float4},
               {{334}, DType::float3},    {{333}, DType::float3},     {{0, 3}, DType::float32},
               {{}, DType::int64},        {{7, 7, 7, 7}, DType::int8}};
  for (const auto& c : cases) {
    HostArray whole(c.shape, c.dtype);
    auto* bytes = static_cast<unsigned char*>(whole.data());
    for (std::int64_t i = 0; i < whole.nbytes(); ++i)
      bytes[i] = static_cast<unsigned char>(i * 37 % 61);
    const std::size_t element = dtype_info(c.dtype).size;
    std::int64_t read = 0;
    HostArray printed =
        printed_elements(c.shape, c.dtype, [&](std::int64_t first, std::int64_t count, void* to) {
          ASSERT_GE(first, 0);
          ASSERT_LE((first + count) * std::int64_t(element), whole.nbytes());
          std::memcpy(to, bytes + first * element, count * element);
          read += count;
        });
    SCOPED_TRACE(shape_string(c.shape) + " " + std::string(dtype_info(c.dtype).name));
    EXPECT_EQ(format_printed(printed, c.shape), format_array(whole));
    EXPECT_LE(read, std::min<std::int64_t>(whole.size(), 6 * 6 * 6 * 6));
  }
  EXPECT_EQ(printed_shape({100000, 3}, DType::float32), (Shape{7, 3}));
  EXPECT_EQ(printed_shape({10, 10}, DType::float32), (Shape{10, 10}));  // 100 elements: all shown
}

}  // namespace
}  // namespace kiln
