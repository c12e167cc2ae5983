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
print("ok")
