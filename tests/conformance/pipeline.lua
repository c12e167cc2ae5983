-- Conformance: cuda::pipeline and the __pipeline_* primitives (kernels/pipeline.cu) against Lua.
local here = arg[0]:match("^(.*)/") or "."
local m = cuda.module({ file = here .. "/kernels/pipeline.cu" })
local blocks, tile, batches = 3, 64, 5
local function f32(v) return (string.unpack("<f", string.pack("<f", v))) end

-- A block's two-stage pipeline over five batches: neighbours' elements through shared memory.
local n = blocks * batches * tile
local x = array.random.uniform(n, { dtype = "float32", seed = 17 })
local out = cuda.device_array(n, "float32")
m.staged[{ blocks, tile }](cuda.to_device(x), out, batches)
local h = out:copy_to_host()
for row = 0, blocks * batches - 1 do
  for t = 0, tile - 1 do
    local want = f32(x[row * tile + (t + 1) % tile + 1] - x[row * tile + tile - 1 - t + 1])
    assert(h[row * tile + t + 1] == want, ("staged row %d thread %d: %s, want %s"):format(row, t, h[row * tile + t + 1], want))
  end
end

-- A thread's own pipeline, read by its neighbour after a barrier.
local x4 = array.random.uniform(4 * blocks * tile, { dtype = "float32", seed = 18 })
local sums = cuda.device_array(blocks * tile, "float32")
m.own_copies[{ blocks, tile }](cuda.to_device(x4):view("float4"), sums)
local hs = sums:copy_to_host()
for b = 0, blocks - 1 do
  for t = 0, tile - 1 do
    local j = b * tile + (t + 1) % tile
    local want = 0.0
    for c = 1, 4 do want = want + x4[4 * j + c] end
    assert(math.abs(hs[b * tile + t + 1] - want) <= 1e-5, "own_copies " .. (b * tile + t))
  end
end

-- The primitives with a zero-filled tail of three ints on each block's last thread.
local ints = array.arange(4 * blocks * tile, { dtype = "int32" })
local isums = cuda.device_array(blocks * tile, "int32")
local tail = 3
m.primitives[{ blocks, tile }](cuda.to_device(ints), isums, tail)
local hi = isums:copy_to_host()
for b = 0, blocks - 1 do
  for t = 0, tile - 1 do
    local src = (t + 1) % tile
    local kept = src == tile - 1 and 4 - tail or 4
    local want = 0
    for c = 0, kept - 1 do want = want + 4 * (b * tile + src) + c end
    assert(hi[b * tile + t + 1] == want, ("primitives %d: %d, want %d"):format(b * tile + t, hi[b * tile + t + 1], want))
  end
end

-- A partitioned pipeline (producers and consumers apart) is refused on the cpu backend.
if cuda.backend() == "cpu" then
  local part = cuda.module([[
#include <cooperative_groups.h>
#include <cuda/pipeline>
__global__ void partitioned(int* out) {
  auto block = cooperative_groups::this_thread_block();
  __shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, 1> state;
  const auto role = threadIdx.x < 32 ? cuda::pipeline_role::producer : cuda::pipeline_role::consumer;
  auto pipe = cuda::make_pipeline(block, &state, role);
  out[threadIdx.x] = 1;
}]])
  local ok, err = pcall(function() part.partitioned[{ 1, 64 }](cuda.device_array(64, "int32")) end)
  assert(not ok and tostring(err):find("partitioned", 1, true), tostring(err))
end
print("ok")
