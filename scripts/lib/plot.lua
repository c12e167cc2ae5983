-- A small imaging and plotting helper for the labs, in pure Lua: an RGB canvas with lines,
-- rectangles, images and text in a built-in 5x7 bitmap font; a log-log (or linear) line plot
-- with axes, ticks, labels and a legend; a bar chart; a colour map. A canvas becomes a uint8
-- {h, w, 3} host array and array.save_image writes it as PNG. Nothing here needs a shell.
local M = {}

-- ---- The 5x7 font: each glyph is 7 rows of 5 bits, the high bit the leftmost pixel. ----------
local FONT = {
  ["0"] = { 14, 17, 19, 21, 25, 17, 14 }, ["1"] = { 4, 12, 4, 4, 4, 4, 14 },
  ["2"] = { 14, 17, 1, 2, 4, 8, 31 }, ["3"] = { 31, 2, 4, 2, 1, 17, 14 },
  ["4"] = { 2, 6, 10, 18, 31, 2, 2 }, ["5"] = { 31, 16, 30, 1, 1, 17, 14 },
  ["6"] = { 6, 8, 16, 30, 17, 17, 14 }, ["7"] = { 31, 1, 2, 4, 8, 8, 8 },
  ["8"] = { 14, 17, 17, 14, 17, 17, 14 }, ["9"] = { 14, 17, 17, 15, 1, 2, 12 },
  A = { 14, 17, 17, 31, 17, 17, 17 }, B = { 30, 17, 17, 30, 17, 17, 30 },
  C = { 14, 17, 16, 16, 16, 17, 14 }, D = { 28, 18, 17, 17, 17, 18, 28 },
  E = { 31, 16, 16, 30, 16, 16, 31 }, F = { 31, 16, 16, 30, 16, 16, 16 },
  G = { 14, 17, 16, 23, 17, 17, 15 }, H = { 17, 17, 17, 31, 17, 17, 17 },
  I = { 14, 4, 4, 4, 4, 4, 14 }, J = { 7, 2, 2, 2, 2, 18, 12 },
  K = { 17, 18, 20, 24, 20, 18, 17 }, L = { 16, 16, 16, 16, 16, 16, 31 },
  M = { 17, 27, 21, 21, 17, 17, 17 }, N = { 17, 17, 25, 21, 19, 17, 17 },
  O = { 14, 17, 17, 17, 17, 17, 14 }, P = { 30, 17, 17, 30, 16, 16, 16 },
  Q = { 14, 17, 17, 17, 21, 18, 13 }, R = { 30, 17, 17, 30, 20, 18, 17 },
  S = { 15, 16, 16, 14, 1, 1, 30 }, T = { 31, 4, 4, 4, 4, 4, 4 },
  U = { 17, 17, 17, 17, 17, 17, 14 }, V = { 17, 17, 17, 17, 17, 10, 4 },
  W = { 17, 17, 17, 21, 21, 21, 10 }, X = { 17, 17, 10, 4, 10, 17, 17 },
  Y = { 17, 17, 17, 10, 4, 4, 4 }, Z = { 31, 1, 2, 4, 8, 16, 31 },
  a = { 0, 0, 14, 1, 15, 17, 15 }, b = { 16, 16, 22, 25, 17, 17, 30 },
  c = { 0, 0, 14, 16, 16, 17, 14 }, d = { 1, 1, 13, 19, 17, 17, 15 },
  e = { 0, 0, 14, 17, 31, 16, 14 }, f = { 6, 9, 8, 28, 8, 8, 8 },
  g = { 0, 15, 17, 17, 15, 1, 14 }, h = { 16, 16, 22, 25, 17, 17, 17 },
  i = { 4, 0, 12, 4, 4, 4, 14 }, j = { 2, 0, 6, 2, 2, 18, 12 },
  k = { 16, 16, 18, 20, 24, 20, 18 }, l = { 12, 4, 4, 4, 4, 4, 14 },
  m = { 0, 0, 26, 21, 21, 17, 17 }, n = { 0, 0, 22, 25, 17, 17, 17 },
  o = { 0, 0, 14, 17, 17, 17, 14 }, p = { 0, 0, 30, 17, 30, 16, 16 },
  q = { 0, 0, 13, 19, 15, 1, 1 }, r = { 0, 0, 22, 25, 16, 16, 16 },
  s = { 0, 0, 14, 16, 14, 1, 30 }, t = { 8, 8, 28, 8, 8, 9, 6 },
  u = { 0, 0, 17, 17, 17, 19, 13 }, v = { 0, 0, 17, 17, 17, 10, 4 },
  w = { 0, 0, 17, 17, 21, 21, 10 }, x = { 0, 0, 17, 10, 4, 10, 17 },
  y = { 0, 0, 17, 17, 15, 1, 14 }, z = { 0, 0, 31, 2, 4, 8, 31 },
  [" "] = { 0, 0, 0, 0, 0, 0, 0 }, ["."] = { 0, 0, 0, 0, 0, 12, 12 },
  [","] = { 0, 0, 0, 0, 12, 4, 8 }, ["-"] = { 0, 0, 0, 31, 0, 0, 0 },
  ["+"] = { 0, 4, 4, 31, 4, 4, 0 }, ["/"] = { 0, 1, 2, 4, 8, 16, 0 },
  ["("] = { 2, 4, 8, 8, 8, 4, 2 }, [")"] = { 8, 4, 2, 2, 2, 4, 8 },
  [":"] = { 0, 12, 12, 0, 12, 12, 0 }, ["%"] = { 24, 25, 2, 4, 8, 19, 3 },
  ["^"] = { 4, 10, 17, 0, 0, 0, 0 }, ["="] = { 0, 0, 31, 0, 31, 0, 0 },
  ["_"] = { 0, 0, 0, 0, 0, 0, 31 }, ["*"] = { 0, 4, 21, 14, 21, 4, 0 },
  ["|"] = { 4, 4, 4, 4, 4, 4, 4 }, ["!"] = { 4, 4, 4, 4, 4, 0, 4 },
  ["<"] = { 2, 4, 8, 16, 8, 4, 2 }, [">"] = { 8, 4, 2, 1, 2, 4, 8 },
  ["["] = { 14, 8, 8, 8, 8, 8, 14 }, ["]"] = { 14, 2, 2, 2, 2, 2, 14 },
  ["'"] = { 4, 4, 8, 0, 0, 0, 0 }, ["?"] = { 14, 17, 1, 2, 4, 0, 4 },
  ["#"] = { 10, 10, 31, 10, 31, 10, 10 },
}
M.GLYPH_W, M.GLYPH_H = 6, 8 -- advance and line height at scale 1

