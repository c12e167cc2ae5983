// The array module's C++ face, for the other bindings (the cuda module takes and returns host
// arrays, reads shapes and dtypes, and prints device arrays like host ones).
#pragma once
#include <cstdint>
#include <string>

#include <lua.hpp>

#include "runtime/dtype.h"
#include "runtime/host_array.h"

namespace kiln::lua {

inline constexpr const char* kHostArrayMeta = "kiln.array";  // the metatable's registry name
// The registry field array.show calls when set: a Jupyter kernel's display function, which
// shows its argument in the notebook (repl/jupyter.cpp).
inline constexpr const char* kDisplayHook = "kiln.display";

// The host array at idx, or nullptr when the value there is not one. [-0, +0]
HostArray* test_host_array(lua_State* L, int idx);
// The host array at idx; a Lua argument error otherwise. [-0, +0, v]
HostArray& check_host_array(lua_State* L, int idx);
// Pushes a new userdata owning a; tells the collector about a's bytes. [-0, +1, m]
void push_host_array(lua_State* L, HostArray a);
// Pushes a's element i (0-based, flat) as a[i + 1] gives it: a number, boolean or table of
// lanes. [-0, +1, m]
void push_element(lua_State* L, const HostArray& a, std::int64_t i);

// A shape from a number (1-D) or a table of numbers: non-negative integers; a Lua argument error
// naming the bad dimension otherwise. [-0, +0, v]
// Lua errors longjmp past C++ destructors: raise them (opt_dtype, luaL_check*) before this
// returns its vector, and throw C++ exceptions (caught and re-raised at the binding's edge) after.
Shape check_shape(lua_State* L, int idx);
// The dtype named at idx (a long name or alias), def when nil or absent; a Lua argument error
// listing the valid names otherwise. [-0, +0, v]
DType opt_dtype(lua_State* L, int idx, DType def);
// The ranges of a:sub / d:sub from the arguments at idx..top: (first, last) integers, or one
// {first, last} table per leading dimension (Lua errors on anything else). [-0, +0]
std::vector<std::pair<std::int64_t, std::int64_t>> check_sub_ranges(lua_State* L, int idx, int ndim);
// Pushes a fresh table {d1, d2, ...}. [-0, +1, m]
void push_shape(lua_State* L, const Shape& s);

}  // namespace kiln::lua
