-- Conformance: grid-wide synchronisation (kernels/grid_sync.cu) against a Lua reference.
local here = arg[0]:match("^(.*)/") or "."
local m = cuda.module({ file = here .. "/kernels/grid_sync.cu" })
local n = 200003
local x = array.random.integers(-100, 100, n, { dtype = "int32", seed = 51 })
local want = 0
for i = 1, n do want = want + x[i] end
for _, blocks in ipairs({ 1, 6, 32 }) do
  local partial = cuda.device_array(blocks, "int32")
  local out = cuda.device_array(blocks * 128, "int32")
  m.grid_sum[{ blocks, 128 }](cuda.to_device(x), partial, out, n)
  local h = out:copy_to_host()
  for i = 1, blocks * 128 do
    assert(h[i] == want, ("%d blocks, thread %d: %d, expected %d"):format(blocks, i - 1, h[i], want))
  end
end
-- A grid that cannot be resident at once is refused, naming the kernel and the sizes.
local ok, err = pcall(function()
  m.grid_sum[{ 1 << 20, 128 }](cuda.to_device(x), cuda.device_array(1, "int32"),
                                cuda.device_array(1, "int32"), n)
end)
assert(not ok and tostring(err):find("kernel 'grid_sum' synchronises its grid", 1, true), tostring(err))
-- The module's other kernel is not cooperative.
local big = cuda.device_array(4096 * 4, "int32")
m.fill[{ 4096, 4 }](big)
local hb = big:copy_to_host()
assert(hb[1] == 7 and hb[#hb] == 7)
print("ok")
