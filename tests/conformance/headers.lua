-- Conformance: kernels that include the C library headers (kernels/headers.cu) compile and
-- compute the right values on this backend; references computed here.
local here = arg[0]:match("^(.*)/") or "."
local k = cuda.jit_file(here .. "/kernels/headers.cu")
local n = 1000
local x = array.random.uniform(n, { dtype = "float32", seed = 1 })
local out = cuda.device_array(8 + n, "float64")
k[{ (n + 127) // 128, 128 }](cuda.to_device(x), out, n)
cuda.synchronize()
local h = out:copy_to_host()
local want = { 2147483647, 4294967295, 2 ^ -23, 2 ^ -52, 8 + 20 + 100, 8 * 32767,
               (2 - 2 ^ -23) * 2 ^ 127, 4 }
for i, w in ipairs(want) do
  assert(h[i] == w, ("out[%d] = %.17g, expected %.17g"):format(i - 1, h[i], w))
end
for i = 1, n do
  local v = x[i]
  local expect = math.sqrt(v) + v + 1 + 2 + 1 + 10
  assert(math.abs(h[8 + i] - expect) < 1e-5, ("thread %d: %g, expected %g"):format(i - 1, h[8 + i], expect))
end

-- A false assert stops the kernel with an error that names the assertion, on either backend.
local m = cuda.module([[
#include <cassert>
__global__ void checked(const int* v) { assert(v[threadIdx.x] >= 0); }]])
local bad = array.from({ 1, 2, -3, 4 }, "int32")
local ok, err = pcall(function() m.checked[{ 1, 4 }](cuda.to_device(bad)); cuda.synchronize() end)
assert(not ok, "a failed assert must be an error")
if cuda.backend() == "cpu" then  -- a GPU reports "device-side assert triggered" and prints the text
  assert(tostring(err):find("v%[threadIdx.x%] >= 0"), "a failed assert: " .. tostring(err))
end
print("ok")

-- math_constants.h: its constants are the doubles and floats nearest their definitions (known
-- answers, written out here; CUDA's header has the same).
local mc = cuda.jit([[
#include <math_constants.h>
__global__ void constants(double* out) {
  const double d[] = {CUDART_PI, CUDART_SQRT_2PI, CUDART_SQRT_TWO, CUDART_LN2, CUDART_L2E,
                      CUDART_PIO2, CUDART_TWO_TO_53};
  const float f[] = {CUDART_PI_F, CUDART_PIO2_F, CUDART_LN2_F, CUDART_SQRT_TWO_F, CUDART_TWO_TO_23_F};
  for (int i = 0; i < 7; ++i) out[i] = d[i];
  for (int i = 0; i < 5; ++i) out[7 + i] = f[i];
}]])
local cout = cuda.device_array(12, "float64")
mc[{ 1, 1 }](cout)
local c = cout:copy_to_host()
local function as_float(v) return string.unpack("f", string.pack("f", v)) end
local constants = { 3.1415926535897931, 2.5066282746310007, 1.4142135623730951, 0.69314718055994529,
                    1.4426950408889634, 1.5707963267948966, 2 ^ 53, as_float(3.14159265358979),
                    as_float(1.5707963267949), as_float(0.693147180559945), as_float(1.4142135623731), 2 ^ 23 }
for i, w in ipairs(constants) do
  assert(c[i] == w, ("math_constants %d: %.17g, expected %.17g"):format(i, c[i], w))
end
