-- __activemask() in divergent code is the lanes of its own branch (a GPU's converged lanes), in
-- every mode: as fibers it was the whole warp, and warp-aggregated code mixed the branches'
-- lanes (wrong ballots, sums and counts, silently). Checked against the same sums in Lua.
package.path = arg[0]:gsub("[^/]*$", "") .. "lib/?.lua;" .. package.path

local m = cuda.module([[
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void branches(const int* x, unsigned* out, int guard) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int v = x[i];
  if (__any_sync(0xffffffffu, v < guard)) return;  // (never: a vote in a header, fibers)
  unsigned r;
  if (v & 1)
    r = __ballot_sync(__activemask(), v > 50);
  else
    r = __reduce_add_sync(__activemask(), (unsigned)v);
  out[i] = r;
}
__global__ void cases(const int* x, unsigned* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned r = 0;
  switch (x[i] % 3) {
    case 0: r = __popc(__activemask()); break;
    case 1: r = 100 + __popc(__activemask()); break;
    default: r = 200 + __popc(__activemask()); break;
  }
  out[i] = r;
}
__global__ void after_if(const int* x, unsigned* out) {
  const unsigned lane = threadIdx.x % 32;
  unsigned inside = 0;
  if (lane < 5) inside = __popc(__activemask());
  const unsigned m = __activemask();  // (reconverged: the whole warp)
  out[threadIdx.x] = __ballot_sync(m, x[threadIdx.x] > 0);
  out[blockDim.x + threadIdx.x] = m;
  out[2 * blockDim.x + threadIdx.x] = inside;
}
__global__ void after_if_else(unsigned* out) {
  const unsigned lane = threadIdx.x % 32;
  unsigned inside;
  if (lane < 20) inside = __popc(__activemask());
  else inside = 100 + __popc(__activemask());
  out[threadIdx.x] = inside + 1000 * __popc(__activemask());  // (reconverged: 32)
}
__global__ void counters(const int* x, int* counts, int* slots) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int v = x[i], c = v & 1;
  if (c) {
    cg::coalesced_group g = cg::coalesced_threads();
    int base = 0;
    if (g.thread_rank() == 0) base = atomicAdd(&counts[1], (int)g.size());
    slots[i] = g.shfl(base, 0) + g.thread_rank();
  } else {
    cg::coalesced_group g = cg::coalesced_threads();
    int base = 0;
    if (g.thread_rank() == 0) base = atomicAdd(&counts[0], (int)g.size());
    slots[i] = g.shfl(base, 0) + g.thread_rank();
  }
}
]])
local n = 128
local a = array.random.integers(0, 100, n, { dtype = "int32", seed = 3 })
local da = cuda.to_device(a)

local o = cuda.device_array(n, "uint32")
m.branches[{ 2, 64 }](da, o, -1)
local h = o:copy_to_host()
for w = 0, n // 32 - 1 do
  local ballot, sum = 0, 0
  for l = 0, 31 do
    local v = a[w * 32 + l + 1]
    if v % 2 == 1 then
      if v > 50 then ballot = ballot | (1 << l) end
    else
      sum = sum + v
    end
  end
  for l = 0, 31 do
    local v, got = a[w * 32 + l + 1], h[w * 32 + l + 1]
    local want = v % 2 == 1 and ballot or sum
    assert(got == want, ("branches: warp %d lane %d (v=%d): %d, expected %d"):format(w, l, v, got, want))
  end
end

m.cases[{ 1, n }](da, o)
h = o:copy_to_host()
for w = 0, n // 32 - 1 do
  local count = { [0] = 0, 0, 0 }
  for l = 0, 31 do count[a[w * 32 + l + 1] % 3] = count[a[w * 32 + l + 1] % 3] + 1 end
  for l = 0, 31 do
    local c = a[w * 32 + l + 1] % 3
    assert(h[w * 32 + l + 1] == 100 * c + count[c], ("cases: warp %d lane %d"):format(w, l))
  end
end

local counts, slots = cuda.to_device(array.zeros(2, "int32")), cuda.device_array(n, "int32")
m.counters[{ 2, 64 }](da, counts, slots)
local hc, hs = counts:copy_to_host(), slots:copy_to_host()
local total, seen = { [0] = 0, 0 }, { [0] = {}, {} }
for i = 1, n do total[a[i] % 2] = total[a[i] % 2] + 1 end
assert(hc[1] == total[0] and hc[2] == total[1], ("counts %d, %d; expected %d, %d"):format(hc[1], hc[2], total[0], total[1]))
for i = 1, n do  -- each class's slots: 0 .. its count - 1, once each
  local c, s = a[i] % 2, hs[i]
  assert(s >= 0 and s < total[c] and not seen[c][s], ("slot %d of element %d"):format(s, i))
  seen[c][s] = true
end
local pos = cuda.to_device(array.ones(32, "int32"))
local ao = cuda.device_array(96, "uint32")
m.after_if[{ 1, 32 }](pos, ao)
local ha = ao:copy_to_host()
for l = 0, 31 do
  assert(ha[l + 1] == 0xffffffff and ha[32 + l + 1] == 0xffffffff and ha[64 + l + 1] == (l < 5 and 5 or 0),
         ("after_if lane %d: %x %x %d"):format(l, ha[l + 1], ha[32 + l + 1], ha[64 + l + 1]))
end

m.after_if_else[{ 1, 32 }](ao)
ha = ao:copy_to_host()
for l = 0, 31 do
  assert(ha[l + 1] == 32000 + (l < 20 and 20 or 112), ("after_if_else lane %d: %d"):format(l, ha[l + 1]))
end

-- At -O0 too (the calls are told apart by their return address: the wrappers are inlined).
local o0 = cuda.module([[
__global__ void branches(const int* x, unsigned* out) {
  const int v = x[threadIdx.x];
  if (v & 1) out[threadIdx.x] = 100 + __popc(__activemask());
  else out[threadIdx.x] = __popc(__activemask());
}]], { options = { "-O0" } })
local bits = array.zeros(32, "int32")
for l = 1, 32 do bits[l] = l % 3 == 0 and 1 or 0 end
o0.branches[{ 1, 32 }](cuda.to_device(bits), o)
local odd = 0
for l = 1, 32 do odd = odd + bits[l] end
local ho = o:copy_to_host()
for l = 1, 32 do
  assert(ho[l] == (bits[l] == 1 and 100 + odd or 32 - odd), ("-O0 lane %d: %d"):format(l - 1, ho[l]))
end
print("ok")
