// The array module: host arrays as Lua userdata (see shared/design/lua-api.md and docs/arrays.md).
//
// Lua raises errors with longjmp, which skips C++ destructors. So the C functions here raise Lua
// errors only while no C++ object with a destructor is alive in their frame; past that point
// they throw C++ exceptions, which `guarded` (repl/lua_util.h) turns into Lua errors once the
// frames unwound.
#include "repl/lua_array.h"

#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <new>
#include <string>
#include <type_traits>
#include <vector>

#include "repl/lua_util.h"
#include "repl/modules.h"
#include "runtime/array_format.h"
#include "runtime/array_math.h"
#include "runtime/error.h"
#include "runtime/image.h"
#include "runtime/npy.h"
#include "runtime/random.h"

namespace kiln::lua {
namespace {

constexpr int kMaxDims = 32;

const char* dtype_name(DType t) {
  return dtype_info(t).name.data();
}

// --- values <-> elements ------------------------------------------------------------------------

// The names of a vector's lanes, as CUDA's vector types call them.
constexpr const char* kLaneNames[] = {"x", "y", "z", "w"};

}  // namespace

// Pushes element i (0-based flat): a table of lanes for vector dtypes, an integer for integer
// dtypes (a uint64 past 2^63 - 1 as the integer of its bits, negative: Lua's own reading of
// 0xFFFFFFFFFFFFFFFF, exact where a float lost the low bits of a hash), a float for float
// dtypes, a boolean for bool.
void push_element(lua_State* L, const HostArray& a, std::int64_t i) {
  if (is_vector(a.dtype())) {  // a table {x =, y =, z =, w =}
    const int lanes = dtype_info(a.dtype()).lanes;
    const HostArray lane_view = a.viewed(dtype_info(a.dtype()).base);
    lua_createtable(L, 0, lanes);
    for (int k = 0; k < lanes; ++k) {
      push_element(L, lane_view, i * lanes + k);
      lua_setfield(L, -2, kLaneNames[k]);
    }
    return;
  }
  switch (a.dtype()) {
    case DType::float32:
      lua_pushnumber(L, a.as<float>()[i]);
      return;
    case DType::float64:
      lua_pushnumber(L, a.as<double>()[i]);
      return;
    case DType::float16:
    case DType::bfloat16:
      lua_pushnumber(L, a.get_number(i));
      return;
    case DType::boolean:
      lua_pushboolean(L, a.as<bool>()[i]);
      return;
    case DType::uint64:
      lua_pushinteger(L, static_cast<lua_Integer>(a.as<std::uint64_t>()[i]));
      return;
    default:
      lua_pushinteger(L, a.get_integer(i));
      return;
  }
}

namespace {

// Stores the Lua value at idx into element i; throws kiln::Error when it is not a number (or a
// boolean, for bool arrays), not integral for an integer dtype, or out of the dtype's range.
void set_element(lua_State* L, HostArray& a, std::int64_t i, int idx) {
  int type = lua_type(L, idx);
  if (is_vector(a.dtype())) {  // from {x =, y =, ...}, {1, 2, ...}, or one number for every lane
    const int lanes = dtype_info(a.dtype()).lanes;
    HostArray lane_view = a.viewed(dtype_info(a.dtype()).base);
    if (type == LUA_TNUMBER) {
      for (int k = 0; k < lanes; ++k) set_element(L, lane_view, i * lanes + k, idx);
      return;
    }
    if (type != LUA_TTABLE)
      throw Error(std::string("expected a table {x, y, ...} or a number for a ") +
                  dtype_name(a.dtype()) + " element, got " + luaL_typename(L, idx));
    idx = lua_absindex(L, idx);
    for (int k = 0; k < lanes; ++k) {
      if (lua_getfield(L, idx, kLaneNames[k]) == LUA_TNIL) {
        lua_pop(L, 1);
        if (lua_geti(L, idx, k + 1) == LUA_TNIL)
          throw Error(std::string("a ") + dtype_name(a.dtype()) + " element needs lane " +
                      kLaneNames[k] + " (or [" + std::to_string(k + 1) + "])");
      }
      set_element(L, lane_view, i * lanes + k, -1);
      lua_pop(L, 1);
    }
    return;
  }
  if (type == LUA_TBOOLEAN && a.dtype() == DType::boolean) {
    a.set_integer(i, lua_toboolean(L, idx));
  } else if (type != LUA_TNUMBER) {
    throw Error(std::string("expected a number") +
                (a.dtype() == DType::boolean ? " or boolean" : "") + " for a " +
                dtype_name(a.dtype()) + " element, got " + luaL_typename(L, idx));
  } else if (lua_isinteger(L, idx)) {
    a.set_integer(i, lua_tointeger(L, idx));
  } else {
    a.set_number(i, lua_tonumber(L, idx));
  }
}

// Sets every element to the Lua value at idx (converted once, then copied bytewise).
void fill_with(lua_State* L, HostArray& a, int idx) {
  if (a.size() == 0) return;
  set_element(L, a, 0, idx);
  auto* p = static_cast<unsigned char*>(a.data());
  std::size_t done = dtype_info(a.dtype()).size, total = a.nbytes();
  for (; done < total; done *= 2) std::memcpy(p + done, p, std::min(done, total - done));
}

// --- the userdata ------------------------------------------------------------------------------

// __gc: runs the destructor, dropping this handle's share of the buffer. [-0, +0]
int array_gc(lua_State* L) {
  auto* a = static_cast<HostArray*>(luaL_testudata(L, 1, kHostArrayMeta));
  if (a) a->~HostArray();
  return 0;
}

// A flat 1-based Lua index at idx -> 0-based, bounds-checked (Lua errors; nothing to unwind).
std::int64_t check_flat_index(lua_State* L, const HostArray& a, int idx) {
  int ok = 0;
  lua_Integer i = lua_tointegerx(L, idx, &ok);
  if (!ok) {
    if (lua_type(L, idx) == LUA_TNUMBER)
      luaL_error(L, "array index must be an integer, got %s", lua_tostring(L, idx));
    luaL_error(L, "array index must be an integer, got a %s", luaL_typename(L, idx));
  }
  if (i == 0 && a.size() > 0)
    luaL_error(L, "index 0 out of range: array indices start at 1 (a[1] .. a[%I])",
               static_cast<LUA_INTEGER>(a.size()));
  if (i < 1 || i > a.size())
    luaL_error(L, "index %I out of range for array of size %I", static_cast<LUA_INTEGER>(i),
               static_cast<LUA_INTEGER>(a.size()));
  return i - 1;
}

// __index: a[i], a.shape, a.dtype, a.size, a.ndim, and the methods (upvalue 1). [-0, +1]
int array_index(lua_State* L) {
  HostArray& a = check_host_array(L, 1);
  if (lua_type(L, 2) == LUA_TNUMBER) {
    // a[#a + 1] is nil, as a Lua sequence ends, so that ipairs(a) stops there; other indices
    // outside 1..#a are errors.
    if (lua_isinteger(L, 2) && lua_tointeger(L, 2) == a.size() + 1) return lua_pushnil(L), 1;
    push_element(L, a, check_flat_index(L, a, 2));
    return 1;
  }
  const char* key = lua_tostring(L, 2);
  if (key == nullptr || lua_type(L, 2) != LUA_TSTRING) {
    lua_pushnil(L);
  } else if (std::strcmp(key, "shape") == 0) {
    push_shape(L, a.shape());
  } else if (std::strcmp(key, "dtype") == 0) {
    lua_pushstring(L, dtype_name(a.dtype()));
  } else if (std::strcmp(key, "size") == 0) {
    lua_pushinteger(L, a.size());
  } else if (std::strcmp(key, "ndim") == 0) {
    lua_pushinteger(L, a.ndim());
  } else {
    lua_pushvalue(L, 2);
    lua_rawget(L, lua_upvalueindex(1));
  }
  return 1;
}

// __newindex: a[i] = v. [-0, +0]
int array_newindex(lua_State* L) {
  HostArray& a = check_host_array(L, 1);
  if (lua_type(L, 2) != LUA_TNUMBER)
    return luaL_error(L, "cannot assign to field '%s' of an array (only a[i] = v)",
                      luaL_tolstring(L, 2, nullptr));
  set_element(L, a, check_flat_index(L, a, 2), 3);
  return 0;
}

// __len: #a is the number of elements. [-0, +1]
int array_len(lua_State* L) {
  lua_pushinteger(L, check_host_array(L, 1).size());
  return 1;
}

// __tostring. [-0, +1]
int array_tostring(lua_State* L) {
  std::string s = format_array(check_host_array(L, 1));
  lua_pushlstring(L, s.data(), s.size());
  return 1;
}

// The 0-based flat index of the 1-based indices at first..first+ndim-1 (Lua errors).
std::int64_t check_multi_index(lua_State* L, const HostArray& a, int first, const char* what) {
  std::int64_t flat = 0;
  for (int k = 0; k < a.ndim(); ++k) {
    lua_Integer i = luaL_checkinteger(L, first + k);
    std::int64_t n = a.shape()[k];
    if (i < 1 || i > n)
      luaL_error(L, "%s: index %I out of range for dimension %d (size %I)", what,
                 static_cast<LUA_INTEGER>(i), k + 1, static_cast<LUA_INTEGER>(n));
    flat = flat * n + (i - 1);
  }
  return flat;
}

// a:get(i, j, ...) -> element. [-0, +1]
int array_get(lua_State* L) {
  HostArray& a = check_host_array(L, 1);
  int nidx = lua_gettop(L) - 1;
  if (nidx != a.ndim())
    return luaL_error(L, "get: expected %d indices for a %d-d array, got %d", a.ndim(), a.ndim(),
                      nidx);
  push_element(L, a, check_multi_index(L, a, 2, "get"));
  return 1;
}

// a:set(i, j, ..., v). [-0, +0]
int array_set(lua_State* L) {
  HostArray& a = check_host_array(L, 1);
  int nidx = lua_gettop(L) - 2;
  if (nidx != a.ndim())
    return luaL_error(L, "set: expected %d indices and a value for a %d-d array, got %d indices",
                      a.ndim(), a.ndim(), nidx < 0 ? 0 : nidx);
  std::int64_t flat = check_multi_index(L, a, 2, "set");
  set_element(L, a, flat, lua_gettop(L));
  return 0;
}

// a:sum(): an integer for integer and bool dtypes, a float otherwise. [-0, +1]
// The whole-array reductions take no axis: one given is an error, not silently ignored.
HostArray& check_whole_reduction(lua_State* L, const char* what) {
  HostArray& a = check_host_array(L, 1);
  if (!lua_isnone(L, 2))
    luaL_error(L,
               "%s: kiln's reductions cover the whole array and take no axis (for one axis, "
               "reduce the rows in a loop, or in a kernel)",
               what);
  return a;
}

int array_sum(lua_State* L) {
  HostArray& a = check_whole_reduction(L, "sum");
  if (dtype_info(a.dtype()).is_integer)
    lua_pushinteger(L, sum_integer(a));
  else
    lua_pushnumber(L, sum_float(a));
  return 1;
}

// a:min() / a:max(): the element itself. [-0, +1]
int array_min(lua_State* L) {
  HostArray& a = check_whole_reduction(L, "min");
  push_element(L, a, argmin(a));
  return 1;
}
int array_max(lua_State* L) {
  HostArray& a = check_whole_reduction(L, "max");
  push_element(L, a, argmax(a));
  return 1;
}

// a:mean(): a float. [-0, +1]
int array_mean(lua_State* L) {
  lua_pushnumber(L, mean(check_whole_reduction(L, "mean")));
  return 1;
}

// a:copy(): a deep copy. [-0, +1]
int array_copy(lua_State* L) {
  HostArray& a = check_host_array(L, 1);
  push_host_array(L, astype(a, a.dtype()));
  return 1;
}

// a:astype(dtype): a converted deep copy. [-0, +1]
int array_astype(lua_State* L) {
  HostArray& a = check_host_array(L, 1);
  luaL_checkany(L, 2);
  DType t = opt_dtype(L, 2, a.dtype());
  push_host_array(L, astype(a, t));
  return 1;
}

// a:fill(v): sets every element; returns a. [-0, +1]
int array_fill(lua_State* L) {
  HostArray& a = check_host_array(L, 1);
  luaL_checkany(L, 2);
  fill_with(L, a, 2);
  lua_settop(L, 1);
  return 1;
}

// Validates dimension k of a shape (the value on top of the stack) and returns it; -1 passes
// when allow_infer. Lua errors name the argument.
std::int64_t check_dim(lua_State* L, int arg, int k, bool allow_infer) {
  int ok = 0;
  lua_Integer d = lua_tointegerx(L, -1, &ok);
  if (lua_type(L, -1) != LUA_TNUMBER)
    luaL_argerror(L, arg,
                  lua_pushfstring(L, "shape: dimension %d is a %s, expected a number", k,
                                  luaL_typename(L, -1)));
  if (!ok)
    luaL_argerror(
        L, arg,
        lua_pushfstring(L, "shape: dimension %d is %s, not an integer", k, lua_tostring(L, -1)));
  if (d < 0 && !(allow_infer && d == -1))
    luaL_argerror(L, arg,
                  lua_pushfstring(L, "shape: dimension %d is %I, must be >= 0", k,
                                  static_cast<LUA_INTEGER>(d)));
  return d;
}

// check_shape, optionally accepting one -1 (reshape infers it). [-0, +0, v]
Shape check_shape_ex(lua_State* L, int idx, bool allow_infer) {
  idx = lua_absindex(L, idx);
  if (lua_type(L, idx) == LUA_TNUMBER) {
    lua_pushvalue(L, idx);
    std::int64_t d = check_dim(L, idx, 1, allow_infer);
    lua_pop(L, 1);
    return Shape{d};
  }
  if (!lua_istable(L, idx)) luaL_typeerror(L, idx, "shape (a number or a table of numbers)");
  lua_Integer n = luaL_len(L, idx);
  if (n > kMaxDims)
    luaL_argerror(L, idx,
                  lua_pushfstring(L, "shape: %I dimensions, at most %d allowed",
                                  static_cast<LUA_INTEGER>(n), kMaxDims));
  std::int64_t dims[kMaxDims];
  int inferred = 0;
  for (int k = 1; k <= n; ++k) {
    lua_geti(L, idx, k);
    dims[k - 1] = check_dim(L, idx, k, allow_infer);
    inferred += dims[k - 1] == -1;
    lua_pop(L, 1);
  }
  if (inferred > 1) luaL_argerror(L, idx, "shape: only one dimension can be -1");
  return Shape(dims, dims + n);
}

// a:reshape(shape): the same buffer under a new shape of the same size; one dimension may be -1
// (inferred). [-0, +1]
int array_reshape(lua_State* L) {
  HostArray& a = check_host_array(L, 1);
  Shape s = check_shape_ex(L, 2, true);
  std::int64_t known = 1;
  int infer = -1;
  for (std::size_t k = 0; k < s.size(); ++k) {
    if (s[k] == -1)
      infer = static_cast<int>(k);
    else
      known = s[k] == 0 ? 0 : (known > INT64_MAX / s[k] ? -1 : known * s[k]);
  }
  if (infer >= 0) {
    if (known <= 0 || a.size() % known != 0)
      throw ArgError(2, "reshape: cannot reshape an array of size " + std::to_string(a.size()) +
                            " into shape " + shape_string(s));
    s[infer] = a.size() / known;
  }
  push_host_array(L, a.reshaped(std::move(s)));
  return 1;
}

// a:view(dtype): the same buffer read as another dtype, as numpy's view: the last axis scales by
// the ratio of the sizes (a float4 {n} array viewed as float32 is {4n}). [-0, +1]
int array_view(lua_State* L) {
  HostArray& a = check_host_array(L, 1);
  luaL_checkstring(L, 2);
  DType t = opt_dtype(L, 2, a.dtype());
  push_host_array(L, a.viewed(t));
  return 1;
}

// The operand at idx of an arithmetic metamethod: a host array, or a Lua number as a 0-d int64
// or float64 array (which broadcasts).
HostArray operand(lua_State* L, int idx, const char* what) {
  if (HostArray* a = test_host_array(L, idx)) return *a;
  if (lua_type(L, idx) != LUA_TNUMBER)
    throw Error(std::string("array ") + what + ": expected an array or a number, got " +
                (lua_type(L, idx) == LUA_TNIL ? "nil" : std::string("a ") + luaL_typename(L, idx)));
  const bool integer = lua_isinteger(L, idx);
  HostArray s(Shape{}, integer ? DType::int64 : DType::float64);
  if (integer)
    s.set_integer(0, lua_tointeger(L, idx));
  else
    s.set_number(0, lua_tonumber(L, idx));
  return s;
}

// __add, __sub, __mul, __div: a new array, element by element (runtime/array_math.h). [-0, +1]
template <ArithOp Op>
int array_arith(lua_State* L) {
  static const char* const names[] = {"+", "-", "*", "/"};
  const char* what = names[int(Op)];
  push_host_array(L, arithmetic(operand(L, 1, what), operand(L, 2, what), Op));
  return 1;
}

// __unm: -a. [-0, +1]
int array_unm(lua_State* L) {
  push_host_array(L, negate(check_host_array(L, 1)));
  return 1;
}

// a:eq(b), a:ne(b), a:lt(b), a:le(b), a:gt(b), a:ge(b): a bool array. [-0, +1]
template <CompareOp Op>
int array_compare(lua_State* L) {
  static const char* const names[] = {"eq", "ne", "lt", "le", "gt", "ge"};
  push_host_array(L, compare(check_host_array(L, 1), operand(L, 2, names[int(Op)]), Op));
  return 1;
}

// array.linspace(start, stop, n [, dtype]): n values from start to stop inclusive. [-0, +1]
int array_linspace(lua_State* L) {
  const double start = luaL_checknumber(L, 1), stop = luaL_checknumber(L, 2);
  const lua_Integer n = luaL_checkinteger(L, 3);
  DType t = opt_dtype(L, 4, DType::float64);
  push_host_array(L, linspace(start, stop, n, t));
  return 1;
}

// array.save(path, a): writes a as NumPy's .npy. [-0, +0]
int array_save(lua_State* L) {
  const char* path = luaL_checkstring(L, 1);
  HostArray& a = check_host_array(L, 2);
  save_npy(path, a);
  return 0;
}

// array.load(path) -> the array in a NumPy .npy file. [-0, +1]
int array_load(lua_State* L) {
  const char* path = luaL_checkstring(L, 1);
  push_host_array(L, load_npy(path));
  return 1;
}

// a:sub(first, last) or a:sub({r1, r2}, {c1, c2}, ...): a contiguous sub-array sharing a's
// memory (Torch7's sub; 1-based, inclusive, -1 the last). [-0, +1]
int array_sub(lua_State* L) {
  HostArray& a = check_host_array(L, 1);
  auto ranges = check_sub_ranges(L, 2, a.ndim());
  SubRange r = sub_range(a.shape(), ranges);
  push_host_array(L, a.sliced(r.first, r.count, r.shape));
  return 1;
}

// Pushes the sub-table of a for dimension `dim` starting at flat offset `*pos`. [-0, +1]
void push_table(lua_State* L, const HostArray& a, int dim, std::int64_t* pos) {
  std::int64_t n = a.shape()[dim];
  lua_createtable(L, static_cast<int>(std::min<std::int64_t>(n, INT_MAX)), 0);
  for (std::int64_t i = 1; i <= n; ++i) {
    if (dim + 1 == a.ndim())
      push_element(L, a, (*pos)++);
    else
      push_table(L, a, dim + 1, pos);
    lua_rawseti(L, -2, i);
  }
}

// a:totable(): nested Lua tables (the element itself for a 0-d array). [-0, +1]
int array_totable(lua_State* L) {
  HostArray& a = check_host_array(L, 1);
  luaL_checkstack(L, a.ndim() + 10, "array too deep");
  // The nested tables alone, before any element: an empty {2^40, 0} would need 2^40 of them.
  double tables = 1, rows = 1;
  for (int d = 0; d + 1 < a.ndim(); ++d) tables += rows *= double(a.shape()[d]);
  if (tables > double(1 << 26)) {
    {  // the shape's text onto the Lua stack first: luaL_error skips C++ destructors
      const std::string shape = shape_string(a.shape());
      lua_pushlstring(L, shape.data(), shape.size());
    }
    return luaL_error(L, "totable: an array of shape %s would make %I nested tables; take a:sub() "
                         "of it first", lua_tostring(L, -1),
                      static_cast<lua_Integer>(std::min(tables, 9e18)));
  }
  std::int64_t pos = 0;
  if (a.ndim() == 0)
    push_element(L, a, 0);
  else
    push_table(L, a, 0, &pos);
  return 1;
}

// --- constructors ----------------------------------------------------------------------------

// array.zeros(shape [, dtype]) and array.empty (also zero-filled). [-0, +1]
int array_zeros(lua_State* L) {
  DType t = opt_dtype(L, 2, DType::float64);  // Lua errors before any C++ object is alive
  Shape s = check_shape(L, 1);
  push_host_array(L, HostArray(std::move(s), t));
  return 1;
}

// array.ones(shape [, dtype]). [-0, +1]
int array_ones(lua_State* L) {
  DType t = opt_dtype(L, 2, DType::float64);
  Shape s = check_shape(L, 1);
  push_host_array(L, HostArray(std::move(s), t));
  lua_pushinteger(L, 1);
  fill_with(L, *test_host_array(L, -2), -1);
  lua_pop(L, 1);
  return 1;
}

// array.full(shape, value [, dtype]). [-0, +1]
int array_full(lua_State* L) {
  luaL_checkany(L, 2);
  DType t = opt_dtype(L, 3, DType::float64);
  Shape s = check_shape(L, 1);
  push_host_array(L, HostArray(std::move(s), t));
  try {
    fill_with(L, *test_host_array(L, -1), 2);
  } catch (const Error& e) {
    throw ArgError(2, e.what());
  }
  return 1;
}

// array.arange(n [, dtype]): 0, 1, ..., n-1. [-0, +1]
int array_arange(lua_State* L) {
  lua_Integer n = luaL_checkinteger(L, 1);
  luaL_argcheck(L, n >= 0, 1, "arange: n must be >= 0");
  DType t = opt_dtype(L, 2, DType::float64);
  push_host_array(L, HostArray(Shape{n}, t));
  HostArray& a = *test_host_array(L, -1);
  for (std::int64_t i = 0; i < n; ++i) a.set_integer(i, i);
  return 1;
}

// "t[2][3]" for the 0-based index path of a nested table.
std::string position(const std::vector<std::int64_t>& path) {
  std::string s = "t";
  for (std::int64_t i : path) s += "[" + std::to_string(i + 1) + "]";
  return s;
}

// array.from's walk over a nested table at the top of the stack: checks that it is rectangular
// with the given shape and that the leaves are numbers or booleans; counts the booleans.
void check_nested(lua_State* L, const Shape& shape, std::vector<std::int64_t>& path,
                  std::int64_t* booleans) {
  std::size_t dim = path.size();
  bool table = lua_istable(L, -1);
  if (dim == shape.size()) {
    int type = lua_type(L, -1);
    if (type == LUA_TBOOLEAN) ++*booleans;
    if (type != LUA_TNUMBER && type != LUA_TBOOLEAN)
      throw ArgError(1, "from: " + position(path) + " is a " + luaL_typename(L, -1) +
                            ", expected a number or boolean (every row has " +
                            std::to_string(shape.size()) + " dimensions, as t[1][1]... does)");
    return;
  }
  if (!table)
    throw ArgError(1, "from: " + position(path) + " is a " + luaL_typename(L, -1) +
                          ", expected a table (rows are not rectangular)");
  std::int64_t n = static_cast<std::int64_t>(lua_rawlen(L, -1));
  if (n != shape[dim])
    throw ArgError(1, "from: " + position(path) + " has " + std::to_string(n) +
                          " elements, expected " + std::to_string(shape[dim]) +
                          " (rows are not rectangular)");
  luaL_checkstack(L, 4, "from: table nested too deep");
  for (std::int64_t i = 0; i < n; ++i) {
    lua_rawgeti(L, -1, i + 1);
    path.push_back(i);
    check_nested(L, shape, path, booleans);
    path.pop_back();
    lua_pop(L, 1);
  }
}

// Copies the leaves of the nested table on top of the stack into a, in row-major order.
void fill_nested(lua_State* L, HostArray& a, int depth, std::vector<std::int64_t>& path,
                 std::int64_t* pos) {
  if (depth == a.ndim()) {
    try {
      set_element(L, a, (*pos)++, -1);
    } catch (const Error& e) {
      throw ArgError(1, "from: " + position(path) + ": " + e.what());
    }
    return;
  }
  std::int64_t n = a.shape()[depth];
  for (std::int64_t i = 0; i < n; ++i) {
    lua_rawgeti(L, -1, i + 1);
    path.push_back(i);
    fill_nested(L, a, depth + 1, path, pos);
    path.pop_back();
    lua_pop(L, 1);
  }
}

// array.from(t [, dtype]): nested tables -> n-d array; the default dtype is float64, or bool
// when every element is a boolean. A number gives a 0-d array. [-0, +1]
int array_from(lua_State* L) {
  if (!lua_istable(L, 1) && lua_type(L, 1) != LUA_TNUMBER && lua_type(L, 1) != LUA_TBOOLEAN)
    luaL_typeerror(L, 1, "table");
  lua_settop(L, 2);
  // The walks below push one value per level, up to kMaxDims of them: past LUA_MINSTACK,
  // without this the stack overflowed and corrupted the heap.
  luaL_checkstack(L, kMaxDims + 4, "from: tables nested too deep");
  lua_pushvalue(L, 1);  // the walks work on the top of the stack
  Shape shape;
  for (int depth = 0; lua_istable(L, -1); ++depth) {  // the shape, from t, t[1], t[1][1], ...
    if (depth >= kMaxDims) throw ArgError(1, "from: tables nested deeper than 32 levels");
    shape.push_back(static_cast<std::int64_t>(lua_rawlen(L, -1)));
    if (shape.back() == 0) break;
    lua_rawgeti(L, -1, 1);
  }
  lua_settop(L, 3);
  std::vector<std::int64_t> path;
  std::int64_t booleans = 0;
  check_nested(L, shape, path, &booleans);
  std::int64_t n = shape_size(shape);
  DType def = n > 0 && booleans == n ? DType::boolean : DType::float64;
  if (!lua_isnoneornil(L, 2) && lua_type(L, 2) != LUA_TSTRING)
    throw ArgError(2, std::string("dtype name expected, got ") + luaL_typename(L, 2));
  DType t = def;
  if (lua_type(L, 2) == LUA_TSTRING) {
    auto parsed = parse_dtype(lua_tostring(L, 2));
    if (!parsed) throw ArgError(2, std::string("unknown dtype '") + lua_tostring(L, 2) + "'");
    t = *parsed;
  }
  HostArray a(shape, t);
  std::int64_t pos = 0;
  fill_nested(L, a, 0, path, &pos);
  push_host_array(L, std::move(a));
  return 1;
}

// --- comparisons, images -------------------------------------------------------------------

// array.equal(a, b). [-0, +1]
int array_equal_fn(lua_State* L) {
  lua_pushboolean(L, array_equal(check_host_array(L, 1), check_host_array(L, 2)));
  return 1;
}

// array.allclose(a, b [, rtol [, atol]]). [-0, +1]
int array_allclose(lua_State* L) {
  HostArray& a = check_host_array(L, 1);
  HostArray& b = check_host_array(L, 2);
  double rtol = luaL_optnumber(L, 3, 1e-5), atol = luaL_optnumber(L, 4, 1e-8);
  // A negative or NaN tolerance would make every comparison true (or none) without saying so.
  if (!(rtol >= 0)) luaL_argerror(L, 3, "rtol must be a number >= 0");
  if (!(atol >= 0)) luaL_argerror(L, 4, "atol must be a number >= 0");
  lua_pushboolean(L, allclose(a, b, rtol, atol));
  return 1;
}

// array.max_abs_diff(a, b). [-0, +1]
int array_max_abs_diff(lua_State* L) {
  lua_pushnumber(L, max_abs_diff(check_host_array(L, 1), check_host_array(L, 2)));
  return 1;
}

// array.load_image(path). [-0, +1]
int array_load_image(lua_State* L) {
  const char* path = luaL_checkstring(L, 1);
  push_host_array(L, load_image(path));
  return 1;
}

// array.save_image(path, a). [-0, +0]
int array_save_image(lua_State* L) {
  const char* path = luaL_checkstring(L, 1);
  save_image(path, check_host_array(L, 2));
  return 0;
}

// array.show(a): shows a where the program's output goes. In a Jupyter kernel its display
// function (registry kDisplayHook) shows it inline; in a terminal a uint8 image is written as
// a PNG file in a new temporary folder (os.mkdtemp's) and its path printed, and any other array
// is printed. [-0, +0]
int array_show(lua_State* L) {
  HostArray& a = check_host_array(L, 1);
  if (lua_getfield(L, LUA_REGISTRYINDEX, kDisplayHook) == LUA_TFUNCTION) {
    lua_pushvalue(L, 1);
    lua_call(L, 1, 0);
    return 0;
  }
  lua_pop(L, 1);
  if (!is_image(a)) {
    std::string text = format_array(a) + "\n";
    std::fputs(text.c_str(), stdout);
    std::fflush(stdout);
    return 0;
  }
  lua_getglobal(L, "os");
  lua_getfield(L, -1, "mkdtemp");
  lua_pushliteral(L, "kiln-show");
  lua_call(L, 1, 1);
  const char* dir = lua_tostring(L, -1);
  return protect(L, [&] {
    std::string path = std::string(dir) + "/image.png";
    save_image(path, a);
    std::printf("image %s written to %s\n", shape_string(a.shape()).c_str(), path.c_str());
    std::fflush(stdout);
    return 0;
  });
}

// --- random ----------------------------------------------------------------------------------

// The state's generator: a userdata, upvalue 1 of the random functions.
Xoshiro256& generator(lua_State* L) {
  return *static_cast<Xoshiro256*>(lua_touserdata(L, lua_upvalueindex(1)));
}

// Reads opts.seed (opts at idx, a table or nil) into *seed; true when present. Lua errors.
bool opt_seed(lua_State* L, int idx, std::uint64_t* seed) {
  if (lua_isnoneornil(L, idx)) return false;
  luaL_checktype(L, idx, LUA_TTABLE);
  lua_getfield(L, idx, "seed");
  bool present = !lua_isnil(L, -1);
  if (present) {
    int ok = 0;
    lua_Integer s = lua_tointegerx(L, -1, &ok);
    if (!ok) luaL_argerror(L, idx, "opts.seed must be an integer");
    *seed = static_cast<std::uint64_t>(s);
  }
  lua_pop(L, 1);
  return present;
}

// opts[name] as a number, def when absent. Lua errors.
double opt_number_field(lua_State* L, int idx, const char* name, double def) {
  if (lua_isnoneornil(L, idx)) return def;
  lua_getfield(L, idx, name);
  double v = def;
  if (!lua_isnil(L, -1)) {
    int ok = 0;
    v = lua_tonumberx(L, -1, &ok);
    if (!ok || lua_type(L, -1) != LUA_TNUMBER)
      luaL_argerror(L, idx, lua_pushfstring(L, "opts.%s must be a number", name));
  }
  lua_pop(L, 1);
  return v;
}

// opts.dtype, def when absent. Lua errors.
DType opt_dtype_field(lua_State* L, int idx, DType def) {
  if (lua_isnoneornil(L, idx)) return def;
  lua_getfield(L, idx, "dtype");
  DType t = opt_dtype(L, lua_gettop(L), def);
  lua_pop(L, 1);
  return t;
}

// array.random.seed([n]): reseeds the state's generator (from entropy when n is nil). [-0, +0]
int random_seed(lua_State* L) {
  std::uint64_t seed =
      lua_isnoneornil(L, 1) ? entropy_seed() : static_cast<std::uint64_t>(luaL_checkinteger(L, 1));
  generator(L) = Xoshiro256(seed);
  return 0;
}

// The common front of the random functions: shape at shape_arg, opts at opts_arg, a float
// dtype; returns the generator to use (a one-off one in *local when opts.seed is given).
Xoshiro256* random_setup(lua_State* L, int opts_arg, Xoshiro256* local) {
  std::uint64_t seed = 0;
  if (opt_seed(L, opts_arg, &seed)) {
    *local = Xoshiro256(seed);
    return local;
  }
  return &generator(L);
}

// array.random.uniform(shape [, opts]): floats in [low, high). [-0, +1]
int random_uniform(lua_State* L) {
  double low = opt_number_field(L, 2, "low", 0), high = opt_number_field(L, 2, "high", 1);
  DType t = opt_dtype_field(L, 2, DType::float64);
  Xoshiro256 local(0);
  Xoshiro256* g = random_setup(L, 2, &local);
  HostArray a(check_shape(L, 1), t);
  try {
    fill_uniform(a, low, high, *g);
  } catch (const Error& e) {
    throw ArgError(2, e.what());
  }
  push_host_array(L, std::move(a));
  return 1;
}

// array.random.normal(shape [, opts]): Marsaglia's polar method. [-0, +1]
int random_normal(lua_State* L) {
  double loc = opt_number_field(L, 2, "loc", 0), scale = opt_number_field(L, 2, "scale", 1);
  DType t = opt_dtype_field(L, 2, DType::float64);
  Xoshiro256 local(0);
  Xoshiro256* g = random_setup(L, 2, &local);
  HostArray a(check_shape(L, 1), t);
  try {
    fill_normal(a, loc, scale, *g);
  } catch (const Error& e) {
    throw ArgError(2, e.what());
  }
  push_host_array(L, std::move(a));
  return 1;
}

// array.random.integers(low, high, shape [, opts]): integers in [low, high), unbiased. [-0, +1]
int random_integers(lua_State* L) {
  lua_Integer low = luaL_checkinteger(L, 1), high = luaL_checkinteger(L, 2);
  DType t = opt_dtype_field(L, 4, DType::int64);
  if (!dtype_info(t).is_integer)
    luaL_argerror(L, 4,
                  lua_pushfstring(L, "integers: dtype must be an integer dtype, got %s",
                                  dtype_info(t).name.data()));
  Xoshiro256 local(0);
  Xoshiro256* g = random_setup(L, 4, &local);
  HostArray a(check_shape(L, 3), t);
  try {
    fill_integers(a, low, high, *g);
  } catch (const Error& e) {
    throw ArgError(1, e.what());
  }
  push_host_array(L, std::move(a));
  return 1;
}

}  // namespace

// --- the exported C++ API --------------------------------------------------------------------

std::vector<std::pair<std::int64_t, std::int64_t>> check_sub_ranges(lua_State* L, int idx,
                                                                     int ndim) {
  // Every Lua error first, while no C++ object is alive (a longjmp skips destructors).
  const bool pair = lua_type(L, idx) == LUA_TNUMBER;
  const int top = lua_gettop(L);
  if (pair) {
    luaL_checkinteger(L, idx);
    luaL_checkinteger(L, idx + 1);
    if (!lua_isnone(L, idx + 2)) luaL_argerror(L, idx + 2, "sub(first, last) takes two indices");
  } else {
    if (top < idx) luaL_argerror(L, idx, "expected first, last or {first, last} per dimension");
    if (top - idx + 1 > ndim) luaL_error(L, "sub: %d ranges for a %d-d array", top - idx + 1, ndim);
    for (int i = idx; i <= top; ++i) {
      luaL_checktype(L, i, LUA_TTABLE);
      lua_geti(L, i, 1);
      lua_geti(L, i, 2);
      if (!lua_isinteger(L, -2) || !lua_isinteger(L, -1))
        luaL_argerror(L, i, "expected {first, last} (integers)");
      lua_pop(L, 2);
    }
  }
  std::vector<std::pair<std::int64_t, std::int64_t>> ranges;
  if (pair) {
    ranges.emplace_back(lua_tointeger(L, idx), lua_tointeger(L, idx + 1));
    return ranges;
  }
  for (int i = idx; i <= top; ++i) {
    lua_geti(L, i, 1);
    lua_geti(L, i, 2);
    ranges.emplace_back(lua_tointeger(L, -2), lua_tointeger(L, -1));
    lua_pop(L, 2);
  }
  return ranges;
}

HostArray* test_host_array(lua_State* L, int idx) {
  return static_cast<HostArray*>(luaL_testudata(L, idx, kHostArrayMeta));
}

HostArray& check_host_array(lua_State* L, int idx) {
  return *static_cast<HostArray*>(luaL_checkudata(L, idx, kHostArrayMeta));
}

void push_host_array(lua_State* L, HostArray a) {
  std::size_t bytes = a.nbytes();
  void* p = lua_newuserdatauv(L, sizeof(HostArray), 0);
  new (p) HostArray(std::move(a));
  luaL_setmetatable(L, kHostArrayMeta);
  // Lua does not see the buffer: run the collector in proportion to it, so that garbage arrays
  // in a loop are freed before they pile up.
  std::size_t kib = bytes / 1024;
  if (kib > 0) lua_gc(L, LUA_GCSTEP, static_cast<int>(std::min<std::size_t>(kib, INT_MAX / 2)));
}

Shape check_shape(lua_State* L, int idx) {
  return check_shape_ex(L, idx, false);
}

DType opt_dtype(lua_State* L, int idx, DType def) {
  if (lua_isnoneornil(L, idx)) return def;
  if (lua_type(L, idx) == LUA_TTABLE) {  // an options table: {dtype = "float32", ...}
    lua_getfield(L, idx, "dtype");
    DType t = lua_isnil(L, -1) ? def : opt_dtype(L, lua_gettop(L), def);
    lua_pop(L, 1);
    return t;
  }
  if (lua_type(L, idx) != LUA_TSTRING) luaL_typeerror(L, idx, "dtype name or {dtype = ...}");
  const char* name = lua_tostring(L, idx);
  if (auto t = parse_dtype(name)) return *t;
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  luaL_addstring(&b, "unknown dtype '");
  luaL_addstring(&b, name);
  luaL_addstring(&b, "' (valid:");
  for (DType t : kAllDTypes) {
    luaL_addchar(&b, ' ');
    luaL_addlstring(&b, dtype_info(t).name.data(), dtype_info(t).name.size());
  }
  luaL_addstring(&b, "; vectors:");
  for (DType t : kVectorDTypes) {
    luaL_addchar(&b, ' ');
    luaL_addlstring(&b, dtype_info(t).name.data(), dtype_info(t).name.size());
  }
  luaL_addstring(&b, "; aliases:");
  for (DType t : kAllDTypes) {
    if (dtype_info(t).alias.empty()) continue;
    luaL_addchar(&b, ' ');
    luaL_addlstring(&b, dtype_info(t).alias.data(), dtype_info(t).alias.size());
  }
  luaL_addchar(&b, ')');
  luaL_pushresult(&b);
  luaL_argerror(L, idx, lua_tostring(L, -1));
  return def;
}

void push_shape(lua_State* L, const Shape& s) {
  lua_createtable(L, static_cast<int>(s.size()), 0);
  for (std::size_t k = 0; k < s.size(); ++k) {
    lua_pushinteger(L, s[k]);
    lua_rawseti(L, -2, static_cast<lua_Integer>(k + 1));
  }
}

int open_array(lua_State* L) {
  static const luaL_Reg methods[] = {
      {"get", guarded<array_get>},         {"set", guarded<array_set>},
      {"sum", guarded<array_sum>},         {"min", guarded<array_min>},
      {"max", guarded<array_max>},         {"mean", guarded<array_mean>},
      {"copy", guarded<array_copy>},       {"reshape", guarded<array_reshape>},
      {"view", guarded<array_view>},
      {"sub", guarded<array_sub>},
      {"eq", guarded<array_compare<CompareOp::eq>>}, {"ne", guarded<array_compare<CompareOp::ne>>},
      {"lt", guarded<array_compare<CompareOp::lt>>}, {"le", guarded<array_compare<CompareOp::le>>},
      {"gt", guarded<array_compare<CompareOp::gt>>}, {"ge", guarded<array_compare<CompareOp::ge>>},
      {"astype", guarded<array_astype>},   {"fill", guarded<array_fill>},
      {"totable", guarded<array_totable>}, {nullptr, nullptr}};
  static const luaL_Reg metamethods[] = {{"__newindex", guarded<array_newindex>},
                                         {"__add", guarded<array_arith<ArithOp::add>>},
                                         {"__sub", guarded<array_arith<ArithOp::sub>>},
                                         {"__mul", guarded<array_arith<ArithOp::mul>>},
                                         {"__div", guarded<array_arith<ArithOp::div>>},
                                         {"__unm", guarded<array_unm>},
                                         {"__len", guarded<array_len>},
                                         {"__tostring", guarded<array_tostring>},
                                         {"__gc", array_gc},
                                         {nullptr, nullptr}};
  static const luaL_Reg functions[] = {{"zeros", guarded<array_zeros>},
                                       {"save", guarded<array_save>},
                                       {"linspace", guarded<array_linspace>},
                                       {"load", guarded<array_load>},
                                       {"empty", guarded<array_zeros>},
                                       {"ones", guarded<array_ones>},
                                       {"full", guarded<array_full>},
                                       {"arange", guarded<array_arange>},
                                       {"from", guarded<array_from>},
                                       {"equal", guarded<array_equal_fn>},
                                       {"allclose", guarded<array_allclose>},
                                       {"max_abs_diff", guarded<array_max_abs_diff>},
                                       {"load_image", guarded<array_load_image>},
                                       {"save_image", guarded<array_save_image>},
                                       {"show", array_show},
                                       {nullptr, nullptr}};
  static const luaL_Reg random[] = {{"seed", guarded<random_seed>},
                                    {"uniform", guarded<random_uniform>},
                                    {"normal", guarded<random_normal>},
                                    {"integers", guarded<random_integers>},
                                    {nullptr, nullptr}};
  if (luaL_newmetatable(L, kHostArrayMeta)) {
    luaL_setfuncs(L, metamethods, 0);
    luaL_newlib(L, methods);
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, "__methods");  // where the REPL's completion finds a:su<TAB>
    lua_pushcclosure(L, guarded<array_index>, 1);
    lua_setfield(L, -2, "__index");
  }
  lua_pop(L, 1);
  luaL_newlib(L, functions);
  lua_createtable(L, 0, 4);
  new (lua_newuserdatauv(L, sizeof(Xoshiro256), 0)) Xoshiro256(entropy_seed());
  luaL_setfuncs(L, random, 1);
  lua_setfield(L, -2, "random");
  return 1;
}

}  // namespace kiln::lua
