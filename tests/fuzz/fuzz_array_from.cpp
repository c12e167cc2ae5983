// libFuzzer target: array.from on a Lua value built from the input. The input is a Lua
// expression (nested table constructors, numbers, strings, booleans); it is loaded as text in an
// empty environment with an instruction limit, and whatever it yields goes to array.from with
// an optional dtype. array.from must return an array or raise a Lua error, never crash.
#include <cstddef>
#include <cstdint>
#include <string>

#include <lua.hpp>

#include "repl/modules.h"

namespace {

// Stops runaway expressions: a Lua error after a million instructions.
void instruction_limit(lua_State* L, lua_Debug*) { luaL_error(L, "instruction limit"); }

// Loads "return <input>" and calls array.from on its value. [-0, +0]
int run(lua_State* L) {
  const char* dtype = static_cast<const char*>(lua_touserdata(L, 1));
  std::string* chunk = static_cast<std::string*>(lua_touserdata(L, 2));
  luaL_requiref(L, "kiln.array", kiln::lua::open_array, 0);  // the module table
  lua_getfield(L, -1, "from");
  if (luaL_loadbufferx(L, chunk->data(), chunk->size(), "=fuzz", "t") != LUA_OK) return 0;
  lua_newtable(L);  // an empty environment: the expression can call nothing
  lua_setupvalue(L, -2, 1);
  lua_sethook(L, instruction_limit, LUA_MASKCOUNT, 1000000);
  lua_call(L, 0, 1);
  lua_sethook(L, nullptr, 0, 0);
  if (dtype) lua_pushstring(L, dtype); else lua_pushnil(L);
  lua_call(L, 2, 1);
  return 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const char* const dtypes[] = {nullptr, "float32", "int8", "uint64", "bool", "f16"};
  const char* dtype = size ? dtypes[data[0] % 6] : nullptr;
  std::string chunk = "return " + std::string(reinterpret_cast<const char*>(data) + (size ? 1 : 0),
                                              size ? size - 1 : 0);
  lua_State* L = luaL_newstate();
  luaL_openlibs(L);
  lua_pushcfunction(L, run);
  lua_pushlightuserdata(L, const_cast<char*>(dtype));
  lua_pushlightuserdata(L, &chunk);
  (void)lua_pcall(L, 2, 0, 0);  // a Lua error is a fine answer
  lua_close(L);
  return 0;
}
