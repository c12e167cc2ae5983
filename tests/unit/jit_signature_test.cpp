#include "jit/signature.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "jit/kernel_decl.h"
#include "jit/textures.h"
#include "runtime/error.h"

namespace kiln::jit {
namespace {

TEST(JitClassifyParam, Scalars) {
  struct Case {
    const char* spelling;
    DType dtype;
  } cases[] = {
      {"float", DType::float32},    {"double", DType::float64},
      {"int", DType::int32},        {"unsigned int", DType::uint32},
      {"unsigned", DType::uint32},  {"unsigned long", DType::uint64},
      {"long", DType::int64},       {"long long", DType::int64},
      {"size_t", DType::uint64},    {"std::size_t", DType::uint64},
      {"signed char", DType::int8}, {"unsigned char", DType::uint8},
      {"short", DType::int16},      {"unsigned short", DType::uint16},
      {"bool", DType::boolean},     {"const int", DType::int32},
      {"int const", DType::int32},  {"const  unsigned   char", DType::uint8},
      {"int64_t", DType::int64},    {"std::uint32_t", DType::uint32},
  };
  for (const Case& c : cases) {
    ParamType p = classify_param(c.spelling);
    EXPECT_EQ(p.kind, ParamKind::scalar) << c.spelling;
    EXPECT_EQ(p.dtype, c.dtype) << c.spelling;
    EXPECT_EQ(p.spelling, c.spelling);
  }
}

TEST(JitClassifyParam, Pointers) {
  struct Case {
    const char* spelling;
    DType dtype;
    bool is_const;
  } cases[] = {
      {"float*", DType::float32, false},
      {"float const*", DType::float32, true},  // the demangler's spelling
      {"const float *", DType::float32, true},
      {"const float*", DType::float32, true},
      {"float* __restrict__", DType::float32, false},
      {"const float * __restrict__", DType::float32, true},
      {"const float * const", DType::float32, true},
      {"float const* const", DType::float32, true},
      {"float * const", DType::float32, false},  // a const pointer to writable floats
      {"unsigned char*", DType::uint8, false},
      {"unsigned char const*", DType::uint8, true},
      {"unsigned long*", DType::uint64, false},
      {"double*", DType::float64, false},
      {"bool*", DType::boolean, false},
      {"int *__restrict__", DType::int32, false},
      {"volatile int*", DType::int32, false},
  };
  for (const Case& c : cases) {
    ParamType p = classify_param(c.spelling);
    EXPECT_EQ(p.kind, ParamKind::pointer) << c.spelling;
    EXPECT_EQ(p.dtype, c.dtype) << c.spelling;
    EXPECT_EQ(p.is_const, c.is_const) << c.spelling;
  }
}

TEST(JitClassifyParam, Arrays) {
  ParamType p = classify_param("kiln::Array<float, 2>");
  EXPECT_EQ(p.kind, ParamKind::array);
  EXPECT_EQ(p.dtype, DType::float32);
  EXPECT_EQ(p.ndim, 2);
  EXPECT_FALSE(p.is_const);
  p = classify_param("kiln::Array<unsigned char const, 3>");
  EXPECT_EQ(p.kind, ParamKind::array);
  EXPECT_EQ(p.dtype, DType::uint8);
  EXPECT_EQ(p.ndim, 3);
  EXPECT_TRUE(p.is_const);
  p = classify_param("const kiln::Array<const double,1>");
  EXPECT_EQ(p.kind, ParamKind::array);
  EXPECT_EQ(p.dtype, DType::float64);
  EXPECT_EQ(p.ndim, 1);
  p = classify_param("Array<int, 4>");
  EXPECT_EQ(p.kind, ParamKind::array);
  EXPECT_EQ(p.dtype, DType::int32);
}

TEST(JitClassifyParam, Unsupported) {
  for (const char* s :
       {"float&", "const float&", "float const* const*", "Foo", "struct Foo", "kiln::Array<T, 2>",
        "kiln::Array<float, N>", "kiln::Array<float, 0>", "float***", "float* const*", "float[4]",
        "T*", "__half&", "float5", "void (*)(int)", ""}) {
    EXPECT_EQ(classify_param(s).kind, ParamKind::unsupported) << s;
  }
}

TEST(JitClassifyParam, SixteenBitFloats) {
  // As NVRTC's demangler and the cpu backend (which renames its own types) spell them.
  ParamType p = classify_param("__half const*");
  EXPECT_EQ(p.kind, ParamKind::pointer);
  EXPECT_EQ(p.dtype, DType::float16);
  EXPECT_TRUE(p.is_const);
  p = classify_param("__nv_bfloat16");
  EXPECT_EQ(p.kind, ParamKind::scalar);
  EXPECT_EQ(p.dtype, DType::bfloat16);
  p = classify_param("__half2*");
  EXPECT_EQ(p.kind, ParamKind::pointer);
  EXPECT_EQ(p.dtype, DType::half2);
}

TEST(JitClassifyParam, PointersToPointersTakeAddresses) {
  for (const char* s : {"Entry**", "float**", "void**", "const char**"}) {
    const ParamType p = classify_param(s);
    EXPECT_EQ(p.kind, ParamKind::pointer) << s;
    EXPECT_EQ(p.dtype, DType::uint64) << s;
  }
}

TEST(JitClassifyParam, Dim3AndUint3AsTheCpuBackendSpellsThem) {
  for (const char* s : {"dim3", "uint3", "kiln_cpu::uint3", "kiln_cpu::dim3"}) {
    const ParamType p = classify_param(s);
    EXPECT_EQ(p.kind, ParamKind::scalar) << s;
    EXPECT_EQ(p.dtype, DType::uint3) << s;
  }
  EXPECT_EQ(classify_param("kiln_cpu::uint3 const*").dtype, DType::uint3);
  EXPECT_EQ(classify_param("kiln_cpu::dim3").spelling, "dim3");  // (in messages)
}

TEST(JitClassifyParam, VectorTypes) {
  ParamType p = classify_param("float4 const*");
  EXPECT_EQ(p.kind, ParamKind::pointer);
  EXPECT_EQ(p.dtype, DType::float4);
  EXPECT_TRUE(p.is_const);
  p = classify_param("uchar4");
  EXPECT_EQ(p.kind, ParamKind::scalar);
  EXPECT_EQ(p.dtype, DType::uchar4);
}

TEST(JitArgPack, VectorsByValueAtTheirAlignment) {
  // (char, double2): the double2 at offset 16, its lanes from a Lua table.
  ArgPack pack;
  ArgValue c;
  c.kind = ArgValue::Kind::integer, c.integer = 7;
  pack.add("k", 1, "c", classify_param("char"), c);
  ArgValue v;
  v.kind = ArgValue::Kind::table;
  for (double x : {1.5, -2.5}) {
    ArgValue lane;
    lane.kind = ArgValue::Kind::number, lane.number = x;
    v.lanes.push_back(lane);
  }
  pack.add("k", 2, "v", classify_param("double2"), v);
  void** ptrs = pack.pointers();
  EXPECT_EQ(static_cast<char*>(ptrs[1]) - static_cast<char*>(ptrs[0]), 16);
  double lanes[2];
  std::memcpy(lanes, ptrs[1], sizeof lanes);
  EXPECT_EQ(lanes[0], 1.5);
  EXPECT_EQ(lanes[1], -2.5);
  v.lanes.pop_back();  // one lane short: refused, naming the parameter and the lanes
  try {
    pack.add("k", 2, "v", classify_param("double2"), v);
    FAIL() << "a table of 1 number passed as a double2";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("parameter 2 'v' (double2) expects a double2: a table {x, y}"),
              std::string::npos)
        << e.what();
  }
}

// The overload a call runs: by arity (defaults counted), then by how each argument fits, as
// C++ ranks literals; none, or several equally good, is an error listing them.
TEST(JitChooseOverload, ByArityThenArguments) {
  const std::vector<KernelDecl> put = find_kernels(R"(
__global__ void put(int* o, int v) {}
__global__ void put(int* o, double v) {}
__global__ void put(float* o, float v, int scale = 3) {}
__global__ void put(int* o, unsigned v, int a, int b) {}
__global__ void put(kiln::Array<float, 2> o) {}
)");
  ASSERT_EQ(put.size(), 5u);
  auto array = [](DType t, int ndim = 1) {
    ArgValue a;
    a.kind = ArgValue::Kind::device_array, a.dtype = t, a.ndim = ndim;
    return a;
  };
  auto integer = [](std::int64_t v) {
    ArgValue a;
    a.kind = ArgValue::Kind::integer, a.integer = v, a.number = double(v);
    return a;
  };
  auto number = [](double v) {
    ArgValue a;
    a.kind = ArgValue::Kind::number, a.number = v;
    return a;
  };
  const ArgValue ints = array(DType::int32), floats = array(DType::float32);
  EXPECT_EQ(choose_overload(put, {ints, integer(5)}), 0u);
  EXPECT_EQ(choose_overload(put, {ints, number(5)}), 1u);
  EXPECT_EQ(choose_overload(put, {ints, number(5.5)}), 1u);
  EXPECT_EQ(choose_overload(put, {floats, integer(5)}), 2u);  // (its default fills the third)
  EXPECT_EQ(choose_overload(put, {floats, number(5), integer(2)}), 2u);
  EXPECT_EQ(choose_overload(put, {ints, integer(1), integer(2), integer(3)}), 3u);
  EXPECT_EQ(choose_overload(put, {array(DType::float32, 2)}), 4u);
  try {
    choose_overload(put, {array(DType::float64), integer(1)});
    FAIL() << "no overload takes a float64 array";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no overload takes (a float64 device array, an integer "
                                         "(1)); its overloads are:\n  put(int* o, int v)\n"),
              std::string::npos)
        << e.what();
  }
  const std::vector<KernelDecl> c = find_kernels(
      "__global__ void c(int* o, unsigned n) {}\n__global__ void c(int* o, float n) {}");
  try {
    choose_overload(c, {ints, integer(1)});
    FAIL() << "unsigned and float are both conversions of an int";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("several overloads take"), std::string::npos) << e.what();
  }
  EXPECT_EQ(choose_overload(c, {ints, number(1.5)}), 1u);  // (1.5 is no unsigned)
}

