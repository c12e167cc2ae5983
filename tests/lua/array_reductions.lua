-- Reductions and comparisons, against known answers.

package.path = arg[0]:gsub("[^/]*$", "") .. "lib/?.lua;" .. package.path
local fails = require("expect").error

-- Integer dtypes give Lua integers, exactly.
local r = array.arange(101, "i64")
assert(r:sum() == 5050 and math.type(r:sum()) == "integer")
assert(r:min() == 0 and r:max() == 100 and math.type(r:max()) == "integer")
assert(r:mean() == 50.0 and math.type(r:mean()) == "float")
local big = array.full(3, 2^62 // 1, "i64")
fails("does not fit in int64", big.sum, big)
local mixed = array.from({math.maxinteger, 1, -2}, "i64")
assert(mixed:sum() == math.maxinteger - 1, "exact through intermediate overflow")
local u8 = array.full(1000, 255, "u8")
assert(u8:sum() == 255000, "no wrap in the accumulator")
local neg = array.from({-5, 3, -9, 7}, "i8")
assert(neg:sum() == -4 and neg:min() == -9 and neg:max() == 7 and neg:mean() == -1.0)
local b = array.from({true, false, true, true})
assert(b:sum() == 3 and b:min() == false and b:max() == true and b:mean() == 0.75)
local u64 = array.from({2^63, 1}, "u64")
assert(u64:max() == math.mininteger and u64:min() == 1)  -- (2^63: the integer of its bits)

-- Float sums are compensated: exact where naive summation is not.
assert(array.from({1e16, 1, -1e16}):sum() == 1.0)
assert(array.full(1e6, 0.1):sum() == 100000.0)  -- naive: 100000.00000133288
assert(array.full(1e6, 0.1, "f32"):sum() == 1e6 * 0.10000000149011612)
local x = array.from({3.5, -1.25, 8, 0.5})
assert(x:sum() == 10.75 and x:min() == -1.25 and x:max() == 8.0 and x:mean() == 2.6875)
assert(math.type(x:max()) == "float")

-- NaN propagates through min/max/sum, as in numpy.
local n = array.from({1, 0/0, 3})
assert(n:min() ~= n:min() and n:max() ~= n:max() and n:sum() ~= n:sum())
assert(array.from({1, 1/0}):sum() == math.huge)

-- Empty arrays.
assert(array.zeros(0):sum() == 0.0 and array.zeros(0, "i32"):sum() == 0)
fails("min: the array is empty", function() return array.zeros(0):min() end)
fails("max: the array is empty", function() return array.zeros(0):max() end)
fails("mean: the array is empty", function() return array.zeros(0):mean() end)

-- equal: same shape and values, whatever the dtypes.
local a = array.from({{1, 2}, {3, 4}})
assert(array.equal(a, a:copy()))
assert(array.equal(a, a:astype("i32")))
assert(array.equal(a:astype("u8"), a:astype("f32")))
assert(not array.equal(a, a:reshape(4)))
local c = a:copy()
c[4] = 4.5
assert(not array.equal(a, c))
assert(not array.equal(array.from({0/0}), array.from({0/0})))
assert(array.equal(array.from({2^53 + 1}, "i64"), array.from({2^53 + 1}, "i64")))
assert(not array.equal(array.from({math.maxinteger}, "i64"), array.from({math.maxinteger - 1}, "i64")))
local i1 = array.from({9007199254740993}, "i64")  -- 2^53 + 1: no float64 equals it
assert(not array.equal(i1, i1:astype("f64")))

-- allclose: |a - b| <= atol + rtol * |b|.
local p = array.from({1.0, 100.0})
local q = array.from({1.0 + 1e-6, 100.0 + 1e-3})
assert(array.allclose(p, q))  -- 1e-3 <= 1e-8 + 1e-5 * 100.001
assert(not array.allclose(p, array.from({1.0, 100.01})))
assert(array.allclose(p, array.from({1.0, 100.01}), 1e-3))
assert(array.allclose(array.from({0.0}), array.from({1e-9})))
assert(not array.allclose(array.from({0.0}), array.from({1e-7})))
assert(array.allclose(array.from({0.0}), array.from({1e-7}), 0, 1e-6))
assert(not array.allclose(array.from({0 / 0}), array.from({0 / 0})))
assert(array.allclose(array.from({1 / 0}), array.from({1 / 0})))
assert(not array.allclose(array.from({1 / 0}), array.from({-1 / 0})))
assert(not array.allclose(array.from({1e308}), array.from({1 / 0}), 1))
assert(array.allclose(array.from({1, 2}, "i32"), array.from({1, 2}, "f32")))
fails("allclose: shapes differ: (2,) and (3,)", array.allclose, p, array.zeros(3))

-- max_abs_diff: a float.
assert(array.max_abs_diff(p, array.from({0.5, 103.0})) == 3.0)
assert(array.max_abs_diff(a, a) == 0.0 and math.type(array.max_abs_diff(a, a)) == "float")
assert(array.max_abs_diff(array.from({1}, "u8"), array.from({3}, "i8")) == 2.0)
local d = array.max_abs_diff(array.from({1, 0/0}), array.from({1, 2}))
assert(d ~= d)
fails("max_abs_diff: shapes differ: (2, 2) and (4,)", array.max_abs_diff, a, a:reshape(4))
