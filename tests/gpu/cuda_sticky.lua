-- GPU only: a kernel fault breaks the context; the error names the kernel and cuda.reset();
-- reset() recreates the context, old arrays say they are invalid, and launches work again.
package.path = arg[0]:gsub("[^/]*$", "") .. "lib/?.lua;" .. package.path
require("gpu").require_cuda()

local wild = cuda.jit([[
extern "C" __global__ void wild_write(int* p) { p[1ll << 40] = 1; }
]])
local old = cuda.to_device(array.arange(16, "int32"))
local ok, err = pcall(function()
  wild[{1, 1}](old)
  cuda.synchronize()
end)
assert(not ok, "a write 4 TB past an array did not fault")
print(err)
assert(err:find("broken by an earlier fault in kernel 'wild_write'", 1, true), err)
assert(err:find("cuda.reset()", 1, true), err)

-- Everything fails the same way until the reset.
ok, err = pcall(cuda.to_device, array.ones(4))
assert(not ok and err:find("cuda.reset()", 1, true), tostring(err))

-- The driver recreates the context, or refuses to for the rest of the process (CUDA documents
-- an illegal address so): then the error says to restart kiln, later calls say the same, and
-- the Lua state and host arrays carry on.
ok, err = pcall(cuda.reset)
if not ok then
  print(err)
  assert(err:find("restart kiln", 1, true), err)
  local later_ok, later = pcall(cuda.to_device, array.ones(4))
  assert(not later_ok and later:find("restart kiln", 1, true), tostring(later))
  local h = array.arange(10, "int32")
  assert(h[10] == 9, "host arrays after a refused reset")
  print("ok (the driver keeps this process from the GPU after the fault)")
  os.exit(0)
end
ok, err = pcall(function() return old:copy_to_host() end)
assert(not ok and err:lower():find("invalid"), "an array from before the reset must say it is invalid: " .. tostring(err))

local inc = cuda.jit([[
extern "C" __global__ void inc(int* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += 1;
}
]])
local d = cuda.to_device(array.arange(1000, "int32"))
inc[{4, 256}](d, 1000)
local h = d:copy_to_host()
assert(h[1] == 1 and h[1000] == 1000, "launch after reset")
-- The faulting kernel's module reloads too (the cache survives the reset).
local d2 = cuda.to_device(array.arange(8, "int32"))
inc[{1, 32}](d2, 8)
assert(d2:copy_to_host()[8] == 8)
print("ok")
