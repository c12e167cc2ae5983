-- cuda.reduce on integers is exact or an error: narrow integers fold in 64 bits (a uint8 sum
-- of 0..99 is 4950, not 4950 mod 256), and a 64-bit result that overflows is an error naming
-- the expression, never a wrapped number. References are Lua loops.
package.path = arg[0]:gsub("[^/]*$", "") .. "lib/?.lua;" .. package.path
local expect = require("expect")

local sum, prod = cuda.reduce("a + b"), cuda.reduce("a * b")
local function lua_sum(a) local s = 0 for i = 1, a.size do s = s + a[i] end return s end

for _, dtype in ipairs({ "uint8", "int8", "uint16", "int16", "int32", "uint32" }) do
  local a = array.arange(dtype:find("8") and 100 or 5000, dtype)
  if dtype:sub(1, 1) == "i" then for i = 1, a.size, 3 do a[i] = -a[i] end end
  assert(sum(a) == lua_sum(a), dtype .. ": " .. sum(a) .. " vs " .. lua_sum(a))
  assert(math.type(sum(a)) == "integer")
  assert(sum(cuda.to_device(a), 7) == lua_sum(a) + 7, dtype .. " with init")
end
assert(prod(array.full(10, 3, "uint8")) == 59049)  -- 3^10, far past 255
assert(sum(array.full(4, math.maxinteger // 8, "int64")) == 4 * (math.maxinteger // 8))

expect.error("overflows int64", sum, array.full(4, math.maxinteger // 2, "int64"))
expect.error("overflows uint64", prod, array.full(70, 2, "uint8"))
-- A uint64 result past 2^63 - 1 is the Lua integer of its bits (review 8: the overflow check
-- could not read it).
assert(sum(array.from({ 1, 0xF000000000000001 }, "uint64")) == 0xF000000000000002)
assert(cuda.reduce("a > b ? a : b")(array.from({ 1, 0xF000000000000001 }, "uint64")) == 0xF000000000000001)
-- Expressions that cannot overflow and do not compile for doubles still work.
assert(cuda.reduce("a | b")(array.from({ 1, 2, 4, 8 }, "int64")) == 15)
assert(cuda.reduce("a ^ b")(array.from({ 7, 2 }, "uint16")) == 5)
assert(cuda.reduce("max(a, b)")(array.from({ -5, 3, 9, -100 }, "int32")) == 9)
-- Floats and bools as before.
assert(sum(array.arange(10, "float32")) == 45.0)
assert(sum(array.from({ true, false, true }, "bool")) == true)
print("reduce_exact: ok")
