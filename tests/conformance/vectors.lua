-- Conformance: vector dtypes (kernels/vectors.cu) for host and device arrays, by pointer and by
-- value, against references computed here on the lanes.
local here = arg[0]:match("^(.*)/") or "."
local m = cuda.module({ file = here .. "/kernels/vectors.cu" })

-- Each vector dtype has the size the compiler gives its type; arrays of it are aligned for it.
local names = { "float2", "float3", "float4", "double2", "int2", "int3", "int4", "uint2", "uint3",
                "uint4", "char4", "uchar4", "short2", "ushort2", "double3", "double4", "char2",
                "char3", "uchar2", "uchar3", "short3", "short4", "ushort3", "ushort4" }
local layout = cuda.device_array(2 * #names, "int32")
m.layouts[{ 1, 1 }](layout)
local l = layout:copy_to_host()
for k, name in ipairs(names) do
  local bytes = array.zeros(1, name):view("uint8").size
  assert(bytes == l[2 * k - 1], ("%s: %d bytes here, %d in the kernel"):format(name, bytes, l[2 * k - 1]))
  assert(array.zeros(3, name).dtype == name)
end

-- float4 saxpy: the lanes are a float32 array's consecutive elements.
local n4 = 10007
local x = array.random.uniform(4 * n4, { dtype = "float32", seed = 1 })
local y = array.random.uniform(4 * n4, { dtype = "float32", seed = 2 })
local dy = cuda.to_device(y:view("float4"))
assert(dy.shape[1] == n4 and dy.dtype == "float4")
m.saxpy4[{ (n4 + 255) // 256, 256 }](2.5, cuda.to_device(x:view("float4")), dy, n4)
local got = dy:view("float32"):copy_to_host()
assert(got.size == 4 * n4)
for i = 1, 4 * n4 do
  local want = y[i] + 2.5 * x[i]
  assert(math.abs(got[i] - want) <= 1e-6 * math.max(1, math.abs(want)), "saxpy4 element " .. i)
end

-- uchar4 pixels in and out as tables of lanes; a uchar4 by value.
local n = 300
local px = array.zeros(n, "uchar4")
for i = 1, n do px[i] = { x = i % 256, y = (3 * i) % 256, z = (7 * i) % 256, w = 200 } end
local dpx = cuda.to_device(px)
m.invert[{ (n + 127) // 128, 128 }](dpx, { 0, 0, 0xf0, 0 }, n)
local hp = dpx:copy_to_host()
for i = 1, n do
  local p = hp[i]
  assert(p.x == 255 - i % 256 and p.y == 255 - (3 * i) % 256 and p.z == (255 - (7 * i) % 256) & 0xf0
         and p.w == 200, "pixel " .. i)
end

-- float2 complex products, a float2 by value given with named lanes.
local a = array.random.uniform({ 500, 2 }, { low = -1, dtype = "float32", seed = 3 })
local b = array.random.uniform({ 500, 2 }, { low = -1, dtype = "float32", seed = 4 })
local c = cuda.device_array(500, "float2")
m.complex_mul[{ 4, 128 }](cuda.to_device(a:view("float2")), cuda.to_device(b:view("float2")), c,
                          { x = 2, y = -1 }, 500)
local hc = c:copy_to_host()
assert(hc.shape[1] == 500 and hc.dtype == "float2")
for i = 1, 500 do
  local ur, ui, vr, vi = a:get(i, 1), a:get(i, 2), b:get(i, 1), b:get(i, 2)
  local want_r, want_i = (ur * vr - ui * vi) * 2, -(ur * vi + ui * vr)
  local z = hc[i]
  assert(math.abs(z.x - want_r) < 1e-6 and math.abs(z.y - want_i) < 1e-6, "complex_mul " .. i)
end

-- Vectors by value between scalars of other alignments.
local bv = cuda.device_array(11)
m.by_value[{ 1, 1 }](-7, { 1.5, -2.25 }, 100, { x = 0.5, y = 1.5, z = 2.5 }, { 1, -2, 3, -4 }, bv)
local hv = bv:copy_to_host()
local want_bv = { -7, 1.5, -2.25, 100, 0.5, 1.5, 2.5, 1, -2, 3, -4 }
for k = 1, 11 do assert(hv[k] == want_bv[k], ("by_value field %d: %g, expected %g"):format(k, hv[k], want_bv[k])) end

-- What does not fit is refused, naming the parameter, the dtype and the lanes.
local function refused(pattern, f)
  local ok, err = pcall(f)
  assert(not ok and tostring(err):find(pattern), tostring(err))
end
refused("expects a float2 array, or one of whole float2 vectors %(2 float32 each%), got a float32", function()
  m.complex_mul[{ 1, 1 }](cuda.to_device(array.zeros(7, "float32")), cuda.to_device(b), c, { 1, 1 }, 1) end)
refused("expects a float2 array %(or cuda.null%), got a float64", function()
  m.complex_mul[{ 1, 1 }](cuda.to_device(array.zeros(8, "float64")), cuda.to_device(b), c, { 1, 1 }, 1) end)
refused("expects a float2: a table {x, y}", function()
  m.complex_mul[{ 1, 1 }](cuda.to_device(a:view("float2")), cuda.to_device(b:view("float2")), c, 2, 1) end)
refused("not a whole number of float3", function() return array.zeros(4, "float32"):view("float3") end)
refused("work on the lanes", function() return px:sum() end)

-- double4 and double3 arrays by pointer, their lanes a float64 array's elements.
local nb = 300
local pos = array.random.uniform(4 * nb, { dtype = "float64", seed = 7 })
local vel = array.random.uniform(3 * nb, { dtype = "float64", seed = 8 })
local db = cuda.to_device(pos:view("double4"))
m.bodies[{ 3, 128 }](db, cuda.to_device(vel:view("double3")), nb)
local hb = db:copy_to_host()
assert(hb.dtype == "double4" and hb.shape[1] == nb)
for i = 1, nb do
  local x, y, z = pos[4 * i - 3], pos[4 * i - 2], pos[4 * i - 1]
  local p = hb[i]
  -- (w within rounding: a GPU fuses the multiply-add)
  assert(math.abs(p.w - (x + y * z)) <= 1e-15 and p.x == x + vel[3 * i - 2] and p.y == y + vel[3 * i - 1]
         and p.z == z + vel[3 * i], "body " .. i)
end

-- A template's vector parameters named through a trait (`typename vec4<T>::Type*`, as
-- cuda-samples' nbody writes them): each instantiation takes its own vector arrays. (NVRTC's
-- mangled name keeps such a type unresolved; kiln asks the compiler what it stands for.)
local traits = [[
template <typename T> struct vec4 { typedef float Type; };
template <> struct vec4<float> { typedef float4 Type; };
template <> struct vec4<double> { typedef double4 Type; };
template <typename T>
__global__ void drift(typename vec4<T>::Type* __restrict__ pos, const typename vec4<T>::Type* vel,
                      T dt, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  pos[i].x += vel[i].x * dt; pos[i].y += vel[i].y * dt; pos[i].z += vel[i].z * dt;
}]]
for _, t in ipairs({ { "float", "float32", "float4" }, { "double", "float64", "double4" } }) do
  local T, dtype, vt = t[1], t[2], t[3]
  local nd = 200
  local p0 = array.arange(4 * nd, dtype)
  local v0 = array.full(4 * nd, 0.5, dtype)
  local dp = cuda.to_device(p0:view(vt))
  cuda.module(traits, { name = "drift<" .. T .. ">" }).drift[{ 2, 128 }](dp, cuda.to_device(v0:view(vt)), 2, nd)
  local hp = dp:copy_to_host():view(dtype)
  for i = 1, 4 * nd do
    local want = p0[i] + (i % 4 == 0 and 0 or 1)
    assert(hp[i] == want, ("drift<%s> lane %d: %g, expected %g"):format(T, i, hp[i], want))
  end
end
-- Interleaved RGB bytes read as uchar3 (a {n, 3} uint8 array's view).
local npx = 1000
local rgb = array.random.integers(0, 256, 3 * npx, { dtype = "uint8", seed = 5 })
local luma = cuda.device_array(npx, "uint8")
m.gray[{ (npx + 127) // 128, 128 }](cuda.to_device(rgb:view("uchar3")), luma, npx)
local hl = luma:copy_to_host()
for i = 1, npx do
  local r, g, b = rgb[3 * i - 2], rgb[3 * i - 1], rgb[3 * i]
  assert(hl[i] == (299 * r + 587 * g + 114 * b) // 1000, "gray " .. i)
end
-- The bytes themselves, an {h, w, 3} uint8 image, as the same uchar3* parameter (whole vectors
-- of its lanes' dtype), and a count that is not whole vectors refused, naming the parameter.
local image = cuda.to_device(rgb:reshape({ 10, npx // 10, 3 }))
local luma2 = cuda.device_array(npx, "uint8")
m.gray[{ (npx + 127) // 128, 128 }](image, luma2, npx)
local hl2 = luma2:copy_to_host()
for i = 1, npx do assert(hl2[i] == hl[i], "gray from bytes " .. i) end
local ok, err = pcall(function() m.gray[{ 1, 128 }](cuda.to_device(array.zeros(3 * 5 + 1, "uint8")), luma2, 5) end)
assert(not ok and err:find("parameter 1", 1, true) and err:find("whole uchar3 vectors", 1, true), tostring(err))
print("ok")
