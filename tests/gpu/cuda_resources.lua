-- GPU only: k:resources() for the device's own architecture, read from the cubin, agrees with
-- what the driver says of the kernel it loaded (cuFuncGetAttribute).
package.path = arg[0]:gsub("[^/]*$", "") .. "lib/?.lua;" .. package.path
require("gpu").require_cuda()

local m = cuda.module([[
template <typename T>
__global__ void stencil(T* a, int n) {
  __shared__ T tile[256];
  T local[32];
  for (int i = 0; i < 32; ++i) local[i] = a[(threadIdx.x * i) % n];
  tile[threadIdx.x] = local[n % 32];
  __syncthreads();
  a[threadIdx.x] = tile[255 - threadIdx.x];
}
__global__ void __launch_bounds__(128) bounded(float* out) { out[threadIdx.x] = 1.0f; }
]])
local a = cuda.to_device(array.zeros(256, "float32"))
m.stencil[{ 1, 256 }](a, 256)
m.bounded[{ 1, 128 }](a)
cuda.synchronize()
for _, k in ipairs({ m.stencil, m.bounded }) do
  local r = k:resources(nil, 128)  -- the device's architecture
  assert(r.driver, k.name .. ": no driver figures for " .. r.arch)
  for _, field in ipairs({ "registers", "shared_bytes", "local_bytes", "max_threads_per_block" }) do
    assert(r[field] == r.driver[field],
           ("%s %s: cubin %s, driver %s"):format(k.name, field, tostring(r[field]), tostring(r.driver[field])))
  end
  assert(r.occupancy > 0 and r.occupancy <= 1)
end
print("cuda_resources: ok")
