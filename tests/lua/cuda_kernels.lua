-- Kernels from strings: compile on first launch, specialise per argument types, marshal
-- arguments exactly, report bad input clearly. Runs on the cpu backend in CI.

package.path = arg[0]:gsub("[^/]*$", "") .. "lib/?.lua;" .. package.path
local expect_error = require("expect").error

-- A plain C++ kernel, a host reference, and device arrays.
local add = cuda.jit [[
__global__ void add(const float* a, const float* b, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] + b[i];
}]]
local n = 1000
local a = array.arange(n, "float32")
local b = array.full(n, 0.5, "float32")
local da, db, dout = cuda.to_device(a), cuda.to_device(b), cuda.device_array(n, "float32")
add[{math.ceil(n / 128), 128}](da, db, dout, n)
local out = dout:copy_to_host()
for i = 1, n do assert(out[i] == (i - 1) + 0.5, "add: element " .. i) end
assert(add:info().cache ~= nil and add:info().name == "add")
if cuda.backend() == "cpu" then
  -- How the cpu backend runs a block's threads: a loop, regions (barrier statements only),
  -- coroutines (barriers the rewrite into regions declines) or fibers.
  assert(add:info().threads == "loop", add:info().threads)
  local sync = cuda.jit [[
__global__ void rev(int* x) {
  __shared__ int s[64];
  s[threadIdx.x] = x[threadIdx.x];
  __syncthreads();
  x[threadIdx.x] = s[63 - threadIdx.x];
}]]
  local warp = cuda.jit [[
__global__ void bcast(int* x) { x[threadIdx.x] = __shfl_sync(0xffffffff, x[threadIdx.x], 3); }]]
  local x = cuda.to_device(array.arange(64, "int32"))
  sync[{1, 64}](x)
  warp[{1, 64}](x)
  local h = x:copy_to_host()
  for i = 1, 64 do assert(h[i] == (i <= 32 and 60 or 28), "rev+bcast element " .. i) end
  assert(sync:info().threads == "regions", sync:info().threads)
  assert(warp:info().threads == "regions", warp:info().threads)  -- the shuffle: a step
end

