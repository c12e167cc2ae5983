-- cuda.module, constants, streams and events, cuda.reduce, hot edit of kernel files.
package.path = arg[0]:gsub("[^/]*$", "") .. "lib/?.lua;" .. package.path
local expect_error = require("expect").error

local m = cuda.module [[
__constant__ float weights[4];
__device__ int offset;
__global__ void weigh(const float* x, float* y) { int i = threadIdx.x; y[i] = x[i] * weights[i] + offset; }
__global__ void twice(float* y) { y[threadIdx.x] *= 2; }
]]
m:set_constant("weights", array.from({ 1, 2, 3, 4 }, "float32"))
m:set_constant("offset", 10)
local x = cuda.to_device(array.ones(4, "float32"))
local y = cuda.device_array(4, "float32")
m.weigh[{1, 4}](x, y)
m.twice[{1, 4}](y)
assert(array.equal(y:copy_to_host(), array.from({ 22, 24, 26, 28 }, "float32")))
m:set_constant("offset", 0) -- applies to the loaded build too
m.weigh[{1, 4}](x, y)
assert(array.equal(y:copy_to_host(), array.from({ 1, 2, 3, 4 }, "float32")))
expect_error("no __constant__ or __device__ variable 'nothing'", function() m:set_constant("nothing", 1) end)
expect_error("holds 4 elements", function() m:set_constant("weights", array.ones(5, "float32")) end)

