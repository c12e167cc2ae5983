-- Conformance: warp shuffles, ballots and their device functions (kernels/warps.cu) against
-- Lua references. On the cpu backend they run as regions (each warp operation one step for the
-- block's threads), and as fibers with KILN_REGIONS=0; the answers are the same.
local here = arg[0]:match("^(.*)/") or "."
local m = cuda.module({ file = here .. "/kernels/warps.cu" })
local n = 1000
local h = array.zeros(n, "int32")
for i = 1, n do h[i] = (i * 7919) % 97 - 10 end
local din = cuda.to_device(h)
local out = cuda.device_array(n, "int32")
m.block_scan[{ 4, 256 }](din, out, n)
local o = out:copy_to_host()
-- reference: per block of 256, inclusive scan
for b = 0, 3 do
  local acc = 0
  for t = 0, 255 do
    local i = b * 256 + t
    if i < n then acc = acc + h[i + 1]; assert(o[i + 1] == acc, ("scan %d: %d vs %d"):format(i, o[i + 1], acc)) end
  end
end
local cout = cuda.to_device(array.full(1024, -7, "int32"))
local counts = cuda.device_array(32, "int32")
m.compact[{ 4, 256 }](din, cout, counts, n)
local co, cc = cout:copy_to_host(), counts:copy_to_host()
for w = 0, 31 do
  local k = 0
  for l = 0, 31 do
    local i = w * 32 + l
    local v = i < n and h[i + 1] or -1
    if v >= 0 and v % 3 ~= 0 then assert(co[w * 32 + k + 1] == v, "compact " .. i); k = k + 1 end
  end
  assert(cc[w + 1] == k, "count " .. w)
end
local rows, cols = 8, 100
local f = array.zeros(rows * cols, "float32")
for i = 1, rows * cols do f[i] = ((i * 31) % 53) + 1 end
local df, dout = cuda.to_device(f), cuda.device_array(rows * cols, "float32")
m.normalize_rows[{ rows, 32 }](df, dout, cols)
local fo = dout:copy_to_host()
for r = 0, rows - 1 do
  local mx = -1e30
  for c = 0, cols - 1 do mx = math.max(mx, f[r * cols + c + 1]) end
  for c = 0, cols - 1 do
    local want = f[r * cols + c + 1] / mx
    assert(math.abs(fo[r * cols + c + 1] - want) < 1e-6, ("norm %d %d: %g vs %g"):format(r, c, fo[r * cols + c + 1], want))
  end
end
if cuda.backend() == "cpu" and os.getenv("KILN_REGIONS") ~= "0" then
  for _, k in ipairs({ m.block_scan, m.compact, m.normalize_rows }) do
    assert(k:info().threads == "regions", k:info().why)
  end
end

-- __reduce_*_sync over part of a warp (sm_80's integer warp reductions): each lane in the mask
-- gets the reduction of the mask's lanes only. Against a Lua reference.
local reductions = cuda.jit([[
__global__ void lane_reductions(const int* in, int* out) {
  const unsigned lane = threadIdx.x % 32, i = blockIdx.x * blockDim.x + threadIdx.x;
  const int v = in[i];
  // The lower half of each warp reduces among itself, the upper half over its odd lanes.
  const unsigned mask = lane < 16 ? 0x0000ffffu : 0xaaaa0000u;
  if (mask >> lane & 1) {
    out[6 * i + 0] = __reduce_add_sync(mask, v);
    out[6 * i + 1] = __reduce_min_sync(mask, v);
    out[6 * i + 2] = int(__reduce_max_sync(mask, unsigned(v)));
    out[6 * i + 3] = int(__reduce_and_sync(mask, unsigned(v)));
    out[6 * i + 4] = int(__reduce_or_sync(mask, unsigned(v)));
    out[6 * i + 5] = int(__reduce_xor_sync(mask, unsigned(v)));
  }
}
]])
local rin = array.zeros(128, "int32")
for i = 1, 128 do rin[i] = (i * 37) % 101 - 20 end
local rout = cuda.to_device(array.full(6 * 128, -99, "int32"))
reductions[{ 2, 64 }](cuda.to_device(rin), rout)
local ro = rout:copy_to_host()
local function u32(v) return v & 0xffffffff end
local function i32(v) v = u32(v); return v >= 0x80000000 and v - 0x100000000 or v end
for i = 0, 127 do
  local lane, warp = i % 32, i - i % 32
  local mask = lane < 16 and 0x0000ffff or 0xaaaa0000
  local want = { -99, -99, -99, -99, -99, -99 }
  if (mask >> lane) & 1 == 1 then
    local sum, mn, mx, band, bor, bxor = 0, math.huge, 0, 0xffffffff, 0, 0
    for l = 0, 31 do
      if (mask >> l) & 1 == 1 then
        local v = rin[warp + l + 1]
        sum, mn = sum + v, math.min(mn, v)
        mx, band, bor, bxor = math.max(mx, u32(v)), band & u32(v), bor | u32(v), bxor ~ u32(v)
      end
    end
    want = { sum, mn, i32(mx), i32(band), i32(bor), i32(bxor) }
  end
  for j = 1, 6 do
    assert(ro[6 * i + j] == want[j], ("reduce %d of thread %d: %d, not %d"):format(j, i, ro[6 * i + j], want[j]))
  end
end

-- A butterfly sum over a block of 48: the second warp's partners beyond lane 47 do not exist.
-- A GPU's value from them is undefined; an H200 gave 0 (2026-11-27), so each warp's lanes hold
-- the sum of the lanes that exist, and kiln gives the same; __reduce_min_sync reduces over the
-- lanes that exist. Then shuffles from a branch (lanes 16..31 of each warp inactive): lane 15's
-- partner gives 0 too.
local partial = cuda.jit([[
__global__ void partial(int* sums, int* down, int* mins) {
  int v = threadIdx.x + 1;
  mins[threadIdx.x] = __reduce_min_sync(0xffffffffu, 100 - v);
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  sums[threadIdx.x] = v;
  const int lane = threadIdx.x % 32;
  if (lane < 16) down[threadIdx.x] = __shfl_down_sync(0xffffu, lane + 100, 1);
}]])
local psums, pdown, pmins = cuda.device_array(48, "int32"), cuda.device_array(48, "int32"), cuda.device_array(48, "int32")
partial[{ 1, 48 }](psums, pdown, pmins)
local hs, hd, hm = psums:copy_to_host(), pdown:copy_to_host(), pmins:copy_to_host()
for t = 0, 47 do
  -- (__reduce_min_sync over the lanes that exist, as the H200's redux: not 0 from missing ones)
  local least = t < 32 and 100 - 32 or 100 - 48
  assert(hm[t + 1] == least, ("partial warp min, thread %d: %d, want %d"):format(t, hm[t + 1], least))
  local want = t < 32 and 32 * 33 // 2 or (33 + 48) * 16 // 2
  assert(hs[t + 1] == want, ("partial warp sum, thread %d: %d, want %d"):format(t, hs[t + 1], want))
  local lane = t % 32
  if lane < 16 then
    local d = lane < 15 and lane + 101 or 0
    assert(hd[t + 1] == d, ("shuffle down from an inactive lane, thread %d: %d, want %d"):format(t, hd[t + 1], d))
  end
end
