-- GPU only: device listing and the current device's facts.
package.path = arg[0]:gsub("[^/]*$", "") .. "lib/?.lua;" .. package.path
require("gpu").require_cuda()

local devices = cuda.list_devices()
assert(#devices >= 1, "no devices listed")
for i, d in ipairs(devices) do
  assert(d.id == i - 1, "device ids count from 0")
  assert(type(d.name) == "string" and #d.name > 0, "device name")
  assert(#d.compute_capability == 2 and d.compute_capability[1] >= 7, "compute capability")
  assert(d.total_memory > 2^30, "total memory above 1 GiB")
  assert(d.multiprocessors > 0, "multiprocessors")
  print(string.format("device %d: %s, compute capability %d.%d, %.1f GB, %d SMs", d.id, d.name,
    d.compute_capability[1], d.compute_capability[2], d.total_memory / 1e9, d.multiprocessors))
end

cuda.select_device(0)
local dev = cuda.get_current_device()
assert(dev.name == devices[1].name, "current device is device 0")
assert(dev.max_threads_per_block == 1024, "max threads per block")
assert(dev.total_memory == devices[1].total_memory)
assert(not pcall(cuda.select_device, #devices + 5), "selecting a missing device must fail")

-- cuda.memory_info(): the device's total as listed; a 1 GiB array is used memory while it lives
-- (the pool's, where there is one; else the device's free memory falls).
local free, total, reserved, used = cuda.memory_info()
assert(total == dev.total_memory and free > 0 and free <= total, "memory_info: " .. free .. " of " .. total)
local gib = cuda.device_array(1 << 28, "float32")
local free2, _, reserved2, used2 = cuda.memory_info()
if reserved2 > 0 then
  assert(used2 - used == 1 << 30 and reserved2 >= used2, ("pool: used %d -> %d"):format(used, used2))
else
  assert(free - free2 >= 1 << 30, ("free %d -> %d"):format(free, free2))
end
gib:free()
cuda.synchronize()  -- (the pool takes a free back in stream order)
local _, _, _, used3 = cuda.memory_info()
assert(used3 == used, ("pool: used %d after the free, %d before the array"):format(used3, used))
print(("memory: %.1f GB free of %.1f GB; pool holds %.2f GB"):format(free / 1e9, total / 1e9, reserved2 / 1e9))
print("ok")
