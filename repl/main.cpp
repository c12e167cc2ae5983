// kiln: runs a Lua script, a -e chunk, or the REPL (minimal driver; the REPL issue extends it).
#include <cstdio>
#include <cstring>

#include "repl/lua_host.h"

int main(int argc, char** argv) {
  kiln::lua::State state = kiln::lua::new_state();
  lua_State* L = state.get();
  if (argc >= 3 && std::strcmp(argv[1], "-e") == 0) {
    if (luaL_loadbuffer(L, argv[2], std::strlen(argv[2]), "=(command line)") != LUA_OK ||
        kiln::lua::docall(L, 0, 0) != LUA_OK) {
      kiln::lua::report(L, "kiln");
      return 1;
    }
    return 0;
  }
  if (argc >= 2) {
    if (luaL_loadfile(L, argv[1]) != LUA_OK || kiln::lua::docall(L, 0, 0) != LUA_OK) {
      kiln::lua::report(L, "kiln");
      return 1;
    }
    return 0;
  }
  std::fprintf(stderr, "usage: kiln [script.lua | -e code]\n");
  return 1;
}
