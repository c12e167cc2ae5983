-- Conformance: declarations (kernels/declarations.cu) against references computed here.
local here = arg[0]:match("^(.*)/") or "."
local m = cuda.module({ file = here .. "/kernels/declarations.cu" })

-- A static __constant__ table whose size is a macro, and a __device__ counter.
local taps = array.from({ 1, 2, 3, 4, 5, 4, 3, 2, 1 }, "float32")
m:set_constant("c_Kernel", taps)
m:set_constant("d_calls", 0)
local w, h = 77, 13
local img = array.random.uniform({ h, w }, { dtype = "float32", seed = 3 })
local dst = cuda.device_array({ h, w }, "float32")
m.convolution_rows[{ { (w + 31) // 32, h }, { 32, 1 } }](dst, cuda.to_device(img), w, h)
local out = dst:copy_to_host()
for y = 1, h do
  for x = 1, w do
    local s = 0
    for k = -4, 4 do
      local xx = math.min(math.max(x + k, 1), w)
      s = s + img:get(y, xx) * taps[5 - k]
    end
    assert(math.abs(out:get(y, x) - s) <= 1e-5 * math.abs(s), ("row pass at %d,%d: %g, expected %g"):format(y, x, out:get(y, x), s))
  end
end
local ok, err = pcall(function() m:set_constant("c_Kernel", array.zeros(10, "float32")) end)
assert(not ok and tostring(err):find("c_Kernel"), "10 values into a 9-element table: " .. tostring(err))

-- Dynamic shared memory, type before __shared__, in a template (float and int instantiations).
for _, dtype in ipairs({ "float32", "int32" }) do
  local x = array.arange(4 * 64, dtype)
  local y = cuda.device_array(4 * 64, dtype)
  m.reverse_blocks[{ 4, 64, 0, 64 * 4 }](cuda.to_device(x), y)
  local hy = y:copy_to_host()
  for i = 0, 4 * 64 - 1 do
    local b, t = i // 64, i % 64
    assert(hy[i + 1] == b * 64 + (63 - t), dtype .. " reverse at " .. i)
  end
end
local xd = array.random.uniform(3 * 32, { seed = 4 })
local yd = cuda.device_array(3 * 32)
m.reverse_bytes[{ 3, 32, 0, 32 * 8 }](cuda.to_device(xd), yd)
local hd = yd:copy_to_host()
for i = 0, 3 * 32 - 1 do
  assert(hd[i + 1] == xd[(i // 32) * 32 + 31 - i % 32 + 1], "reverse_bytes at " .. i)
end

local xt = array.random.uniform(2 * 256, { dtype = "float32", seed = 5 })
local yt = cuda.device_array(2 * 256, "float32")
m.transpose_rows[{ 2, 256, 0, 256 * 4 }](cuda.to_device(xt), yt)
local ht = yt:copy_to_host()
for i = 0, 2 * 256 - 1 do
  local b, r, c = i // 256, (i % 256) // 16, i % 16
  assert(ht[i + 1] == xt[b * 256 + c * 16 + r + 1], "transpose_rows at " .. i)
end

-- Kernels named like C and CUDA functions.
local named = { a = 1, f = 2, min = 3, max = 4, rand = 5, time = 6, index = 7, select = 8, div = 9 }
for name, value in pairs(named) do
  local o = cuda.device_array(8, "int32")
  if value > 4 then m[name][{ 1, 8 }](o, 8) else m[name][{ 1, 8 }](o) end
  local ho = o:copy_to_host()
  for i = 1, 8 do assert(ho[i] == value, "kernel " .. name) end
end
-- Textbook declarations: several __constant__ arrays on one line (PMPP's MRI-Q), `void*`
-- parameters cast in the kernel (GPU Gems' N-body), and `dim3` / `uint3` by value.
local book = cuda.module([[
#define CHUNK 4
__constant__ float kx_c[CHUNK], ky_c[CHUNK], kz_c[CHUNK];
__constant__ int a_c = 1, b_c;
__global__ void mriq(float* out) {
  int i = threadIdx.x;
  out[i] = kx_c[i] + 10 * ky_c[i] + 100 * kz_c[i] + 1000 * (a_c + b_c);
}
__global__ void bodies(void* positions, const void* scale, dim3 grid, uint3 extra, unsigned* out) {
  float4* p = (float4*)positions;
  const double s = ((const double*)scale)[1];
  int i = threadIdx.x;
  p[i].w = (float)(p[i].x * s);
  if (i == 0) out[0] = grid.x * 100 + grid.y * 10 + grid.z + 1000 * (extra.x + extra.y + extra.z);
}]])
book:set_constant("kx_c", array.from({ 1, 2, 3, 4 }, "float32"))
book:set_constant("ky_c", array.from({ 5, 6, 7, 8 }, "float32"))
book:set_constant("kz_c", array.from({ 9, 1, 2, 3 }, "float32"))
book:set_constant("b_c", 4)
local q = cuda.device_array(4, "float32")
book.mriq[{ 1, 4 }](q)
local hq = q:copy_to_host()
for i, want in ipairs({ 5951, 5162, 5273, 5384 }) do
  assert(hq[i] == want, ("mriq[%d]: %g, want %g"):format(i, hq[i], want))
end
local pos = cuda.to_device(array.from({ 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0 }, "float32"))
local u = cuda.device_array(1, "uint32")
book.bodies[{ 1, 3 }](pos, cuda.to_device(array.from({ 0.5, 1.5 }, "float64")), { 4, 5, 6 }, { 1, 2, 3 }, u)
local hp = pos:copy_to_host()
assert(hp[4] == 1.5 and hp[8] == 3 and hp[12] == 4.5, "void* positions")
assert(u:copy_to_host()[1] == 6456, "dim3 and uint3 by value: " .. u:copy_to_host()[1])
book.bodies[{ 1, 3 }](pos, cuda.to_device(array.from({ 0.5, 1.5 }, "float64")), 7, { 1, 2, 3 }, u)
assert(u:copy_to_host()[1] == 6711, "a dim3 of one number: " .. u:copy_to_host()[1])
book.bodies[{ 1, 3 }](pos, cuda.to_device(array.from({ 0.5, 1.5 }, "float64")), { 7, 2 }, { 1, 2, 3 }, u)
assert(u:copy_to_host()[1] == 6721, "a dim3 of two numbers: " .. u:copy_to_host()[1])
ok, err = pcall(function() book.bodies[{ 1, 3 }](1.5, pos, { 1, 1, 1 }, { 0, 0, 0 }, u) end)
assert(not ok and tostring(err):find("parameter 1 'positions' (void*) expects an array of any dtype", 1, true), tostring(err))

-- A __constant__ array of structs (CUDA by Example's ray tracer) from the bytes of whole structs.
local tracer = cuda.module([[
struct Sphere { float r, g, b, radius, x, y, z; };
__constant__ Sphere spheres[2];
__global__ void radii(float* out) { out[threadIdx.x] = spheres[threadIdx.x].radius + spheres[threadIdx.x].z; }]])
tracer:set_constant("spheres", array.from({ 0, 0, 0, 5, 0, 0, 0.25, 0, 0, 0, 7, 0, 0, 0.5 }, "float32"))
local radii = cuda.device_array(2, "float32")
tracer.radii[{ 1, 2 }](radii)
assert(radii:copy_to_host()[1] == 5.25 and radii:copy_to_host()[2] == 7.5, "struct constants")
ok, err = pcall(function() tracer:set_constant("spheres", array.zeros(15, "float32")) end)
assert(not ok, "more bytes than the struct array holds are refused")
ok, err = pcall(function() tracer:set_constant("spheres", 1) end)
assert(not ok and tostring(err):find("has type 'Sphere': give a host array of its bytes", 1, true), tostring(err))

-- A struct parameter whose field points to structs (CUDA by Example's hash table).
local table_m = cuda.module([[
struct Entry { unsigned int key; int value; Entry* next; };
struct Table { int count; Entry** entries; Entry* pool; };
__global__ void second_value(Table t, Entry** heads, int* out) {
  t.entries[1] = &t.pool[1];
  heads[0] = t.entries[1];
  out[0] = t.entries[1]->value + t.count + (heads[1] == NULL);
}]])
local entries = cuda.to_device(array.from({ 0, 0, 0, 0, 5, 6, 0, 0 }, "int32"))  -- two of 16 bytes
local got, slots = cuda.device_array(1, "int32"), cuda.to_device(array.zeros(2, "uint64"))
table_m.second_value[{ 1, 1 }]({ count = 2, entries = slots, pool = entries },
                               cuda.to_device(array.zeros(2, "uint64")), got)
assert(got:copy_to_host()[1] == 9, "fields pointing to structs and to pointers: " .. got:copy_to_host()[1])
assert(slots:copy_to_host()[2] ~= 0 and slots:copy_to_host()[1] == 0, "Entry** filled by the kernel")

-- unsigned __int128 (Montgomery products, 128-bit hashes) compiles as nvcc compiles it, no
-- flag given: NVRTC beside gets --device-int128. 64x64 -> 128: the high and low halves.
local wide = cuda.jit([[
__global__ void mul128(const unsigned long long* a, const unsigned long long* b,
                       unsigned long long* hi, unsigned long long* lo) {
  const unsigned __int128 p = (unsigned __int128)a[threadIdx.x] * b[threadIdx.x];
  hi[threadIdx.x] = (unsigned long long)(p >> 64);
  lo[threadIdx.x] = (unsigned long long)p;
}]])
local hi, lo = cuda.device_array(2, "uint64"), cuda.device_array(2, "uint64")
-- (2^32 + 3)(2^32 + 5) = 2^64 + 8 * 2^32 + 15; (2^62)(12) = 3 * 2^64
wide[{ 1, 2 }](cuda.to_device(array.from({ 0x100000003, 1 << 62 }, "uint64")),
               cuda.to_device(array.from({ 0x100000005, 12 }, "uint64")), hi, lo)
local h, l = hi:copy_to_host(), lo:copy_to_host()
assert(h[1] == 1 and l[1] == 8 * 0x100000000 + 15 and h[2] == 3 and l[2] == 0,
       ("__int128 products: %s %s"):format(tostring(h), tostring(l)))

-- `main` cannot be a kernel in CUDA: the error says so.
ok, err = pcall(function() cuda.module("__global__ void main(int* o) { o[0] = 1; }").main[{ 1, 1 }](cuda.device_array(1, "int32")) end)
assert(not ok and tostring(err):find("main"), tostring(err))
print("ok")
