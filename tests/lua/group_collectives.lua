-- Cooperative groups' scans on tiles, and coalesced groups (coalesced_threads(): its ranks,
-- shuffles, votes, reductions and scans) in divergent code, checked against the same sums in
-- Lua. The region rewrite runs them as warp steps (they were fibers, 10-60x slower); with it
-- off (KILN_REGIONS=0: ctest's lua.group_collectives.fibers) the headers' own classes run.
package.path = arg[0]:gsub("[^/]*$", "") .. "lib/?.lua;" .. package.path
local regions = os.getenv("KILN_REGIONS") ~= "0"

local m = cuda.module([[
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cooperative_groups/scan.h>
namespace cg = cooperative_groups;

template <class Tile>
__device__ int offset_in(Tile t, int keep) {
  return cg::exclusive_scan(t, keep);
}

// Scans on tiles of 32, 16 and 8 lanes: with the default plus (the value's type) and with ops.
__global__ void tile_scans(const int* x, const float* f, int* out, float* fout) {
  auto block = cg::this_thread_block();
  auto t32 = cg::tiled_partition<32>(block);
  cg::thread_block_tile<16> t16 = cg::tiled_partition<16>(block);
  auto t8 = cg::tiled_partition<8>(block);
  const int i = blockIdx.x * blockDim.x + threadIdx.x, n = gridDim.x * blockDim.x;
  int v = x[i];
  float w = f[i];
  int a = cg::inclusive_scan(t32, v);
  int b = cg::exclusive_scan(t16, v);
  int c = cg::inclusive_scan(t8, v, cg::greater<int>());
  unsigned d = cg::exclusive_scan(t32, unsigned(v), cg::bit_or<unsigned>());
  float e = cg::inclusive_scan(t32, w, cg::plus<float>());
  out[i] = a;
  out[n + i] = b;
  out[2 * n + i] = c;
  out[3 * n + i] = int(d);
  fout[i] = e;
}

// Stream compaction by warps: each kept element's place from a scan of the flags.
__global__ void compact(const int* x, int* out, int* count, int n) {
  auto tile = cg::tiled_partition<32>(cg::this_thread_block());
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  int keep = i < n && x[i] % 3 == 0;
  int at = offset_in(tile, keep);
  int total = cg::reduce(tile, keep, cg::plus<int>());
  int base = 0;
  if (tile.thread_rank() == 0) base = atomicAdd(count, total);
  base = tile.shfl(base, 0);
  if (keep) out[base + at] = x[i];
}

// A coalesced group in each branch of an if/else: the lanes of its own branch.
__global__ void coalesced(const int* x, int* out, float* fout, unsigned* bits) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x, n = gridDim.x * blockDim.x;
  const int v = x[i];
  int r0 = -1, r1 = -1, r2 = -1, r3 = -1, r4 = -1, r5 = -1;
  unsigned r6 = 0;
  float r7 = 0;
  if (v % 3 != 0) {
    auto g = cg::coalesced_threads();
    r0 = g.thread_rank() + 100 * g.size();
    r1 = cg::reduce(g, v, cg::plus<int>());
    r2 = cg::reduce(g, v, cg::less<int>());
    r3 = cg::inclusive_scan(g, v);
    r4 = cg::exclusive_scan(g, v, cg::greater<int>());
    r5 = g.shfl_down(v, 1) + 1000 * g.shfl_up(v, 2);
    r6 = g.ballot(v > 50);
    r7 = cg::reduce(g, float(v) * 0.5f, cg::plus<float>());
    if (g.any(v > 90)) r0 += 10000;
    if (g.all(v > 5)) r0 += 100000;
    g.sync();
  } else {
    const cg::coalesced_group g = cg::coalesced_threads();
    r0 = g.thread_rank() + 100 * g.num_threads() + 1000000 * g.meta_group_size();
    r1 = g.shfl(v, g.size() - 1);
    r3 = cg::exclusive_scan(g, v);
  }
  out[i] = r0;
  out[n + i] = r1;
  out[2 * n + i] = r2;
  out[3 * n + i] = r3;
  out[4 * n + i] = r4;
  out[5 * n + i] = r5;
  bits[i] = r6;
  fout[i] = r7;
}

// Warp-aggregated atomics (a device function's coalesced group, called in a condition's branch).
__device__ int next_slot(int* counter) {
  auto g = cg::coalesced_threads();
  int first;
  if (g.thread_rank() == 0) first = atomicAdd(counter, int(g.size()));
  return g.shfl(first, 0) + g.thread_rank();
}
__global__ void filter(const int* x, int* out, int* count, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && x[i] > 40) out[next_slot(count)] = x[i];
}
]])

local threads, blocks = 64, 3
local n = threads * blocks
local x = array.random.integers(0, 100, n, { dtype = "int32", seed = 11 })
local f = array.zeros(n, "float32")
for i = 1, n do f[i] = (x[i] % 7) * 0.25 end
local dx, df = cuda.to_device(x), cuda.to_device(f)