-- ---- Canvas -----------------------------------------------------------------------------------
local Canvas = {}
Canvas.__index = Canvas

-- A w x h canvas filled with colour bg ({r, g, b}, default white).
function M.canvas(w, h, bg)
  bg = bg or { 255, 255, 255 }
  local pix, n = {}, w * h
  local r, g, b = bg[1], bg[2], bg[3]
  for i = 0, n - 1 do
    pix[3 * i + 1], pix[3 * i + 2], pix[3 * i + 3] = r, g, b
  end
  return setmetatable({ w = w, h = h, pix = pix }, Canvas)
end

-- Sets pixel (x, y) (0-based, y down) to colour c; outside the canvas does nothing.
function Canvas:set(x, y, c)
  x, y = math.floor(x), math.floor(y)
  if x < 0 or y < 0 or x >= self.w or y >= self.h then return end
  local i = 3 * (y * self.w + x)
  local p = self.pix
  p[i + 1], p[i + 2], p[i + 3] = c[1], c[2], c[3]
end

-- Fills the rectangle [x, x+w) x [y, y+h) with colour c.
function Canvas:rect(x, y, w, h, c)
  for yy = math.floor(y), math.floor(y + h) - 1 do
    for xx = math.floor(x), math.floor(x + w) - 1 do self:set(xx, yy, c) end
  end
end

