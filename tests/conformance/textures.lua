-- Conformance: texture references (kernels/textures.cu) against references computed here.
local here = arg[0]:match("^(.*)/") or "."
local m = cuda.module({ file = here .. "/kernels/textures.cu" })
local npoints, ncentres = 50, 3
local points = array.random.uniform({ npoints, 4 }, { dtype = "float32", seed = 12 })
local centres = array.from({ { 0.1, 0.1, 0.1, 0.1 }, { 0.5, 0.5, 0.5, 0.5 }, { 0.9, 0.9, 0.9, 0.9 } }, "float32")
local weights = array.zeros(npoints, "int32")
for p = 1, npoints do weights[p] = p % 3 + 1 end
local membership = cuda.device_array(npoints, "int32")

local function refused(pattern, f)
  local ok, err = pcall(f)
  assert(not ok and tostring(err):find(pattern, 1, true), tostring(err))
end
-- A kernel that reads a texture no array is bound to is refused before it runs; one that reads
-- none launches.
refused("kernel 'nearest' reads the texture 't_points', which no array is bound to: m:bind_texture(\"t_points\", array)",
  function() m.nearest[{ 1, 64 }](membership, npoints, ncentres) end)
m.plain[{ 1, 4 }](membership)

m:bind_texture("t_points", cuda.to_device(points))
m:bind_texture("t_centres", cuda.to_device(centres:view("float4")))
refused("reads the texture 't_weights'", function() m.nearest[{ 1, 64 }](membership, npoints, ncentres) end)
m:bind_texture("t_weights", cuda.to_device(weights))
collectgarbage()  -- the module keeps the bound arrays alive
m.nearest[{ 1, 64 }](membership, npoints, ncentres)
local got = membership:copy_to_host()
for p = 1, npoints do
  local best, best_d = 0, math.huge
  for c = 1, ncentres do
    local d = 0
    for f = 1, 4 do d = d + (points:get(p, f) - centres:get(c, f)) ^ 2 end
    if d < best_d then best, best_d = c - 1, d end
  end
  assert(got[p] == best * weights[p], ("point %d: %d, expected %d"):format(p, got[p], best * weights[p]))
end

-- Binding again points the texture at the new array (the built kernels read it at once).
local ones = array.full(npoints, 1, "int32")
m:bind_texture("t_weights", cuda.to_device(ones))
m.nearest[{ 1, 64 }](membership, npoints, ncentres)
assert(membership:copy_to_host()[npoints] * weights[npoints] == got[npoints], "rebound")

-- Outside the array bound a fetch reads zero, as a texture fetch from linear memory does
-- (Rodinia's kmeans reads past its last point and counts on it).
m:bind_texture("t_points", cuda.to_device(array.from({ 1, 2, 3, 4 }, "float32")))
local around = cuda.device_array(8, "float32")
m.around[{ 1, 8 }](around, -2)
local ha = around:copy_to_host()
for i, want in ipairs({ 0, 0, 1, 2, 3, 4, 0, 0 }) do
  assert(ha[i] == want, ("fetch %d: %g, expected %g"):format(i - 3, ha[i], want))
end

-- Mistakes name the texture and what was wrong.
refused("bind_texture: texture 't_centres' reads float4 (float4), the array is float32",
  function() m:bind_texture("t_centres", cuda.to_device(points)) end)
refused("bind_texture: no 1-D texture reference 't_nowhere' in the module (its textures: t_points, t_centres, t_weights)",
  function() m:bind_texture("t_nowhere", cuda.to_device(points)) end)
refused("expected a device array", function() m:bind_texture("t_points", points) end)
-- A 2-D texture reference is not rewritten: the compiler's error carries a hint.
local m2 = cuda.module([[
texture<float, 2, cudaReadModeElementType> tex2;
__global__ void read2(float* out) { out[threadIdx.x] = tex2D(tex2, threadIdx.x, 0); }
]])
refused("hint: texture references were removed in CUDA 12: kiln reads 1-D ones",
  function() m2.read2[{ 1, 4 }](cuda.device_array(4, "float32")) end)
-- A texture object: the cpu backend's error says they are not supported. On a GPU the kernel
-- compiles and the parameter is an integer to the compiler, but no Lua number is a texture:
-- the launch refuses it (the H200 of 2026-11-27 ran the kernel with 0 before).
local m4 = cuda.module([[
__global__ void sample(cudaTextureObject_t tex, float* out) { out[threadIdx.x] = tex2D<float>(tex, threadIdx.x, 0); }
]])
if cuda.backend() == "cpu" then
  refused("hint: texture and surface objects (cudaTextureObject_t",
    function() m4.sample[{ 1, 4 }](0, cuda.device_array(4, "float32")) end)
else
  refused("kernel 'sample': parameter 1 'tex' (cudaTextureObject_t): texture and surface objects",
    function() m4.sample[{ 1, 4 }](0, cuda.device_array(4, "float32")) end)
end
-- The lines after a declaration kiln rewrote keep their numbers in the compiler's errors.
local m3 = cuda.module([[
texture<float, 1>
  t_a;
__global__ void broken(float* out) { out[0] = tex1Dfetch(t_a, 0) + undefined_name; }
]])
local ok, err = pcall(function() m3.broken[{ 1, 1 }](cuda.device_array(1, "float32")) end)
assert(not ok and err:find("undefined_name") and (err:find("kernel.cu%(3%)") or err:find("kernel.cu:3:")), err)
print("ok")
