#include "runtime/host_array.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <string>

#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stb/stb_image_write.h>

#include "runtime/error.h"
#include "runtime/image.h"

namespace kiln {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// The message of the kiln::Error that f throws ("" when it throws none).
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// A HostArray of doubles holding values.
HostArray doubles(std::initializer_list<double> values, DType t = DType::float64) {
  HostArray a(Shape{static_cast<std::int64_t>(values.size())}, t);
  std::int64_t i = 0;
  for (double v : values) a.set_number(i++, v);
  return a;
}

TEST(HostArray, BuffersAreAlignedAndZeroFilled) {
  for (std::int64_t n : {0, 1, 3, 17, 1000, 300000}) {
    for (DType t : kAllDTypes) {
      HostArray a(Shape{n}, t);
      ASSERT_NE(a.data(), nullptr);
      EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a.data()) % 64, 0u) << n;
      EXPECT_EQ(a.nbytes(), static_cast<std::size_t>(n) * dtype_info(t).size);
      const auto* bytes = static_cast<const unsigned char*>(a.data());
      for (std::size_t i = 0; i < a.nbytes(); ++i) ASSERT_EQ(bytes[i], 0) << i;
    }
  }
}

TEST(HostArray, ShapesAndSizes) {
  EXPECT_EQ(shape_size({2, 3, 4}), 24);
  EXPECT_EQ(shape_size({}), 1);
  EXPECT_EQ(shape_size({5, 0}), 0);
  EXPECT_EQ(shape_string({5}), "(5,)");
  EXPECT_EQ(shape_string({2, 3}), "(2, 3)");
  EXPECT_EQ(shape_string({}), "()");
  EXPECT_THAT(error_of([] {
                shape_size({2, -3});
              }),
              HasSubstr("negative dimension -3 in shape (2, -3)"));
  EXPECT_THAT(error_of([] { shape_size({1LL << 40, 1LL << 40}); }), HasSubstr("too many elements"));
  HostArray a({2, 3, 4}, DType::int16);
  EXPECT_EQ(a.size(), 24);
  EXPECT_EQ(a.ndim(), 3);
}

TEST(HostArray, AllocationFailureNamesBytesShapeAndDtype) {
  // Refused up front (more than memory and swap), even where the system would overcommit.
  EXPECT_THAT(error_of([] { HostArray a({std::int64_t{1} << 57}, DType::float64); }),
              AllOf(HasSubstr("array: cannot allocate 1152921504606846976 bytes (shape "
                              "(144115188075855872,), float64): more than this machine's memory "
                              "and swap together ("),
                    HasSubstr(" GiB)")));
  EXPECT_THAT(error_of([] { HostArray a({std::int64_t{1} << 62}, DType::float64); }),
              HasSubstr("too large"));
}

TEST(HostArray, ExternalMemoryIsFreedWithTheLastHandle) {
  static double storage[4];
  int freed = 0;
  {
    HostArray a({4}, DType::float64, storage, [&](void* p) {
      EXPECT_EQ(p, storage);
      ++freed;
    });
    HostArray b = a;
    a.set_number(1, 2.5);
    EXPECT_EQ(storage[1], 2.5);
  }
  EXPECT_EQ(freed, 1);
}

