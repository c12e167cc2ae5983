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
print("ok")