TEST(JitDemangle, DemanglesAndPassesOthersThrough) {
  EXPECT_EQ(demangle("_Z4blurIfEvPT_i"), "void blur<float>(float*, int)");
  EXPECT_EQ(demangle("vec_add"), "vec_add");
  EXPECT_EQ(demangle(""), "");
  EXPECT_EQ(demangle("_Znot_valid"), "_Znot_valid");
}

TEST(JitParameterTypes, SplitsTheOutermostList) {
  using V = std::vector<std::string>;
  EXPECT_EQ(parameter_types("void blur<float>(float*, int)"), (V{"float*", "int"}));
  EXPECT_EQ(parameter_types("void (*)(float*, int)"), (V{"float*", "int"}));
  EXPECT_EQ(parameter_types("void (float const*, unsigned long)"),
            (V{"float const*", "unsigned long"}));
  EXPECT_EQ(parameter_types("(void)"), V{});
  EXPECT_EQ(parameter_types("void k()"), V{});
  EXPECT_EQ(parameter_types("void k<(int)3>(kiln::Array<float, 2>, float)"),
            (V{"kiln::Array<float, 2>", "float"}));
  EXPECT_EQ(parameter_types("void f(void (*)(int, int), int)"), (V{"void (*)(int, int)", "int"}));
  EXPECT_EQ(parameter_types("no parameters"), V{});
}

