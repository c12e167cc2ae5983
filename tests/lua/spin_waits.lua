-- A thread that spins on a volatile __shared__ flag another thread of its block sets: a GPU runs
-- the setter meanwhile; the cpu backend runs the kernel as fibers that yield in each test of the
-- condition. A spin that nothing can end is an error naming the thread, not a hang.
package.path = arg[0]:gsub("[^/]*$", "") .. "lib/?.lua;" .. package.path
local expect = require("expect")

local m = cuda.module([[
// Warp 1 hands a value to warp 0 through shared memory, with a flag.
extern "C" __global__ void handoff(int* out, int value) {
  __shared__ volatile int flag;
  __shared__ volatile int data;
  if (threadIdx.x == 0) flag = 0;
  __syncthreads();
  if (threadIdx.x == 32) { data = value; __threadfence_block(); flag = 1; }
  if (threadIdx.x == 0) {
    while (flag == 0) { }
    out[blockIdx.x] = data + blockIdx.x;
  }
}
// Each warp waits for the one before it (a chain through the block), then adds its lane sum.
extern "C" __global__ void chain(int* out) {
  __shared__ volatile int turn;
  __shared__ volatile int total;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) { turn = 0; total = 0; }
  __syncthreads();
  if (lane == 0) {
    do { __nanosleep(10); } while (turn != warp);
    total = total + warp + 1;
    turn = warp + 1;
  }
  __syncthreads();
  if (threadIdx.x == 0) out[blockIdx.x] = total;
}
// Thread 0 waits for a flag that thread 32 sets only after a barrier thread 0 never reaches.
extern "C" __global__ void stuck(int* out) {
  __shared__ volatile int flag;
  if (threadIdx.x == 0) { flag = 0; for (; flag == 0;) ; }
  __syncthreads();
  if (threadIdx.x == 32) flag = 1;
  out[threadIdx.x] = flag;
}
]])
local out = cuda.device_array(3, "int32")
m.handoff[{ 3, 64 }](out, 40)
local h = out:copy_to_host()
for b = 1, 3 do assert(h[b] == 40 + b - 1, ("handoff block %d: %d"):format(b - 1, h[b])) end
assert(m.handoff:info().threads == "fibers", m.handoff:info().threads)
assert(m.handoff:info().why:find("spin-wait on __shared__ 'flag'", 1, true), m.handoff:info().why)

local sums = cuda.device_array(2, "int32")
m.chain[{ 2, 128 }](sums)
local hs = sums:copy_to_host()
assert(hs[1] == 10 and hs[2] == 10, tostring(hs))

-- The flag reached through a volatile pointer to the shared variable (it hung: the waiter,
-- first in the thread loop, spun before the setter ever ran).
local through = cuda.jit([[
__global__ void through(int* out) {
  __shared__ int flag;
  volatile int* f = &flag;
  if (threadIdx.x == 0) *f = 0;
  __syncthreads();
  if (threadIdx.x == 0) { while (*f == 0) {} out[0] = 7; }
  if (threadIdx.x == 33) *f = 1;
}]])
local seen = cuda.to_device(array.zeros(1, "int32"))
through[{ 1, 64 }](seen)
assert(seen:copy_to_host()[1] == 7 and through:info().why:find("spin-wait on __shared__ 'f'", 1, true),
       through:info().why)

if cuda.backend() == "cpu" then
  expect.error("spins on shared memory that no other thread of its block can set",
               function() m.stuck[{ 1, 64 }](cuda.device_array(64, "int32")) end)
end

