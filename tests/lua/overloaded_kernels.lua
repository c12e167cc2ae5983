-- Overloaded kernels: a call runs the overload its arguments choose (as C++ would for an int
-- or a double literal), in cuda.jit and in a cuda.module; none or several is a clear error.
package.path = arg[0]:gsub("[^/]*$", "") .. "lib/?.lua;" .. package.path
local expect_error = require("expect").error

local src = [[
__global__ void scale(float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}
__global__ void scale(double* x, double a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * a + 1;
}
__global__ void scale(int* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = -x[i];
}
__global__ void fill(int* x, int v) { x[threadIdx.x] = v; }
__global__ void fill(int* x, double v) { x[threadIdx.x] = (int)(v * 10); }
__global__ void fill(int* x, unsigned v, int times = 2) { x[threadIdx.x] = (int)v * times; }
]]
local n = 100
local f = cuda.to_device(array.arange(n, "float32"))
local d = cuda.to_device(array.arange(n, "float64"))
local i = cuda.to_device(array.arange(n, "int32"))
local m = cuda.module(src)
m.scale[{4, 32}](f, 2.0, n)
m.scale[{4, 32}](d, 2.0, n)
m.scale[{4, 32}](i, n)
local fh, dh, ih = f:copy_to_host(), d:copy_to_host(), i:copy_to_host()
for k = 1, n do
  assert(fh[k] == 2 * (k - 1), "float overload: " .. fh[k])
  assert(dh[k] == 2 * (k - 1) + 1, "double overload: " .. dh[k])
  assert(ih[k] == -(k - 1), "int overload: " .. ih[k])
end

-- cuda.jit with opts.name takes every overload of the name; a second call of other types
-- compiles the other overload, and the first is still there.
local fill = cuda.jit(src, { name = "fill" })
local o = cuda.device_array(4, "int32")
fill[{1, 4}](o, 7)
assert(o:copy_to_host()[1] == 7)
fill[{1, 4}](o, 7.5)
assert(o:copy_to_host()[1] == 75)
fill[{1, 4}](o, 3)
assert(o:copy_to_host()[4] == 3)
fill[{1, 4}](o, 3, 4)  -- (only the unsigned one takes three)
assert(o:copy_to_host()[2] == 12)
local c = cuda.jit("__global__ void c(int* o, unsigned n) {}\n__global__ void c(int* o, float n) {}")
expect_error("several overloads take (an int32 device array, an integer (3)); they are:\n"
             .. "  c(int* o, unsigned n)\n  c(int* o, float n)", function() c[{1, 1}](o, 3) end)
expect_error("no overload takes (a float32 device array, an integer (1)); its overloads are:\n"
             .. "  fill(int* x, int v)", function() fill[{1, 4}](f, 1) end)
expect_error("kernel 'fill' is overloaded", function() cuda.jit(src, { name = "fill" }):ptx() end)

-- A source of one overloaded name needs no opts.name; a declaration and its definition are one.
local a = cuda.jit("__global__ void a(int* o) { o[0] = 1; }\n__global__ void a(float* o) { o[0] = 2; }")
a[{1, 1}](f)
assert(f:copy_to_host()[1] == 2)
local b = cuda.jit("__global__ void b(int*, int);\n__global__ void b(int* o, const int n) { o[0] = n; }")
b[{1, 1}](o, 9)
assert(o:copy_to_host()[1] == 9)

-- An overloaded kernel with barriers runs as regions on the cpu backend, each overload alike.
local r = cuda.jit([[
template <typename T> __device__ void rev(T* x) {
  __shared__ T s[64];
  s[threadIdx.x] = x[threadIdx.x];
  __syncthreads();
  x[threadIdx.x] = s[63 - threadIdx.x];
}
__global__ void reverse(float* x) { rev(x); }
__global__ void reverse(int* x) { rev(x); }
]])
local rf, ri = cuda.to_device(array.arange(64, "float32")), cuda.to_device(array.arange(64, "int32"))
r[{1, 64}](rf)
r[{1, 64}](ri)
assert(rf:copy_to_host()[1] == 63 and ri:copy_to_host()[64] == 0)
if cuda.backend() == "cpu" then assert(r:info().threads == "regions", r:info().why) end
print("overloaded kernels ok")