ArgValue device_array(DType t, void* data, Shape shape) {
  ArgValue v;
  v.kind = ArgValue::Kind::device_array;
  v.dtype = t;
  v.data = data;
  v.ndim = static_cast<int>(shape.size());
  v.shape = std::move(shape);
  return v;
}
ArgValue integer(std::int64_t i) {
  ArgValue v;
  v.kind = ArgValue::Kind::integer;
  v.integer = i;
  return v;
}
ArgValue number(double d) {
  ArgValue v;
  v.kind = ArgValue::Kind::number;
  v.number = d;
  return v;
}
ArgValue boolean(bool b) {
  ArgValue v;
  v.kind = ArgValue::Kind::boolean;
  v.boolean = b;
  return v;
}
ArgValue other(const char* lua_type) {
  ArgValue v;
  v.kind = ArgValue::Kind::other;
  v.lua_type = lua_type;
  return v;
}

// The value at pointer i of a pack, read as T.
template <typename T>
T read(ArgPack& pack, std::size_t i) {
  T v;
  std::memcpy(&v, pack.pointers()[i], sizeof v);
  return v;
}

TEST(JitArgPack, SixteenBitFloatsPassTheirBits) {
  // 0.1 as binary16 is 0x2e66, as bfloat16 0x3dcd; a __half2 takes a table of its two lanes.
  ArgPack pack;
  pack.add("k", 1, "a", classify_param("__half"), number(0.1));
  pack.add("k", 2, "b", classify_param("__nv_bfloat16"), number(0.1));
  ArgValue pair = other("table");
  pair.kind = ArgValue::Kind::table;
  pair.lanes = {number(1.0), integer(-2)};
  pack.add("k", 3, "c", classify_param("__half2"), pair);
  EXPECT_EQ(read<std::uint16_t>(pack, 0), 0x2e66);
  EXPECT_EQ(read<std::uint16_t>(pack, 1), 0x3dcd);
  EXPECT_EQ(read<std::uint32_t>(pack, 2), 0xc0003c00u);  // y = -2 high, x = 1 low
}

