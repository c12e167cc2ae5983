-- tostring(a): numpy's repr layout, with the dtype always shown and Lua's true/false.

local function same(a, expected)
  local got = tostring(a)
  assert(got == expected, "\ngot:\n" .. got .. "\nexpected:\n" .. expected)
end

same(array.from({1, 2, 3}, "f32"), "array([1., 2., 3.], dtype=float32)")
same(array.from({{1, -2}, {3, 4}}, "i32"), "array([[ 1, -2],\n       [ 3,  4]], dtype=int32)")
same(array.from({-1.5, 100.25, 3}), "array([ -1.5 , 100.25,   3.  ], dtype=float64)")
same(array.from({1e10, 1}), "array([1.e+10, 1.e+00], dtype=float64)")
same(array.from({1e-5, 1.5, -2}), "array([ 1.0e-05,  1.5e+00, -2.0e+00], dtype=float64)")
same(array.from({1 / 3, 2 / 3}), "array([0.33333333, 0.66666667], dtype=float64)")
same(array.from({1 / 3, 2 / 3}, "f32"), "array([0.33333334, 0.6666667 ], dtype=float32)")
same(array.from({0.1, 0.2, 0.1 + 0.2}), "array([0.1, 0.2, 0.3], dtype=float64)")
same(array.from({-1 / 0, 1 / 0, 0 / 0, 1.5}), "array([-inf,  inf,  nan,  1.5], dtype=float64)")
same(array.from({true, false}), "array([ true, false], dtype=bool)")
same(array.from(5), "array(5., dtype=float64)")
same(array.zeros(0), "array([], dtype=float64)")
same(array.zeros({2, 0}, "i8"), "array([], shape=(2, 0), dtype=int8)")
same(array.from(2^63, "u64"), "array(9223372036854775808, dtype=uint64)")
same(array.arange(8, "i64"):reshape({2, 2, 2}),
     "array([[[0, 1],\n        [2, 3]],\n\n       [[4, 5],\n        [6, 7]]], dtype=int64)")

-- Long rows wrap at 75 columns under the opening bracket.
same(array.arange(30, "u8"),
     "array([ 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14, 15, 16,\n" ..
     "       17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29], dtype=uint8)")

-- Past 1000 elements: 3 items at each edge of each axis, and the shape.
same(array.arange(1001, "i32"),
     "array([   0,    1,    2, ...,  998,  999, 1000],\n      shape=(1001,), dtype=int32)")
same(array.arange(2000, "i16"):reshape({40, 50}),
     "array([[   0,    1,    2, ...,   47,   48,   49],\n" ..
     "       [  50,   51,   52, ...,   97,   98,   99],\n" ..
     "       [ 100,  101,  102, ...,  147,  148,  149],\n" ..
     "       ...,\n" ..
     "       [1850, 1851, 1852, ..., 1897, 1898, 1899],\n" ..
     "       [1900, 1901, 1902, ..., 1947, 1948, 1949],\n" ..
     "       [1950, 1951, 1952, ..., 1997, 1998, 1999]],\n" ..
     "      shape=(40, 50), dtype=int16)")
local big3 = tostring(array.zeros({10, 10, 20}, "bool"))
assert(big3:find("       ...,\n\n       [[false", 1, true), big3)
local tail = "false]]],\n      shape=(10, 10, 20), dtype=bool)"
assert(big3:sub(-#tail) == tail, big3)
-- Elision keeps tostring of a huge array short (and fast).
local huge = tostring(array.zeros(1e8, "f32"))
assert(huge == "array([0., 0., 0., ..., 0., 0., 0.], shape=(100000000,), dtype=float32)", huge)
