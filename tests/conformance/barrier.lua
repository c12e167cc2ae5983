-- Conformance: cuda::barrier with memcpy_async (kernels/barrier.cu) against a Lua reference.
local here = arg[0]:match("^(.*)/") or "."
local m = cuda.module({ file = here .. "/kernels/barrier.cu" })
local blocks, tile = 6, 128
local x = array.random.uniform(blocks * tile, { dtype = "float32", seed = 61 })
local out, scaled = cuda.device_array(blocks * tile, "float32"), cuda.device_array(blocks * tile, "float32")
m.shifted[{ blocks, tile }](cuda.to_device(x), out, scaled)
local ho, hs = out:copy_to_host(), scaled:copy_to_host()
for b = 0, blocks - 1 do
  for t = 0, tile - 1 do
    local i = b * tile + t + 1
    assert(ho[i] == x[b * tile + (t + 1) % tile + 1], "shifted " .. i)
    local want = 2 * x[i] + x[b * tile + tile - 1 - t + 1]
    assert(math.abs(hs[i] - want) <= 1e-6 * math.abs(want), "scaled " .. i)
  end
end
-- A barrier for fewer threads than the block is refused on the cpu backend (a GPU runs it).
if cuda.backend() == "cpu" then
  local part = cuda.module([[
#include <cuda/barrier>
__global__ void half_barrier(int* out) {
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  if (threadIdx.x == 0) init(&bar, blockDim.x / 2);
  __syncthreads();
  if (threadIdx.x < blockDim.x / 2) bar.arrive_and_wait();
  out[threadIdx.x] = 1;
}]])
  local ok, err = pcall(function() part.half_barrier[{ 1, 64 }](cuda.device_array(64, "int32")) end)
  assert(not ok and tostring(err):find("every thread of the block", 1, true), tostring(err))
end
print("ok")
