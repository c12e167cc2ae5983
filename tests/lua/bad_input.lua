-- The catalogue of bad input (docs/reliability.md): each case is a Lua error whose message
-- names what was wrong, and the state keeps working (a good launch after each bad one).
-- Cases already in cuda_kernels.lua (argument counts, >1024 threads, grid y too large, zero
-- grid, no/several/unknown kernels, bad defines and options, a freed array in a launch, a
-- compile error's line in a string) are not repeated here.

package.path = arg[0]:gsub("[^/]*$", "") .. "lib/?.lua;" .. package.path
local expect_error = require("expect").error

-- The good launch every bad case is followed by: out = a + b, checked element by element.
local add = cuda.jit [[
__global__ void add(const float* a, const float* b, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] + b[i];
}]]
local n = 100
local ha, hb = array.arange(n, "float32"), array.full(n, 0.25, "float32")
local da, db, dout = cuda.to_device(ha), cuda.to_device(hb), cuda.device_array(n, "float32")
local checks = 0
local function still_works()
  dout:copy_to_device(array.zeros(n, "float32"))
  add[{math.ceil(n / 32), 32}](da, db, dout, n)
  local out = dout:copy_to_host()
  for i = 1, n do assert(out[i] == (i - 1) + 0.25, "good launch after a bad one: element " .. i) end
  checks = checks + 1
end
-- Runs one bad case, then the good launch.
local function bad(pattern, f, ...)
  local err = expect_error(pattern, f, ...)
  still_works()
  return err
end
still_works()