TEST(JitArgPack, LaysOutEachParameterAtItsAlignment) {
  ArgPack pack;
  int dummy[4];
  pack.add("k", 1, "flag", classify_param("bool"), boolean(true));
  pack.add("k", 2, "x", classify_param("float*"), device_array(DType::float32, dummy, {4}));
  pack.add("k", 3, "c", classify_param("unsigned char"), integer(200));
  pack.add("k", 4, "n", classify_param("int"), integer(-7));
  pack.add("k", 5, "s", classify_param("short"), number(-3.0));
  pack.add("k", 6, "img", classify_param("kiln::Array<float, 2>"),
           device_array(DType::float32, dummy, {3, 5}));
  pack.add("k", 7, "f", classify_param("float"), number(0.1));
  pack.add("k", 8, "d", classify_param("double"), integer(3));
  pack.add("k", 9, "u", classify_param("unsigned long"), number(1.8e19));
  ASSERT_EQ(pack.count(), 9u);
  void** p = pack.pointers();
  auto offset = [&](int i) {
    return static_cast<std::size_t>(static_cast<char*>(p[i]) - static_cast<char*>(p[0]));
  };
  EXPECT_EQ(offset(1), 8u);   // pointer: 8-aligned after a 1-byte bool
  EXPECT_EQ(offset(2), 16u);  // unsigned char
  EXPECT_EQ(offset(3), 20u);  // int: 4-aligned
  EXPECT_EQ(offset(4), 24u);  // short
  EXPECT_EQ(offset(5), 32u);  // kiln::Array<float, 2>: 8-aligned, 8 + 16 bytes
  EXPECT_EQ(offset(6), 56u);  // float after 24 bytes of array
  EXPECT_EQ(offset(7), 64u);  // double
  EXPECT_EQ(offset(8), 72u);

  EXPECT_EQ(read<bool>(pack, 0), true);
  EXPECT_EQ(read<void*>(pack, 1), static_cast<void*>(dummy));
  EXPECT_EQ(read<unsigned char>(pack, 2), 200);
  EXPECT_EQ(read<int>(pack, 3), -7);
  EXPECT_EQ(read<short>(pack, 4), -3);
  struct Array2 {
    void* data;
    long long shape[2];
  };
  static_assert(sizeof(Array2) == 24);
  Array2 a = read<Array2>(pack, 5);
  EXPECT_EQ(a.data, static_cast<void*>(dummy));
  EXPECT_EQ(a.shape[0], 3);
  EXPECT_EQ(a.shape[1], 5);
  EXPECT_EQ(read<float>(pack, 6), 0.1f);
  EXPECT_EQ(read<double>(pack, 7), 3.0);
  EXPECT_EQ(read<unsigned long>(pack, 8), 18000000000000000000ul);
}

