-- GPU only: streams run concurrently, events time what they bracket, results are right.
package.path = arg[0]:gsub("[^/]*$", "") .. "lib/?.lua;" .. package.path
require("gpu").require_cuda()

local m = cuda.module([[
__device__ unsigned long long now_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Runs for at least `ns` nanoseconds of wall time, then x[i] = 1 - 0.999^rounds.
extern "C" __global__ void busy(float* x, int n, int rounds, long long ns) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i == 0) {  // one thread keeps the kernel running; the rest finish at once
    unsigned long long until = now_ns() + ns;
    while (now_ns() < until) {}
  }
  if (i >= n) return;
  float v = x[i];
  for (int r = 0; r < rounds; ++r) v = v * 0.999f + 0.001f;
  x[i] = v;
}

// Waits (up to a second) for *flag to be set; records whether it was seen.
extern "C" __global__ void wait_for(volatile int* flag, int* seen) {
  unsigned long long until = now_ns() + 1000000000ull;
  while (*flag == 0 && now_ns() < until) {}
  *seen = *flag;
}

// Sets *flag.
extern "C" __global__ void raise_flag(volatile int* flag) { *flag = 1; __threadfence_system(); }
]])

-- Overlap: a kernel on s1 waits for a flag that only a kernel on s2 sets. If the two streams
-- were serialised, the waiter would give up after a second and record 0.
-- Neither kernel has run before: raise_flag compiles and loads while wait_for spins, which
-- works only because kiln loads modules eagerly (CUDA's lazy loading makes a first launch wait
-- for the kernels running on every stream). The same pair runs again below, both loaded.
local s1, s2 = cuda.stream(), cuda.stream()
local flag = cuda.to_device(array.zeros(1, "int32"))
local seen = cuda.to_device(array.zeros(1, "int32"))
m.wait_for[{1, 1, s1}](flag, seen)
m.raise_flag[{1, 1, s2}](flag)
s1:synchronize()
s2:synchronize()
assert(seen:copy_to_host()[1] == 1,
       "a kernel compiled and loaded while another ran on a second stream waited for it")
flag = cuda.to_device(array.zeros(1, "int32"))
seen = cuda.to_device(array.zeros(1, "int32"))
m.wait_for[{1, 1, s1}](flag, seen)
m.raise_flag[{1, 1, s2}](flag)
s1:synchronize()
s2:synchronize()
assert(seen:copy_to_host()[1] == 1, "streams s1 and s2 did not run concurrently")

-- Events bracket a kernel that is busy for 20 ms of wall time.
local n = 1 << 22
local a = cuda.to_device(array.zeros(n, "float32"), s1)
local b = cuda.to_device(array.zeros(n, "float32"), s2)
local start, stop = cuda.event(), cuda.event()
start:record(s1)
m.busy[{n // 256, 256, s1}](a, n, 2000, 20000000)
stop:record(s1)
m.busy[{n // 256, 256, s2}](b, n, 10, 0)
stop:synchronize()
s2:synchronize()
local ms = cuda.event_elapsed_time(start, stop)
assert(ms >= 19.5 and ms < 5000, "a 20 ms kernel timed as " .. ms .. " ms")
print(string.format("busy kernel: %.3f ms", ms))

-- Every element of both streams' results: v_r = 1 - 0.999^r from 0, computed here in float32
-- steps the way the kernel does (Lua numbers are doubles; rounding through a float32 array).
local function expected(rounds)
  local v = array.zeros(1, "float32")
  for _ = 1, rounds do v[1] = v[1] * 0.999 + 0.001 end
  return v[1]
end
local ha, hb = a:copy_to_host(), b:copy_to_host()
local ea, eb = expected(2000), expected(10)
for i = 1, n do
  if math.abs(ha[i] - ea) > 1e-4 * ea or math.abs(hb[i] - eb) > 1e-4 * eb then
    error(string.format("element %d: %g, %g (expected %g, %g)", i, ha[i], hb[i], ea, eb))
  end
end
cuda.synchronize()
print("ok")
