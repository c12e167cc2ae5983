-- float16 and bfloat16 host arrays: values rounded once to nearest-even as they are stored, read
-- back exactly; numpy's repr (the strings below are numpy 1.24's own); arithmetic keeps the dtype;
-- uniform numbers stay in range.

local function same(a, expected)
  local got = tostring(a)
  assert(got == expected, "\ngot:\n" .. got .. "\nexpected:\n" .. expected)
end

-- Known encodings: 0.1 is 0x2e66 in binary16 (0.0999755859375), 0x3dcd in bfloat16.
local h = array.from({ 0.1, 65504, 65520, 2049, -2.5 }, "float16")
assert(h.dtype == "float16" and h[1] == 0.0999755859375 and h[2] == 65504, "float16 values")
assert(h[3] == math.huge, "65520 rounds to infinity")
assert(h[4] == 2048, "2049 is a tie: to even")
assert(h:view("uint16")[1] == 0x2e66 and h:view("uint16")[5] == 0xc100, "float16 bits")
local b = array.from({ 0.1, 257, 3.4e38 }, "bf16")
assert(b.dtype == "bfloat16" and b[1] == 0.10009765625 and b[2] == 256 and b[3] == math.huge)
assert(b:view("uint16")[1] == 0x3dcd, "bfloat16 bits")

same(array.from({ 0.1, 0.2, 0.3333 }, "f16"), "array([0.1   , 0.2   , 0.3333], dtype=float16)")
same(array.from({ 1.5, 2, 1000 }, "f16"), "array([   1.5,    2. , 1000. ], dtype=float16)")
same(array.from({ 100000, -1e-9 }, "f16"), "array([inf, -0.], dtype=float16)")
local a = array.from({ 0.1, 0.2, 0.3 }, "f16")
same(a + a, "array([0.2, 0.4, 0.6], dtype=float16)")
same(a * 3, "array([0.2998, 0.5996, 0.9004], dtype=float16)")
assert((a + array.from({ 1, 1, 1 }, "f32")).dtype == "float64", "mixed floats widen to float64")

-- Conversions: astype rounds once, into integers truncates, and refuses infinity.
assert(array.from({ 0.1 }, "f64"):astype("f16")[1] == 0.0999755859375)
assert(array.from({ -7.75 }, "bf16"):astype("int32")[1] == -7)
assert(not pcall(function() return h:astype("int32") end), "infinity has no int32")
assert(a:sum() == 0.0999755859375 + 0.199951171875 + 0.300048828125, "sum in double")
assert(a:max() == 0.300048828125 and a:min() == 0.0999755859375)

-- Uniform numbers: in [low, high), each a float16 value, near the expected mean.
local u = array.random.uniform(20000, { low = 1, high = 2, dtype = "float16", seed = 3 })
for i = 1, u.size do assert(u[i] >= 1 and u[i] < 2, "uniform out of range: " .. u[i]) end
assert(math.abs(u:mean() - 1.5) < 0.01, "uniform mean " .. u:mean())

-- Lua values that are not numbers are errors that name the dtype.
local ok, err = pcall(function() h[1] = "x" end)
assert(not ok and tostring(err):find("float16"), tostring(err))
print("ok")
