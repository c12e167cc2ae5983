-- k:resources(arch [, block_size]) reads a kernel's registers, memory and launch bounds from the
-- cubin NVRTC builds for arch (no GPU needed), and computes its occupancy. Checked against what
-- the source says and against the occupancy calculator's formula worked out here in Lua from
-- the architectures' published limits. Skipped (77) where NVRTC cannot load.
package.path = arg[0]:gsub("[^/]*$", "") .. "lib/?.lua;" .. package.path
local expect = require("expect")

local probe = cuda.jit("__global__ void probe(int* x) { x[0] = 1; }")
if not pcall(probe.ptx, probe) then
  print("SKIP: NVRTC is unavailable")
  os.exit(77)
end

local src = [[
template <typename T>
__global__ void stencil(T* a, int n, double s, char c) {
  __shared__ T tile[256];
  T local[64];  // indexed at run time: local memory
  for (int i = 0; i < 64; ++i) local[i] = a[(threadIdx.x * i) % n];
  tile[threadIdx.x] = local[n % 64] * s + c;
  __syncthreads();
  a[threadIdx.x] = tile[255 - threadIdx.x];
}
__global__ void __launch_bounds__(128) bounded(float* out) { out[threadIdx.x] = 1.0f; }
]]
local m = cuda.module(src)
local k, b = m.stencil, m.bounded
expect.error("is a template: launch it first", k.resources, k, "sm_80")
local a = cuda.to_device(array.zeros(256, "float32"))
k[{ 1, 256 }](a, 256, 0.5, 1)
b[{ 1, 128 }](a)

-- The calculator's formula (CUDA's occupancy calculator), written out here as a reference:
-- registers are allotted per warp in units of 256; 1 KiB of shared memory is reserved per block.
local limits = { sm_80 = { warps = 64, blocks = 32, smem = 164 * 1024 },
                 sm_90 = { warps = 64, blocks = 32, smem = 228 * 1024 },
                 sm_86 = { warps = 48, blocks = 16, smem = 100 * 1024 } }
local function reference(arch, regs, shared, block)
  local l = limits[arch]
  local warps = (block + 31) // 32
  local per_warp = ((regs * 32 + 255) // 256) * 256
  local by_regs = (65536 // per_warp) // warps
  local by_smem = l.smem // (((shared + 1024 + 127) // 128) * 128)
  local n = math.min(l.blocks, l.warps // warps, by_regs, by_smem)
  return n, n * warps / l.warps
end

for _, arch in ipairs({ "sm_80", "sm_86", "sm_90" }) do
  local r = k:resources(arch, 256)
  assert(r.arch == arch)
  assert(r.shared_bytes == 256 * 4, arch .. ": shared " .. r.shared_bytes)
  assert(r.local_bytes >= 64 * 4, arch .. ": local " .. r.local_bytes)
  assert(r.param_bytes == 8 + 4 + 4 + 8 + 1, arch .. ": params " .. r.param_bytes)  -- double aligns to 8
  assert(r.registers > 0 and r.registers <= 255, arch .. ": registers " .. r.registers)
  assert(r.spill_stores == 0 and r.spill_loads == 0)
  assert(r.max_threads_per_block == 1024)
  local blocks, occ = reference(arch, r.registers, r.shared_bytes, 256)
  assert(r.blocks_per_sm == blocks and math.abs(r.occupancy - occ) < 1e-12,
         ("%s: %d blocks, occupancy %g; the formula says %d, %g"):format(arch, r.blocks_per_sm, r.occupancy, blocks, occ))
  -- Dynamic shared memory counts too: 60 KiB a block leaves room for two on sm_80.
  local d = k:resources(arch, 256, 60 * 1024)
  local dblocks = reference(arch, r.registers, r.shared_bytes + 60 * 1024, 256)
  assert(d.blocks_per_sm == dblocks and d.occupancy_limit == "shared memory", arch .. ": " .. d.occupancy_limit)

  local rb = b:resources(arch, 128)
  assert(rb.max_threads_per_block == 128, "__launch_bounds__(128): " .. rb.max_threads_per_block)
  assert(rb.shared_bytes == 0 and rb.param_bytes == 8)
  assert(b:resources(arch, 256).occupancy == 0, "a block past the launch bounds cannot run")
end
assert(k:resources("sm_80").occupancy == nil, "no block size: no occupancy")

expect.error("is not a GPU architecture", k.resources, k, "compute_80")
expect.error("must not be negative", k.resources, k, "sm_80", -1)
local ok, err = pcall(k.sass, k, "sm_80")
if not ok then assert(err:find("needs nvdisasm", 1, true), err)
else assert(err:find("FFMA") or err:find("STG") or err:find("EXIT"), "SASS text") end
print("kernel_resources: ok")
