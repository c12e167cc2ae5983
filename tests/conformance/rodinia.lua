-- Conformance: the Rodinia-style benchmark kernels (bench/rodinia/: hotspot, pathfinder, nw,
-- srad), run by their benchmark's own host code (bench/rodinia/host.lua) at small sizes, against
-- references computed here in Lua from the same inputs. Sizes are chosen to reach the awkward
-- cases: grids that the pyramids' tiles do not divide, a last launch with fewer steps than the
-- pyramid's height, several pyramid heights, and every kind of tile diagonal in nw.
local here = arg[0]:match("^(.*)/") or "."
local rodinia = dofile(here .. "/../../bench/rodinia/host.lua")

local function host_table(d) return d:copy_to_host():totable() end

-- The largest |a - b| over the largest |b|, for flat tables of numbers.
local function relative_difference(a, b)
  local diff, scale = 0, 0
  for i = 1, #b do
    diff = math.max(diff, math.abs(a[i] - b[i]))
    scale = math.max(scale, math.abs(b[i]))
  end
  return diff / scale
end

local function check_close(what, got, want, tolerance)
  assert(#got == #want, ("%s: %d values, want %d"):format(what, #got, #want))
  local r = relative_difference(got, want)
  assert(r <= tolerance, ("%s: relative difference %.3g > %g"):format(what, r, tolerance))
end

local function check_equal(what, got, want)
  assert(#got == #want, ("%s: %d values, want %d"):format(what, #got, #want))
  for i = 1, #want do
    assert(got[i] == want[i], ("%s: value %d is %s, want %s"):format(what, i - 1, got[i], want[i]))
  end
end

-- hotspot ---------------------------------------------------------------------------------------
local function hotspot_reference(rows, cols, steps, temp, power)
  local h = rodinia.HOTSPOT
  local function at(t, r, c)  -- a neighbour beyond the edge is the cell itself
    r = math.max(0, math.min(rows - 1, r))
    c = math.max(0, math.min(cols - 1, c))
    return t[r * cols + c + 1]
  end
  for _ = 1, steps do
    local nxt = {}
    for r = 0, rows - 1 do
      for c = 0, cols - 1 do
        local i = r * cols + c + 1
        local t = temp[i]
        nxt[i] = t + h.cap_step * (power[i] + (at(temp, r + 1, c) + at(temp, r - 1, c) - 2 * t) * h.ry_1 +
                                   (at(temp, r, c + 1) + at(temp, r, c - 1) - 2 * t) * h.rx_1 +
                                   (h.amb_temp - t) * h.rz_1)
      end
    end
    temp = nxt
  end
  return temp
end

for _, s in ipairs({ { rows = 37, cols = 29, steps = 5, pyramid = 2 }, { rows = 20, cols = 45, steps = 7, pyramid = 3 },
                     { rows = 1, cols = 30, steps = 2, pyramid = 1 } }) do
  local b = rodinia.prepare("hotspot", s)
  local got = host_table(b.run())
  local want = hotspot_reference(s.rows, s.cols, s.steps, host_table(b.inputs.temp), host_table(b.inputs.power))
  -- float32 against Lua's doubles: a few roundings per step; a wrong neighbour costs ~1e-3.
  check_close(("hotspot %dx%d, %d steps, pyramid %d"):format(s.rows, s.cols, s.steps, s.pyramid), got, want, 1e-5)
  assert(b.kernels.hotspot_pyramid:info().name == "hotspot_pyramid")
end

-- pathfinder ------------------------------------------------------------------------------------
local function pathfinder_reference(rows, cols, wall)
  local totals = {}
  for c = 1, cols do totals[c] = wall[c] end
  for r = 1, rows - 1 do
    local nxt = {}
    for c = 1, cols do
      local best = math.min(totals[math.max(1, c - 1)], totals[c], totals[math.min(cols, c + 1)])
      nxt[c] = best + wall[r * cols + c]
    end
    totals = nxt
  end
  return totals
end

for _, s in ipairs({ { rows = 50, cols = 700, pyramid = 20 }, { rows = 9, cols = 300, pyramid = 7 },
                     { rows = 2, cols = 1, pyramid = 20 } }) do
  local b = rodinia.prepare("pathfinder", s)
  check_equal(("pathfinder %d columns x %d rows, pyramid %d"):format(s.cols, s.rows, s.pyramid),
              host_table(b.run()), pathfinder_reference(s.rows, s.cols, host_table(b.inputs.wall)))
end

-- nw --------------------------------------------------------------------------------------------
local function nw_reference(n, penalty, reference)
  local cols = n + 1
  local score = {}
  for i = 0, n do
    score[i + 1] = -i * penalty
    score[i * cols + 1] = -i * penalty
  end
  for r = 1, n do
    for c = 1, n do
      local i = r * cols + c + 1
      score[i] = math.max(score[i - cols - 1] + reference[i], score[i - cols] - penalty, score[i - 1] - penalty)
    end
  end
  return score
end

for _, s in ipairs({ { n = 80, penalty = 10 }, { n = 16, penalty = 3 } }) do
  local b = rodinia.prepare("nw", s)
  local got = b.run():copy_to_host():reshape((s.n + 1) * (s.n + 1)):totable()
  check_equal(("nw %dx%d"):format(s.n, s.n), got, nw_reference(s.n, s.penalty, host_table(b.inputs.reference)))
end

-- srad ------------------------------------------------------------------------------------------
local function srad_reference(rows, cols, iterations, lambda, J)
  local n = rows * cols
  local function at(t, r, c)
    r = math.max(0, math.min(rows - 1, r))
    c = math.max(0, math.min(cols - 1, c))
    return t[r * cols + c + 1]
  end
  for _ = 1, iterations do
    local total, total2 = 0, 0
    for i = 1, n do total, total2 = total + J[i], total2 + J[i] * J[i] end
    local mean = total / n
    local q0sqr = (total2 / n - mean * mean) / (mean * mean)
    local dN, dS, dW, dE, c = {}, {}, {}, {}, {}
    for r = 0, rows - 1 do
      for col = 0, cols - 1 do
        local i = r * cols + col + 1
        local jc = J[i]
        local nn, ss, ww, ee = at(J, r - 1, col) - jc, at(J, r + 1, col) - jc, at(J, r, col - 1) - jc, at(J, r, col + 1) - jc
        local g2 = (nn * nn + ss * ss + ww * ww + ee * ee) / (jc * jc)
        local lap = (nn + ss + ww + ee) / jc
        local qsqr = (0.5 * g2 - lap * lap / 16) / (1 + 0.25 * lap) ^ 2
        local coef = 1 / (1 + (qsqr - q0sqr) / (q0sqr * (1 + q0sqr)))
        dN[i], dS[i], dW[i], dE[i], c[i] = nn, ss, ww, ee, math.max(0, math.min(1, coef))
      end
    end
    local out = {}
    for r = 0, rows - 1 do
      for col = 0, cols - 1 do
        local i = r * cols + col + 1
        local d = c[i] * dN[i] + at(c, r + 1, col) * dS[i] + c[i] * dW[i] + at(c, r, col + 1) * dE[i]
        out[i] = J[i] + 0.25 * lambda * d
      end
    end
    J = out
  end
  return J
end

for _, s in ipairs({ { rows = 48, cols = 32, iterations = 3, lambda = 0.5 }, { rows = 16, cols = 64, iterations = 1, lambda = 0.25 } }) do
  local b = rodinia.prepare("srad", s)
  local got = host_table(b.run())
  local want = srad_reference(s.rows, s.cols, s.iterations, s.lambda, host_table(b.inputs.image))
  check_close(("srad %dx%d, %d iterations"):format(s.rows, s.cols, s.iterations), got, want, 1e-5)
end

-- Sizes the kernels cannot take are refused before anything runs.
for _, bad in ipairs({ { "nw", { n = 40 }, "multiple of 16" }, { "srad", { rows = 20, cols = 32 }, "multiples of 16" },
                       { "hotspot", { pyramid = 8 }, "pyramid" }, { "hotspot", { size = 3 }, "unknown size" } }) do
  local ok, err = pcall(rodinia.prepare, bad[1], bad[2])
  assert(not ok and tostring(err):find(bad[3], 1, true), tostring(err))
end
print("ok")