-- Draws a line from (x0, y0) to (x1, y1) of the given thickness (Bresenham, square pen).
function Canvas:line(x0, y0, x1, y1, c, thickness)
  thickness = thickness or 1
  x0, y0, x1, y1 = math.floor(x0 + 0.5), math.floor(y0 + 0.5), math.floor(x1 + 0.5), math.floor(y1 + 0.5)
  local dx, dy = math.abs(x1 - x0), -math.abs(y1 - y0)
  local sx, sy = x0 < x1 and 1 or -1, y0 < y1 and 1 or -1
  local err = dx + dy
  local half = (thickness - 1) // 2
  while true do
    if thickness == 1 then self:set(x0, y0, c) else self:rect(x0 - half, y0 - half, thickness, thickness, c) end
    if x0 == x1 and y0 == y1 then break end
    local e2 = 2 * err
    if e2 >= dy then err = err + dy; x0 = x0 + sx end
    if e2 <= dx then err = err + dx; y0 = y0 + sy end
  end
end

-- Width in pixels of text at the given scale.
function M.text_width(text, scale)
  return #text * M.GLYPH_W * (scale or 1)
end

-- Draws text with its top-left corner at (x, y); unknown characters draw as '?'.
function Canvas:text(x, y, text, c, scale)
  scale = scale or 1
  c = c or { 0, 0, 0 }
  for k = 1, #text do
    local glyph = FONT[text:sub(k, k)] or FONT["?"]
    local gx = x + (k - 1) * M.GLYPH_W * scale
    for row = 1, 7 do
      local bits = glyph[row]
      if bits ~= 0 then
        for col = 0, 4 do
          if bits & (16 >> col) ~= 0 then
            if scale == 1 then self:set(gx + col, y + row - 1, c)
            else self:rect(gx + col * scale, y + (row - 1) * scale, scale, scale, c) end
          end
        end
      end
    end
  end
end

-- Copies an image (a uint8 host array {h, w} gray or {h, w, 3} RGB) with its top-left at (x, y).
function Canvas:image(img, x, y)
  local shape = img.shape
  local h, w, ch = shape[1], shape[2], shape[3] or 1
  local flat = img:reshape(img.size):totable()
  for r = 0, h - 1 do
    for col = 0, w - 1 do
      local i = (r * w + col) * ch
      if ch == 1 then
        local v = flat[i + 1]
        self:set(x + col, y + r, { v, v, v })
      else
        self:set(x + col, y + r, { flat[i + 1], flat[i + 2], flat[i + 3] })
      end
    end
  end
end

-- The canvas as a uint8 {h, w, 3} host array.
function Canvas:to_array()
  return array.from(self.pix, "uint8"):reshape({ self.h, self.w, 3 })
end

-- Writes the canvas as a PNG file. In a notebook (kiln's Jupyter kernel defines the global
-- display) the picture is shown inline as well, so the labs' plots appear where they run.
function Canvas:save(path)
  local image = self:to_array()
  array.save_image(path, image)
  if rawget(_G, "display") then display(image) end
end

-- Shows the canvas: inline in a notebook, else as array.show does in a terminal.
function Canvas:show()
  array.show(self:to_array())
end

-- ---- Colours ----------------------------------------------------------------------------------
M.palette = {
  { 31, 119, 180 }, { 214, 39, 40 }, { 44, 160, 44 }, { 255, 127, 14 }, { 148, 103, 189 },
  { 140, 86, 75 }, { 227, 119, 194 }, { 23, 190, 207 },
}

