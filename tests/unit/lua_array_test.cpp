#include "repl/lua_array.h"

#include <cstdint>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "repl/lua_host.h"
#include "runtime/array_format.h"

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
              HasSubstr("aliases: f32 f64 i8 u8 i16 u16 i32 u32 i64 u64 f16 bf16)"));
  EXPECT_THAT(run(L, "sd(3, 4)"), HasSubstr("dtype name or {dtype = ...} expected, got number"));
}

TEST(LuaArray, ErrorsLeaveTheStateUsable) {
  State state = new_state();
  lua_State* L = state.get();
  EXPECT_THAT(run(L, "array.zeros(2^57)"), HasSubstr("array: cannot allocate"));
  EXPECT_THAT(run(L, "local a = array.zeros(10); return a[12]"),
              HasSubstr("index 12 out of range for array of size 10"));
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
