#include "repl/lua_array.h"

#include <cstdint>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "repl/lua_host.h"

namespace kiln::lua {
namespace {

using ::testing::HasSubstr;

// Runs chunk in L; returns "" on success, else the error message.
std::string run(lua_State* L, const std::string& chunk) {
  if (luaL_loadstring(L, chunk.c_str()) != LUA_OK || lua_pcall(L, 0, 0, 0) != LUA_OK) {
    std::string msg = lua_tostring(L, -1);
    lua_pop(L, 1);
    return msg;
  }
  return "";
}

TEST(Xoshiro256, MatchesTheReferenceImplementation) {
  // Outputs of Vigna's xoshiro256starstar.c from the state {1, 2, 3, 4}.
  Xoshiro256 g = Xoshiro256::from_state(1, 2, 3, 4);
  EXPECT_EQ(g.next(), 11520u);
  EXPECT_EQ(g.next(), 0u);
  EXPECT_EQ(g.next(), 1509978240u);
  EXPECT_EQ(g.next(), 1215971899390074240u);
}

TEST(Xoshiro256, SeedsThroughSplitmix64) {
  std::uint64_t state = 0;  // splitmix64's published outputs from 0
  EXPECT_EQ(splitmix64(state), 0xe220a8397b1dcdafu);
  EXPECT_EQ(splitmix64(state), 0x6e789e6aa1b965f4u);
  EXPECT_EQ(splitmix64(state), 0x06c45d188009454fu);
  EXPECT_EQ(splitmix64(state), 0xf88bb8a8724c81ecu);
  Xoshiro256 seeded(0);
  Xoshiro256 by_hand = Xoshiro256::from_state(0xe220a8397b1dcdafu, 0x6e789e6aa1b965f4u,
                                              0x06c45d188009454fu, 0xf88bb8a8724c81ecu);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(seeded.next(), by_hand.next());
}

TEST(Xoshiro256, BoundedIsInRangeAndUniform) {
  Xoshiro256 g(7);
  int counts[6] = {};
  for (int i = 0; i < 60000; ++i) {
    std::uint64_t v = g.bounded(6);
    ASSERT_LT(v, 6u);
    ++counts[v];
  }
  for (int c : counts) EXPECT_NEAR(c, 10000, 400);
  // A range just above 2^63 rejects about half the raw draws; results stay below it.
  std::uint64_t range = (std::uint64_t{1} << 63) + 12345;
  for (int i = 0; i < 1000; ++i) ASSERT_LT(g.bounded(range), range);
  EXPECT_EQ(g.bounded(1), 0u);
  for (int i = 0; i < 1000; ++i) {
    double u = g.uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
  }
}

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

TEST(LuaArray, PushTestCheck) {
  State state = new_state();
  lua_State* L = state.get();
  HostArray a({2, 3}, DType::int16);
  a.set_integer(4, 9);
  push_host_array(L, a);
  HostArray* p = test_host_array(L, -1);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->data(), a.data());  // the userdata holds a handle to the same buffer
  EXPECT_EQ(&check_host_array(L, -1), p);
  lua_setglobal(L, "a");
  EXPECT_EQ(run(L, "assert(a.dtype == 'int16' and a.shape[2] == 3 and a[5] == 9)"), "");
  lua_pushinteger(L, 3);
  EXPECT_EQ(test_host_array(L, -1), nullptr);
  lua_newuserdatauv(L, 8, 0);
  EXPECT_EQ(test_host_array(L, -1), nullptr);
  lua_pop(L, 2);
  push_shape(L, {4, 5});
  lua_geti(L, -1, 2);
  EXPECT_EQ(lua_tointeger(L, -1), 5);
  lua_pop(L, 2);
}

// check_shape and opt_dtype as another binding uses them: a C function calling them.
int shape_and_dtype(lua_State* L) {
  DType t = opt_dtype(L, 2, DType::float32);  // Lua errors first: they would skip ~Shape
  Shape s = check_shape(L, 1);
  push_shape(L, s);
  lua_pushstring(L, dtype_info(t).name.data());
  return 2;
}

TEST(LuaArray, CheckShapeAndDtype) {
  State state = new_state();
  lua_State* L = state.get();
  lua_register(L, "sd", shape_and_dtype);
  EXPECT_EQ(run(L, "local s, t = sd(5); assert(#s == 1 and s[1] == 5 and t == 'float32')"), "");
  EXPECT_EQ(run(L, "local s, t = sd({2, 3.0}, 'u8'); assert(s[2] == 3 and t == 'uint8')"), "");
  EXPECT_EQ(run(L, "local s = sd({}); assert(#s == 0)"), "");
  EXPECT_THAT(run(L, "sd({2, -1})"),
              HasSubstr("bad argument #1 to 'sd' (shape: dimension 2 is -1, must be >= 0)"));
  EXPECT_THAT(run(L, "sd(2.5)"), HasSubstr("dimension 1 is 2.5, not an integer"));
  EXPECT_THAT(run(L, "sd('x')"),
              HasSubstr("shape (a number or a table of numbers) expected, got string"));
  EXPECT_THAT(
      run(L, "sd(3, 'half')"),
      HasSubstr("bad argument #2 to 'sd' (unknown dtype 'half' (valid: float32 float64 int8"));
  EXPECT_THAT(run(L, "sd(3, 'half')"),
              HasSubstr("aliases: f32 f64 i8 u8 i16 u16 i32 u32 i64 u64)"));
  EXPECT_THAT(run(L, "sd(3, 4)"), HasSubstr("dtype name expected, got number"));
}

TEST(LuaArray, ErrorsLeaveTheStateUsable) {
  State state = new_state();
  lua_State* L = state.get();
  EXPECT_THAT(run(L, "array.zeros(2^57)"), HasSubstr("array: cannot allocate"));
  EXPECT_THAT(run(L, "local a = array.zeros(10); return a[11]"),
              HasSubstr("index 11 out of range for array of size 10"));
  EXPECT_EQ(run(L, "assert(array.arange(4):sum() == 6.0)"), "");
}

TEST(LuaArray, GeneratorIsPerState) {
  // Draws in one state do not advance another's stream.
  State one = new_state(), two = new_state(), ref = new_state();
  ASSERT_EQ(run(one.get(), "array.random.seed(5); x1 = array.random.uniform(1)[1]"), "");
  ASSERT_EQ(run(two.get(), "array.random.seed(5); array.random.uniform(3)"), "");
  ASSERT_EQ(run(one.get(), "x2 = array.random.uniform(1)[1]"), "");
  ASSERT_EQ(run(ref.get(), "array.random.seed(5); r = array.random.uniform(2)"), "");
  lua_State* L = one.get();
  lua_getglobal(L, "x1");
  lua_getglobal(L, "x2");
  lua_State* R = ref.get();
  ASSERT_EQ(run(R, "r1, r2 = r[1], r[2]"), "");
  lua_getglobal(R, "r1");
  lua_getglobal(R, "r2");
  EXPECT_EQ(lua_tonumber(L, -2), lua_tonumber(R, -2));
  EXPECT_EQ(lua_tonumber(L, -1), lua_tonumber(R, -1));
}

}  // namespace
}  // namespace kiln::lua
