-- Cross-backend equivalence: the same kernels with the same inputs on the cpu backend and on a
-- GPU. `kiln cross_cases.lua run OUT` runs every case on the current backend, checks each result
-- against a reference computed here in Lua (independent of both backends) and writes the results
-- to OUT (a Lua chunk); `kiln cross_cases.lua compare A B` checks two such files against each
-- other: integer results identical, float results within each case's stated tolerance. Run by
-- cross_backend.sh (ctest label gpu) and, cpu against cpu, by tests/cli/cross_harness.sh.
package.path = arg[0]:gsub("[^/]*$", "") .. "../../../scripts/lib/?.lua;" .. package.path
local images = require "images"
local mode, a_path, b_path = arg[1], arg[2], arg[3]
local function blocks(n, t) return (n + t - 1) // t end

-- Each case: name, tolerance (relative, for |x| > 1; 0: bit-identical), a function returning the
-- result (a host array) and its reference (a flat Lua table), and optionally the fraction of
-- elements allowed to differ beyond the tolerance. Sizes are odd on purpose (partial blocks,
-- tiles and warps).
local CASES = {}
local function case(name, tol, run, mismatch)
  CASES[#CASES + 1] = { name = name, tol = tol, run = run, mismatch = mismatch or 0 }
end
local function host(d) return d:copy_to_host() end
local function flat(h) return h:reshape({ h.size }):totable() end
local function lab(file, defines) return cuda.jit_file(file, { defines = defines or {} }) end

-- The labs (kernels_src/).
local N = 100003
case("copy", 0, function()
  local x = array.random.uniform(N, { dtype = "float32", seed = 1 })
  local out = cuda.device_array(N, "float32")
  lab("copy.cu")[{ blocks(N, 256), 256 }](cuda.to_device(x), out)
  return host(out), flat(x)
end)
case("julia", 0, function()
  local h, w, x0, x1, y0, y1, cr, ci = 45, 67, -1.6, 1.6, -1.2, 1.2, -0.8, 0.156
  local d = cuda.device_array({ h, w }, "float64")
  lab("julia.cu")[{ { blocks(w, 16), blocks(h, 16) }, { 16, 16 } }](d, cr, ci, x0, x1, y0, y1)
  local ref, dx, dy = {}, (x1 - x0) / w, (y1 - y0) / h
  for row = 0, h - 1 do
    for col = 0, w - 1 do
      local zr, zi, n = x0 + col * dx, y0 + row * dy, 0
      while n < 256 and zr * zr + zi * zi <= 4 do
        zr, zi = zr * zr - zi * zi + cr, 2 * zr * zi + ci
        n = n + 1
      end
      ref[#ref + 1] = n
    end
  end
  return host(d), ref
end, 0.01)  -- where compilers fuse a*b+c differs, which can change a boundary pixel's count
for _, b in ipairs { { "blur", "blur.cu", { RADIUS = 4 } }, { "blur_shared", "blur_shared.cu", { RADIUS = 4, TILE = 16 } } } do
  case(b[1], 1e-5, function()
    local img = array.random.uniform({ 45, 67 }, { dtype = "float32", seed = 2 })
    local out = cuda.device_array({ 45, 67 }, "float32")
    lab(b[2], b[3])[{ { blocks(67, 16), blocks(45, 16) }, { 16, 16 } }](cuda.to_device(img), out)
    return host(out), images.box_blur_reference(img, 4, false)
  end)
end
case("histogram", 0, function()
  local values = array.random.integers(0, 256, N, { dtype = "uint8", seed = 3 })
  local bins = cuda.to_device(array.zeros(256, "uint32"))
  lab("histogram.cu", { BINS = 256 })[{ 7, 256 }](cuda.to_device(values), bins)
  local ref = {}
  for b = 1, 256 do ref[b] = 0 end
  for i = 1, N do ref[values[i] + 1] = ref[values[i] + 1] + 1 end
  return host(bins), ref
end)
for _, r in ipairs { { "reduce", "reduce.cu", function(v) return v end }, { "abs_sum", "abs_sum.cu", math.abs } } do
  case(r[1], 1e-4, function()
    local x = array.random.uniform(N, { low = -1, dtype = "float32", seed = 4 })
    local nb = 37
    local partial, total = cuda.device_array(nb, "float32"), cuda.device_array(1, "float32")
    local k = lab(r[2], { TPB = 256 })
    k[{ nb, 256 }](cuda.to_device(x), partial)
    k[{ 1, 256 }](partial, total)
    local sum = 0
    for i = 1, N do sum = sum + r[3](x[i]) end
    return host(total), { sum }
  end)
end
for _, m in ipairs { { "matmul", "matmul.cu", {} }, { "matmul_tiled", "matmul_tiled.cu", { TPB = 16 } } } do
  case(m[1], 1e-4, function()
    local a = array.random.uniform({ 37, 53 }, { dtype = "float32", seed = 6 })
    local b = array.random.uniform({ 53, 29 }, { dtype = "float32", seed = 7 })
    local c = cuda.device_array({ 37, 29 }, "float32")
    lab(m[2], m[3])[{ { blocks(29, 16), blocks(37, 16) }, { 16, 16 } }](cuda.to_device(a), cuda.to_device(b), c)
    local ref = {}
    for i = 1, 37 do
      for j = 1, 29 do
        local s = 0
        for k = 1, 53 do s = s + a:get(i, k) * b:get(k, j) end
        ref[#ref + 1] = s
      end
    end
    return host(c), ref
  end)
end
case("normalize", 1e-12, function()
  local x = array.random.uniform(N, { dtype = "float64", seed = 8 })
  local y = cuda.device_array(N, "float64")
  lab("normalize.cu", { TPB = 256 })[{ 1, 256 }](cuda.to_device(x), y)
  local sq = 0
  for i = 1, N do sq = sq + x[i] * x[i] end
  local ref = {}
  for i = 1, N do ref[i] = x[i] / math.sqrt(sq) end
  return host(y), ref
end)

-- Warp operations, barriers and atomics, as the cpu backend's unit tests use them.
case("warp", 0, function()
  local k = cuda.jit [[
__global__ void warp(int* out) {
  const int t = threadIdx.x, lane = t % 32;
  int v = t * 7 + 3;
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  int up = __shfl_up_sync(0xffffffffu, t, 3), down = __shfl_down_sync(0xffffffffu, t, 5);
  int seg = __shfl_sync(0xffffffffu, t, 2, 8);
  unsigned ballot = __ballot_sync(0xffffffffu, t % 3 == 0);
  int any = __any_sync(0xffffffffu, t == 40), all = __all_sync(0xffffffffu, t < 1000);
  int base = t * 8;
  out[base] = v; out[base + 1] = up; out[base + 2] = down; out[base + 3] = seg;
  out[base + 4] = (int)ballot; out[base + 5] = any; out[base + 6] = all; out[base + 7] = lane;
}]]
  local out = cuda.device_array(96 * 8, "int32")
  k[{ 1, 96 }](out)
  local ref = {}
  for t = 0, 95 do
    local lane, first = t % 32, t - t % 32
    local v, ballot = 0, 0
    for l = 0, 31 do
      v = v + (first + l) * 7 + 3
      if (first + l) % 3 == 0 then ballot = ballot | (1 << l) end
    end
    if ballot >= 1 << 31 then ballot = ballot - (1 << 32) end  -- the kernel stores it as int
    local up = lane >= 3 and t - 3 or t
    local down = lane + 5 < 32 and t + 5 or t
    local seg = t - t % 8 + 2
    local any = (first <= 40 and 40 < first + 32) and 1 or 0
    for _, x in ipairs { v, up, down, seg, ballot, any, 1, lane } do ref[#ref + 1] = x end
  end
  return host(out), ref
end)
case("cooperative_groups", 0, function()
  local k = cuda.jit [[
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
__global__ void groups(const int* in, int* out) {
  cg::thread_block block = cg::this_thread_block();
  auto t32 = cg::tiled_partition<32>(block);
  auto t8 = cg::tiled_partition<8>(block);
  const int r = block.thread_rank(), v = in[blockIdx.x * blockDim.x + r];
  int s32 = cg::reduce(t32, v, cg::plus<int>());
  int m8 = cg::reduce(t8, v, cg::greater<int>());
  int x8 = t8.shfl_xor(v, 3);
  block.sync();
  int* o = out + (blockIdx.x * blockDim.x + r) * 4;
  o[0] = s32; o[1] = m8; o[2] = x8; o[3] = t8.thread_rank() + 10 * t8.meta_group_rank();
}]]
  local input = array.random.integers(-1000, 1000, 4 * 128, { dtype = "int32", seed = 9 })
  local out = cuda.device_array(4 * 128 * 4, "int32")
  k[{ 4, 128 }](cuda.to_device(input), out)
  local ref = {}
  for i = 0, 4 * 128 - 1 do
    local r = i % 128
    local s32, m8 = 0, -math.huge
    for j = i - r % 32, i - r % 32 + 31 do s32 = s32 + input[j + 1] end
    for j = i - r % 8, i - r % 8 + 7 do m8 = math.max(m8, input[j + 1]) end
    local x8 = input[i - r % 8 + (r % 8 ~ 3) + 1]
    for _, x in ipairs { s32, m8, x8, r % 8 + 10 * (r // 8) } do ref[#ref + 1] = x end
  end
  return host(out), ref
end)
case("barriers", 0, function()
  local k = cuda.jit [[
__global__ void barriers(int* out, int n) {
  __shared__ int s[128];
  const int t = threadIdx.x;
  int acc = 0;
  for (int r = 0; r < 6; ++r) {
    const int live = 128 - 16 * r;
    if (t >= live) { out[blockIdx.x * 128 + t] = acc; return; }
    s[t] = t * (r + 1) + blockIdx.x;
    __syncthreads();
    int v = s[(t + 1) % live];
    int c = __syncthreads_count(t % 3 == 0);
    int a = __syncthreads_and(t < n), o = __syncthreads_or(t == r);
    acc += v + c + 10 * a + 100 * o;
  }
  out[blockIdx.x * 128 + t] = acc;
}]]
  local out = cuda.device_array(3 * 128, "int32")
  k[{ 3, 128 }](out, 100)
  -- Threads that returned take no part in later barriers (nor in their counts).
  local ref = {}
  for b = 0, 2 do
    for t = 0, 127 do
      local acc = 0
      for r = 0, 5 do
        local live = 128 - 16 * r
        if t >= live then break end
        local v = ((t + 1) % live) * (r + 1) + b
        local c = 0
        for u = 0, live - 1 do if u % 3 == 0 then c = c + 1 end end
        local a = live <= 100 and 1 or 0  -- every live thread t < n = 100
        local o = 1                       -- thread r is always live
        acc = acc + v + c + 10 * a + 100 * o
      end
      ref[#ref + 1] = acc
    end
  end
  return host(out), ref
end)
case("atomics", 0, function()
  local k = cuda.jit [[
__global__ void atomics(unsigned* out, int n) {
  __shared__ unsigned bins[16];
  const int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  if (t < 16) bins[t] = 0;
  __syncthreads();
  if (i < n) {
    atomicAdd(&bins[(i * 7) % 16], 1u);
    atomicAdd(&out[0], (unsigned)i);
    atomicMax(&out[1], (unsigned)((i * 37) % 1001));
    atomicMin(&out[2], (unsigned)((i * 13) % 997 + 5));
    atomicInc(&out[3], 100u);
    atomicOr(&out[4], 1u << (i % 32));
    atomicXor(&out[5], (unsigned)i);
  }
  __syncthreads();
  if (t < 16) atomicAdd(&out[8 + t], bins[t]);
}]]
  local init = array.zeros(24, "uint32")
  init[3] = 4000000000
  local out = cuda.to_device(init)
  k[{ blocks(5000, 128), 128 }](out, 5000)
  -- Each result is independent of the order of the updates.
  local ref = { 0, 0, 4000000000, 0, 0, 0 }
  for i = 0, 4999 do
    ref[1] = ref[1] + i
    ref[2] = math.max(ref[2], (i * 37) % 1001)
    ref[3] = math.min(ref[3], (i * 13) % 997 + 5)
    ref[4] = ref[4] >= 100 and 0 or ref[4] + 1
    ref[5] = ref[5] | (1 << (i % 32))
    ref[6] = ref[6] ~ i
  end
  for j = 7, 24 do ref[j] = 0 end
  for i = 0, 4999 do ref[9 + (i * 7) % 16] = ref[9 + (i * 7) % 16] + 1 end
  return host(out), ref
end)

-- Writes a result table as a Lua chunk: name = { dtype, v1, v2, ... }.
local function write(path, results)
  local f = assert(io.open(path, "w"))
  f:write("return {\n")
  for _, c in ipairs(CASES) do
    local h = results[c.name]
    local flat = h:reshape({ h.size })
    local parts = {}
    for i = 1, flat.size do parts[i] = ("%.17g"):format(flat[i]) end
    f:write(("  [%q] = { %q, %s },\n"):format(c.name, h.dtype, table.concat(parts, ", ")))
  end
  f:write("}\n")
  f:close()
end

-- Whether flat tables x and y (their elements after the first `skip`) differ beyond the case's
-- tolerance: nil, or how.
local function differences(c, x, y, skip)
  local differ, first, count = 0, nil, #x - skip
  for i = skip + 1, #x do
    if math.abs(x[i] - y[i]) > c.tol * math.max(1, math.abs(x[i])) then
      differ = differ + 1
      first = first or ("element %d: %.9g vs %.9g"):format(i - skip, x[i], y[i])
    end
  end
  if differ > c.mismatch * count then
    return ("%d of %d elements beyond tolerance %g (first: %s)"):format(differ, count, c.tol, first)
  end
end

if mode == "run" then
  local results, failed = {}, 0
  for _, c in ipairs(CASES) do
    local result, ref = c.run()
    local got = flat(result)
    local why = #got ~= #ref and ("%d elements, the reference has %d"):format(#got, #ref)
                or differences(c, ref, got, 0)
    if why then
      print(("%-18s against the Lua reference: %s"):format(c.name, why))
      failed = failed + 1
    end
    results[c.name] = result
  end
  write(a_path, results)
  print(("cross_cases: %d cases on %s -> %s"):format(#CASES, cuda.backend(), a_path))
  assert(failed == 0, failed .. " case(s) differ from the Lua reference on " .. cuda.backend())
elseif mode == "compare" then
  local a, b = dofile(a_path), dofile(b_path)
  local failed = 0
  for _, c in ipairs(CASES) do
    local x, y = a[c.name], b[c.name]
    local why
    if not x or not y then
      why = "missing"
    elseif #x ~= #y or x[1] ~= y[1] then
      why = ("shape or dtype differ (%s %d, %s %d)"):format(x[1], #x - 1, y[1], #y - 1)
    else
      why = differences(c, x, y, 1)
    end
    print(("%-18s %s"):format(c.name, why or "same"))
    if why then failed = failed + 1 end
  end
  assert(failed == 0, failed .. " case(s) differ between the backends")
else
  error("usage: kiln cross_cases.lua run OUT | compare A B")
end
