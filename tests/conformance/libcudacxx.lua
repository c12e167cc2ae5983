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

-- C++20's headers and a concept, as NVRTC compiles them (C++20): the cpu backend's host
-- compiler is given C++20 for such a source.
local cpp20 = cuda.jit([[
#include <cuda/std/bit>
#include <cuda/std/numbers>
#include <cuda/std/span>
template <class T> concept Small = sizeof(T) <= 4;
template <Small T> __device__ T twice(T v) { return v + v; }
__global__ void cpp20(unsigned* out, float* f) {
  out[0] = cuda::std::popcount(0xf0f0u);
  out[1] = cuda::std::countl_zero(1u);
  cuda::std::span<unsigned> s(out, 4);
  s[2] = (unsigned)s.size();
  out[3] = twice(7u);
  f[0] = cuda::std::numbers::pi_v<float>;
}]])
local o20, f20 = cuda.device_array(4, "uint32"), cuda.device_array(1, "float32")
cpp20[{ 1, 1 }](o20, f20)
local h20 = o20:copy_to_host()
assert(h20[1] == 8 and h20[2] == 31 and h20[3] == 4 and h20[4] == 14, tostring(h20))
assert(math.abs(f20:copy_to_host()[1] - math.pi) < 1e-6, "numbers::pi_v")

-- A cuda::std::array by value takes a Lua table of its elements (a weighted sum of four taps).
local taps = cuda.jit([[
#include <cuda/std/array>
__global__ void taps(cuda::std::array<float, 4> w, const cuda::std::array<int, 2> shift,
                     const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float acc = 0.0f;
  for (int k = 0; k < (int)w.size(); ++k) acc += w[k] * x[(i + k) % n];
  y[i] = acc * shift[0] + shift[1];
}]])
local tn = 100
local tx = array.random.uniform(tn, { dtype = "float32", seed = 43 })
local ty = cuda.device_array(tn, "float32")
taps[{ 1, 128 }]({ 0.5, -1, 2, 0.25 }, { 3, -7 }, cuda.to_device(tx), ty, tn)
local hy = ty:copy_to_host()
for i = 0, tn - 1 do
  local acc = 0.5 * tx[i + 1] - tx[(i + 1) % tn + 1] + 2 * tx[(i + 2) % tn + 1] + 0.25 * tx[(i + 3) % tn + 1]
  assert(math.abs(hy[i + 1] - (3 * acc - 7)) < 1e-4, ("taps %d: %s, want %s"):format(i, hy[i + 1], 3 * acc - 7))
end
local ok, err = pcall(function() taps[{ 1, 128 }]({ 1, 2, 3 }, { 3, -7 }, cuda.to_device(tx), ty, tn) end)
assert(not ok and tostring(err):find("parameter 1 'w'", 1, true) and tostring(err):find("table of 4 values", 1, true), tostring(err))
ok, err = pcall(function() taps[{ 1, 128 }]({ 1, 2, 3, 4 }, { a = 1 }, cuda.to_device(tx), ty, tn) end)
assert(not ok and tostring(err):find("parameter 2 'shift'", 1, true) and tostring(err):find("table of its elements", 1, true), tostring(err))

-- A struct whose fields are cuda::std::arrays (a template's arguments hold a comma) takes
-- tables for them.
local fields = cuda.jit([[
#include <cuda/std/array>
#include <cuda/std/cstdint>
struct Mix { cuda::std::array<float, 3> w; cuda::std::int8_t tag; cuda::std::array<short, 2> b; double d; };
__global__ void mix(Mix m, double* out) {
  out[0] = m.w[0] + m.w[1] * 10 + m.w[2] * 100; out[1] = m.tag; out[2] = m.b[0] - m.b[1]; out[3] = m.d;
}]])
local mo = cuda.device_array(4, "float64")
fields[{ 1, 1 }]({ w = { 1, 2, 3 }, tag = -4, b = { 50, 8 }, d = 0.5 }, mo)
local hmo = mo:copy_to_host()
assert(hmo[1] == 321 and hmo[2] == -4 and hmo[3] == 42 and hmo[4] == 0.5, tostring(hmo))

-- A compile error in a source that includes both <cstdint> and libcu++'s limits and cmath shows
-- the error alone: kiln's NVRTC <stdint.h> spells its macros as libcu++ does, and NVRTC's
-- warnings that libcu++ redefines INFINITY and NAN (which kiln's math.h, pre-included as nvcc's
-- is, defines its own way) are left out of the log.
local broken = cuda.jit([[
#include <cstdint>
#include <cuda/std/cmath>
#include <cuda/std/limits>
__global__ void f(float* x) { x[0] = ::cuda::std::no_such_thing(x[0]); }]])
local ok2, err2 = pcall(function() broken[{ 1, 1 }](cuda.device_array(1, "float32")) end)
assert(not ok2 and tostring(err2):find("no_such_thing", 1, true), tostring(err2))
assert(not tostring(err2):find("redefinition", 1, true), tostring(err2))
print("ok")
