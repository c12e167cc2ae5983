-- Host arrays: constructors, dtypes, properties, element access, copy/reshape/astype/fill/totable.

package.path = arg[0]:gsub("[^/]*$", "") .. "lib/?.lua;" .. package.path
local fails = require("expect").error

-- Every dtype and alias; a.dtype is the long name.
local names = {float32 = "f32", float64 = "f64", int8 = "i8", uint8 = "u8", int16 = "i16",
               uint16 = "u16", int32 = "i32", uint32 = "u32", int64 = "i64", uint64 = "u64"}
for long, short in pairs(names) do
  assert(array.zeros(2, long).dtype == long)
  assert(array.zeros(2, short).dtype == long)
end
assert(array.zeros(2, "bool").dtype == "bool")
assert(array.zeros(3).dtype == "float64" and array.ones(3).dtype == "float64")

-- Properties.
local z = array.zeros({2, 3, 4}, "i16")
assert(z.size == 24 and z.ndim == 3 and #z == 24)
local s = z.shape
assert(#s == 3 and s[1] == 2 and s[2] == 3 and s[3] == 4)
s[1] = 99
assert(z.shape[1] == 2, "shape is a fresh table")
assert(array.zeros(5).shape[1] == 5 and array.zeros(5).ndim == 1)
assert(array.zeros({}).size == 1 and array.zeros({}).ndim == 0)
assert(array.zeros({0, 3}).size == 0)

-- Constructors' values.
for i = 1, 24 do assert(z[i] == 0 and math.type(z[i]) == "integer") end
local o = array.ones({2, 2}, "f32")
for i = 1, 4 do assert(o[i] == 1.0 and math.type(o[i]) == "float") end
local e = array.empty(4, "i32")
assert(e.size == 4 and e.dtype == "int32")
local f = array.full({2, 3}, 7, "u8")
for i = 1, 6 do assert(f[i] == 7) end
assert(array.full(3, 2.5)[3] == 2.5)
assert(array.full(2, true, "bool")[2] == true)
local r = array.arange(5)
assert(r.dtype == "float64" and r[1] == 0.0 and r[5] == 4.0)
local ri = array.arange(4, "i32")
assert(ri.dtype == "int32" and ri[4] == 3 and math.type(ri[4]) == "integer")
assert(array.arange(0).size == 0)

-- array.from: nested tables; default float64, bool when all booleans.
local m = array.from({{1, 2, 3}, {4, 5, 6}})
assert(m.dtype == "float64" and m.shape[1] == 2 and m.shape[2] == 3)
assert(m:get(2, 1) == 4.0 and m[4] == 4.0 and m[6] == 6.0)
local t3 = array.from({{{1, 2}, {3, 4}}, {{5, 6}, {7, 8}}}, "int64")
assert(t3.ndim == 3 and t3:get(2, 1, 2) == 6 and t3[8] == 8)
assert(array.from({true, false}).dtype == "bool")
assert(array.from({}).size == 0 and array.from({}).shape[1] == 0)
local fb = array.from({1, true}, "bool")
assert(fb[1] == true and fb[2] == true)

-- Element access: 1-based flat, get/set multi-index, bool, integer and float results.
local a = array.zeros({3, 4}, "int32")
a[1] = 5
a:set(2, 3, -7)
assert(a[1] == 5 and a:get(2, 3) == -7 and a[(2 - 1) * 4 + 3] == -7)
a[12] = 2.0  -- integral floats are accepted by integer dtypes
assert(a:get(3, 4) == 2 and math.type(a[12]) == "integer")
local b = array.zeros(3, "bool")
b[1] = true
b[2] = 1
assert(b[1] == true and b[2] == true and b[3] == false)
local u = array.zeros(1, "uint64")
u[1] = 2^63  -- past Lua's integers: stored exactly, read back as the integer of its bits
assert(u[1] == math.mininteger and math.type(u[1]) == "integer")
u[1] = math.maxinteger
assert(u[1] == math.maxinteger and math.type(u[1]) == "integer")
u[1] = 0xcbf29ce484222325  -- (a negative Lua integer: FNV's offset basis, every bit kept)
assert(u[1] == 0xcbf29ce484222325 and ("%x"):format(u[1]) == "cbf29ce484222325")
assert(tostring(u) == "array([14695981039346656037], dtype=uint64)", tostring(u))
assert(not pcall(function() array.zeros(1, "uint32")[1] = -1 end))  -- (narrower: out of range)
local i8 = array.zeros(2, "i8")
i8[1] = -128
i8[2] = 127
assert(i8[1] == -128 and i8[2] == 127)
local f32 = array.zeros(1, "f32")
f32[1] = 0.1
assert(f32[1] ~= 0.1 and math.abs(f32[1] - 0.1) < 1e-8, "float32 rounds")

-- copy is deep; reshape shares the buffer; astype converts.
local c = a:copy()
c[1] = 100
assert(a[1] == 5 and c[1] == 100 and c.dtype == "int32")
local v = a:reshape({4, 3})
assert(v.shape[1] == 4 and v.shape[2] == 3 and v:get(1, 1) == 5)
v[1] = 42
assert(a[1] == 42, "reshape shares the buffer")
local w = a:reshape({2, -1})
assert(w.shape[1] == 2 and w.shape[2] == 6)
assert(a:reshape(12).ndim == 1)
local fl = array.from({-1.7, 2.9, 0.5}):astype("int32")
assert(fl.dtype == "int32" and fl[1] == -1 and fl[2] == 2 and fl[3] == 0)
local bo = array.from({0, 2, -3}):astype("bool")
assert(bo[1] == false and bo[2] == true and bo[3] == true)
local back = bo:astype("f32")
assert(back[1] == 0.0 and back[2] == 1.0)
local same = a:astype("int32")
same[1] = -1
assert(a[1] == 42, "astype copies")

-- fill returns the array.
local fa = array.zeros(5, "u16")
assert(fa:fill(9) == fa)
for i = 1, 5 do assert(fa[i] == 9) end

-- totable.
local tt = array.from({{1, 2}, {3, 4}}, "i32"):totable()
assert(#tt == 2 and #tt[1] == 2 and tt[1][2] == 2 and tt[2][1] == 3 and math.type(tt[2][2]) == "integer")
local t1 = array.from({true, false}):totable()
assert(t1[1] == true and t1[2] == false)
assert(array.from(5):totable() == 5.0)

-- Bad input is an error that names the problem.
fails("index 12 out of range for array of size 10", function() return array.zeros(10)[12] end)
-- a[#a + 1] is nil, as a sequence ends: ipairs walks an array and stops.
assert(array.zeros(10)[11] == nil)
local walked, total = 0, 0
for i, v in ipairs(array.arange(5, "int32")) do walked, total = i, total + v end
assert(walked == 5 and total == 0 + 1 + 2 + 3 + 4, "ipairs over an array")
-- dtypes as a name or an options table, everywhere.
assert(array.zeros(3, { dtype = "int16" }).dtype == "int16")
assert(cuda.device_array(3, { dtype = "uint8" }).dtype == "uint8")
assert(cuda.device_array({ 2, 3 }, "float32").dtype == "float32")
-- a device array has a length, and its elements are read on the host.
local dev = cuda.device_array({ 2, 3 })
assert(#dev == 6)
fails("copy it to the host first", function() return dev[1] end)
fails("index 0 out of range", function() return array.zeros(10)[0] end)
fails("index -1 out of range", function() local q = array.zeros(10); q[-1] = 1 end)
fails("array index must be an integer, got 1.5", function() return array.zeros(10)[1.5] end)
fails("unknown dtype 'float'", array.zeros, 3, "float")
fails("valid: float32 float64", array.zeros, 3, "double")
fails("dimension 1 is -2, must be >= 0", array.zeros, -2)
fails("dimension 2 is 1.5, not an integer", array.ones, {2, 1.5})
fails("dimension 1 is a string", array.zeros, {"3"})
fails("shape (a number or a table of numbers)", array.zeros, "3")
fails("has too many elements", array.zeros, {2^40, 2^40})
fails("cannot allocate", array.zeros, 2^57)
fails("t[2] has 1 elements, expected 2", array.from, {{1, 2}, {3}})
fails("t[2][2] is a string", array.from, {{1, 2}, {3, "x"}})
fails("t[2] is a number, expected a table", array.from, {{1, 2}, 3})
fails("t[2][2]: array: value 4.5 is not an integer", array.from, {{1, 2}, {3, 4.5}}, "i8")
fails("value 300 is out of range for uint8 [0, 255]", function() array.zeros(3, "u8")[1] = 300 end)
fails("value -1 is out of range for uint32", function() array.zeros(3, "u32")[1] = -1 end)
fails("value 2.5 is not an integer", function() array.zeros(3, "i32")[1] = 2.5 end)
fails("value 2 is not a bool", function() array.zeros(3, "bool")[1] = 2 end)
fails("expected a number for a float64 element, got boolean", function() array.zeros(3)[1] = true end)
fails("expected a number for a float64 element, got string", array.full, 3, "x")
fails("value 128 is out of range for int8", array.arange, 200, "i8")
fails("get: expected 2 indices for a 2-d array, got 1", function() return array.zeros({2, 2}):get(1) end)
fails("get: index 3 out of range for dimension 2 (size 2)", function() return array.zeros({2, 2}):get(1, 3) end)
fails("set: index 0 out of range for dimension 1", function() array.zeros({2, 2}):set(0, 1, 5) end)
fails("cannot reshape an array of shape (3, 4) (size 12) into shape (5,) (size 5)", function() return a:reshape(5) end)
fails("cannot reshape an array of size 12 into shape (5, -1)", function() return a:reshape({5, -1}) end)
fails("only one dimension can be -1", function() return a:reshape({-1, -1}) end)
fails("astype: element 2 (nan) is out of range for int32", function() return array.from({1, 0/0}):astype("i32") end)
fails("astype: element 1 (300) is out of range for uint8", function() return array.from({300}, "i32"):astype("u8") end)
fails("cannot assign to field 'foo'", function() a.foo = 1 end)
fails("kiln.array expected", array.equal, {}, a)
assert(a.foo == nil)

-- A device array prints as its host copy does, summarized past 1000 elements (copying only the
-- elements shown), with the device named.
for _, shape in ipairs({ { 5 }, { 3000 }, { 40, 50 }, { 9, 2, 300 } }) do
  local h = array.arange(shape[1] * (shape[2] or 1) * (shape[3] or 1), "int32"):reshape(shape)
  local want = "device_" .. tostring(h):gsub("%)$", ", device=" .. cuda.backend() .. ")")
  assert(tostring(cuda.to_device(h)) == want, tostring(cuda.to_device(h)) .. "\nwant\n" .. want)
end
