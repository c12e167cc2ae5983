-- GPU only: streams, events and timing.
package.path = arg[0]:gsub("[^/]*$", "") .. "lib/?.lua;" .. package.path
require("gpu").require_cuda()

local busy = cuda.jit([[
extern "C" __global__ void busy(float* x, int n, int rounds) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  for (int r = 0; r < rounds; ++r) v = v * 0.999f + 0.001f;
  x[i] = v;
}
]])
local n = 1 << 22
local s1, s2 = cuda.stream(), cuda.stream()
local a = cuda.to_device(array.zeros(n, "float32"), s1)
local b = cuda.to_device(array.zeros(n, "float32"), s2)
local start, stop = cuda.event(), cuda.event()
start:record(s1)
busy[{n // 256, 256, s1}](a, n, 2000)
stop:record(s1)
busy[{n // 256, 256, s2}](b, n, 10)
stop:synchronize()
s2:synchronize()
local ms = cuda.event_elapsed_time(start, stop)
assert(ms > 0, "elapsed time must be positive, got " .. ms)
print(string.format("busy kernel: %.3f ms", ms))

-- Results of both streams are right: v_r = 1 - 0.999^r from 0.
local ha, hb = a:copy_to_host(), b:copy_to_host()
assert(math.abs(ha[1] - (1 - 0.999 ^ 2000)) < 1e-3 and math.abs(hb[n] - (1 - 0.999 ^ 10)) < 1e-4)
cuda.synchronize()
print("ok")
