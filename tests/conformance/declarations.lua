-- Conformance: declarations (kernels/declarations.cu) against references computed here.
local here = arg[0]:match("^(.*)/") or "."
local m = cuda.module({ file = here .. "/kernels/declarations.cu" })

-- A static __constant__ table whose size is a macro, and a __device__ counter.
local taps = array.from({ 1, 2, 3, 4, 5, 4, 3, 2, 1 }, "float32")
m:set_constant("c_Kernel", taps)
m:set_constant("d_calls", 0)
local w, h = 77, 13
local img = array.random.uniform({ h, w }, { dtype = "float32", seed = 3 })
local dst = cuda.device_array({ h, w }, "float32")
m.convolution_rows[{ { (w + 31) // 32, h }, { 32, 1 } }](dst, cuda.to_device(img), w, h)
local out = dst:copy_to_host()
for y = 1, h do
  for x = 1, w do
    local s = 0
    for k = -4, 4 do
      local xx = math.min(math.max(x + k, 1), w)
      s = s + img:get(y, xx) * taps[5 - k]
    end
    assert(math.abs(out:get(y, x) - s) <= 1e-5 * math.abs(s), ("row pass at %d,%d: %g, expected %g"):format(y, x, out:get(y, x), s))
  end
end
local ok, err = pcall(function() m:set_constant("c_Kernel", array.zeros(10, "float32")) end)
assert(not ok and tostring(err):find("c_Kernel"), "10 values into a 9-element table: " .. tostring(err))

-- Dynamic shared memory, type before __shared__, in a template (float and int instantiations).
for _, dtype in ipairs({ "float32", "int32" }) do
  local x = array.arange(4 * 64, dtype)
  local y = cuda.device_array(4 * 64, dtype)
  m.reverse_blocks[{ 4, 64, 0, 64 * 4 }](cuda.to_device(x), y)
  local hy = y:copy_to_host()
  for i = 0, 4 * 64 - 1 do
    local b, t = i // 64, i % 64
    assert(hy[i + 1] == b * 64 + (63 - t), dtype .. " reverse at " .. i)
  end
end
local xd = array.random.uniform(3 * 32, { seed = 4 })
local yd = cuda.device_array(3 * 32)
m.reverse_bytes[{ 3, 32, 0, 32 * 8 }](cuda.to_device(xd), yd)
local hd = yd:copy_to_host()
for i = 0, 3 * 32 - 1 do
  assert(hd[i + 1] == xd[(i // 32) * 32 + 31 - i % 32 + 1], "reverse_bytes at " .. i)
end

local xt = array.random.uniform(2 * 256, { dtype = "float32", seed = 5 })
local yt = cuda.device_array(2 * 256, "float32")
m.transpose_rows[{ 2, 256, 0, 256 * 4 }](cuda.to_device(xt), yt)
local ht = yt:copy_to_host()
for i = 0, 2 * 256 - 1 do
  local b, r, c = i // 256, (i % 256) // 16, i % 16
  assert(ht[i + 1] == xt[b * 256 + c * 16 + r + 1], "transpose_rows at " .. i)
end

-- Kernels named like C and CUDA functions.
local named = { a = 1, f = 2, min = 3, max = 4, rand = 5, time = 6, index = 7, select = 8, div = 9 }
for name, value in pairs(named) do
  local o = cuda.device_array(8, "int32")
  if value > 4 then m[name][{ 1, 8 }](o, 8) else m[name][{ 1, 8 }](o) end
  local ho = o:copy_to_host()
  for i = 1, 8 do assert(ho[i] == value, "kernel " .. name) end
end
-- `main` cannot be a kernel in CUDA: the error says so.
ok, err = pcall(function() cuda.module("__global__ void main(int* o) { o[0] = 1; }").main[{ 1, 1 }](cuda.device_array(1, "int32")) end)
assert(not ok and tostring(err):find("main"), tostring(err))
print("ok")
