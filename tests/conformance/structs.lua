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
print("ok")
