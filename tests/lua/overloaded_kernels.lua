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
-- A module's overloads build with its other kernels, sharing its __device__ variables.
local shared = cuda.module([[
__device__ int counter;
__global__ void add(int* x) { counter += x[0]; }
__global__ void add(float* x) { counter += (int)x[0] * 100; }
__global__ void read(int* o) { o[0] = counter; }
]])
local one, two = cuda.to_device(array.from({ 1 }, "int32")), cuda.to_device(array.from({ 2 }, "float32"))
shared.add[{ 1, 1 }](one)
shared.add[{ 1, 1 }](two)
shared.read[{ 1, 1 }](o)
assert(o:copy_to_host()[1] == 201, "the overloads' counter: " .. o:copy_to_host()[1])

-- Choosing: a table takes a struct or a vector of its length, never a scalar; typedefs are read
-- (`real*` is float*); templates overload too; a declaration spelled otherwise than its
-- definition (`float const*`, a typedef of the struct), or inside its namespace with the
-- definition outside, is one kernel with it.
local pick = cuda.module([[
struct P { float a, b; };
typedef P Q;
typedef float real;
typedef double dreal;
__global__ void s(float* o, P p) { o[0] = p.a + p.b; }
__global__ void s(float* o, float v) { o[0] = -v; }
__global__ void v(float* o, float2 q) { o[0] = q.x + q.y; }
__global__ void v(float* o, float4 q) { o[0] = q.w; }
__global__ void t(real* x, real v) { x[0] = v; }
__global__ void t(dreal* x, dreal v) { x[0] = 2 * v; }
template <typename T> __global__ void u(T* x) { x[0] = 1; }
template <typename T> __global__ void u(T* x, int n) { x[0] = n; }
__global__ void z(float const* x, float* y);
__global__ void z(const float* x, float* y) { y[0] = x[0] + 1; }
__global__ void w(float* x, Q q);
__global__ void w(float* x, P p) { x[0] = p.a * p.b; }
namespace A { __global__ void f(int* x); }
__global__ void A::f(int* x) { x[0] = 3; }
]])
local fo, dd = cuda.device_array(1, "float32"), cuda.device_array(1, "float64")
local function got(k, arr, ...) k[{ 1, 1 }](arr, ...); return arr:copy_to_host()[1] end
assert(got(pick.s, fo, { a = 1.5, b = 2 }) == 3.5 and got(pick.s, fo, 2) == -2)
assert(got(pick.v, fo, { 1, 2 }) == 3 and got(pick.v, fo, { 1, 2, 3, 4 }) == 4)
assert(got(pick.t, fo, 1.5) == 1.5 and got(pick.t, dd, 1.5) == 3)
assert(got(pick.u, fo) == 1 and got(pick.u, fo, 9) == 9)
pick.z[{ 1, 1 }](cuda.to_device(array.from({ 4 }, "float32")), fo)
assert(fo:copy_to_host()[1] == 5)
assert(got(pick.w, fo, { a = 2, b = 3 }) == 6)
assert(got(pick.f, o) == 3)

-- A kernel file's edit that removes an overload, or changes their parameters, is read before
-- the overload is chosen.
local path = os.tmpname()
local function write(text) local fh = assert(io.open(path, "w")); fh:write(text); fh:close() end
write("__global__ void g(float* x, float a) { x[0] = a; }\n__global__ void g(double* x, double a) { x[0] = 2 * a; }\n")
local g = cuda.jit_file(path)
assert(got(g, fo, 1.5) == 1.5 and got(g, dd, 1.5) == 3)
os.execute("sleep 1")  -- (a later modification time)
write("__global__ void g(float* x, float a, int n) { x[0] = a + n; }\n")
assert(got(g, fo, 1.5, 100) == 101.5)
os.remove(path)
print("overloaded kernels ok")
