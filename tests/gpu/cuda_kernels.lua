-- GPU only: kernels launched through NVRTC, checked against CPU references.
package.path = arg[0]:gsub("[^/]*$", "") .. "lib/?.lua;" .. package.path
require("gpu").require_cuda()

-- saxpy, templated on the element type.
local saxpy = cuda.jit([[
template <typename T>
__global__ void saxpy(T a, const T* x, T* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
]])
local n = 1000003
local x = array.random.uniform(n, {seed = 3, dtype = "float32"})
local y = array.random.uniform(n, {seed = 4, dtype = "float32"})
local expected = array.empty(n, "float32")
for i = 1, n do expected[i] = 2.5 * x[i] + y[i] end
local dx, dy = cuda.to_device(x), cuda.to_device(y)
saxpy[{(n + 255) // 256, 256}](2.5, dx, dy, n)
local got = dy:copy_to_host()
assert(array.allclose(got, expected, 1e-6, 1e-6), "saxpy: max diff " .. array.max_abs_diff(got, expected))

-- forall picks the block size (occupancy); float64 instantiation of the same template.
local xd, yd = x:astype("float64"), y:astype("float64")
local dyd = cuda.to_device(yd)
saxpy:forall(n)(2.5, cuda.to_device(xd), dyd, n)
local expected64 = array.empty(n)
for i = 1, n do expected64[i] = 2.5 * xd[i] + yd[i] end
assert(array.allclose(dyd:copy_to_host(), expected64), "forall saxpy float64")

-- 2-D grid with kiln::Array shapes.
local add2d = cuda.jit([[
#include <kiln.cuh>
__global__ void add2d(kiln::Array<const int, 2> a, kiln::Array<int, 2> out) {
  auto [i, j] = kiln::grid<2>();
  if (i < a.shape[0] && j < a.shape[1]) out(i, j) = a(i, j) + int(i) * 1000 + int(j);
}
]])
local a = array.random.integers(0, 100, {300, 200}, {dtype = "int32", seed = 5})
local out = cuda.device_array({300, 200}, "int32")
add2d[{{(300 + 15) // 16, (200 + 15) // 16}, {16, 16}}](cuda.to_device(a), out)
local h = out:copy_to_host()
for i = 1, 300 do
  for j = 1, 200 do
    assert(h:get(i, j) == a:get(i, j) + (i - 1) * 1000 + (j - 1), "add2d at " .. i .. "," .. j)
  end
end

-- Dynamic shared memory above 48 KiB needs the opt-in attribute, which the backend sets.
local dev = cuda.get_current_device()
local rev = cuda.jit([[
extern "C" __global__ void reverse(const float* in, float* out, int n) {
  extern __shared__ float tile[];
  for (int i = threadIdx.x; i < n; i += blockDim.x) tile[i] = in[i];
  __syncthreads();
  for (int i = threadIdx.x; i < n; i += blockDim.x) out[i] = tile[n - 1 - i];
}
]])
local m = 20000  -- 80000 bytes of shared memory
local src = array.arange(m, "float32")
local dst = cuda.device_array(m, "float32")
rev[{1, 256, 0, m * 4}](cuda.to_device(src), dst, m)
local r = dst:copy_to_host()
for i = 1, m do
  assert(r[i] == m - i, "reverse through 80 KB of shared memory, element " .. i)
end

-- Limits are checked before launch, with a clear message.
local ok, err = pcall(function() rev[{1, 2048}](cuda.to_device(src), dst, m) end)
assert(not ok and err:find("reverse", 1, true) and err:find("2048", 1, true) and err:find("1024", 1, true),
       "block of 2048 threads must be refused, naming the kernel and the limit: " .. tostring(err))
ok, err = pcall(function() rev[{1, 256, 0, 1 << 30}](cuda.to_device(src), dst, m) end)
assert(not ok and err:find("shared memory"), "1 GiB of shared memory must be refused: " .. tostring(err))

local info = saxpy:info()
assert(info.registers > 0 and info.backend == "cuda", "k:info()")
-- The field the cpu backend fills with its plan has a value here too, so that a script printing
-- it runs on both backends.
assert(info.threads == "hardware" and info.why ~= nil, "k:info().threads: " .. tostring(info.threads))
assert(saxpy:ptx():find(".entry"), "k:ptx()")
print("ok")
