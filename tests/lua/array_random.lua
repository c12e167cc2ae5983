-- array.random: reproducible streams and the statistics of 1e5 samples.

package.path = arg[0]:gsub("[^/]*$", "") .. "lib/?.lua;" .. package.path
local fails = require("expect").error

local function std(a)
  local m, s = a:mean(), 0
  for i = 1, a.size do s = s + (a[i] - m) ^ 2 end
  return math.sqrt(s / a.size)
end

-- Seeding: array.random.seed makes the state's stream reproducible; opts.seed gives a one-off
-- stream that leaves the state's generator alone.
array.random.seed(42)
local u1 = array.random.uniform(100)
array.random.seed(42)
local u2 = array.random.uniform(100)
assert(array.equal(u1, u2))
local u3 = array.random.uniform(100)
assert(not array.equal(u2, u3), "the stream moves on")
array.random.seed(42)
array.random.uniform(100)
local o = array.random.uniform(5, {seed = 7})
local after = array.random.uniform(100)
assert(array.equal(after, u3), "opts.seed does not disturb the state's generator")
assert(array.equal(o, array.random.uniform(5, {seed = 7})))
assert(not array.equal(o, array.random.uniform(5, {seed = 8})))
assert(array.equal(array.random.normal({2, 3}, {seed = 1}), array.random.normal({2, 3}, {seed = 1})))
assert(array.equal(array.random.integers(0, 9, 50, {seed = 1}), array.random.integers(0, 9, 50, {seed = 1})))

-- The documented algorithm: xoshiro256** seeded by splitmix64; uniform = (next >> 11) * 2^-53.
-- With seed 0 the state is splitmix64's first four outputs and the first output is
-- 0x99ec5f36cb75f2b4 (computed with Vigna's reference code).
assert(array.random.uniform(1, {seed = 0})[1] == (0x99ec5f36cb75f2b4 >> 11) * 2.0^-53)

-- uniform: [low, high), mean and std of U(a, b).
local n = 100000
local u = array.random.uniform(n, {seed = 123})
assert(u.dtype == "float64" and u.size == n)
assert(u:min() >= 0 and u:max() < 1)
assert(math.abs(u:mean() - 0.5) < 0.005)
assert(math.abs(std(u) - math.sqrt(1 / 12)) < 0.005)
local w = array.random.uniform({100, 1000}, {low = -2, high = 6, dtype = "f32", seed = 5})
assert(w.dtype == "float32" and w.shape[1] == 100 and w.shape[2] == 1000)
assert(w:min() >= -2 and w:max() < 6)
assert(math.abs(w:mean() - 2) < 0.04)
assert(math.abs(std(w) - 8 / math.sqrt(12)) < 0.04)

-- normal: mean, std, and the share within one sigma (68.27%).
local g = array.random.normal(n, {loc = 3, scale = 2, seed = 9})
assert(g.dtype == "float64")
assert(math.abs(g:mean() - 3) < 0.03)
assert(math.abs(std(g) - 2) < 0.03)
local inside = 0
for i = 1, n do if math.abs(g[i] - 3) < 2 then inside = inside + 1 end end
assert(math.abs(inside / n - 0.6827) < 0.01)
-- float32 draws the same stream as float64, rounded once; an odd size keeps the last pair's first.
local g32 = array.random.normal(1001, {dtype = "float32", seed = 1})
local g64 = array.random.normal(1001, {dtype = "float64", seed = 1})
assert(g32.dtype == "float32" and g32.size == 1001)
for i = 1, 1001 do
  assert(g32[i] == string.unpack("f", string.pack("f", g64[i])), "element " .. i)
end

-- integers: [low, high), every value hit about equally often.
local k = array.random.integers(-3, 7, n, {seed = 11})
assert(k.dtype == "int64" and k:min() == -3 and k:max() == 6 and math.type(k[1]) == "integer")
local counts = {}
for i = 1, n do counts[k[i]] = (counts[k[i]] or 0) + 1 end
for v = -3, 6 do assert(math.abs(counts[v] / n - 0.1) < 0.006, "value " .. v) end
assert(math.abs(k:mean() - 1.5) < 0.05)
local small = array.random.integers(0, 256, {16, 16}, {dtype = "u8", seed = 2})
assert(small.dtype == "uint8" and small:max() <= 255)
local full = array.random.integers(math.mininteger, math.maxinteger, 1000, {seed = 3})
assert(full:min() < -2^62 and full:max() > 2^62, "the full int64 range")
assert(array.random.integers(5, 6, 10, {seed = 1}):sum() == 50)

-- Bad input.
fails("need low < high", array.random.integers, 5, 5, 3)
fails("does not fit in uint8", array.random.integers, 0, 300, 3, {dtype = "u8"})
fails("dtype must be an integer dtype", array.random.integers, 0, 3, 3, {dtype = "f32"})
fails("dtype must be float32, float64, float16 or bfloat16", array.random.uniform, 3, {dtype = "i32"})
fails("need finite low < high", array.random.uniform, 3, {low = 1, high = 0})
fails("scale >= 0", array.random.normal, 3, {scale = -1})
fails("opts.seed must be an integer", array.random.uniform, 3, {seed = 1.5})
fails("opts.low must be a number", array.random.uniform, 3, {low = "x"})
fails("unknown dtype 'f8'", array.random.normal, 3, {dtype = "f8"})