-- An extent a macro gives (`#define`, or a module's defines) is checked when set, before any
-- build; one kiln cannot read is checked at the first build, whose launch fails naming the
-- m:set_constant call, and drops the value: the next launch runs.
local taps_src = [[
#define WIDE (NTAPS * 2)
__constant__ float taps[NTAPS];
__constant__ float wide[WIDE];
__global__ void fir(float* y) { y[threadIdx.x] = taps[threadIdx.x] + wide[threadIdx.x]; }
]]
local mt = cuda.module("#define NTAPS 4\n" .. taps_src)
expect_error("holds 4 elements, the array has 5", function() mt:set_constant("taps", array.ones(5, "float32")) end)
local md = cuda.module(taps_src, { defines = { NTAPS = 3 } })
expect_error("holds 3 elements, the array has 4", function() md:set_constant("taps", array.ones(4, "float32")) end)
md:set_constant("taps", array.from({ 1, 2, 3 }, "float32"))
md:set_constant("wide", array.ones(7, "float32"))  -- (6 fit: known once built)
local yt = cuda.device_array(3, "float32")
expect_error("the value an earlier m:set_constant(\"wide\", ...) gave, before the module was built, does not fit",
             function() md.fir[{ 1, 3 }](yt) end)
md.fir[{ 1, 3 }](yt)
assert(array.equal(yt:copy_to_host(), array.from({ 1, 2, 3 }, "float32")), tostring(yt:copy_to_host()))

-- Vector globals (Rodinia cfd's `__constant__ float3 ff_flux_contribution...`): an array of the
-- vector type, or of its lanes; a number is refused.
local mv = cuda.module [[
__constant__ float3 flux[2];
__constant__ int2 pair;
__global__ void read(float* y) { y[0] = flux[1].z + flux[0].x; y[1] = pair.y - pair.x; }
]]
local f3 = array.zeros(2, "float3")
f3[1] = { 1, 2, 3 }
f3[2] = { 4, 5, 6 }
mv:set_constant("flux", f3)
mv:set_constant("pair", array.from({ 7, 30 }, "int32"))
local yv = cuda.device_array(2, "float32")
mv.read[{1, 1}](yv)
assert(array.equal(yv:copy_to_host(), array.from({ 7, 23 }, "float32")), tostring(yv:copy_to_host()))
mv:set_constant("flux", array.from({ 10, 0, 0, 0, 0, 0.5 }, "float32"))
mv.read[{1, 1}](yv)
assert(yv:copy_to_host()[1] == 10.5)
expect_error("'pair' holds int2: give a host array of int2 or of its int32 lanes", function() mv:set_constant("pair", 1) end)
expect_error("3 float32 lanes each; the array has 4 values", function() mv:set_constant("flux", array.ones(4, "float32")) end)

-- A __device__ counter set once, bumped by one kernel and read by another: what the kernels
-- wrote stays (the value set is written when the module loads and by set_constant, not again
-- at each kernel's first launch).
local mc = cuda.module([[
__device__ unsigned int g_count;
__global__ void bump(int n) { if (blockIdx.x * blockDim.x + threadIdx.x < n) atomicAdd(&g_count, 1u); }
__global__ void read(unsigned int* out) { *out = g_count; }]])
mc:set_constant("g_count", 5)
local count = cuda.device_array(1, "uint32")
for round = 1, 2 do
  mc.bump[{ 4, 32 }](100)
  mc.read[{ 1, 1 }](count)
  assert(count:copy_to_host()[1] == 5 + 100 * round, "g_count after round " .. round .. ": " .. count:copy_to_host()[1])
end
-- Plain kernels share the module's __device__ variables beside a template kernel, which builds
-- each instance on its own (the ray tracers' world built by one kernel, read by another).
local world = cuda.module([[
__device__ int g_state;
__device__ int* g_ptr;
__global__ void create(int v) { g_state = v; g_ptr = new int(v * 2); }
__global__ void use(int* out) { out[0] = g_state; out[1] = g_ptr ? *g_ptr : -1; }
__global__ void destroy() { delete g_ptr; g_ptr = nullptr; }
template <typename T> __global__ void scale(T* x, T a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}]])
local state = cuda.device_array(2, "int32")
world.create[{ 1, 1 }](42)
world.use[{ 1, 1 }](state)
assert(state:copy_to_host()[1] == 42 and state:copy_to_host()[2] == 84, "globals beside a template: " .. tostring(state:copy_to_host()))
world.destroy[{ 1, 1 }]()
world.use[{ 1, 1 }](state)
assert(state:copy_to_host()[2] == -1, "g_ptr after destroy")
local scaled = cuda.to_device(array.ones(4, "float32"))
world.scale[{ 1, 4 }](scaled, 3, 4)
assert(scaled:copy_to_host()[4] == 3)
-- A kernel taking a struct by value shares the build too (its layout probed beside the others':
-- it was built apart, and the flag it set read 0 in the other kernel).
local by_value = cuda.module([[
struct Params { double scale; int n; };
__device__ int g_flag;
__global__ void set_flag(double* x, Params p) {
  if (threadIdx.x < p.n) x[threadIdx.x] = p.scale * threadIdx.x;
  if (threadIdx.x == 0) g_flag = 42;
}
__global__ void read_flag(int* out) { out[0] = g_flag; }]])
local scaled_by, flag = cuda.device_array(4, "float64"), cuda.device_array(1, "int32")
by_value.set_flag[{ 1, 4 }](scaled_by, { scale = 2.5, n = 4 })
by_value.read_flag[{ 1, 1 }](flag)
assert(flag:copy_to_host()[1] == 42 and scaled_by:copy_to_host()[4] == 7.5, "a struct kernel's globals")
assert(by_value.read_flag:info().cache == "memory", by_value.read_flag:info().cache)
-- Overloads of one arity beside a plain kernel: each builds on its own, as the source allows.
local overloads = cuda.module([[
__global__ void put(int* x) { x[0] = 7; }
__global__ void f(int* x) { x[0] = 1; }
__global__ void f(float* x) { x[0] = 2; }]])
local put_out = cuda.device_array(1, "int32")
overloads.put[{ 1, 1 }](put_out)
assert(put_out:copy_to_host()[1] == 7, "put beside overloads")
-- A kernel in an #if group the preprocessor drops is no part of the others' build; defined, it
-- runs like the rest.
local guarded = [[
__global__ void a(int* p) { p[threadIdx.x] = 1; }
#ifdef WITH_B
__global__ void b(int* p) { p[threadIdx.x] = 2; }
#endif]]
local ab = cuda.device_array(4, "int32")
cuda.module(guarded).a[{ 1, 4 }](ab)
assert(ab:copy_to_host()[4] == 1, "a beside an #ifdef'd b")
local with_b = cuda.module(guarded, { defines = { WITH_B = 1 } })
with_b.b[{ 1, 4 }](ab)
assert(ab:copy_to_host()[4] == 2, "b with WITH_B defined")
with_b.a[{ 1, 4 }](ab)
assert(ab:copy_to_host()[4] == 1)
expect_error("kernel 'b' is at line 3, inside an #if group", function() cuda.module(guarded).b[{ 1, 4 }](ab) end)
mc:set_constant("g_count", 1)
mc.read[{ 1, 1 }](count)
assert(count:copy_to_host()[1] == 1, "set_constant after launches")
expect_error("'flux' holds 2 elements, the array has 3", function() mv:set_constant("flux", array.ones(9, "float32")) end)

-- Streams and events.
local s = cuda.stream()
local e1, e2 = cuda.event(), cuda.event()
e1:record(s)
m.twice[{1, 4, s}](y)
e2:record(s)
s:synchronize()
e2:synchronize()
assert(cuda.event_elapsed_time(e1, e2) >= 0)
-- (Numba's forms: start.elapsed_time(stop), event.query(), event.wait(stream), default_stream())
assert(e1:elapsed_time(e2) == cuda.event_elapsed_time(e1, e2) and e2:query() == true)
local d0 = cuda.default_stream()
e2:wait(d0)
e2:wait()
m.twice[{1, 4, d0}](y)
d0:synchronize()

-- cuda.reduce: integers exactly, floats within rounding, with and without init.
local sum = cuda.reduce "a + b"
local big = array.arange(100000, "int64")
assert(sum(big) == 100000 * 99999 // 2)
assert(sum(cuda.to_device(big), 5) == 100000 * 99999 // 2 + 5)
local maxr = cuda.reduce "a > b ? a : b"
local r = array.random.uniform(12345, { seed = 3, dtype = "float32" })
assert(maxr(r) == r:max())
local f = array.random.uniform(1000, { seed = 4 })
assert(math.abs(sum(f) - f:sum()) < 1e-9)
-- Sizes around the slices each thread folds (contiguous on the cpu backend): every element
-- counted once, the last one included.
for _, n in ipairs { 1, 2, 255, 256, 257, 4095, 4096, 4097, 65537, 1000003 } do
  local x = array.arange(n, "int64")
  assert(sum(x) == n * (n - 1) // 2, "sum of arange(" .. n .. ")")
  assert(maxr(x) == n - 1, "max of arange(" .. n .. ")")
  local minr = cuda.reduce "a < b ? a : b"
  assert(minr(cuda.to_device(x)) == 0, "min of arange(" .. n .. ")")
end
assert(sum(array.from({ 7 }, "int32")) == 7)

-- Hot edit: a kernel file changes, its next launch recompiles; a broken edit keeps the old build.
local dir = os.getenv("KILN_CACHE_DIR") or "/tmp"
local path = dir .. "/hot_edit_" .. tostring(os.time()) .. "_" .. tostring(math.random(1e9)) .. ".cu"
local function write(text) local f = assert(io.open(path, "w")); f:write(text); f:close() end
write("__global__ void v(int* x) { x[0] = 1; }\n")
local k = cuda.jit_file(path)
local out = cuda.device_array(1, "int32")
k[{1, 1}](out)
assert(out:copy_to_host()[1] == 1)
write("__global__ void v(int* x) { x[0] = 2; /* longer, so the size changes */ }\n")
k[{1, 1}](out)
assert(out:copy_to_host()[1] == 2, "hot edit not picked up")
write("__global__ void v(int* x) { x[0] = oops; }\n")
expect_error("oops", function() k[{1, 1}](out) end)
k[{1, 1}](out) -- the previous build stays loaded
assert(out:copy_to_host()[1] == 2)
write("__global__ void v(int* x) { x[0] = 3; /* fixed, and longer again .... */ }\n")
k[{1, 1}](out)
assert(out:copy_to_host()[1] == 3)
os.remove(path)
expect_error("does not exist", cuda.jit_file, "/nonexistent/kernel.cu")

-- A namespace's __constant__ by its qualified name, or unqualified where no other has that name.
local ns = cuda.module([[
namespace cfg { __constant__ float weights[4]; }
namespace a { namespace b { __constant__ int table[2]; } }
__global__ void k(float* out) { out[threadIdx.x] = cfg::weights[threadIdx.x] + a::b::table[threadIdx.x % 2]; }
]])
ns:set_constant("cfg::weights", array.from({1, 2, 3, 4}, "float32"))
ns:set_constant("table", array.from({10, 20}, "int32"))
local nout = cuda.device_array(4, "float32")
ns.k[{1, 4}](nout)
ns:set_constant("a::b::table", array.from({100, 200}, "int32"))  -- (after the build too)
ns.k[{1, 4}](nout)
local hn = nout:copy_to_host()
assert(hn[1] == 101 and hn[2] == 202 and hn[3] == 103 and hn[4] == 204, tostring(hn))
expect_error("no __constant__ or __device__ variable 'b::table'",
             function() ns:set_constant("b::table", array.from({1, 2}, "int32")) end)
-- (a name several namespaces declare must be qualified; `::x` is the global namespace's)
local two = cuda.module([[
namespace p { __constant__ int x; }
namespace q { __constant__ int x; }
__constant__ int y;
__global__ void k(int* out) { out[0] = p::x + 10 * q::x + 100 * y; }
]])
expect_error("'x' is declared in several namespaces (p::x, q::x)", function() two:set_constant("x", 1) end)
two:set_constant("p::x", 1)
two:set_constant("q::x", 2)
two:set_constant("::y", 3)
local tout = cuda.device_array(1, "int32")
two.k[{1, 1}](tout)
assert(tout:copy_to_host()[1] == 321)

-- A template kernel's instance by name (`m["scale<int, 3>"]`), made once per name.
local t = cuda.module([[
__device__ int calls;
template <typename T, int F>
__global__ void scale(T* x) { x[threadIdx.x] *= F; if (threadIdx.x == 0) atomicAdd(&calls, 1); }
__global__ void count(int* out) { out[0] = calls; }
]])
local three = t["scale<int, 3>"]
assert(rawequal(three, t["scale<int, 3>"]) and three ~= t["scale<int, 4>"], "made once per name")
assert(rawequal(three, t["scale<int,3>"]) and rawequal(three, t["scale< int , 3 >"]), "spaces")
local xs = cuda.to_device(array.from({1, 2, 3}, "int32"))
three[{1, 3}](xs)
t["scale<int,4>"][{1, 3}](xs)
local hx = xs:copy_to_host()
assert(hx[1] == 12 and hx[2] == 24 and hx[3] == 36, tostring(hx))
-- Each instance has its own copy of `calls`: get_constant reads the one launched last, and
-- set_constant reaches every instance's.
three[{1, 3}](xs)
three[{1, 3}](xs)
assert(t:get_constant("calls") == 3, "scale<int, 3>'s copy, launched three times")
t["scale<int,4>"][{1, 3}](xs)
assert(t:get_constant("calls") == 2, "scale<int, 4>'s copy, launched twice")
t:set_constant("calls", 100)
three[{1, 3}](xs)
assert(t:get_constant("calls") == 101, "set_constant reaches an instance's build")
expect_error("has no kernel 'nope<int>'", function() return t["nope<int>"] end)
expect_error("has no kernel 'count<int>'", function() return t["count<int>"] end)  -- (no template)
expect_error("scale<int,3,5>", function() t["scale<int, 3, 5>"][{1, 1}](xs) end)
-- A template deduced from a float16 or bfloat16 array compiles though its source, written for
-- any T, includes neither <cuda_fp16.h> nor <cuda_bf16.h> (survey 14: NVRTC's name map, and the
-- host compiler, did not know __half).
local generic = cuda.jit("template <typename T>\n__global__ void twice(T* x, T a) { x[threadIdx.x] = x[threadIdx.x] * a; }\n")
for _, dtype in ipairs({"float16", "bfloat16"}) do
  local d = cuda.to_device(array.arange(4, dtype))
  generic[{1, 4}](d, 2)
  local h = d:copy_to_host()
  assert(h[1] == 0 and h[2] == 2 and h[4] == 6, dtype .. ": " .. tostring(h))
end
-- m:get_constant reads a global back, as cudaMemcpyFromSymbol does: a counter the kernels
-- bumped (a number), an array global (a host array of its dtype), one whose extent is an
-- expression (given a count), a struct's bytes; before any launch, what set_constant gave.
local g = cuda.module([[
#define BINS 4
__device__ unsigned int hits;
__device__ int bins[BINS];
__device__ float scaled[BINS * 2 - 4];
struct Pair { int a, b; };
__device__ Pair pair;
__global__ void tally(const int* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { atomicAdd(&hits, 1u); atomicAdd(&bins[x[i] % BINS], 1); }
  if (i < 4) scaled[i] = 0.5f * i;
  if (i == 0) { pair.a = 7; pair.b = -7; }
}]])
g:set_constant("hits", 5)
expect_error("no kernel of the module has run yet", function() g:get_constant("hits") end)
local xs = array.arange(1000, "int32")
g.tally[{4, 256}](cuda.to_device(xs), 1000)
assert(g:get_constant("hits") == 1005, "the counter: " .. tostring(g:get_constant("hits")))
local bins = g:get_constant("bins")
assert(bins.dtype == "int32" and bins.size == 4 and bins[1] == 250 and bins[4] == 250, tostring(bins))
expect_error("whose extent kiln cannot read from the source", function() g:get_constant("scaled") end)
local scaled = g:get_constant("scaled", 4)
assert(scaled.dtype == "float32" and scaled[2] == 0.5 and scaled[4] == 1.5, tostring(scaled))
expect_error("a struct: give the number of its bytes", function() g:get_constant("pair") end)
local pair = g:get_constant("pair", 8)  -- (little-endian: 7, then -7's low byte)
assert(pair.dtype == "uint8" and pair[1] == 7 and pair[2] == 0 and pair[5] == 249, tostring(pair))
expect_error("get_constant: no __constant__ or __device__ variable 'nothing'",
             function() g:get_constant("nothing") end)
-- A __constant__ struct from a table of its fields (cudaMemcpyToSymbol of a parameter block),
-- in a namespace too; set before the first launch, and again after.
local params = cuda.module([[
struct SimParams { float dt; int steps; float3 gravity; double scale[2]; };
__constant__ SimParams c_params;
namespace phys { struct Box { float lo, hi; }; __constant__ Box bounds; }
__global__ void read_params(double* out) {
  out[0] = c_params.dt; out[1] = c_params.steps; out[2] = c_params.gravity.y;
  out[3] = c_params.scale[1]; out[4] = phys::bounds.hi - phys::bounds.lo;
}]])
params:set_constant("c_params", { dt = 0.5, steps = 7, gravity = { 0, -9.5, 0 }, scale = { 1, 2.25 } })
params:set_constant("phys::bounds", { lo = 1, hi = 4 })
local pout = cuda.device_array(5, "float64")
params.read_params[{1, 1}](pout)
local hp = pout:copy_to_host()
assert(hp[1] == 0.5 and hp[2] == 7 and hp[3] == -9.5 and hp[4] == 2.25 and hp[5] == 3, tostring(hp))
params:set_constant("phys::bounds", { lo = -1, hi = 4 })
params.read_params[{1, 1}](pout)
assert(pout:copy_to_host()[5] == 5, "set again after a launch")
expect_error("'dx'", function() params:set_constant("c_params", { dx = 1 }) end)
-- Globals a kernel file takes from its quoted header (`#include "taps.cuh"`, the extent a
-- #define there): set and read by name, each module of the file with its own values.
local dir = os.mkdtemp("kiln-header-globals")
local function write(name, text)
  local f = assert(io.open(dir .. "/" .. name, "w"))
  f:write(text)
  f:close()
end
write("taps.cuh", [[
#pragma once
#define NTAPS 3
__constant__ float taps[NTAPS];
__device__ int calls;
struct Scale { float by; int plus; };
__constant__ Scale scale;
]])
write("fir.cu", [[
#include "taps.cuh"
__global__ void fir(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float s = 0;
  for (int t = 0; t < NTAPS; ++t) s += taps[t] * x[(i + t) % n];
  y[i] = s * scale.by + scale.plus;
  if (i == 0) atomicAdd(&calls, 1);
}
]])
local x = cuda.to_device(array.from({ 1, 2, 3, 4 }, "float32"))
local function fir(ts, by, plus)
  local fm = cuda.module({ file = dir .. "/fir.cu" })
  fm:set_constant("taps", array.from(ts, "float32"))
  fm:set_constant("scale", { by = by, plus = plus })
  return fm
end
local first, second = fir({ 1, 0, 0 }, 1, 0), fir({ 0, 1, 1 }, 2, 1)
for _, run in ipairs({ { first, { 1, 2, 3, 4 } }, { second, { 11, 15, 11, 7 } } }) do
  local y = cuda.device_array(4, "float32")
  run[1].fir[{ 1, 4 }](x, y, 4)
  local got = y:copy_to_host()
  for i = 1, 4 do assert(got[i] == run[2][i], ("header globals: y[%d] = %s, want %s"):format(i, got[i], run[2][i])) end
end
first.fir[{ 1, 4 }](x, cuda.device_array(4, "float32"), 4)
assert(first:get_constant("calls") == 2 and second:get_constant("calls") == 1, "each module counts its own calls")
assert(array.equal(second:get_constant("taps"), array.from({ 0, 1, 1 }, "float32")))
expect_error("holds 3 elements, the array has 4", function() first:set_constant("taps", array.ones(4, "float32")) end)
os.remove(dir .. "/fir.cu")
os.remove(dir .. "/taps.cuh")
os.remove(dir)
print("cuda_module: ok")
