-- GPU only: host -> device -> host copies for every dtype, device-to-device copies, pinned arrays.
package.path = arg[0]:gsub("[^/]*$", "") .. "lib/?.lua;" .. package.path
require("gpu").require_cuda()

for _, dtype in ipairs({"float32", "float64", "int8", "uint8", "int16", "uint16", "int32",
                        "uint32", "int64", "uint64"}) do
  local h = array.arange(1000, dtype)
  local d = cuda.to_device(h)
  assert(d.dtype == dtype and d.size == 1000, dtype .. ": device array shape/dtype")
  local back = d:copy_to_host()
  assert(array.equal(h, back), dtype .. ": round trip changed values")
end

-- A 2-D array keeps its shape; copying into an existing host array fills it.
local h = array.random.uniform({512, 384}, {seed = 1})
local d = cuda.to_device(h)
assert(d.ndim == 2 and d.shape[1] == 512 and d.shape[2] == 384)
local out = array.zeros({512, 384})
d:copy_to_host(out)
assert(array.equal(h, out), "copy_to_host(out)")

-- device_array_like and a large (256 MB) transfer.
local big = array.random.normal(32 * 1024 * 1024, {seed = 2})
local dbig = cuda.to_device(big)
local like = cuda.device_array_like(dbig)
assert(like.size == big.size and like.dtype == "float64")
assert(array.equal(dbig:copy_to_host(), big), "large round trip")

-- Pinned host memory and copies on a stream.
local pinned = cuda.pinned_array(1 << 20, "float32")
for i = 1, pinned.size, 4097 do pinned[i] = i end
local s = cuda.stream()
local dp = cuda.to_device(pinned, s)
local back = cuda.pinned_array(1 << 20, "float32")
dp:copy_to_host(back, s)
s:synchronize()
assert(array.equal(pinned, back), "pinned round trip on a stream")

-- Freed arrays say so; allocating in a loop stays cheap (the pool recycles memory).
local f = cuda.to_device(array.ones(10))
f:free()
assert(not pcall(function() return f:copy_to_host() end), "use after free must fail")
for _ = 1, 2000 do cuda.device_array(1 << 16) end
collectgarbage()
print("ok")