-- Impossible launches: negative dimensions, dimensions past 32 bits, non-integral dimensions.
bad("launch block dimension -1 is out of range", function() add[{1, -1}](da, db, dout, n) end)
bad("launch grid dimension -2 is out of range", function() add[{-2, 1}](da, db, dout, n) end)
bad("launch grid dimension -3 is out of range", function() add[{{1, -3}, 1}](da, db, dout, n) end)
bad("launch grid dimension 1099511627776 is out of range", function() add[{2 ^ 40 // 1, 1}](da, db, dout, n) end)
bad("grid dimension x = 2147483648 exceeds", function() add[{2 ^ 31 // 1, 1}](da, db, dout, n) end)
bad("zero block dimension x", function() add[{1, 0}](da, db, dout, n) end)
bad("kernel 'add': launch grid 1.5 is not an integer (round up with math.ceil", function() add[{1.5, 1}](da, db, dout, n) end)
bad("kernel 'add': launch grid 3.90625 is not an integer", function() add[{1000 / 256, 256}](da, db, dout, n) end)
bad("launch block: expected an integer", function() add[{1, "x"}](da, db, dout, n) end)
bad("expected 1 to 3 dimensions, got 4", function() add[{{1, 1, 1, 1}, 1}](da, db, dout, n) end)
bad("kernel 'add': a launch needs {grid, block}", function() add[{1}](da, db, dout, n) end)
bad("kernel 'add': a launch configuration is a table: k[{blocks, threads}]", function() add[1](da, db, dout, n) end)
bad("kiln.stream expected, got string", function() add[{1, 32, "s"}](da, db, dout, n) end)
bad("forall needs at least one thread", function() add:forall(0)(da, db, dout, n) end)
bad("forall needs at least one thread", function() add:forall(-5)(da, db, dout, n) end)

-- Shared memory: dynamic shared memory past the device's opt-in limit, a negative size, and a
-- kernel whose static shared memory cannot fit (a compile error naming the kernel's entry).
local dev = cuda.get_current_device()
local optin = dev.max_shared_memory_per_block_optin or dev.max_shared_memory_per_block
assert(type(optin) == "number" and optin >= 48 * 1024, "device reports its shared memory limit")
local dyn = cuda.jit [[
__global__ void dyn(float* x) {
  extern __shared__ float s[];
  s[threadIdx.x] = threadIdx.x;
  __syncthreads();
  x[threadIdx.x] = s[31 - threadIdx.x];
}]]
local x = cuda.device_array(32, "float32")
bad("kernel 'dyn': impossible launch: " .. (optin + 4) .. " bytes of dynamic shared memory exceed the device's " .. optin,
  function() dyn[{1, 32, 0, optin + 4}](x) end)
bad("negative shared memory size -1", function() dyn[{1, 32, 0, -1}](x) end)
dyn[{1, 32, 0, 32 * 4}](x)   -- a legal amount works, and reverses 0..31
assert(x:copy_to_host()[1] == 31 and x:copy_to_host()[32] == 0)
local big_static = cuda.jit [[
__global__ void big_static(float* x) {
  __shared__ float s[100000];
  s[threadIdx.x] = 1; __syncthreads(); x[threadIdx.x] = s[threadIdx.x];
}]]
bad("too much shared data", function() big_static[{1, 32}](x) end)

-- Arguments: types, dtypes, const-ness, non-integral and out-of-range scalars.
-- A host array may go to a const T* (copied in); a table, a string, nil or a number may not.
add[{4, 32}](ha, db, dout, n)
assert(dout:copy_to_host()[n] == (n - 1) + 0.25)
bad("parameter 1 'a' (float const*) expects a float32 array (or cuda.null), got a table", function() add[{4, 32}]({ 1, 2 }, db, dout, n) end)
bad("parameter 2 'b' (float const*) expects a float32 array (or cuda.null), got a string", function() add[{4, 32}](da, "abc", dout, n) end)
bad("parameter 1 'a' (float const*) expects a float32 array (or cuda.null), got nil", function() add[{4, 32}](nil, db, dout, n) end)
bad("parameter 3 'out' (float*) expects a float32 array (or cuda.null), got an integer (5)", function() add[{4, 32}](da, db, 5, n) end)
bad("parameter 2 'b' (float const*) expects a float32 array", function() add[{4, 32}](da, cuda.device_array(n, "int32"), dout, n) end)
bad("parameter 4 'n' (int) expects an integer, got a float32 device array", function() add[{4, 32}](da, db, dout, da) end)
bad("parameter 4 'n' (int) expects an integer in -2147483648..2147483647, got a number (2147483648)",
  function() add[{4, 32}](da, db, dout, 2 ^ 31) end)
bad("parameter 4 'n' (int) expects an integer", function() add[{4, 32}](da, db, dout, 0 / 0) end)
bad("parameter 4 'n' (int) expects an integer", function() add[{4, 32}](da, db, dout, math.huge) end)
bad("parameter 4 'n' (int) expects an integer, got a boolean", function() add[{4, 32}](da, db, dout, true) end)
local A = cuda.jit [[
#include <kiln.cuh>
__global__ void A(kiln::Array<int, 2> a) { if (threadIdx.x == 0) a(0, 0) = 7; }]]
bad("parameter 1 'a' (kiln::Array<int, 2>) expects a 2-d int32 array, got a 1-d int32 device array",
  function() A[{1, 1}](cuda.device_array(4, "int32")) end)
bad("got a 2-d float32 device array", function() A[{1, 1}](cuda.device_array({ 2, 2 }, "float32")) end)
local t = cuda.jit "template <typename T, int N> __global__ void t(T* x) { x[0] = N; }"
bad("cannot deduce template parameter 'N' of kernel 't'", function() t[{1, 1}](x) end)

-- A compile error in a jit_file kernel names the file and line; a missing file names the path.
local path = os.tmpname() .. ".cu"
local f = assert(io.open(path, "w"))
f:write("__global__ void broken_file(int* x) {\n  x[0] = 1;\n\n  not_declared_here(x);\n}\n")
f:close()
local broken_file = cuda.jit_file(path)
local err = bad("not_declared_here", function() broken_file[{1, 1}](cuda.device_array(1, "int32")) end)
assert(err:find(path .. ":4", 1, true) or err:find(path .. "(4)", 1, true), "file:line in " .. err)
os.remove(path)
bad("kernel file '/nonexistent/kiln/missing.cu' does not exist", cuda.jit_file, "/nonexistent/kiln/missing.cu")
bad("kernel file 'no_such_kernel_anywhere.cu' does not exist", cuda.jit_file, "no_such_kernel_anywhere.cu")
-- A name longer than the file system allows is a missing file, not a crash (it threw
-- std::filesystem_error through Lua and ended kiln).
local long_name = string.rep("k", 5000)
assert(cuda.kernel_path(long_name) == nil, "kernel_path of an over-long name")
bad("does not exist", cuda.jit_file, long_name)
-- Bad kernel options: errors raised once C++ objects exist (found leaking under LeakSanitizer).
bad("kernel option 'name' must be a string, got table", cuda.jit, "__global__ void a(int*){}", { name = {} })
bad("options[2] must be a string", cuda.jit, "__global__ void a(int*){}", { options = { "-O2", {} } })
bad("the value of N must be a number, string or boolean", cuda.jit_file, "no_such.cu", { defines = { N = {} } })
bad("expected a source string or {file = path}", cuda.module, { file = 3 > 2 })
local reduce_bad = cuda.reduce "a +* b"
bad("did not compile", reduce_bad, array.ones(10))
bad("reduce of an empty array needs an initial value", cuda.reduce "a + b", array.zeros(0))

-- Host arrays: dtypes, shapes, sizes, indices, values.
bad("unknown dtype 'float8'", array.zeros, 3, "float8")
bad("unknown dtype 'complex'", cuda.device_array, 3, "complex")
bad("shape: dimension 1 is -1, must be >= 0", array.zeros, -1)
bad("shape: dimension 2 is -4, must be >= 0", cuda.device_array, { 3, -4 })
bad("shape: dimension 1 is 2.5, not an integer", array.ones, 2.5)
bad("not an integer", array.zeros, 0 / 0)
bad("shape: dimension 2 is a string", array.zeros, { 2, "x" })
bad("shape (a number or a table of numbers) expected, got string", array.zeros, "abc")
bad("has too many elements", array.zeros, { 2 ^ 31 // 1, 2 ^ 31 // 1, 4 })
bad("arange: n must be >= 0", array.arange, -3)
local h = array.arange(5)
bad("index 0 out of range: array indices start at 1 (a[1] .. a[5])", function() return h[0] end)
bad("index 7 out of range for array of size 5", function() return h[7] end)
bad("index -1 out of range for array of size 5", function() h[-1] = 2 end)
bad("array index must be an integer, got 1.5", function() return h[1.5] end)
local m = array.zeros { 2, 3 }
bad("get: index 3 out of range for dimension 1 (size 2)", function() return m:get(3, 1) end)
bad("set: index 4 out of range for dimension 2 (size 3)", function() m:set(1, 4, 1) end)
bad("get: expected 2 indices for a 2-d array, got 1", function() return m:get(1) end)
bad("value 300 is out of range for uint8", function() array.zeros(2, "uint8")[1] = 300 end)
bad("value 1.5 is not an integer", function() array.zeros(2, "int32")[1] = 1.5 end)
bad("out of range for int32", array.full, 2, 1e10, "int32")
bad("cannot reshape an array of shape (5,) (size 5) into shape (7,)", function() return h:reshape(7) end)
bad("only one dimension can be -1", function() return array.zeros(4):reshape { -1, -1 } end)
bad("t[2] has 1 elements, expected 2", array.from, { { 1, 2 }, { 3 } })
bad("t[2] is a string", array.from, { 1, "a" })
local deep = {}
do local c = deep for _ = 1, 100 do c[1] = {} c = c[1] end end
bad("nested deeper than", array.from, deep)   -- used to overflow the Lua stack and corrupt the heap
local deepest = 7
for _ = 1, 32 do deepest = { deepest } end
assert(array.from(deepest).ndim == 32 and array.from(deepest):sum() == 7)
bad("allclose: shapes differ: (3,) and (4,)", array.allclose, array.zeros(3), array.zeros(4))
bad("cannot open '/nonexistent/kiln.png'", array.load_image, "/nonexistent/kiln.png")
bad("got (2, 2, 7)", array.save_image, os.tmpname() .. ".png", array.zeros({ 2, 2, 7 }, "uint8"))

-- Huge allocations on the host and the device: errors, not crashes or 0-byte buffers.
bad("cannot allocate 8000000000000000 bytes (shape (1000000000000000,), float64)", array.zeros, 1e15)
bad("8000000000000000 bytes", cuda.device_array, 1e15)
-- More than memory and swap together: refused at once, even where the system overcommits
-- (the cpu backend's arrays are the host's memory; filling one would end in the OOM killer).
-- A GPU refuses it as more than its free memory.
bad(cuda.backend() == "cpu" and "4000000000000 bytes: more than this machine's memory and swap together" or
    "out of device memory: cannot allocate 4.00 TB (4000000000000 bytes)", cuda.device_array, 1e12, "float32")
bad("too large", cuda.device_array, 2 ^ 62 // 1)   -- its byte count used to wrap to 0
bad("too large", cuda.device_array, { 2 ^ 61 // 1 }, "int32")
bad("too large", cuda.pinned_array, 2 ^ 62 // 1)
bad("too large", array.zeros, 2 ^ 62 // 1)

-- Copies between mismatched shapes and dtypes; a freed array used again.
bad("copy_to_host: the host array is (101,) float32, the device array (100,) float32",
  function() dout:copy_to_host(array.zeros(n + 1, "float32")) end)
bad("copy_to_host: the host array is (100,) float64", function() dout:copy_to_host(array.zeros(n, "float64")) end)
bad("copy_to_device: the host array is (99,) float32", function() dout:copy_to_device(array.zeros(n - 1, "float32")) end)
bad("kiln.array expected, got table", cuda.to_device, { 1, 2 })
local freed = cuda.device_array(3, "float32")
freed:free()
bad("the device array was freed", function() return freed:copy_to_host() end)
bad("the device array was freed", function() freed:copy_to_device(array.zeros(3, "float32")) end)
bad("kernel 'add': argument 1: the device array was freed", function() add[{1, 3}](freed, db, dout, 3) end)
-- A module's kernel misspelt, and a compile error: the error names the kernels.
local two = cuda.module("__global__ void aa(int* p) { p[0] = 1; }\n__global__ void ab(int* p) { p[0] = 2; }")
bad("module has no kernel 'bb' (its kernels: aa, ab)", function() two.bb[{1, 1}](dout) end)
bad("(kernels: broken)", function()
  cuda.jit("__global__ void broken(float* y) { y[0] = undefined_thing; }")[{1, 1}](dout)
end)

-- kiln:: without #include <kiln.cuh>: the compile error says what is missing.
bad("does not #include <kiln.cuh>", function()
  cuda.jit("__global__ void k(kiln::Array<float, 1> a) { a[0] = 1; }")[{1, 1}](cuda.device_array(1, "float32"))
end)

-- Modules, constants, devices.
local mod = cuda.module [[
__constant__ float c[4];
__global__ void k1(float* x) { x[0] = c[0]; }
__global__ void k2(float* x) { x[0] = 2; }]]
bad("no __constant__ or __device__ variable 'zz'", function() mod:set_constant("zz", 1) end)
bad("'c' holds 4 elements, the array has 10", function() mod:set_constant("c", array.zeros(10, "float32")) end)
bad("'c' holds float, the array is float64", function() mod:set_constant("c", array.zeros(4, "float64")) end)
bad("select_device: no device 5", cuda.select_device, 5)

-- A Lua error thrown in the middle of a launch loop: the loop stops there, the launches before
-- it happened (each adds 1), and the kernel and arrays go on working.
local inc = cuda.jit "__global__ void inc(int* x, int n) { int i = threadIdx.x; if (i < n) x[i] += 1; }"
local counter = cuda.to_device(array.zeros(8, "int32"))
err = bad("stop at 5", function()
  for i = 1, 10 do
    if i == 6 then error("stop at " .. (i - 1)) end
    inc[{1, 8}](counter, 8)
  end
end)
assert(counter:copy_to_host():sum() == 5 * 8, "five launches before the error")
-- A bad argument on the 4th iteration of a loop: the error names the parameter.
bad("parameter 2 'n' (int) expects an integer", function()
  for i = 1, 5 do inc[{1, 8}](counter, i == 4 and 0.5 or 8) end
end)
assert(counter:copy_to_host():sum() == 8 * 8, "three more launches before the bad one")
inc[{1, 8}](counter, 8)
assert(counter:copy_to_host():sum() == 9 * 8)

-- Inline PTX: the cpu backend runs what has a cpu meaning (a lane's index) and names what has
-- not (an asynchronous copy into shared memory), not the host assembler's errors.
local lane_asm = cuda.jit([[
__global__ void lane_asm(int* out) {
  unsigned lane; asm("mov.u32 %0, %%laneid;" : "=r"(lane)); out[threadIdx.x] = lane; }]])
local lanes = cuda.device_array(64, "int32")
lane_asm[{ 1, 64 }](lanes)
assert(lanes:copy_to_host()[64] == 31 and lanes:copy_to_host()[33] == 0)
local copy_asm = cuda.jit([[
__global__ void copy_asm(const float* g, float* out) {
  __shared__ float s[32];
  unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(&s[threadIdx.x]));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"(a), "l"(g + threadIdx.x));
  asm volatile("cp.async.wait_all;" ::: "memory");
  __syncthreads();
  out[threadIdx.x] = s[31 - threadIdx.x]; }]])
local from = cuda.to_device(array.from({ 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17,
                                        18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32 }, "float32"))
local to = cuda.device_array(32, "float32")
if cuda.backend() == "cpu" then
  -- (at launch: the thread that reaches it stops; the module's other kernels build and run)
  bad("kernel.cu:4: inline PTX the cpu backend cannot run: `cp.async.ca.shared.global`: a "
      .. "GPU's shared-memory or tensor-core operation", function() copy_asm[{ 1, 32 }](from, to) end)
else
  copy_asm[{ 1, 32 }](from, to)
  assert(to:copy_to_host()[1] == 32)
end

print("bad_input: ok (" .. checks .. " good launches after bad input)")