local STOPS = { -- an "inferno"-like ramp: black, purple, red, orange, pale yellow
  { 0.0, 0, 0, 4 }, { 0.25, 87, 16, 110 }, { 0.5, 188, 55, 84 }, { 0.75, 249, 142, 9 },
  { 1.0, 252, 255, 164 },
}
-- The colour {r, g, b} of t in [0, 1] on the ramp.
function M.colormap(t)
  if t ~= t or t <= 0 then return { STOPS[1][2], STOPS[1][3], STOPS[1][4] } end
  if t >= 1 then local s = STOPS[#STOPS]; return { s[2], s[3], s[4] } end
  for k = 2, #STOPS do
    local a, b = STOPS[k - 1], STOPS[k]
    if t <= b[1] then
      local u = (t - a[1]) / (b[1] - a[1])
      return {
        math.floor(a[2] + u * (b[2] - a[2]) + 0.5), math.floor(a[3] + u * (b[3] - a[3]) + 0.5),
        math.floor(a[4] + u * (b[4] - a[4]) + 0.5),
      }
    end
  end
end

-- ---- Axes -------------------------------------------------------------------------------------
local GRID, AXIS = { 225, 225, 225 }, { 0, 0, 0 }

-- A tick label for value v: powers of ten as 1e-3, others with 3 significant digits.
local function tick_text(v, log)
  if log then
    local e = math.floor(math.log(v, 10) + 0.5)
    if e >= 0 and e <= 3 then return tostring(math.floor(10 ^ e + 0.5)) end
    return "1e" .. e
  end
  if v == math.floor(v) and math.abs(v) < 1e7 then return ("%d"):format(v) end
  return ("%.3g"):format(v)
end

-- Linear ticks: about n round values covering [lo, hi].
local function linear_ticks(lo, hi, n)
  local span = hi - lo
  if span <= 0 then return { lo } end
  local step = 10 ^ math.floor(math.log(span / n, 10))
  for _, m in ipairs({ 1, 2, 5, 10 }) do
    if span / (step * m) <= n then step = step * m; break end
  end
  local ticks = {}
  for v = math.ceil(lo / step) * step, hi + step * 1e-9, step do ticks[#ticks + 1] = v end
  return ticks
end

-- An axis mapping: range, transform, ticks. log axes use whole decades.
local function axis(values, log, pad_decades)
  local lo, hi = math.huge, -math.huge
  for _, v in ipairs(values) do
    if (not log or v > 0) and v == v then
      if v < lo then lo = v end
      if v > hi then hi = v end
    end
  end
  if lo == math.huge then lo, hi = 1, 10 end
  local ax = { log = log }
  if log then
    local l0, l1 = math.log(lo, 10), math.log(hi, 10)
    if pad_decades then l0, l1 = math.floor(l0), math.ceil(l1) end
    if l1 - l0 < 1e-9 then l0, l1 = l0 - 0.5, l1 + 0.5 end
    ax.lo, ax.hi = l0, l1
    ax.f = function(v) return math.log(v, 10) end
    ax.ticks = {}
    for e = math.ceil(l0 - 1e-9), math.floor(l1 + 1e-9) do ax.ticks[#ax.ticks + 1] = 10 ^ e end
  else
    if not pad_decades then lo = math.min(lo, 0) end
    if hi - lo < 1e-12 then hi = lo + 1 end
    ax.ticks = linear_ticks(lo, hi, 6)
    local last = ax.ticks[#ax.ticks]
    if last < hi and #ax.ticks >= 2 then -- round the top up to the next tick
      last = last + (ax.ticks[2] - ax.ticks[1])
      ax.ticks[#ax.ticks + 1] = last
    end
    ax.lo, ax.hi = lo, math.max(hi, last)
    ax.f = function(v) return v end
  end
  return ax
end

-- Draws the frame, grid, ticks, title and axis labels; returns the data -> pixel mappers.
local function frame(cv, box, xa, ya, spec)
  local x0, y0, x1, y1 = box.x0, box.y0, box.x1, box.y1
  local function px(v) return x0 + (xa.f(v) - xa.lo) / (xa.hi - xa.lo) * (x1 - x0) end
  local function py(v) return y1 - (ya.f(v) - ya.lo) / (ya.hi - ya.lo) * (y1 - y0) end
  for _, t in ipairs(ya.ticks) do
    local y = py(t)
    cv:line(x0, y, x1, y, GRID)
    local s = spec.ytick and spec.ytick(t) or tick_text(t, ya.log)
    cv:text(x0 - 6 - M.text_width(s), y - 3, s, AXIS)
    cv:line(x0 - 4, y, x0, y, AXIS)
  end
  for _, t in ipairs(spec.xticks or xa.ticks) do
    local x = px(t)
    if x >= x0 - 0.5 and x <= x1 + 0.5 then
      cv:line(x, y0, x, y1, GRID)
      local s = spec.xtick and spec.xtick(t) or tick_text(t, xa.log)
      cv:text(x - M.text_width(s) / 2, y1 + 8, s, AXIS)
      cv:line(x, y1, x, y1 + 4, AXIS)
    end
  end
  cv:line(x0, y0, x0, y1, AXIS)
  cv:line(x0, y1, x1, y1, AXIS)
  if spec.title then cv:text((x0 + x1 - M.text_width(spec.title, 2)) / 2, 10, spec.title, AXIS, 2) end
  if spec.xlabel then cv:text((x0 + x1 - M.text_width(spec.xlabel)) / 2, y1 + 24, spec.xlabel, AXIS) end
  if spec.ylabel then cv:text(8, y0 - 16, spec.ylabel, AXIS) end
  return px, py
end

-- A line plot. spec: title, xlabel, ylabel, logx, logy (default true: log-log), width, height,
-- series = { {name=, x={...}, y={...}}, ... } (points with y <= 0 are skipped on a log axis),
-- optional xticks (a list of values) and xtick/ytick (value -> label). Returns a canvas.
function M.line_plot(spec)
  local w, h = spec.width or 800, spec.height or 500
  local logx, logy = spec.logx ~= false, spec.logy ~= false
  local cv = M.canvas(w, h)
  local xs, ys = {}, {}
  for _, s in ipairs(spec.series) do
    for i = 1, #s.x do xs[#xs + 1] = s.x[i]; ys[#ys + 1] = s.y[i] end
  end
  local xa, ya = axis(xs, logx, false), axis(ys, logy, true)
  local legend_w = 0
  for _, s in ipairs(spec.series) do legend_w = math.max(legend_w, M.text_width(s.name) + 30) end
  local box = { x0 = 70, y0 = 50, x1 = w - legend_w - 20, y1 = h - 50 }
  local px, py = frame(cv, box, xa, ya, spec)
  for k, s in ipairs(spec.series) do
    local c = s.color or M.palette[(k - 1) % #M.palette + 1]
    local prev
    for i = 1, #s.x do
      local ok = (not logx or s.x[i] > 0) and (not logy or s.y[i] > 0) and s.y[i] == s.y[i]
      if ok then
        local p = { px(s.x[i]), py(s.y[i]) }
        if prev then cv:line(prev[1], prev[2], p[1], p[2], c, 2) end
        cv:rect(p[1] - 2, p[2] - 2, 5, 5, c)
        prev = p
      else
        prev = nil
      end
    end
    local ly = box.y0 + (k - 1) * 14
    cv:rect(box.x1 + 12, ly + 2, 14, 3, c)
    cv:text(box.x1 + 30, ly, s.name, AXIS)
  end
  return cv
end

-- A bar chart of values (a Lua list, bar k at x = k - 1 + first). spec: title, xlabel, ylabel,
-- first (default 0), color, width, height. Returns a canvas.
function M.bar_chart(values, spec)
  spec = spec or {}
  local n = #values
  local bar = math.max(1, math.floor((spec.width or 900) - 110) // n)
  local w, h = 110 + bar * n, spec.height or 420
  local cv = M.canvas(w, h)
  local first = spec.first or 0
  local xa = { log = false, lo = first - 0.5, hi = first + n - 0.5, f = function(v) return v end,
               ticks = linear_ticks(first, first + n - 1, 8) }
  local ya = axis(values, false, false)
  local box = { x0 = 80, y0 = 50, x1 = 80 + bar * n, y1 = h - 50 }
  local _, py = frame(cv, box, xa, ya, spec)
  local c = spec.color or M.palette[1]
  for k = 1, n do
    local top = py(values[k])
    local x = box.x0 + (k - 1) * bar
    cv:rect(x, top, math.max(1, bar - (bar > 2 and 1 or 0)), box.y1 - top, c)
  end
  return cv
end

return M