-- Host arrays are copied in and back (Numba's semantics).
local hout = array.zeros(n, "float32")
add[{8, 128}](a, b, hout, n)
assert(array.equal(hout, out))

-- Templates deduce T from the array dtype; each dtype is its own specialisation.
local scale = cuda.jit [[
template <typename T>
__global__ void scale(T* x, T factor, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * factor;
}]]
for _, dt in ipairs { "float32", "float64", "int32", "int64", "uint8", "int16" } do
  local x = cuda.to_device(array.arange(50, dt))
  scale[{1, 64}](x, 3, 50)
  local h = x:copy_to_host()
  for i = 1, 50 do assert(h[i] == 3 * (i - 1) % (dt == "uint8" and 256 or math.huge), dt .. " element " .. i) end
  assert(scale:info().name_expression:find("scale<", 1, true))
end

-- Explicit instantiation through opts.name.
local fill = cuda.jit([[
template <typename T, int V>
__global__ void fill(T* x, int n) { int i = threadIdx.x; if (i < n) x[i] = T(V); }]], { name = "fill<int, 7>" })
local x = cuda.to_device(array.full(12, -1, "int32"))
fill[{1, 32}](x, 10)
local hx = x:copy_to_host()
for i = 1, 10 do assert(hx[i] == 7, "fill<int, 7> element " .. i) end
assert(hx[11] == -1 and hx[12] == -1, "fill<int, 7> wrote past n")

-- extern "C" kernels.
local cfill = cuda.jit [[
extern "C" __global__ void cfill(double* x, double v, unsigned n) {
  unsigned i = threadIdx.x; if (i < n) x[i] = v;
}]]
local y = cuda.to_device(array.zeros(6, "float64"))
cfill[{1, 8}](y, 2.5, 5)
local hy = y:copy_to_host()
for i = 1, 5 do assert(hy[i] == 2.5, "cfill element " .. i) end
assert(hy[6] == 0, "cfill wrote past n")

-- kiln::Array gives the kernel its shape, and grid<2> its position.
local shape2 = cuda.jit [[
#include <kiln.cuh>
__global__ void index2(kiln::Array<int, 2> a) {
  auto p = kiln::grid<2>();
  if (p.x < a.shape[0] && p.y < a.shape[1]) a(p.x, p.y) = int(p.x * 100 + p.y);
}]]
local m = cuda.device_array({7, 9}, "int32")
shape2[{{1, 1}, {8, 16}}](m)
local hm = m:copy_to_host()
for r = 1, 7 do for c = 1, 9 do assert(hm:get(r, c) == (r - 1) * 100 + (c - 1)) end end

-- Bad input: each a clear Lua error, and the state goes on.
expect_error("takes 4 arguments", function() add[{1, 1}](da, db, dout) end)
expect_error("parameter 1", function() add[{1, 1}](cuda.device_array(n, "float64"), db, dout, n) end)
expect_error("parameter 4", function() add[{1, 1}](da, db, dout, 1.5) end)
expect_error("parameter 4", function() add[{1, 1}](da, db, dout, "x") end)
expect_error("block dimension x = 1025", function() add[{1, 1025}](da, db, dout, n) end)
expect_error("1056 threads per block", function() add[{1, {32, 33}}](da, db, dout, n) end)
expect_error("block dimension z = 65", function() add[{1, {1, 1, 65}}](da, db, dout, n) end)
expect_error("grid dimension y = 65536", function() add[{{1, 65536}, 1}](da, db, dout, n) end)
expect_error("zero grid", function() add[{0, 1}](da, db, dout, n) end)
expect_error("launch configuration", function() add(da, db, dout, n) end)
expect_error("no __global__ function", cuda.jit, "int x;")
expect_error("several kernels", cuda.jit, "__global__ void a(){}\n__global__ void b(){}")
expect_error("no kernel named 'c'", cuda.jit, "__global__ void a(){}", { name = "c" })
expect_error("not a valid macro name", cuda.jit, "__global__ void a(){}", { defines = { ["X Y"] = 1 } })
expect_error("not an allowed compiler option", cuda.jit, "__global__ void a(){}", { options = { "-o/tmp/x" } })
-- The macros nvcc's implicit cuda_runtime.h brings (<limits.h>, <math.h>), without an #include.
local implicit = cuda.jit([[
__global__ void limits(double* out) {
  out[0] = INT_MAX; out[1] = INT_MIN; out[2] = UINT_MAX; out[3] = M_PI;
  out[4] = isinf(INFINITY) ? 1 : 0; out[5] = isnan(NAN) ? 1 : 0; out[6] = CHAR_BIT;
}]])
local lim = cuda.device_array(7, "float64")
implicit[{ 1, 1 }](lim)
local want_lim = { 2147483647, -2147483648, 4294967295, math.pi, 1, 1, 8 }
for i, w in ipairs(want_lim) do assert(lim:copy_to_host()[i] == w, "implicit macro " .. i) end
-- With libcu++'s <cuda/std/climits> too, which defines them again: no warning of an
-- "incompatible redefinition" buries a compile error (the shim spells them as libcu++ does).
local ok_lim, err_lim = pcall(function()
  local k = cuda.jit("#include <cuda/std/climits>\n__global__ void k(int* y) { y[0] = INT_MAX }")
  k[{ 1, 1 }](cuda.device_array(1, "int32"))
end)
assert(not ok_lim and err_lim:find("kernel.cu%(?:?2"), err_lim)
assert(not err_lim:find("redefinition", 1, true), err_lim)
-- A generic lambda in a kernel: NVRTC asks for -default-device, which is allowed.
local generic = cuda.jit([[
__global__ void twice(float* x, int n) {
  auto f = [](auto v) { return v + v; };
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = f(x[i]);
}]], { options = { "-default-device" } })
local gx = cuda.to_device(array.from({ 1, 2.5, -3 }, "float32"))
generic[{ 1, 32 }](gx, 3)
local hg = gx:copy_to_host()
assert(hg[1] == 2 and hg[2] == 5 and hg[3] == -6, "generic lambda")
expect_error("unknown kernel option", cuda.jit, "__global__ void a(){}", { nme = "a" })
local freed = cuda.device_array(4, "float32")
freed:free()
expect_error("freed", function() add[{1, 4}](freed, freed, freed, 4) end)

-- A compile error names the line within the string.
local broken = cuda.jit "__global__ void broken(int* x) {\n  x[0] = 1;\n  undefined_thing(x);\n}"
local err = expect_error("undefined_thing", function() broken[{1, 1}](cuda.device_array(1, "int32")) end)
assert(err:find("kernel.cu:3", 1, true) or err:find("kernel.cu(3)", 1, true), err)

-- Defines reach the compiler.
local def = cuda.jit("__global__ void d(int* x) { x[0] = VALUE * 2; }", { defines = { VALUE = 21 } })
local dx = cuda.device_array(1, "int32")
def[{1, 1}](dx)
assert(dx:copy_to_host()[1] == 42)
-- Default arguments, as CUDA's samples declare them (`int* partial_sums = NULL`): a call may
-- leave out the parameters after the last one given; null pointers and literals are evaluated.
local defaults = cuda.jit [[
#define WIDTH 8
__global__ void with_defaults(int* out, int n, int* partial = NULL, int scale = -3,
                              float half = 0.5f, bool flag = true, unsigned mask = 0xffu,
                              int width = WIDTH) {
  int i = threadIdx.x;
  if (i < n) out[i] = scale * i + (partial ? 1000 : 0) + (flag ? 7 : 0) + int(half * 4) +
                      int(mask & 0x3u) + width * 100;
  if (partial && i == 0) partial[0] = n;
}]]
local dd = cuda.device_array(4, "int32")
expect_error("parameter 8 'width' (int) has a default argument kiln cannot evaluate (`WIDTH`)",
             function() defaults[{1, 4}](dd, 4) end)
local partial = cuda.device_array(1, "int32")
defaults[{1, 4}](dd, 4, partial, -3, 0.5, true, 0xff, 8)
local hd = dd:copy_to_host()
for i = 1, 4 do assert(hd[i] == -3 * (i - 1) + 1000 + 7 + 2 + 3 + 800, "defaults: element " .. i) end
assert(partial:copy_to_host()[1] == 4)
local defaults2 = cuda.jit [[
__global__ void with_defaults2(int* out, int n, int* partial = nullptr, int scale = -3,
                               double half = 0.5, bool flag = true, unsigned mask = 0xffu) {
  int i = threadIdx.x;
  if (i < n) out[i] = scale * i + (partial ? 1000 : 0) + (flag ? 7 : 0) + int(half * 4) +
                      int(mask & 0x3u);
}]]
defaults2[{1, 4}](dd, 4)
hd = dd:copy_to_host()
for i = 1, 4 do assert(hd[i] == -3 * (i - 1) + 7 + 2 + 3, "defaults2: element " .. i) end
defaults2[{1, 4}](dd, 4, partial, 2)
hd = dd:copy_to_host()
for i = 1, 4 do assert(hd[i] == 2 * (i - 1) + 1000 + 7 + 2 + 3, "defaults2 (scale): element " .. i) end
expect_error("takes 7 arguments", function() defaults2[{1, 4}](dd) end)
-- cuda.null passes a null pointer anywhere in the list (`k(d_out, NULL, n)`, as cuda-samples'
-- quasirandomGenerator does); nil stays an error (in Lua, more often a misspelt name).
defaults2[{1, 4}](dd, 4, cuda.null, 2)
hd = dd:copy_to_host()
for i = 1, 4 do assert(hd[i] == 2 * (i - 1) + 7 + 2 + 3, "cuda.null: element " .. i) end
expect_error("parameter 3 'partial' (int*) expects an int32 array (or cuda.null), got nil",
             function() defaults2[{1, 4}](dd, 4, nil, 2) end)
expect_error("parameter 2 'n' (int) expects an integer, got a null pointer",
             function() defaults2[{1, 4}](dd, cuda.null) end)
-- A struct's fields may be declared through type aliases (Rodinia's lavaMD: `#define fp double`).
local aliased = cuda.jit [[
#define fp double
typedef float real;
using count_t = int;
typedef real real2;
struct Par { fp alpha; real beta; count_t n; real2 gamma[2]; };
__global__ void use_par(Par p, double* out) {
  out[0] = p.alpha; out[1] = p.beta; out[2] = p.n; out[3] = p.gamma[0] + p.gamma[1];
}]]
local pout = cuda.device_array(4, "float64")
aliased[{1, 1}]({ alpha = 1.5, beta = 2.25, n = 7, gamma = { 1, 2 } }, pout)
local hp = pout:copy_to_host()
assert(hp[1] == 1.5 and hp[2] == 2.25 and hp[3] == 7 and hp[4] == 3, "aliased struct fields")

