// The Lua host: a Lua state with kiln opened, and the lua.c-style helpers that run chunks with
// a traceback and report errors.
#pragma once
#include <memory>
#include <string>

#include <lua.hpp>

namespace kiln::lua {

// A lua_State that closes itself.
struct StateCloser {
  void operator()(lua_State* L) const { lua_close(L); }
};
using State = std::unique_ptr<lua_State, StateCloser>;

// A new state with the standard libraries and kiln's modules opened.
State new_state();

// Calls the function below narg arguments with a traceback handler (lua.c's docall).
// [-(narg+1), +(nres|1)]; returns the lua_pcall status.
int docall(lua_State* L, int narg, int nres);

// Prints the error message on top of the stack to stderr, prefixed with progname, and pops it.
void report(lua_State* L, const char* progname);

}  // namespace kiln::lua