TEST(JitArgPack, HostArraysPassTheirDataPointer) {
  ArgPack pack;
  double buf[2];
  ArgValue v = device_array(DType::float64, buf, {2});
  v.kind = ArgValue::Kind::host_array;
  pack.add("k", 1, "x", classify_param("const double*"), v);
  EXPECT_EQ(read<void*>(pack, 0), static_cast<void*>(buf));
}

TEST(JitArgPack, VoidPointersTakeAnyArray) {
  // GPU Gems' N-body `calculate_forces(void* devX, ...)`: the kernel casts the address.
  ParamType p = classify_param("void const*");
  EXPECT_EQ(p.kind, ParamKind::pointer);
  EXPECT_TRUE(p.untyped);
  EXPECT_TRUE(p.is_const);
  EXPECT_TRUE(classify_param("void*").untyped);
  EXPECT_FALSE(classify_param("void*").is_const);
  EXPECT_FALSE(classify_param("float*").untyped);
  ArgPack pack;
  double d[2];
  int i[3];
  pack.add("k", 1, "p", classify_param("void*"), device_array(DType::float64, d, {2}));
  pack.add("k", 2, "q", classify_param("const void*"), device_array(DType::int32, i, {3}));
  EXPECT_EQ(read<void*>(pack, 0), static_cast<void*>(d));
  EXPECT_EQ(read<void*>(pack, 1), static_cast<void*>(i));
}

