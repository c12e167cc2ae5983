-- Image helpers for the blur labs: a generated test image (kiln ships no copyrighted picture),
-- RGB to gray, an independent CPU box blur (summed-area table), and comparisons.
local M = {}

-- A gray uint8 {h, w} test image with sharp and smooth detail: a diagonal gradient, a
-- checkerboard, concentric rings, a bright disc, thin lines and deterministic noise, so a blur's
-- effect and any tiling artefact are easy to see.
function M.test_image(h, w)
  local t = {}
  local seed = 12345
  for y = 0, h - 1 do
    for x = 0, w - 1 do
      local v = 40 + 100 * (x + y) / (w + h)
      if x < w // 2 and y < h // 2 then -- checkerboard, 16-pixel squares
        if ((x // 16) + (y // 16)) % 2 == 0 then v = 230 else v = 25 end
      end
      local cx, cy = x - 0.72 * w, y - 0.3 * h
      local r = math.sqrt(cx * cx + cy * cy)
      if r < 0.22 * math.min(w, h) then v = 128 + 110 * math.sin(r * 0.45) end
      local dx, dy = x - 0.3 * w, y - 0.72 * h
      if dx * dx + dy * dy < (0.14 * math.min(w, h)) ^ 2 then v = 250 end
      if x % 64 == 3 or y % 64 == 3 then v = 0 end -- 1-pixel lines
      seed = (seed * 1103515245 + 12345) % 2147483648
      v = v + (seed % 41) - 20
      t[#t + 1] = math.max(0, math.min(255, math.floor(v)))
    end
  end
  return array.from(t, "uint8"):reshape({ h, w })
end

-- A uint8 {h, w} gray image from a {h, w} or {h, w, c} uint8 image (Rec. 601 luma).
function M.to_gray(img)
  if img.ndim == 2 then return img end
  local h, w, c = img.shape[1], img.shape[2], img.shape[3]
  local src = img:reshape(img.size):totable()
  local t = {}
  for i = 0, h * w - 1 do
    local r = src[i * c + 1]
    local g, b = r, r
    if c >= 3 then g, b = src[i * c + 2], src[i * c + 3] end
    t[i + 1] = math.floor(0.299 * r + 0.587 * g + 0.114 * b + 0.5)
  end
  return array.from(t, "uint8"):reshape({ h, w })
end

-- The box blur of a {h, w} image with the given radius, computed on the CPU differently from
-- the kernels: a summed-area table gives each clipped window's sum in four lookups. Integer
-- images get the floor of the average (C++ integer division of non-negative values); float
-- images the quotient. Returns a flat Lua table (row-major).
function M.box_blur_reference(img, radius, integer)
  local h, w = img.shape[1], img.shape[2]
  local src = img:reshape(img.size):totable()
  local sat = {} -- sat[(y+1)*(w+1) + (x+1)] = sum of src over [0, y] x [0, x]; row/col 0 are 0
  local W = w + 1
  for x = 0, w do sat[x] = 0 end
  for y = 1, h do
    sat[y * W] = 0
    local row = 0
    for x = 1, w do
      row = row + src[(y - 1) * w + x]
      sat[y * W + x] = sat[(y - 1) * W + x] + row
    end
  end
  local out = {}
  for y = 0, h - 1 do
    local y0, y1 = math.max(0, y - radius), math.min(h - 1, y + radius)
    for x = 0, w - 1 do
      local x0, x1 = math.max(0, x - radius), math.min(w - 1, x + radius)
      local s = sat[(y1 + 1) * W + x1 + 1] - sat[y0 * W + x1 + 1] - sat[(y1 + 1) * W + x0] + sat[y0 * W + x0]
      local count = (y1 - y0 + 1) * (x1 - x0 + 1)
      out[y * w + x + 1] = integer and s // count or s / count
    end
  end
  return out
end

-- How many elements of two flat tables differ (exactly), and the largest absolute difference.
function M.count_differences(a, b)
  local n, worst = 0, 0
  for i = 1, #a do
    local d = math.abs(a[i] - b[i])
    if d ~= 0 then n = n + 1 end
    if d > worst then worst = d end
  end
  return n, worst
end

-- The blur labs' command line and input: opts, and the image to blur (IMAGE read as gray, or a
-- generated H x W test image, both sides --size: 512, 1024 with --full). A path that does not
-- load, or sizes given with one, is a usage error before anything runs. script names the lab.
function M.blur_input(labs, argv, script)
  local opts = labs.args(argv, {}, {}, {
    usage = "kiln scripts/labs/" .. script .. " [IMAGE] [--size N] [--height H] [--width W] [--out DIR] [--reps R] [--full]\n"
         .. "  IMAGE: a PNG or JPEG (blurred as gray); else a generated H x W image, both sides --size\n"
         .. "  (default 512, --full 1024)",
    options = { size = "count", height = "count", width = "count" },
    positional = { "image" },
  })
  if opts.image and (opts.size or opts.height or opts.width) then
    labs.usage_error("--size, --height and --width are for the generated image; " .. opts.image .. " has its own size")
  end
  if opts.image then
    local ok, loaded = pcall(array.load_image, opts.image)
    if not ok then labs.usage_error(tostring(loaded)) end
    return opts, M.to_gray(loaded)
  end
  local size = opts.size or (opts.full and 1024 or 512)
  return opts, M.test_image(opts.height or size, opts.width or size)
end

return M
