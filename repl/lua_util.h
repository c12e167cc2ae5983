// Small helpers shared by kiln's Lua bindings.
#pragma once
#include <algorithm>
#include <exception>
#include <new>
#include <string>
#include <utility>

#include <lua.hpp>

#include "runtime/error.h"

namespace kiln::lua {

// A bad argument found after C++ objects came alive: protect raises it as luaL_argerror.
struct ArgError : Error {
  ArgError(int arg, const std::string& msg) : Error(msg), arg(arg) {}
  int arg;
};

// The one bridge from C++ exceptions to Lua errors. Runs f() (which returns its number of
// results); an exception becomes a Lua error carrying the Lua caller's position ("bad argument
// #n" for an ArgError), raised once the C++ frames have unwound. Lua errors raised inside f
// (luaL_check*) longjmp past f's frames: check Lua arguments before making objects that own
// resources, and throw after.
template <typename F>
int protect(lua_State* L, F&& f) {
  std::string msg;
  int arg = 0;
  try {
    return std::forward<F>(f)();
  } catch (const ArgError& e) {
    msg = e.what(), arg = e.arg;
  } catch (const std::bad_alloc&) {
    msg = "not enough memory";
  } catch (const std::exception& e) {
    msg = e.what();
  }
  lua_pushlstring(L, msg.data(), msg.size());
  std::string().swap(msg);  // lua_error's longjmp skips msg's destructor: free its buffer now
  if (arg > 0) return luaL_argerror(L, arg, lua_tostring(L, -1));
  luaL_where(L, 1);
  lua_insert(L, -2);
  lua_concat(L, 2);
  return lua_error(L);
}

// F as a lua_CFunction behind protect, for luaL_Reg tables.
template <lua_CFunction F>
int guarded(lua_State* L) {
  return protect(L, [L] { return F(L); });
}

// Creates a full userdata holding a T built from args, with metatable tname. [-0, +1]
template <typename T, typename... Args>
T* new_object(lua_State* L, const char* tname, Args&&... args) {
  void* mem = lua_newuserdatauv(L, sizeof(T), 1);
  T* obj = new (mem) T(std::forward<Args>(args)...);
  luaL_setmetatable(L, tname);
  return obj;
}

// __gc for a userdata made by new_object: runs T's destructor. [-0, +0]
template <typename T>
int destroy_object(lua_State* L) {
  static_cast<T*>(lua_touserdata(L, 1))->~T();
  return 0;
}

// Creates metatable tname with __gc for T and the methods: with an index function, __index is
// that function and the methods sit in __methods (where the REPL's completion finds them);
// without, __index and __methods are the methods table. Leaves the metatable on the stack.
// [-0, +1]
template <typename T>
void new_metatable(lua_State* L, const char* tname, const luaL_Reg* methods, lua_CFunction index) {
  luaL_newmetatable(L, tname);
  lua_pushcfunction(L, destroy_object<T>), lua_setfield(L, -2, "__gc");
  lua_newtable(L);
  if (methods) luaL_setfuncs(L, methods, 0);
  if (index) {
    lua_setfield(L, -2, "__methods");
    lua_pushcfunction(L, index);
  } else {
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, "__methods");
  }
  lua_setfield(L, -2, "__index");
}
// Tells the collector that a userdata holds bytes outside Lua's heap, so that dropped arrays
// in a loop are collected before they pile up: one incremental step per KiB allocated.
inline void account_bytes(lua_State* L, std::size_t bytes) {
  if (bytes >= 1024)
    lua_gc(L, LUA_GCSTEP, static_cast<int>(std::min<std::size_t>(bytes / 1024, 1 << 30)));
}

}  // namespace kiln::lua
