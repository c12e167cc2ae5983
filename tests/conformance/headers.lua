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

-- cuComplex.h: float and double complex arithmetic, against Lua's on the same values.
local cx = cuda.jit([[
#include <cuComplex.h>
__global__ void complex_ops(const cuFloatComplex* a, const cuFloatComplex* b, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const cuFloatComplex q = cuCdivf(cuCmulf(a[i], b[i]), cuConjf(cuCaddf(a[i], b[i])));
  const cuDoubleComplex d = cuCfma(cuComplexFloatToDouble(a[i]), cuComplexFloatToDouble(b[i]),
                                   make_cuDoubleComplex(1.0, -1.0));
  out[4 * i] = cuCrealf(q);
  out[4 * i + 1] = cuCimagf(q);
  out[4 * i + 2] = cuCabsf(cuCsubf(a[i], b[i]));
  out[4 * i + 3] = float(cuCreal(d) + cuCimag(d));
}]])
local nc = 200
local ca = array.random.uniform(2 * nc, { low = -2, high = 2, dtype = "float32", seed = 11 })
local cb = array.random.uniform(2 * nc, { low = -2, high = 2, dtype = "float32", seed = 12 })
local cres = cuda.device_array(4 * nc, "float32")
cx[{ 2, 128 }](cuda.to_device(ca:view("float2")), cuda.to_device(cb:view("float2")), cres, nc)
local co = cres:copy_to_host()
for i = 0, nc - 1 do
  local ar, ai, br, bi = ca[2 * i + 1], ca[2 * i + 2], cb[2 * i + 1], cb[2 * i + 2]
  local mr, mi = ar * br - ai * bi, ar * bi + ai * br
  local sr, si = ar + br, -(ai + bi)
  local den = sr * sr + si * si
  local want = { (mr * sr + mi * si) / den, (mi * sr - mr * si) / den,
                 math.sqrt((ar - br) ^ 2 + (ai - bi) ^ 2), mr + 1 + mi - 1 }
  for j = 1, 4 do
    local got = co[4 * i + j]
    assert(math.abs(got - want[j]) <= 1e-3 * math.max(1, math.abs(want[j])),
           ("complex %d.%d: %g, expected %g"):format(i, j, got, want[j]))
  end
end

-- <nv/target>: device code branches on the target; the cpu backend takes the host's branch
-- (cuRAND's headers rely on it), a GPU the device's.
local nv = cuda.jit([[
#include <nv/target>
__global__ void which(int* out) {
  NV_IF_ELSE_TARGET(NV_IS_DEVICE, out[0] = 1;, out[0] = 2;)
  NV_IF_TARGET(NV_IS_HOST, (int a = 10, b = 20; out[1] = a + b;), )
  NV_DISPATCH_TARGET(NV_PROVIDES_SM_70, (out[2] = 3;), NV_IS_HOST, (out[2] = 4;))
}]])
local wo = cuda.to_device(array.zeros(3, "int32"))
nv[{ 1, 1 }](wo)
local hw = wo:copy_to_host()
local want_nv = cuda.backend() == "cpu" and { 2, 30, 4 } or { 1, 0, 3 }
for i = 1, 3 do
  assert(hw[i] == want_nv[i], ("nv/target result %d: %d, expected %d"):format(i, hw[i], want_nv[i]))
end

-- The toolkit's headers that kernels include for what they declare (make_float4, the atomics,
-- the math functions), which nvcc's cuda_runtime.h brings anyway.
local vt = cuda.jit([[
#include <vector_types.h>
#include <vector_functions.h>
#include <driver_types.h>
#include <crt/math_functions.h>
#include <device_atomic_functions.h>
#include <sm_60_atomic_functions.h>
__global__ void pack(float* out, int* count) {
  reinterpret_cast<float4*>(out)[0] = make_float4(1.0f, 2.0f, 3.0f, sqrtf(16.0f));
  atomicAdd_block(count, 2);
}]])
local packed, count = cuda.device_array(4, "float32"), cuda.to_device(array.zeros(1, "int32"))
vt[{ 1, 1 }](packed, count)
local hv = packed:copy_to_host()
assert(hv[1] == 1 and hv[2] == 2 and hv[3] == 3 and hv[4] == 4 and count:copy_to_host()[1] == 2)

-- A false assert stops the kernel with an error that names the assertion, on either backend.
-- (Last: on a GPU it breaks the context for good, as CUDA's driver refuses a new one after a
-- device-side assert; cuda.reset() says to restart the process.)
local m = cuda.module([[
#include <cassert>
__global__ void checked(const int* v) { assert(v[threadIdx.x] >= 0); }]])
local bad = array.from({ 1, 2, -3, 4 }, "int32")
local ok, err = pcall(function() m.checked[{ 1, 4 }](cuda.to_device(bad)); cuda.synchronize() end)
assert(not ok, "a failed assert must be an error")
if cuda.backend() == "cpu" then  -- a GPU reports "device-side assert triggered" and prints the text
  assert(tostring(err):find("v%[threadIdx.x%] >= 0"), "a failed assert: " .. tostring(err))
else
  assert(tostring(err):find("checked"), "a failed assert names the kernel: " .. tostring(err))
end
print("ok")
