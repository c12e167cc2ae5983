-- GPU only: running out of device memory is a catchable error naming the bytes asked for and
-- the memory free, and the device keeps working afterwards.
package.path = arg[0]:gsub("[^/]*$", "") .. "lib/?.lua;" .. package.path
require("gpu").require_cuda()

local dev = cuda.get_current_device()
-- Seed 004's overflow, scaled to this device: twice its memory in float64.
local n = math.floor(dev.total_memory / 8) * 2
local ok, err = pcall(cuda.device_array, n, "float64")
assert(not ok, "allocating twice the device memory succeeded")
print(err)
local bytes = string.format("%d", n * 8)
assert(err:find("out of device memory: cannot allocate", 1, true), err)
assert(err:find("(" .. bytes .. " bytes)", 1, true), err)
assert(err:find("free of", 1, true) and err:find(dev.name, 1, true), err)

-- The seed's own case: 2e9 elements (16 GB of float64) either fits or fails the same way.
ok, err = pcall(cuda.device_array, 2e9, "float64")
if not ok then assert(err:find("(16000000000 bytes)", 1, true), err) end
collectgarbage()

-- Memory held only by garbage is reclaimed: allocate 3/4 of the device several times over.
local chunk = math.floor(dev.total_memory * 0.75 / 8)
for _ = 1, 3 do
  local d = cuda.device_array(chunk, "float64")
  assert(d.size == chunk)
end
local small = cuda.to_device(array.arange(10))
assert(small:copy_to_host()[10] == 9)
print("ok")