// The message add() throws for this parameter and value; "" when it does not throw.
std::string error_of(const char* type, const ArgValue& v, const char* name = "x") {
  ArgPack pack;
  try {
    pack.add("scale", 1, name, classify_param(type), v);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(JitArgPack, ArrayErrors) {
  int d[1];

  EXPECT_EQ(error_of("float*", device_array(DType::int32, d, {1})),
            "kernel 'scale': parameter 1 'x' (float*) expects a float32 array (or cuda.null), got "
            "an int32 "
            "device array");
  ArgValue host = device_array(DType::float64, d, {1});
  host.kind = ArgValue::Kind::host_array;
  EXPECT_EQ(error_of("const int*", host),
            "kernel 'scale': parameter 1 'x' (const int*) expects an int32 array (or cuda.null), "
            "got a float64 "
            "host array");
  EXPECT_EQ(error_of("float*", integer(3)),
            "kernel 'scale': parameter 1 'x' (float*) expects a float32 array (or cuda.null), got "
            "an integer (3)");
  EXPECT_EQ(error_of("float*", other("string")),
            "kernel 'scale': parameter 1 'x' (float*) expects a float32 array (or cuda.null), got "
            "a string");
  EXPECT_EQ(error_of("void*", other("string")),
            "kernel 'scale': parameter 1 'x' (void*) expects an array of any dtype (or "
            "cuda.null), got a string");
  EXPECT_EQ(error_of("float*", other("nil"), ""),
            "kernel 'scale': parameter 1 (float*) expects a float32 array (or cuda.null), got nil");
  EXPECT_EQ(error_of("kiln::Array<float, 2>", device_array(DType::float32, d, {4})),
            "kernel 'scale': parameter 1 'x' (kiln::Array<float, 2>) expects a 2-d float32 "
            "array, got a 1-d float32 device array");
  EXPECT_EQ(error_of("kiln::Array<float, 2>", device_array(DType::uint8, d, {2, 2})),
            "kernel 'scale': parameter 1 'x' (kiln::Array<float, 2>) expects a 2-d float32 "
            "array, got a 2-d uint8 device array");
  EXPECT_EQ(error_of("float&", number(1)),
            "kernel 'scale': parameter 1 'x' (float&) has a type kiln cannot pass from Lua (it "
            "passes scalars, vectors, pointers to them, kiln::Array<T, N>, and structs and "
            "enumerations the kernel's source declares, by value or by pointer)");
  // A parameter refused for a reason kiln knows (Kernel::compile: a texture object, which the
  // compiler sees as an integer) says that reason, whatever the value.
  ArgPack pack;
  const ParamType texture{.spelling = "cudaTextureObject_t", .refusal = texture_object_hint()};
  try {
    pack.add("sample", 1, "tex", texture, integer(0));
    ADD_FAILURE() << "a texture object parameter took an integer";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "kernel 'sample': parameter 1 'tex' (cudaTextureObject_t): " + texture_object_hint());
  }
}

TEST(JitArgPack, ScalarConversions) {
  int d[1];
  // Accepted.
  EXPECT_EQ(error_of("int", number(4.0)), "");
  EXPECT_EQ(error_of("unsigned int", integer(4294967295)), "");
  EXPECT_EQ(error_of("signed char", integer(-128)), "");
  EXPECT_EQ(error_of("long", integer(INT64_MIN)), "");
  EXPECT_EQ(error_of("float", integer(16777217)), "");  // narrowing to float is fine
  EXPECT_EQ(error_of("float", number(1e300)), "");
  EXPECT_EQ(error_of("bool", boolean(false)), "");
  // (a 64-bit unsigned value past 2^63 - 1 as Lua has it: the negative integer of its bits)
  EXPECT_EQ(error_of("unsigned long long", integer(-1)), "");
  EXPECT_EQ(error_of("size_t", integer(INT64_MIN)), "");
  // Rejected.
  EXPECT_EQ(error_of("int", number(2.5)),
            "kernel 'scale': parameter 1 'x' (int) expects an integer, got a number (2.5)");
  EXPECT_EQ(error_of("unsigned int", integer(-1)),
            "kernel 'scale': parameter 1 'x' (unsigned int) expects an integer in 0..4294967295, "
            "got an integer (-1)");
  EXPECT_EQ(error_of("unsigned char", integer(300)),
            "kernel 'scale': parameter 1 'x' (unsigned char) expects an integer in 0..255, got "
            "an integer (300)");
  EXPECT_EQ(error_of("short", number(40000.0)),
            "kernel 'scale': parameter 1 'x' (short) expects an integer in -32768..32767, got a "
            "number (40000)");
  EXPECT_EQ(error_of("long", number(1e19)),
            "kernel 'scale': parameter 1 'x' (long) expects an integer in "
            "-9223372036854775808..9223372036854775807, got a number (1e+19)");
  EXPECT_NE(error_of("size_t", number(std::numeric_limits<double>::infinity())), "");
  EXPECT_NE(error_of("int", number(std::nan(""))), "");
  EXPECT_EQ(error_of("float", boolean(true)),
            "kernel 'scale': parameter 1 'x' (float) expects a number, got a boolean (true)");
  EXPECT_EQ(error_of("int", other("table")),
            "kernel 'scale': parameter 1 'x' (int) expects an integer, got a table");
  EXPECT_EQ(error_of("float", device_array(DType::float32, d, {1})),
            "kernel 'scale': parameter 1 'x' (float) expects a number, got a float32 device array");
  EXPECT_EQ(error_of("bool", integer(1)),
            "kernel 'scale': parameter 1 'x' (bool) expects a boolean (true or false; numbers "
            "are not converted), got an integer (1)");
}

// Deduction: the name expression for kernel source and arguments, or "!" + why.
std::string deduce(const char* source, const std::vector<ArgValue>& args) {
  std::vector<KernelDecl> ks = find_kernels(source);
  EXPECT_EQ(ks.size(), 1u);
  std::string why;
  std::optional<std::string> name = deduce_name_expression(ks.at(0), args, &why);
  return name ? *name : "!" + why;
}

TEST(JitDeduce, PlainAndExternCKernelsKeepTheirName) {
  int d[1];
  EXPECT_EQ(deduce("__global__ void vec_add(float* a, int n) {}",
                   {device_array(DType::float32, d, {1}), integer(1)}),
            "vec_add");
  EXPECT_EQ(
      deduce("extern \"C\" __global__ void raw(float* a) {}", {device_array(DType::int32, d, {1})}),
      "raw");
}

TEST(JitDeduce, DeducesElementTypesForEveryDType) {
  int d[1];
  const char* src = "template <typename T> __global__ void scale(T* x, T f, int n) {}";
  for (DType t : kAllDTypes)
    EXPECT_EQ(deduce(src, {device_array(t, d, {1}), number(2), integer(1)}),
              "scale<" + std::string(dtype_info(t).cpp) + ">");
  for (const char* s : {"template <typename T> __global__ void scale(const T* x) {}",
                        "template <typename T> __global__ void scale(T const* x) {}",
                        "template <typename T> __global__ void scale(T* __restrict__ x) {}",
                        "template <typename T> __global__ void scale(const T* __restrict__ x) {}"})
    EXPECT_EQ(deduce(s, {device_array(DType::uint8, d, {1})}), "scale<unsigned char>") << s;
}

TEST(JitDeduce, ArraysDeduceTypeAndRank) {
  int d[1];
  EXPECT_EQ(deduce("template <typename T, int N> __global__ void fill(kiln::Array<T, N> a, T v) {}",
                   {device_array(DType::float64, d, {2, 3, 4}), number(1)}),
            "fill<double, 3>");
  EXPECT_EQ(deduce("template <typename T> __global__ void f(kiln::Array<const T, 2> a, T* out) {}",
                   {device_array(DType::int16, d, {2, 3}), device_array(DType::int16, d, {6})}),
            "f<short>");
}

TEST(JitDeduce, DefaultsFillTheRest) {
  int d[1];
  const char* src =
      "template <typename T, int TPB = 256> __global__ void reduce(const T* in, T* out, int n) {}";
  EXPECT_EQ(deduce(src, {device_array(DType::float32, d, {8}), device_array(DType::float32, d, {1}),
                         integer(8)}),
            "reduce<float>");
  // A defaulted parameter before a deduced one is given explicitly.
  EXPECT_EQ(deduce("template <int B = 4, typename T> __global__ void g(T* x) {}",
                   {device_array(DType::int32, d, {1})}),
            "g<4, int>");
  EXPECT_EQ(deduce("template <typename T = float> __global__ void h(int n) {}", {integer(1)}),
            "h<>");
}

TEST(JitDeduce, Failures) {
  int d[1];
  EXPECT_EQ(deduce("template <typename T, int TPB> __global__ void reduce(const T* in, T* out) {}",
                   {device_array(DType::float32, d, {8}), device_array(DType::float32, d, {1})}),
            "!cannot deduce template parameter 'TPB' of kernel 'reduce'; give it explicitly: "
            "opts.name = \"reduce<float, 256>\"");
  EXPECT_EQ(deduce("template <typename T> __global__ void scale(T* x, T* y) {}",
                   {device_array(DType::float32, d, {8}), device_array(DType::int32, d, {8})}),
            "!conflicting deductions for template parameter 'T' of kernel 'scale': float from "
            "parameter 1 'x' and int from parameter 2 'y'");
  // Scalars do not deduce (a Lua 2 would make T int, a surprise): the user names T.
  EXPECT_EQ(deduce("template <typename T> __global__ void s(T v) {}", {integer(2)}),
            "!cannot deduce template parameter 'T' of kernel 's'; give it explicitly: opts.name "
            "= \"s<float>\"");
}

}  // namespace
}  // namespace kiln::jit
