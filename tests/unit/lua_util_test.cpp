// repl/lua_util's error bridge: every C++ exception a binding throws becomes a Lua error with the
// caller's position (or "bad argument #n" for an ArgError), and the state stays usable.
#include "repl/lua_util.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <new>
#include <stdexcept>
#include <string>

namespace kiln::lua {
namespace {

using ::testing::HasSubstr;

int throws_error(lua_State*) {
  throw Error("the kernel broke");
}
int throws_arg_error(lua_State*) {
  throw ArgError(2, "shape must be positive");
}
int throws_bad_alloc(lua_State*) {
  throw std::bad_alloc();
}
int throws_other(lua_State*) {
  throw std::out_of_range("index 9");
}
int returns_two(lua_State* L) {
  lua_pushinteger(L, 1), lua_pushinteger(L, 2);
  return 2;
}

// Runs the Lua chunk with the functions above as globals; returns its error or its result.
std::string run(const char* chunk) {
  lua_State* L = luaL_newstate();
  luaL_openlibs(L);
  lua_register(L, "throws_error", guarded<throws_error>);
  lua_register(L, "throws_arg_error", guarded<throws_arg_error>);
  lua_register(L, "throws_bad_alloc", guarded<throws_bad_alloc>);
  lua_register(L, "throws_other", guarded<throws_other>);
  lua_register(L, "returns_two", guarded<returns_two>);
  std::string out;
  if (luaL_loadstring(L, chunk) != LUA_OK || lua_pcall(L, 0, 1, 0) != LUA_OK)
    out = std::string("error: ") + lua_tostring(L, -1);
  else
    out = luaL_tolstring(L, -1, nullptr);
  lua_close(L);
  return out;
}

TEST(LuaProtect, ExceptionsBecomeLuaErrorsWithThePosition) {
  EXPECT_EQ(run("\nthrows_error()"), "error: [string \"...\"]:2: the kernel broke");
  EXPECT_EQ(run("throws_other()"), "error: [string \"throws_other()\"]:1: index 9");
  EXPECT_THAT(run("throws_bad_alloc()"), HasSubstr(":1: not enough memory"));
  EXPECT_THAT(run("throws_arg_error(1, 2)"),
              HasSubstr("bad argument #2 to 'throws_arg_error' (shape must be positive)"));
}

TEST(LuaProtect, ResultsPassThroughAndErrorsAreCatchable) {
  EXPECT_EQ(run("local a, b = returns_two(); return a + b"), "3");
  EXPECT_EQ(run("local ok, e = pcall(throws_error); return tostring(ok) .. ' ' .. e"),
            "false the kernel broke");
}

}  // namespace
}  // namespace kiln::lua