TEST(HostArray, ElementAccessChecksValues) {
  HostArray u8({3}, DType::uint8);
  u8.set_integer(0, 255);
  u8.set_number(1, 7.0);
  EXPECT_EQ(u8.get_integer(0), 255);
  EXPECT_EQ(u8.get_number(1), 7.0);
  EXPECT_EQ(error_of([&] { u8.set_integer(0, 256); }),
            "array: value 256 is out of range for uint8 [0, 255]");
  EXPECT_THAT(error_of([&] { u8.set_number(0, -1.0); }), HasSubstr("value -1 is out of range"));
  EXPECT_THAT(error_of([&] { u8.set_number(0, 2.5); }), HasSubstr("value 2.5 is not an integer"));
  EXPECT_THAT(error_of([&] { u8.set_number(0, NAN); }), HasSubstr("value nan is not an integer"));
  EXPECT_THAT(error_of([&] { u8.get_number(3); }), HasSubstr("flat index 3 out of range [0, 3)"));
  EXPECT_THAT(error_of([&] { u8.set_integer(-1, 0); }), HasSubstr("flat index -1"));

  HostArray i64({2}, DType::int64);
  i64.set_integer(0, std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(i64.get_integer(0), std::numeric_limits<std::int64_t>::min());
  EXPECT_THAT(error_of([&] { i64.set_number(1, 9223372036854775808.0); }),
              HasSubstr("out of range"));
  i64.set_number(1, -9223372036854775808.0);
  EXPECT_EQ(i64.get_integer(1), std::numeric_limits<std::int64_t>::min());

  HostArray u64({1}, DType::uint64);
  u64.set_number(0, 18446744073709549568.0);  // the largest double below 2^64
  EXPECT_EQ(u64.as<std::uint64_t>()[0], 18446744073709549568ULL);
  EXPECT_THAT(error_of([&] { u64.get_integer(0); }), HasSubstr("does not fit in int64"));
  u64.set_integer(0, -1);  // (Lua's integer of the bits 0xFFFFFFFFFFFFFFFF)
  EXPECT_EQ(u64.as<std::uint64_t>()[0], ~0ULL);
  EXPECT_THAT(error_of([&] { u64.set_number(0, 18446744073709551616.0); }),
              HasSubstr("value 18446744073709551616 is out of range for uint64 [0, "));

  HostArray b({2}, DType::boolean);
  b.set_integer(0, 1);
  b.set_number(1, 0.0);
  EXPECT_EQ(b.get_integer(0), 1);
  EXPECT_EQ(b.get_number(1), 0.0);
  EXPECT_THAT(error_of([&] { b.set_integer(0, 2); }), HasSubstr("value 2 is not a bool"));

  HostArray f({1}, DType::float32);
  f.set_number(0, 0.1);
  EXPECT_EQ(f.get_number(0), static_cast<double>(0.1f));
  f.set_number(0, 3.0);
  EXPECT_EQ(f.get_integer(0), 3);
  f.set_number(0, 3.5);
  EXPECT_THAT(error_of([&] { f.get_integer(0); }), HasSubstr("(3.5) is not an int64 integer"));
}

TEST(HostArray, ReshapedSharesTheBuffer) {
  HostArray a({2, 6}, DType::int32);
  HostArray b = a.reshaped({3, 4});
  EXPECT_EQ(b.shape(), (Shape{3, 4}));
  EXPECT_EQ(b.data(), a.data());
  b.set_integer(5, 42);
  EXPECT_EQ(a.get_integer(5), 42);
  EXPECT_EQ(error_of([&] { a.reshaped({5}); }),
            "reshape: cannot reshape an array of shape (2, 6) (size 12) into shape (5,) (size 5)");
}

TEST(HostArray, AstypeConvertsLikeNumpyButNeverWraps) {
  HostArray a = doubles({-1.7, 2.9, 0.0, 255.0});
  HostArray i = astype(a, DType::int32);
  EXPECT_EQ(i.dtype(), DType::int32);
  EXPECT_EQ(i.as<std::int32_t>()[0], -1);
  EXPECT_EQ(i.as<std::int32_t>()[1], 2);
  EXPECT_EQ(i.as<std::int32_t>()[3], 255);
  HostArray b = astype(a, DType::boolean);
  EXPECT_TRUE(b.as<bool>()[0]);
  EXPECT_FALSE(b.as<bool>()[2]);
  HostArray back = astype(b, DType::float32);
  EXPECT_EQ(back.as<float>()[1], 1.0f);
  HostArray copy = astype(a, DType::float64);
  EXPECT_NE(copy.data(), a.data());
  EXPECT_EQ(copy.as<double>()[1], 2.9);
  EXPECT_EQ(error_of([&] {
              astype(doubles({1, 256}), DType::uint8);
            }),
            "astype: element 2 (256) is out of range for uint8 [0, 255]");
  EXPECT_THAT(error_of([&] { astype(doubles({INFINITY}), DType::int64); }),
              HasSubstr("element 1 (inf) is out of range for int64"));
  EXPECT_THAT(error_of([&] { astype(astype(doubles({-1}), DType::int8), DType::uint16); }),
              HasSubstr("element 1 (-1) is out of range for uint16"));
  HostArray big = astype(doubles({1e39}), DType::float32);
  EXPECT_TRUE(std::isinf(big.as<float>()[0]));  // float64 -> float32 overflows to inf, as in numpy
}

TEST(HostArray, SumsAreExactOrCompensated) {
  EXPECT_EQ(sum_float(doubles({1e16, 1.0, -1e16})), 1.0);
  HostArray tenths({1000000}, DType::float64);
  for (std::int64_t i = 0; i < tenths.size(); ++i) tenths.as<double>()[i] = 0.1;
  EXPECT_EQ(sum_float(tenths), 100000.0);
  EXPECT_TRUE(std::isinf(sum_float(doubles({1.0, INFINITY}))));
  EXPECT_TRUE(std::isnan(sum_float(doubles({INFINITY, -INFINITY}))));

  HostArray i64({3}, DType::int64);
  i64.set_integer(0, std::numeric_limits<std::int64_t>::max());
  i64.set_integer(1, 10);
  i64.set_integer(2, -20);
  EXPECT_EQ(sum_integer(i64), std::numeric_limits<std::int64_t>::max() - 10);
  i64.set_integer(2, 0);
  EXPECT_THAT(error_of([&] { sum_integer(i64); }), HasSubstr("does not fit in int64"));
  EXPECT_THAT(error_of([&] { sum_integer(doubles({1})); }), HasSubstr("not an integer dtype"));
  HostArray u8 = astype(doubles({200, 200, 200}), DType::uint8);
  EXPECT_EQ(sum_integer(u8), 600);
  EXPECT_EQ(sum_float(u8), 600.0);
  EXPECT_EQ(mean(u8), 200.0);
  EXPECT_EQ(mean(doubles({1, 2, 3, 4})), 2.5);
  EXPECT_THAT(error_of([] { mean(HostArray({0}, DType::float32)); }),
              HasSubstr("mean: the array is empty"));
}

TEST(HostArray, ArgminArgmax) {
  HostArray a = doubles({3, -1, 7, -1, 7});
  EXPECT_EQ(argmin(a), 1);
  EXPECT_EQ(argmax(a), 2);
  EXPECT_EQ(argmin(doubles({1, NAN, -5})), 1);
  EXPECT_EQ(argmax(doubles({1, 2, NAN})), 2);
  HostArray u = astype(doubles({5, 0, 9}), DType::uint16);
  EXPECT_EQ(argmin(u), 1);
  EXPECT_EQ(argmax(u), 2);
  EXPECT_EQ(error_of([] { argmax(HostArray({0}, DType::int8)); }), "max: the array is empty");
}

TEST(HostArray, Comparisons) {
  HostArray a = doubles({1, 2, 3});
  EXPECT_TRUE(array_equal(a, astype(a, DType::int8)));
  EXPECT_FALSE(array_equal(a, a.reshaped({3, 1})));
  EXPECT_FALSE(array_equal(a, doubles({1, 2, 3.5})));
  EXPECT_FALSE(array_equal(doubles({NAN}), doubles({NAN})));
  HostArray big({1}, DType::int64), near({1}, DType::int64);
  big.set_integer(0, (std::int64_t{1} << 53) + 1);
  near.set_integer(0, std::int64_t{1} << 53);
  EXPECT_FALSE(array_equal(big, near));
  EXPECT_FALSE(array_equal(big, astype(big, DType::float64)));  // 2^53 + 1 is no double

  EXPECT_TRUE(allclose(doubles({1, 100}), doubles({1 + 1e-6, 100 + 1e-3})));
  EXPECT_FALSE(allclose(doubles({1, 100}), doubles({1, 100.01})));
  EXPECT_TRUE(allclose(doubles({0}), doubles({1e-9})));
  EXPECT_FALSE(allclose(doubles({0}), doubles({1e-7})));
  EXPECT_FALSE(allclose(doubles({1e-7}), doubles({0}), 10.0, 0.0));  // rtol scales |b| only
  EXPECT_TRUE(allclose(doubles({0}), doubles({1e-7}), 10.0, 0.0));
  EXPECT_TRUE(allclose(doubles({INFINITY}), doubles({INFINITY})));
  EXPECT_FALSE(allclose(doubles({INFINITY}), doubles({-INFINITY})));
  EXPECT_FALSE(allclose(doubles({NAN}), doubles({NAN})));
  EXPECT_EQ(error_of([&] { allclose(a, doubles({1})); }), "allclose: shapes differ: (3,) and (1,)");

  EXPECT_EQ(max_abs_diff(a, doubles({1.5, 2, 0})), 3.0);
  EXPECT_EQ(max_abs_diff(a, a), 0.0);
  EXPECT_TRUE(std::isnan(max_abs_diff(doubles({NAN, 1}), doubles({0, 1}))));
  EXPECT_EQ(max_abs_diff(HostArray({0}, DType::int8), HostArray({0}, DType::float32)), 0.0);
  EXPECT_EQ(error_of([&] {
              max_abs_diff(a, a.reshaped({1, 3}));
            }),
            "max_abs_diff: shapes differ: (3,) and (1, 3)");
}

// A fresh path in the test's temporary directory.
std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("kiln_host_array_test_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

TEST(Image, PngRoundTrip) {
  for (std::int64_t c : {0, 1, 2, 3, 4}) {
    Shape shape = c ? Shape{5, 7, c} : Shape{5, 7};
    HostArray img(shape, DType::uint8);
    for (std::int64_t i = 0; i < img.size(); ++i) img.as<std::uint8_t>()[i] = (i * 53 + 11) % 256;
    std::string path = temp_path("rt.png");
    save_image(path, img);
    HostArray back = load_image(path);
    std::remove(path.c_str());
    EXPECT_EQ(back.dtype(), DType::uint8);
    EXPECT_EQ(back.shape(), c <= 1 ? Shape({5, 7}) : shape) << c;
    EXPECT_TRUE(array_equal(back, img.reshaped(back.shape()))) << c;
  }
}

TEST(Image, LoadsJpeg) {
  // A flat orange 16x8 JPEG written by stb: JPEG is lossy, but a flat color survives closely.
  std::uint8_t pixels[8][16][3];
  for (auto& row : pixels)
    for (auto& px : row) px[0] = 250, px[1] = 120, px[2] = 10;
  std::string path = temp_path("flat.jpg");
  ASSERT_TRUE(stbi_write_jpg(path.c_str(), 16, 8, 3, pixels, 95));
  HostArray img = load_image(path);
  std::remove(path.c_str());
  ASSERT_EQ(img.shape(), (Shape{8, 16, 3}));
  for (std::int64_t i = 0; i < img.size(); ++i) {
    double expected = i % 3 == 0 ? 250 : i % 3 == 1 ? 120 : 10;
    ASSERT_NEAR(img.get_number(i), expected, 4) << i;
  }
}

TEST(Image, ErrorsNameThePathAndReason) {
  EXPECT_EQ(error_of([] { load_image("/nonexistent/a.png"); }),
            "load_image: cannot open '/nonexistent/a.png': No such file or directory");
  std::string path = temp_path("junk.png");
  std::FILE* f = std::fopen(path.c_str(), "wb");
  std::fputs("not an image at all", f);
  std::fclose(f);
  EXPECT_THAT(error_of([&] { load_image(path); }),
              HasSubstr("load_image: cannot decode '" + path + "': "));
  std::remove(path.c_str());
  EXPECT_THAT(error_of([] {
                save_image("x.png", HostArray({2, 2}, DType::int32));
              }),
              HasSubstr("expected a uint8 array, got int32"));
  EXPECT_THAT(error_of([] {
                save_image("x.png", HostArray({2, 2, 5}, DType::uint8));
              }),
              HasSubstr("got (2, 2, 5)"));
  EXPECT_EQ(error_of([] {
              save_image("/nonexistent/x.png", HostArray({2, 2}, DType::uint8));
            }),
            "save_image: cannot open '/nonexistent/x.png': No such file or directory");
}

}  // namespace
}  // namespace kiln
