// kiln's Lua modules and the host that opens them.
#pragma once
#include <lua.hpp>

namespace kiln::lua {

// luaopen functions: each pushes its module table. [-0, +1]
int open_array(lua_State* L);  // "kiln.array", global array (lua_array.cpp)
int open_cuda(lua_State* L);   // "kiln.cuda", global cuda (lua_cuda.cpp)

// Opens the standard libraries, loads "kiln.array" and "kiln.cuda" into the globals array and
// cuda, and preloads "kiln.mpi" (repl/lua_mpi.h) for require. [-0, +0]
void open_kiln(lua_State* L);

}  // namespace kiln::lua
