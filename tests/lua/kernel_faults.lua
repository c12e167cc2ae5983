-- A kernel that reads or writes through a null or wild pointer is an error for its launch that
-- names the kernel, the thread and the address, on every way the cpu backend runs threads; the
-- process goes on, and later launches work.
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
}
for how, src in pairs(sources) do
  local m = cuda.module(src)
  -- Many blocks, so that helpers of the worker pool run some of them.
  local out = cuda.device_array(64 * 64, "int32")
  -- (Loop and region modes, where a block's threads run as loops, do not name the thread.)
  local err = expect.error(how == "warps" and "kernel 'k': thread (5,0,0) of block" or
                           "kernel 'k': one of its threads", function() m.k[{ 64, 64 }](out, 5) end)
  assert(err:find("invalid memory access at address 0x", 1, true), how .. ": " .. err)
  -- The same kernel without the bad access runs, in the same process.
  m.k[{ 64, 64 }](out, 1000)
end
local d = cuda.device_array(4, "int32")
cuda.jit("__global__ void fill(int* x) { x[threadIdx.x] = 9; }")[{ 1, 4 }](d)
assert(d:copy_to_host()[4] == 9)
print("ok")