-- Flags in global memory (they hung). Within a block: a sync-free triangular solve's warp waits
-- for the warp before it through a volatile parameter, then reduces by shuffles; thread 0 waits
-- for thread 1 (a GPU gives each thread of a warp its own progress). Between blocks: a hand-made
-- grid barrier over a small grid, whose blocks a GPU runs at once (the cpu backend ran them one
-- after another on the launching thread: block 0 spun for ever).
local g = cuda.module([[
__global__ void warps(volatile int* ready, volatile double* x) {
  const int w = threadIdx.x / 32, lane = threadIdx.x % 32;
  double s = lane + 1;
  if (w > 0) { while (ready[w - 1] == 0) { } s += x[w - 1]; }
  for (int off = 16; off > 0; off >>= 1) s += __shfl_down_sync(0xffffffffu, s, off);
  if (lane == 0) { x[w] = s; __threadfence(); ready[w] = 1; }
}
__global__ void threads(volatile int* ready, int* out) {
  const int i = threadIdx.x;
  if (i + 1 < blockDim.x) { while (ready[i + 1] == 0) { } }
  out[i] = i + 1 < blockDim.x ? out[i + 1] + i : i;
  __threadfence();
  ready[i] = 1;
}
__global__ void grid_barrier(int* out, int* counter) {
  out[blockIdx.x * blockDim.x + threadIdx.x] = blockIdx.x + 1;
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    atomicAdd(counter, 1);
    while (((volatile int*)counter)[0] < gridDim.x) { }
  }
  __syncthreads();
  const int next = (blockIdx.x + 1) % gridDim.x;
  out[(gridDim.x + blockIdx.x) * blockDim.x + threadIdx.x] =
      ((volatile int*)out)[next * blockDim.x + threadIdx.x];
}
]])
-- Set by another thread of the block, at a subscript the same in every thread, by a store, an
-- atomic, or through a cast of shared memory; and a look-back at earlier blocks (its leader's
-- flags), which keeps its mode.
local same = cuda.module([[
__global__ void store(volatile int* flags, int* out) {
  if (threadIdx.x == 0) { while (flags[blockIdx.x] == 0) {} out[blockIdx.x] = 7; }
  if (threadIdx.x == 32) flags[blockIdx.x] = 1;
}
__global__ void atomic(int* flags, int* out) {
  if (threadIdx.x == 0) { while (((volatile int*)flags)[blockIdx.x] == 0) {} out[blockIdx.x] = 7; }
  if (threadIdx.x == 32) atomicExch(&flags[blockIdx.x], 1);
}
__global__ void rows(volatile int* flags, int* out) {  // (blocks of {32, 2}: a leader per row)
  if (threadIdx.x == 0 && threadIdx.y == 0) { while (flags[blockIdx.x] == 0) {} out[blockIdx.x] = 7; }
  if (threadIdx.x == 0 && threadIdx.y == 1) flags[blockIdx.x] = 1;
}
__device__ void release(volatile int* f) { *f = 1; }
__global__ void through_call(volatile int* flags, int* out) {
  volatile int* mine = flags + blockIdx.x;
  if (threadIdx.x == 0) { while (*mine == 0) {} out[blockIdx.x] = 7; }
  if (threadIdx.x == 32) release(mine);
}
__global__ void shared_cast(int* out) {
  __shared__ int flag[1];
  if (threadIdx.x == 0) flag[0] = 0;
  __syncthreads();
  if (threadIdx.x == 0) { while (((volatile int*)flag)[0] == 0) {} out[blockIdx.x] = 7; }
  if (threadIdx.x == 32) ((volatile int*)flag)[0] = 1;
}
__global__ void look_back(const int* in, int* out, volatile int* flags) {
  const int i = blockIdx.x * 64 + threadIdx.x;
  if (threadIdx.x == 0 && blockIdx.x > 0) { while (flags[blockIdx.x - 1] == 0) {} }
  __syncthreads();
  out[i] = in[i] + (blockIdx.x > 0 ? out[i - 64] : 0);
  __syncthreads();
  if (threadIdx.x == 0) { __threadfence(); flags[blockIdx.x] = 1; }
}
]])
for _, name in ipairs({ "store", "atomic", "rows", "through_call", "shared_cast" }) do
  local flags, seen = cuda.to_device(array.zeros(2, "int32")), cuda.to_device(array.zeros(2, "int32"))
  local block = name == "rows" and { 32, 2 } or 64
  if name == "shared_cast" then same[name][{ 2, block }](seen) else same[name][{ 2, block }](flags, seen) end
  local hs = seen:copy_to_host()
  assert(hs[1] == 7 and hs[2] == 7, name .. ": " .. tostring(hs))
end
local tiles = 40
local ins, sums, lb = cuda.to_device(array.ones(64 * tiles, "int32")), cuda.device_array(64 * tiles, "int32"),
                      cuda.to_device(array.zeros(tiles, "int32"))
same.look_back[{ tiles, 64 }](ins, sums, lb)
local hl = sums:copy_to_host()
for t = 1, tiles do assert(hl[64 * t] == t, ("look-back tile %d: %d"):format(t, hl[64 * t])) end
if cuda.backend() == "cpu" then
  assert(same.look_back:info().threads == "regions", same.look_back:info().why)
