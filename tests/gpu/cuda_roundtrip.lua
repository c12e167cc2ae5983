-- GPU only: host -> device -> host copies for every dtype, device-to-device copies, pinned arrays.
package.path = arg[0]:gsub("[^/]*$", "") .. "lib/?.lua;" .. package.path
require("gpu").require_cuda()

-- Asserts that two host arrays hold the same shape and values, element by element (a reference
-- written here, not kiln's own array.equal).
local function same(a, b, what)
  assert(a.size == b.size and a.ndim == b.ndim, what .. ": shapes differ")
  for i = 1, a.size do
    if a[i] ~= b[i] then error(string.format("%s: element %d is %s, expected %s", what, i, b[i], a[i])) end
  end
end

for _, dtype in ipairs({"float32", "float64", "int8", "uint8", "int16", "uint16", "int32",
                        "uint32", "int64", "uint64"}) do
  local n = dtype:find("8") and 100 or 1000  -- within int8's range
  local h = array.arange(n, dtype)
  local d = cuda.to_device(h)
  assert(d.dtype == dtype and d.size == n, dtype .. ": device array shape/dtype")
  local back = d:copy_to_host()
  same(h, back, dtype .. " round trip")
end

-- A 2-D array keeps its shape; copying into an existing host array fills it.
local h = array.random.uniform({512, 384}, {seed = 1})
local d = cuda.to_device(h)
assert(d.ndim == 2 and d.shape[1] == 512 and d.shape[2] == 384)
local out = array.zeros({512, 384})
d:copy_to_host(out)
same(h, out, "copy_to_host(out)")

-- device_array_like and a large (256 MB) transfer.
local big = array.random.normal(32 * 1024 * 1024, {seed = 2})
local dbig = cuda.to_device(big)
local like = cuda.device_array_like(dbig)
assert(like.size == big.size and like.dtype == "float64")
-- (Every 4099th element and the last: a Lua loop over all 32 Mi elements takes over a minute.)
local back_big = dbig:copy_to_host()
for i = 1, big.size, 4099 do
  if big[i] ~= back_big[i] then error("large round trip: element " .. i .. " differs") end
end
assert(big[big.size] == back_big[big.size], "large round trip: the last element differs")

-- Pinned host memory and copies on a stream.
local pinned = cuda.pinned_array(1 << 20, "float32")
for i = 1, pinned.size, 4097 do pinned[i] = i end
local s = cuda.stream()
local dp = cuda.to_device(pinned, s)
local back = cuda.pinned_array(1 << 20, "float32")
dp:copy_to_host(back, s)
s:synchronize()
same(pinned, back, "pinned round trip on a stream")

-- Freed arrays say so, and their memory comes back: 1.5 times the device's memory allocated in
-- 24 pieces (at least 1 GiB each) must never run out, whether freed explicitly or by the
-- collector. (The memory's state is in the log. Each message is built only on failure: an
-- array's text once copied the whole array, which made this loop take minutes.)
local f = cuda.to_device(array.ones(10))
f:free()
assert(not pcall(function() return f:copy_to_host() end), "use after free must fail")
local _, total = cuda.memory_info()
local piece = math.max(1 << 28, (total // 16) // 4)  -- float32 elements
local function memory(when)
  local free, all, reserved, used = cuda.memory_info()
  print(("%s: %.1f GB free of %.1f GB; the pool holds %.1f GB, arrays use %.1f GB"):format(
    when, free / 1e9, all / 1e9, reserved / 1e9, used / 1e9))
end
for i = 1, 24 do
  local ok, err = pcall(function() cuda.device_array(piece, "float32"):free() end)
  if not ok then error("explicit free, allocation " .. i .. ": " .. tostring(err)) end
end
memory("after the explicit frees")
for i = 1, 24 do
  local ok, err = pcall(cuda.device_array, piece, "float32")
  if not ok then error("collected arrays, allocation " .. i .. ": " .. tostring(err)) end
  collectgarbage()
  if i <= 2 or i == 24 then memory("collected arrays, allocation " .. i) end
end
print("ok")
