-- A kernel that reads or writes through a null or wild pointer is an error for its launch that
-- names the kernel, the thread and the address, on every way the cpu backend runs threads; the
-- process goes on, and later launches work.
-- (On a GPU a fault breaks the context, and the error comes at the next synchronisation:
-- tests/gpu/cuda_sticky.lua covers that.)
if cuda.backend() ~= "cpu" then print("kernel_faults: the cpu backend's test; skipped on " .. cuda.backend()) return end
package.path = arg[0]:gsub("[^/]*$", "") .. "lib/?.lua;" .. package.path
local expect = require("expect")

local sources = {
  loop = "__global__ void k(int* x, int n) { int* p = nullptr; if (threadIdx.x == n) p[threadIdx.x] = 1; x[threadIdx.x] = 1; }",
  barriers = [[
__global__ void k(int* x, int n) {
  __shared__ int s[64];
  s[threadIdx.x] = threadIdx.x;
  __syncthreads();
  int* wild = (int*)(0x20 + s[0]);
  if (threadIdx.x == n) x[threadIdx.x] = *wild;
}]],
  warps = [[
__global__ void k(int* x, int n) {
  int v = __shfl_xor_sync(0xffffffffu, (int)threadIdx.x, 1);
  int* p = nullptr;
  if (threadIdx.x == n) v += p[v];
  x[threadIdx.x] = v;
}]],
  groups = [[
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void k(int* x, int n) {
  int v = cg::tiled_partition<32>(cg::this_thread_block()).shfl_xor((int)threadIdx.x, 1);
  int* p = nullptr;
  if (threadIdx.x == n) v += p[v];
  x[threadIdx.x] = v;
}]],
}
for how, src in pairs(sources) do
  local m = cuda.module(src)
  -- Many blocks, so that helpers of the worker pool run some of them.
  local out = cuda.device_array(64 * 64, "int32")
  -- (Loop and region modes, where a block's threads run as loops, do not name the thread;
  -- warp shuffles run as regions, cooperative groups as fibers.)
  local err = expect.error(how == "groups" and "kernel 'k': thread (5,0,0) of block" or
                           "kernel 'k': one of its threads", function() m.k[{ 64, 64 }](out, 5) end)
  assert(err:find("invalid memory access at address 0x", 1, true), how .. ": " .. err)
  -- The same kernel without the bad access runs, in the same process.
  m.k[{ 64, 64 }](out, 1000)
end
local d = cuda.device_array(4, "int32")
cuda.jit("__global__ void fill(int* x) { x[threadIdx.x] = 9; }")[{ 1, 4 }](d)
assert(d:copy_to_host()[4] == 9)

-- A write past the end of a device array (or before its start) faults in the guard page after
-- (before) it: the launch fails and kiln's own heap is untouched, so the collector and later
-- launches go on. Within the last 64 bytes' alignment slack it lands in the array's own
-- mapping, never in kiln's memory.
local poke = cuda.jit("__global__ void poke(float* x, long long i) { x[i] = 1; }")
local arrays = {}
for n = 1, 20 do arrays[n] = cuda.device_array(1000 * n, "float32") end
for n, a in ipairs(arrays) do
  -- 64 bytes past the end (past any alignment slack), 4000 bytes past it, 4096 bytes before.
  for _, i in ipairs({ 1000 * n + 16, 1000 * n + 1000, -1024 }) do
    expect.error("kernel 'poke': one of its threads: invalid memory access",
                 function() poke[{ 1, 1 }](a, i) end)
  end
end
arrays = nil
collectgarbage()
collectgarbage()
-- Past the most dynamic shared memory a block may have (227 KiB): a guard page, not kiln's heap.
local dyn = cuda.jit("extern __shared__ float sm[]; __global__ void dyn(float* x, int i) { sm[i] = 1; x[0] = sm[0]; }")
local one = cuda.device_array(1, "float32")
dyn[{ 1, 1, 0, 128 }](one, 31)
for _, i in ipairs({ 227 * 256, 227 * 256 + 1000 }) do
  expect.error("kernel 'dyn': one of its threads: invalid memory access", function() dyn[{ 1, 1, 0, 128 }](one, i) end)
end
collectgarbage()
local keep = cuda.device_array(256, "float32")
poke[{ 1, 1 }](keep, 255)
assert(keep:copy_to_host()[256] == 1)

-- An integer division by zero, or INT_MIN / -1 (both trap on x86; a GPU gives some value), is an
-- error for its launch, in a thread loop and in fibers (cooperative groups), and the process goes
-- on.
local divide = cuda.module([[
#include <cooperative_groups.h>
extern "C" __global__ void looped(const int* a, const int* b, int* q) {
  q[threadIdx.x] = a[threadIdx.x] / b[threadIdx.x];
}
extern "C" __global__ void grouped(const int* a, const int* b, int* q) {
  auto tile = cooperative_groups::tiled_partition<32>(cooperative_groups::this_thread_block());
  q[threadIdx.x] = tile.shfl(a[threadIdx.x], tile.thread_rank()) % b[threadIdx.x];
}]])
local num = cuda.to_device(array.from({ 7, 5, -2147483648, 9 }, "int32"))
local q = cuda.device_array(4, "int32")
for _, den in ipairs({ { 2, 0, 1, 3 }, { 2, 1, -1, 3 } }) do
  local d_den = cuda.to_device(array.from(den, "int32"))
  for _, name in ipairs({ "looped", "grouped" }) do
    local err = expect.error("kernel '" .. name .. "'", function() divide[name][{ 1, 4 }](num, d_den, q) end)
    assert(err:find("integer division by zero", 1, true), err)
  end
end
divide.looped[{ 1, 4 }](num, cuda.to_device(array.from({ 2, 5, 2, 3 }, "int32")), q)
local hq = q:copy_to_host()
assert(hq[1] == 3 and hq[2] == 1 and hq[3] == -1073741824 and hq[4] == 3, tostring(hq))
print("ok")
