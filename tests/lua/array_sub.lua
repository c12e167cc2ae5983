-- Sub-arrays (a:sub, d:sub): contiguous views that share memory, on the host and the device;
-- a device sub-array passes to kernels at its offset and copies just its part.
package.path = arg[0]:gsub("[^/]*$", "") .. "lib/?.lua;" .. package.path
local expect = require("expect")

-- Host: a {2, 3, 4} array whose element (i, j, k) is 100i + 10j + k.
local a = array.zeros({ 2, 3, 4 }, "int32")
for i = 1, 2 do for j = 1, 3 do for k = 1, 4 do a:set(i, j, k, 100 * i + 10 * j + k) end end end
local function same(sub, want_shape, f)
  assert(#sub.shape == #want_shape, "rank")
  for d = 1, #want_shape do assert(sub.shape[d] == want_shape[d], "extent " .. d) end
  for n = 1, sub.size do assert(sub[n] == f(n), ("element %d: %s"):format(n, sub[n])) end
end
same(a:sub(2, 2), { 1, 3, 4 }, function(n) return 200 + 10 * ((n - 1) // 4 + 1) + (n - 1) % 4 + 1 end)
same(a:sub({ 1, 1 }, { 2, 3 }), { 1, 2, 4 }, function(n) return 100 + 10 * ((n - 1) // 4 + 2) + (n - 1) % 4 + 1 end)
same(a:sub({ 2, 2 }, { 3, 3 }, { 2, 4 }), { 1, 1, 3 }, function(n) return 230 + n + 1 end)
same(a:sub({ -1, -1 }, { -1, -1 }, { -2, -1 }), { 1, 1, 2 }, function(n) return 232 + n end)
assert(a:sub(1, 0).size == 0)
-- Writes through a sub-array show in the array, and back.
local row = a:sub({ 1, 1 }, { 2, 2 })
row[1] = -1
assert(a:get(1, 2, 1) == -1)
a:set(1, 2, 4, -4)
assert(row[4] == -4)
-- Only contiguous selections; ranges checked.
expect.error("not a column", function() return a:sub({ 1, 2 }, { 2, 2 }) end)
expect.error("range 1..5 is outside dimension 3 (size 4)", function() return a:sub({ 1, 1 }, { 1, 1 }, { 1, 5 }) end)
expect.error("3 ranges for a 1-d array", function() return array.zeros(4):sub({ 1, 1 }, { 1, 1 }, { 1, 1 }) end)

-- Device: a kernel on the middle of an array touches only that part.
local h = array.arange(100, "float32")
local d = cuda.to_device(h)
local add = cuda.jit("__global__ void add(float* x, float v, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] += v; }")
local mid = d:sub(41, 60)
assert(#mid == 20 and mid.shape[1] == 20)
add[{ 1, 32 }](mid, 1000, #mid)
local back = d:copy_to_host()
for n = 1, 100 do
  local want = (n >= 41 and n <= 60) and (n - 1 + 1000) or (n - 1)
  assert(back[n] == want, ("device element %d: %s"):format(n, back[n]))
end
local part = mid:copy_to_host()
for n = 1, 20 do assert(part[n] == 40 + n - 1 + 1000, "sub copy " .. n) end
mid:copy_to_device(array.full(20, -1, "float32"))
back = d:copy_to_host()
assert(back[40] == 39 and back[41] == -1 and back[60] == -1 and back[61] == 60)
-- A view of a sub-array keeps its offset; neither owns the memory.
assert(d:sub(11, 12):view("int32"):copy_to_host()[1] == 1092616192)  -- the bits of 10.0f
expect.error("does not own its memory", function() mid:free() end)
print("ok")