end

-- A warp's decoupled look-back (single-pass scans): warp 0 reads 32 predecessors' status words
-- at a time and spins (`continue`) while any is not ready; lanes past the first block with a
-- prefix add nothing. As regions, each warp leaving the loop on its own.
local wlb = cuda.module([[
// status: 0 not ready, 1 | sum << 2 the block's own sum, 2 | prefix << 2 its inclusive prefix
__global__ void warp_look_back(const int* in, int* out, volatile unsigned* status) {
  __shared__ int sums[64], before;
  const int t = threadIdx.x, i = blockIdx.x * 64 + t;
  sums[t] = in[i];
  __syncthreads();
  for (int d = 1; d < 64; d *= 2) {
    const int o = t >= d ? sums[t - d] : 0;
    __syncthreads();
    sums[t] += o;
    __syncthreads();
  }
  if (t < 32) {
    const int total = sums[63];
    if (t == 0) status[blockIdx.x] = (blockIdx.x == 0 ? 2u : 1u) | unsigned(total) << 2;
    int prefix = 0, end = int(blockIdx.x) - 1;
    while (end >= 0) {
      const int j = end - t;
      const unsigned s = j >= 0 ? status[j] : 2u;
      if (__any_sync(0xffffffffu, (s & 3u) == 0u)) continue;
      const unsigned done = __ballot_sync(0xffffffffu, (s & 3u) == 2u);
      const int stop = done ? __ffs(done) - 1 : 32;
      int v = t <= stop ? int(s >> 2) : 0;
      for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
      prefix += __shfl_sync(0xffffffffu, v, 0);
      if (done) break;
      end -= 32;
    }
    if (t == 0) {
      before = prefix;
      if (blockIdx.x > 0) status[blockIdx.x] = 2u | unsigned(prefix + total) << 2;
    }
  }
  __syncthreads();
  out[i] = before + sums[t];
}
]])
local wtiles = 150
local wx = array.random.integers(0, 5, 64 * wtiles, { dtype = "int32", seed = 5 })
local wout, wstatus = cuda.device_array(64 * wtiles, "int32"), cuda.to_device(array.zeros(wtiles, "uint32"))
wlb.warp_look_back[{ wtiles, 64 }](cuda.to_device(wx), wout, wstatus)
local hw, run = wout:copy_to_host(), 0
for i = 1, 64 * wtiles do
  run = run + wx[i]
  assert(hw[i] == run, ("warp look-back, element %d: %d, expected %d"):format(i - 1, hw[i], run))
end
if cuda.backend() == "cpu" then
  assert(wlb.warp_look_back:info().threads == "regions", wlb.warp_look_back:info().why)
end

local ready, x = cuda.to_device(array.zeros(4, "int32")), cuda.to_device(array.zeros(4))
g.warps[{ 1, 128 }](ready, x)
local xs, total = x:copy_to_host(), 0
for w = 1, 4 do
  total = total * 32 + 528  -- (each lane adds the warp before's sum: 32 times it)
  assert(xs[w] == total, ("warp %d: %s, expected %d"):format(w - 1, xs[w], total))
end
if cuda.backend() == "cpu" then
  assert(g.warps:info().why:find("spin-wait on volatile 'ready'", 1, true), g.warps:info().why)
end
local done, chain = cuda.to_device(array.zeros(40, "int32")), cuda.to_device(array.zeros(40, "int32"))
g.threads[{ 1, 40 }](done, chain)
local hc = chain:copy_to_host()
for i = 0, 39 do  -- thread i's: i + (i + 1) + ... + 39
  assert(hc[i + 1] == (39 * 40 - (i - 1) * i) // 2, ("thread %d: %d"):format(i, hc[i + 1]))
end
for _, blocks in ipairs({ 2, 7, 32 }) do
  local o, count = cuda.device_array(2 * blocks * 32, "int32"), cuda.to_device(array.zeros(1, "int32"))
  g.grid_barrier[{ blocks, 32 }](o, count)
  local ho = o:copy_to_host()
  for b = 0, blocks - 1 do
    assert(ho[(blocks + b) * 32 + 1] == (b + 1) % blocks + 1,
           ("%d blocks: block %d read %d"):format(blocks, b, ho[(blocks + b) * 32 + 1]))
  end
end
print("ok")
