#include "repl/lua_host.h"

#include <cstdio>

#include "repl/modules.h"

namespace kiln::lua {
namespace {

// Message handler: appends a traceback to string messages; converts others with __tostring.
int msghandler(lua_State* L) {
  const char* msg = lua_tostring(L, 1);
  if (msg == nullptr) {
    if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) return 1;
    msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
  }
  luaL_traceback(L, L, msg, 1);
  return 1;
}

}  // namespace

void open_kiln(lua_State* L) {
  luaL_openlibs(L);
  luaL_requiref(L, "kiln.array", open_array, 0);
  lua_setglobal(L, "array");
  luaL_requiref(L, "kiln.cuda", open_cuda, 0);
  lua_setglobal(L, "cuda");
}

State new_state() {
  State L(luaL_newstate());
  if (!L) throw std::bad_alloc();
  open_kiln(L.get());
  return L;
}

int docall(lua_State* L, int narg, int nres) {
  int base = lua_gettop(L) - narg;
  lua_pushcfunction(L, msghandler);
  lua_insert(L, base);
  int status = lua_pcall(L, narg, nres, base);
  lua_remove(L, base);
  return status;
}

void report(lua_State* L, const char* progname) {
  const char* msg = lua_tostring(L, -1);
  std::fprintf(stderr, "%s: %s\n", progname, msg ? msg : "(error object is not a string)");
  std::fflush(stderr);
  lua_pop(L, 1);
}

}  // namespace kiln::lua