-- The lanes of warp w (0-based) whose value passes keep, in lane order: their 1-based indices.
local function lanes(w, keep)
  local out = {}
  for l = 0, 31 do
    local i = w * 32 + l + 1
    if keep(x[i]) then out[#out + 1] = i end
  end
  return out
end
local function check(what, got, want, i)
  assert(got == want, ("%s, element %d (x = %d): %s, expected %s"):format(what, i - 1, x[i], got, want))
end

-- tile_scans
local out, fout = cuda.device_array(4 * n, "int32"), cuda.device_array(n, "float32")
m.tile_scans[{ blocks, threads }](dx, df, out, fout)
local h, hf = out:copy_to_host(), fout:copy_to_host()
for i = 1, n do
  local lane = (i - 1) % 32
  local function prefix(width, upto, op, init)  -- over the tile's lanes before (or to) this one
    local first = i - (i - 1) % width
    local acc = init
    for j = first, i - 1 + upto do acc = op(acc, j) end
    return acc
  end
  check("inclusive_scan<32>", h[i], prefix(32, 1, function(a, j) return a + x[j] end, 0), i)
  check("exclusive_scan<16>", h[n + i], prefix(16, 0, function(a, j) return a + x[j] end, 0), i)
  check("inclusive_scan<8> greater", h[2 * n + i], prefix(8, 1, function(a, j) return math.max(a, x[j]) end, -1), i)
  check("exclusive_scan<32> bit_or", h[3 * n + i], prefix(32, 0, function(a, j) return a | x[j] end, 0), i)
  check("inclusive_scan<32> float", hf[i], prefix(32, 1, function(a, j) return a + f[j] end, 0), i)
  assert(lane >= 0)
end

-- compact
local dout, count = cuda.device_array(n, "int32"), cuda.to_device(array.zeros(1, "int32"))
m.compact[{ blocks, threads }](dx, dout, count, n - 5)
local kept, want = {}, {}
for i = 1, n - 5 do if x[i] % 3 == 0 then want[#want + 1] = x[i] end end
local hc = count:copy_to_host()[1]
assert(hc == #want, ("compact kept %d, expected %d"):format(hc, #want))
local ho = dout:copy_to_host()
for j = 1, hc do kept[j] = ho[j] end
table.sort(kept)
table.sort(want)
for j = 1, hc do assert(kept[j] == want[j], ("compact: sorted element %d: %d, expected %d"):format(j, kept[j], want[j])) end

-- coalesced
local cout, cf, cbits = cuda.device_array(6 * n, "int32"), cuda.device_array(n, "float32"),
    cuda.device_array(n, "uint32")
m.coalesced[{ blocks, threads }](dx, cout, cf, cbits)
h, hf = cout:copy_to_host(), cf:copy_to_host()
local hb = cbits:copy_to_host()
for w = 0, n // 32 - 1 do
  for _, branch in ipairs({ true, false }) do
    local g = lanes(w, function(v) return (v % 3 ~= 0) == branch end)
    local sum, min, any, all, ballot, half = 0, math.huge, false, true, 0, 0
    for r, i in ipairs(g) do
      sum, min, half = sum + x[i], math.min(min, x[i]), half + x[i] * 0.5
      any, all = any or x[i] > 90, all and x[i] > 5
      if x[i] > 50 then ballot = ballot | (1 << (r - 1)) end
    end
    local running, best = 0, 0
    for r, i in ipairs(g) do
      local rank = r - 1
      if branch then
        check("rank and size", h[i], rank + 100 * #g + (any and 10000 or 0) + (all and 100000 or 0), i)
        check("reduce plus", h[n + i], sum, i)
        check("reduce less", h[2 * n + i], min, i)
        check("inclusive_scan", h[3 * n + i], running + x[i], i)
        check("exclusive_scan greater", h[4 * n + i], rank == 0 and 0 or best, i)
        local down = g[r + 1] and x[g[r + 1]] or x[i]
        local up = r > 2 and x[g[r - 2]] or x[i]
        check("shfl_down + shfl_up", h[5 * n + i], down + 1000 * up, i)
        check("ballot", hb[i], ballot, i)
        check("reduce float", hf[i], half, i)
      else
        check("rank and size", h[i], rank + 100 * #g + 1000000, i)
        check("shfl", h[n + i], x[g[#g]], i)
        check("exclusive_scan", h[3 * n + i], running, i)
      end
      running, best = running + x[i], math.max(best, x[i])
    end
  end
end

-- filter
local fo, fc = cuda.device_array(n, "int32"), cuda.to_device(array.zeros(1, "int32"))
m.filter[{ blocks, threads }](dx, fo, fc, n)
want = {}
for i = 1, n do if x[i] > 40 then want[#want + 1] = x[i] end end
hc = fc:copy_to_host()[1]
assert(hc == #want, ("filter kept %d, expected %d"):format(hc, #want))
ho, kept = fo:copy_to_host(), {}
for j = 1, hc do kept[j] = ho[j] end
table.sort(kept)
table.sort(want)
for j = 1, hc do assert(kept[j] == want[j], ("filter: sorted element %d"):format(j)) end

if regions then
  for _, name in ipairs({ "tile_scans", "compact", "coalesced", "filter" }) do
    local info = m[name]:info()
    assert(info.threads == "regions", ("%s runs as %s: %s"):format(name, info.threads, info.why))
  end
end
print("ok")
