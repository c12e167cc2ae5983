-- CPU reference for the matrix-multiply labs: checks C = A * B element by element in Lua's
-- doubles, every element when the product is small, else a fixed random sample.
local M = {}

-- Checks c ({m, n} host array) against a ({m, k}) times b ({k, n}). An element passes when
-- |c - ref| <= rtol * sum_k |a_ik * b_kj| (the scale of float rounding in the dot product).
-- Returns the number of bad elements, the number checked and the worst error ratio.
function M.check(a, b, c, rtol, max_work)
  local m, kdim, n = a.shape[1], a.shape[2], b.shape[2]
  local ta, tb, tc = a:reshape(a.size):totable(), b:reshape(b.size):totable(), c:reshape(c.size):totable()
  local cells = {}
  if m * n * kdim <= (max_work or 2e7) then
    for i = 0, m - 1 do for j = 0, n - 1 do cells[#cells + 1] = { i, j } end end
  else
    local seed = 99
    for _ = 1, math.max(1, (max_work or 2e7) // kdim) do
      seed = (seed * 1103515245 + 12345) % 2147483648
      local i = seed % m
      seed = (seed * 1103515245 + 12345) % 2147483648
      cells[#cells + 1] = { i, seed % n }
    end
  end
  local bad, worst = 0, 0
  for _, cell in ipairs(cells) do
    local i, j = cell[1], cell[2]
    local s, scale = 0.0, 0.0
    for k = 0, kdim - 1 do
      local p = ta[i * kdim + k + 1] * tb[k * n + j + 1]
      s = s + p
      scale = scale + math.abs(p)
    end
    local err = math.abs(tc[i * n + j + 1] - s)
    local ratio = scale > 0 and err / scale or err
    if ratio > worst then worst = ratio end
    if err > rtol * scale + 1e-30 then bad = bad + 1 end
  end
  return bad, #cells, worst
end

return M
