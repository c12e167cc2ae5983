-- Conformance: structs by value (kernels/structs.cu) against references computed here.
local here = arg[0]:match("^(.*)/") or "."
local m = cuda.module({ file = here .. "/kernels/structs.cu" })
local rows, cols = 7, 45
local x = array.random.uniform({ rows, cols }, { dtype = "float32", seed = 31 })
local out = cuda.device_array({ rows, cols }, "float32")
for _, clamp in ipairs({ 0, 1 }) do
  local p = { rows = rows, cols = cols, step = 0.5, coef = { 0.25, 0.5, 0.25 },
              origin = { x = 0.125, y = -0.0625 }, clamp = clamp }
  m.stencil[{ { (cols + 31) // 32, rows }, { 32, 1 } }](p, cuda.to_device(x), out)
  local h = out:copy_to_host()
  for r = 1, rows do
    for c = 1, cols do
      local left, right = x:get(r, math.max(c - 1, 1)), x:get(r, math.min(c + 1, cols))
      local v = (0.25 * left + 0.5 * x:get(r, c) + 0.25 * right) * 0.5 + 0.125 * (r - 1) - 0.0625
      if clamp == 1 then v = math.min(math.max(v, 0), 1) end
      assert(math.abs(h:get(r, c) - v) < 1e-6, ("clamp %d at %d,%d: %g, expected %g"):format(clamp, r, c, h:get(r, c), v))
    end
  end
end

local tags = cuda.device_array(4, "int32")
m.tagged[{ 1, 4 }]({}, tags)
local ht = tags:copy_to_host()
for i = 1, 4 do assert(ht[i] == i - 1) end

-- Mistakes name the struct, the field and what was wrong.
local function refused(pattern, f)
  local ok, err = pcall(f)
  assert(not ok and tostring(err):find(pattern, 1, true), tostring(err))
end
local good = { rows = 1, cols = 1, step = 1, coef = { 1, 1, 1 }, origin = { 0, 0 }, clamp = 0 }
local function with(k, v)
  local t = {}
  for key, value in pairs(good) do t[key] = value end
  t[k] = v
  return t
end
local function run(p) m.stencil[{ 1, 1 }](p, cuda.to_device(x), out) end
refused("StencilParams has no field 'colz'", function() local p = with("colz", 3); run(p) end)
refused("field 'rows' (int) is not given", function() run(with("rows", nil)) end)
refused("field 'coef' is 3 float64: expects a table of 3 values", function() run(with("coef", { 1, 2 })) end)
refused("field 'clamp'", function() run(with("clamp", 300)) end)
refused("expects a StencilParams, a table of its fields", function() run(7) end)

-- Pointers to structs take any array whose bytes are whole structs. node is laid out as C lays
-- it out on the host and the GPU alike: location at int 1, keys at ints 2-6, children at 7-11,
-- is_leaf in the low byte of int 12, num_keys at int 13 (52 bytes).
local NODE_INTS = 13
local function tree(leaves)
  -- A root with keys 10, 20, 30 over four leaves; leaf i holds location 100 + i.
  local nodes = array.zeros(NODE_INTS * (leaves + 1), "int32")
  local function set(node, int, v) nodes[node * NODE_INTS + int] = v end
  for k = 1, 3 do set(0, 1 + k, 10 * k) end
  for c = 1, leaves do set(0, 6 + c, c) end
  set(0, 13, 3)
  for leaf = 1, leaves do set(leaf, 1, 100 + leaf); set(leaf, 12, 1) end
  return nodes
end
local queries = array.from({ 0, 9, 10, 19, 20, 25, 30, 99, -5, 15 }, "int32")
local expect = { 101, 101, 102, 102, 103, 103, 104, 104, 101, 102 }
local location = cuda.device_array(queries.size, "int32")
m.find_leaf[{ 1, 32 }](cuda.to_device(tree(4)), cuda.to_device(queries), location, queries.size)
local hl = location:copy_to_host()
for i = 1, queries.size do
  assert(hl[i] == expect[i], ("query %d: leaf %d, expected %d"):format(queries[i], hl[i], expect[i]))
end
-- A host array goes through as well (copied in and back, as any host array).
m.find_leaf[{ 1, 32 }](tree(4), queries, location, queries.size)
assert(location:copy_to_host()[3] == 102, "a host array of nodes")

-- lavaMD's FOUR_VECTOR (fields of `#define fp double`): a float64 array of 4 per particle.
local n = 37
local rv = array.random.uniform({ n, 4 }, { dtype = "float64", seed = 5 })
local qv = array.random.uniform(n, { dtype = "float64", seed = 6 })
local d_rv = cuda.to_device(rv)
m.weigh[{ 2, 32 }](d_rv, cuda.to_device(qv), n)
local hv = d_rv:copy_to_host()
for i = 1, n do
  local x, y, z = rv:get(i, 2), rv:get(i, 3), rv:get(i, 4)
  local v = qv[i] * math.sqrt(x * x + y * y + z * z)
  assert(math.abs(hv:get(i, 1) - v) < 1e-12, ("particle %d: %g, expected %g"):format(i, hv:get(i, 1), v))
  assert(hv:get(i, 2) == x and hv:get(i, 4) == z, "the other fields are kept")
end

-- A struct the source names by a typedef of its tag: an {n, 2} float32 array of Points.
local pts = cuda.to_device(array.from({ { 1, 2 }, { 3, 4 }, { 5, 6 } }, "float32"))
m.shift[{ 1, 32 }](pts, 0.5, 3)
local hp = pts:copy_to_host()
assert(hp:get(1, 1) == 1.5 and hp:get(3, 1) == 5.5 and hp:get(3, 2) == 6, "typedef'd tagged struct")

-- The same struct through a template instantiated by name.
local scaled = cuda.jit_file(here .. "/kernels/structs.cu", { name = "scale<Point>" })
scaled[{ 1, 32 }](pts, 2, 3)
local hs = pts:copy_to_host()
assert(hs:get(1, 2) == 4 and hs:get(3, 2) == 12 and hs:get(3, 1) == 5.5, "scale<Point>")

-- A part of a struct, memory off the struct's alignment, or no array at all: refused by name.
refused("parameter 1 'nodes' (node const*) expects an array of whole node structs (52 bytes each), got a float32 device array of 3 elements (12 bytes)",
  function() m.find_leaf[{ 1, 1 }](cuda.device_array(3, "float32"), cuda.to_device(queries), location, 1) end)
local odd = cuda.device_array(17, "float32")
refused("expects an array of whole FOUR_VECTOR structs (32 bytes each) at an 8-byte boundary",
  function() m.weigh[{ 1, 1 }](odd:sub(2, 17), cuda.to_device(qv), 1) end)
refused("expects an array of whole FOUR_VECTOR structs (32 bytes each), got an integer (3)",
  function() m.weigh[{ 1, 1 }](3, cuda.to_device(qv), 1) end)
-- A struct by value holding pointers (a thrust-style functor, a parameter block): each pointer
-- field takes a device array of its pointee's dtype, or cuda.null.
local gather = [[
struct Gather { const float* table; int mask; int* hits;
  __device__ float operator()(int i) const {
    if (hits) atomicAdd(hits + (i & mask), 1);
    return table[i & mask];
  } };
template <typename F> __global__ void apply(F f, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = f(i);
}]]
local apply = cuda.jit(gather, { name = "apply<Gather>" })
local table8 = cuda.to_device(array.from({ 5, -1, 2.5, 0, 7, 3, -4, 9 }, "float32"))
local hits = cuda.to_device(array.zeros(8, "int32"))
local gathered = cuda.device_array(20, "float32")
apply[{ 1, 32 }]({ table = table8, mask = 7, hits = hits }, gathered, 20)
local hg, hh, ht = gathered:copy_to_host(), hits:copy_to_host(), table8:copy_to_host()
for i = 1, 20 do assert(hg[i] == ht[(i - 1) % 8 + 1], "gather " .. i) end
for j = 1, 8 do assert(hh[j] == (j <= 4 and 3 or 2), "hits " .. j) end
apply[{ 1, 32 }]({ table = table8, mask = 3, hits = cuda.null }, gathered, 20)
assert(gathered:copy_to_host()[6] == ht[2], "gather with a null field")
refused("field 'table' (float *) expects a float32 device array (or cuda.null), got an int32 device array",
  function() apply[{ 1, 32 }]({ table = hits, mask = 7, hits = hits }, gathered, 20) end)
refused("field 'table' (float *) expects a float32 device array (or cuda.null), got a float32 host array",
  function() apply[{ 1, 32 }]({ table = array.ones(8, "float32"), mask = 7, hits = hits }, gathered, 20) end)
print("ok")
