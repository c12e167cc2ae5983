-- Host arithmetic and comparisons (runtime/array_math.h): values against Lua's own arithmetic,
-- result dtypes, and the errors (shapes, overflow, types, axes).
package.path = arg[0]:gsub("[^/]*$", "") .. "lib/?.lua;" .. package.path
local expect = require("expect")

local n = 257
local x = array.random.uniform(n, { low = -10, high = 10, seed = 1 })          -- float64
local y = array.random.uniform(n, { low = 0.5, high = 4, seed = 2 })           -- float64
local i = array.random.integers(-1000, 1000, n, { dtype = "int32", seed = 3 })
local j = array.random.integers(1, 50, n, { dtype = "int32", seed = 4 })

-- Each result against the same expression in Lua, element by element.
local function check(got, want_dtype, f, what)
  assert(got.dtype == want_dtype, what .. ": dtype " .. got.dtype .. ", expected " .. want_dtype)
  assert(got.size == n and got.ndim == 1, what .. ": shape")
  for k = 1, n do
    local want = f(k)
    assert(got[k] == want or math.abs(got[k] - want) <= 1e-12 * math.abs(want),
           ("%s, element %d: %s, expected %s"):format(what, k, got[k], want))
  end
end
check(x + y, "float64", function(k) return x[k] + y[k] end, "x + y")
check(x - y, "float64", function(k) return x[k] - y[k] end, "x - y")
check(x * y, "float64", function(k) return x[k] * y[k] end, "x * y")
check(x / y, "float64", function(k) return x[k] / y[k] end, "x / y")
check(-x, "float64", function(k) return -x[k] end, "-x")
check(2.5 * x - 1, "float64", function(k) return 2.5 * x[k] - 1 end, "2.5 * x - 1")
check(i + j, "int32", function(k) return i[k] + j[k] end, "i + j")
check(i * 3 - j, "int32", function(k) return i[k] * 3 - j[k] end, "i * 3 - j")
check(i / j, "float64", function(k) return i[k] / j[k] end, "i / j (true division)")
check(i + 0.5, "float64", function(k) return i[k] + 0.5 end, "i + 0.5")
check(i + j:astype("int16"), "int64", function(k) return i[k] + j[k] end, "int32 + int16")
local f32 = x:astype("float32")
check(f32 * 2, "float32", function(k) return f32[k] * 2 end, "float32 * 2")

-- Comparisons give bool arrays.
local lt = x:lt(y)
assert(lt.dtype == "bool")
for k = 1, n do
  assert(lt[k] == (x[k] < y[k]) and x:ge(y)[k] == (x[k] >= y[k]), "lt/ge at " .. k)
  assert(i:eq(0)[k] == (i[k] == 0) and i:ne(j)[k] == (i[k] ~= j[k]), "eq/ne at " .. k)
end
local nan = array.from({ 0 / 0, 1 })
assert(nan:eq(nan)[1] == false and nan:ne(nan)[1] == true and nan:eq(nan)[2] == true)

-- linspace: both ends exact.
local l = array.linspace(-1, 2, 7)
assert(l.size == 7 and l[1] == -1 and l[7] == 2 and l[3] == 0)

-- Errors name what is wrong.
expect.error("array +: shapes (257,) and (3,) differ", function() return x + array.zeros(3) end)
expect.error("out of range for int8", function() return array.from({ 100 }, "int8") + 100 end)
expect.error("overflows int64", function() return array.from({ math.maxinteger }, "int64") + 1 end)
expect.error("array *: expected an array or a number, got a string", function() return x * "2" end)
expect.error("work on the lanes", function() return array.zeros(2, "float4") + 1 end)
expect.error("take no axis", function() return x:sum(1) end)
expect.error("take no axis", function() return x:max(1) end)
print("ok")
