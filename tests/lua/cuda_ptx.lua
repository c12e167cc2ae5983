-- k:ptx() on any machine with NVRTC, and GPU-only mistakes caught on the cpu backend.
local info = cuda.info()
if not info.nvrtc:find("^%d") then
  print("SKIP: NVRTC unavailable: " .. info.nvrtc)
  os.exit(77)
end

package.path = arg[0]:gsub("[^/]*$", "") .. "lib/?.lua;" .. package.path
local expect_error = require("expect").error

-- PTX for a C++, an extern "C" and a templated kernel.
local plain = cuda.jit "__global__ void plain(float* x) { x[threadIdx.x] *= 2.0f; }"
local ptx = plain:ptx()
assert(ptx:find(".entry", 1, true) and ptx:find("_Z5plainPf", 1, true), "C++ kernel PTX")
local c = cuda.jit 'extern "C" __global__ void cplain(int* x) { x[0] = 1; }'
assert(c:ptx():find(".entry cplain", 1, true), "extern \"C\" PTX names the plain symbol")
local t = cuda.jit "template <typename T> __global__ void tk(T* x) { x[0] = T(1); }"
expect_error("template", function() return t:ptx() end)
local tptx = t:ptx(cuda.device_array(1, "float64"))
assert(tptx:find("_Z2tkIdEvPT_", 1, true), "tk<double> is instantiated")
assert(t:ptx(cuda.device_array(1, "int32")):find("_Z2tkIiEvPT_", 1, true), "tk<int>")
local arch = cuda.jit("__global__ void a(int* x) { x[0] = 1; }", { arch = "sm_90" })
assert(arch:ptx():find(".target sm_90", 1, true), "opts.arch reaches NVRTC")

-- A host function called from a kernel compiles with a host compiler, but not for a GPU:
-- the cpu backend reports NVRTC's error, as the cuda backend would.
if cuda.backend() == "cpu" and os.getenv("KILN_NVRTC_CHECK") ~= "0" then
  local host_only = cuda.jit [[
int twice(int v) { return 2 * v; }
__global__ void uses_host(int* x) { x[0] = twice(x[0]); }]]
  expect_error("__host__", function() host_only[{1, 1}](cuda.device_array(1, "int32")) end)
end
-- A block larger than the kernel's __launch_bounds__ (a template's, through a macro) is refused
-- as a GPU refuses it, not run past the end of the shared array sized by it; smaller blocks run.
if cuda.backend() == "cuda" or os.getenv("KILN_NVRTC_CHECK") ~= "0" then
  local bounded = cuda.jit([[
#define TILE 8
template <int N> __global__ void __launch_bounds__(N * TILE) reverse(int* x) {
  __shared__ int s[N * TILE];
  s[threadIdx.x] = x[threadIdx.x];
  __syncthreads();
  x[threadIdx.x] = s[blockDim.x - 1 - threadIdx.x];
}]], { name = "reverse<16>" })
  local x = cuda.to_device(array.from({ 1, 2, 3 }, "int32"))
  bounded[{ 1, 3 }](x)
  local back = x:copy_to_host()
  assert(back[1] == 3 and back[2] == 2 and back[3] == 1, "3 threads reverse three values")
  assert(bounded:info().max_threads_per_block == 128, "k:info() gives the bound")
  local big = cuda.device_array(256, "int32")
  bounded[{ 1, 128 }](big)
  expect_error("256 threads; this kernel allows at most 128 per block", function() bounded[{ 1, 256 }](big) end)
  expect_error("at most 128 per block", function() bounded[{ 1, { 16, 16 } }](big) end)
end
print("cuda_ptx: ok")
