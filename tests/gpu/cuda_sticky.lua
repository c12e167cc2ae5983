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

cuda.reset()
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
