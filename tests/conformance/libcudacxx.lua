-- Conformance: libcu++ in kernels (kernels/libcudacxx.cu) against references computed here.
local here = arg[0]:match("^(.*)/") or "."
local m = cuda.module({ file = here .. "/kernels/libcudacxx.cu" })
local n = 5000
local x = array.random.uniform(n, { low = 0, high = 4, dtype = "float32", seed = 41 })
local bins = cuda.to_device(array.zeros(4, "uint32"))
local biggest = cuda.to_device(array.zeros(1, "float32"))
local parts = cuda.device_array(2 * n + 1, "float32")
m.stats[{ (n + 255) // 256, 256 }](cuda.to_device(x), bins, biggest, parts, n)
local want, top = { 0, 0, 0, 0 }, 0
for i = 1, n do
  local b = (x[i] >= 1 and 1 or 0) + (x[i] >= 2 and 1 or 0) + (x[i] >= 3 and 1 or 0)
  want[b + 1] = want[b + 1] + 1
  top = math.max(top, x[i])
end
local hb, hp = bins:copy_to_host(), parts:copy_to_host()
for b = 1, 4 do assert(hb[b] == want[b], ("bin %d: %d, expected %d"):format(b - 1, hb[b], want[b])) end
assert(biggest:copy_to_host()[1] == top, "atomic_ref maximum")
for i = 1, n do
  local whole = math.floor(x[i])
  assert(hp[2 * i - 1] == whole and math.abs(hp[2 * i] - (x[i] - whole)) < 1e-6, "tuple at " .. i)
end
assert(hp[2 * n + 1] == (2 - 2 ^ -23) * 2 ^ 127, "numeric_limits<float>::max()")
print("ok")