-- Enumerations pass as their underlying integers (a Numba user's IntEnum), by value, by pointer
-- and as a struct's field; a struct in a namespace and one declared `alignas` pass by fields.
local kinds = cuda.module [==[
enum Op { ADD, MUL, NEG = -1 };
enum class Mode : unsigned char { Fast = 1, Exact = 200 };
namespace geo {
enum Axis : short { U = -7, V };
struct Box { float lo, hi; Axis along; };
}
struct alignas(16) Particle { float x; Mode mode; };
__global__ void apply(int* out, Op op, Mode m, geo::Axis a, const Op* ops) {
  out[0] = op == MUL ? 7 : op == NEG ? -70 : 3;
  out[1] = int(m);
  out[2] = a;
  out[3] = ops[threadIdx.x] * 10;
}
__global__ void measure(float* out, geo::Box b, Particle p) {
  out[0] = (b.hi - b.lo) * (b.along == geo::V ? 2 : 1);
  out[1] = p.x + (p.mode == Mode::Exact ? 0.5f : 0.25f);
}]==]
local ints = cuda.device_array(4, "int32")
local ops = cuda.to_device(array.from({ -1 }, "int32"))
kinds.apply[{ 1, 1 }](ints, 1, 200, -7, ops)
local hi = ints:copy_to_host()
assert(hi[1] == 7 and hi[2] == 200 and hi[3] == -7 and hi[4] == -10,
       ("enumerations: %d %d %d %d"):format(hi[1], hi[2], hi[3], hi[4]))
kinds.apply[{ 1, 1 }](ints, -1, 1, -6, ops)
hi = ints:copy_to_host()
assert(hi[1] == -70 and hi[2] == 1 and hi[3] == -6, "signed and unsigned underlying types")
expect_error("parameter 3 'm' (Mode) expects an integer in 0..255, got an integer (256)",
             function() kinds.apply[{ 1, 1 }](ints, 0, 256, 0, ops) end)
expect_error("parameter 5 'ops'", function()
  kinds.apply[{ 1, 1 }](ints, 0, 1, 0, cuda.device_array(1, "float32"))
end)
local floats = cuda.device_array(2, "float32")
kinds.measure[{ 1, 1 }](floats, { lo = 1, hi = 3.5, along = -6 }, { x = 2, mode = 200 })
local hf = floats:copy_to_host()
assert(hf[1] == 5 and hf[2] == 2.5, ("namespaced, aligned, enum fields: %g %g"):format(hf[1], hf[2]))
-- A namespace's kernel names its namespace's struct and enumeration unqualified.
local scoped = cuda.module [==[
namespace phys {
struct State { float x; };
enum Dir { L = 1, R = 2 };
__global__ void step(float* o, State s, Dir d) { o[0] = s.x * d; }
namespace inner { __global__ void twice(float* o, State s) { o[0] = 2 * s.x; } }
}]==]
scoped.step[{ 1, 1 }](floats, { x = 1.5 }, 2)
assert(floats:copy_to_host()[1] == 3, "namespace's struct and enumeration")
scoped.twice[{ 1, 1 }](floats, { x = 2.5 })
assert(floats:copy_to_host()[1] == 5, "nested namespace's kernel")

-- A class template's specialisation by value (PyTorch's TensorInfo<T, IndexType>: a pointer with
-- sizes and strides), or by pointer; a non-type parameter sizes a field. A kernel template's own
-- argument reaches the struct's.
local templated = cuda.module [==[
template <typename T, typename IndexType>
struct TensorInfo { T* data; IndexType sizes[2]; IndexType strides[2]; };
template <int N> struct Taps { float w[N]; int shift; };
template <typename T>
__global__ void gather(TensorInfo<T, long long> in, T* out) {
  const long long r = threadIdx.x / in.sizes[1], c = threadIdx.x % in.sizes[1];
  out[threadIdx.x] = in.data[r * in.strides[0] + c * in.strides[1]];
}
struct One { double v[1]; };
__global__ void single(One o, double* out) { out[0] = o.v[0]; }
__global__ void weigh(Taps<3> taps, const Taps<3>* more, float* out) {
  out[0] = taps.w[0] + taps.w[1] * 10 + taps.w[2] * 100 + taps.shift + more->w[2];
}
]==]
local column = cuda.to_device(array.arange(6, "float32"))  -- a 3x2 matrix, read transposed
local moved = cuda.device_array(6, "float32")
local gather = templated.gather  -- (T from out: float)
gather[{ 1, 6 }]({ data = column, sizes = { 2, 3 }, strides = { 1, 2 } }, moved)
local hm = moved:copy_to_host()
for i, want in ipairs({ 0, 2, 4, 1, 3, 5 }) do assert(hm[i] == want, ("gather %d: %g"):format(i, hm[i])) end
local one = cuda.device_array(1, "float32")
local more = cuda.to_device(array.from({ 0, 0, 5, 0 }, "float32"))  -- one Taps<3>: w[2] = 5
templated.weigh[{ 1, 1 }]({ w = { 1, 2, 3 }, shift = 1000 }, more, one)
assert(one:copy_to_host()[1] == 1326, "templated struct " .. one:copy_to_host()[1])
-- An array field of one element takes a table of one, or the number.
local alone = cuda.device_array(1, "float64")
templated.single[{ 1, 1 }]({ v = { 2.5 } }, alone)
assert(alone:copy_to_host()[1] == 2.5, "one-element array field")
templated.single[{ 1, 1 }]({ v = 4.5 }, alone)
assert(alone:copy_to_host()[1] == 4.5, "one-element array field, as a number")
-- Kernels inside namespaces (mini-apps and libraries declare them so): found by their name
-- or their qualified one, compiled under the qualified one (NVRTC's name expression), a
-- template's instance too, and a module's kernels.
local namespaced = [[
namespace clover {
namespace detail { __device__ double twice(double v) { return 2 * v; } }
__global__ void scale(double* x, double s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = detail::twice(x[i] * s);
}
template <int B>
__global__ void fill(double* x, int n) {
  int i = blockIdx.x * B + threadIdx.x;
  if (i < n) x[i] = B;
}
}  // namespace clover
namespace util::inner { __global__ void bump(int* c) { atomicAdd(c, 1); } }
]]
local xs = cuda.to_device(array.ones(8, "float64"))
for _, name in ipairs({ "clover::scale", "scale" }) do
  cuda.jit(namespaced, { name = name })[{ 1, 8 }](xs, 3.0, 8)
end
assert(xs:copy_to_host()[8] == 36, "namespaced scale: " .. xs:copy_to_host()[8])
for _, name in ipairs({ "clover::fill<4>", "fill<2>" }) do
  cuda.jit(namespaced, { name = name })[{ 2, 4 }](xs, 8)
  assert(xs:copy_to_host()[1] == tonumber(name:match("<(%d)>")), name)
end
local nm = cuda.module(namespaced)
nm.scale[{ 1, 8 }](xs, 0.5, 8)
assert(xs:copy_to_host()[1] == 2, "module scale: " .. xs:copy_to_host()[1])
local bumps = cuda.to_device(array.zeros(1, "int32"))
nm.bump[{ 2, 32 }](bumps)
assert(bumps:copy_to_host()[1] == 64, "nested namespace: " .. bumps:copy_to_host()[1])
print("cuda_kernels: ok")
