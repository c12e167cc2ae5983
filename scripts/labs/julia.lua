-- Lab: the Julia set z -> z^2 + c on a 2-D grid of threads (kiln::grid<2>, Numba's
-- cuda.grid(2)), written as a colour-mapped PNG. Validated against a Lua reference iteration
-- (chaotic points on the set's boundary may escape one step earlier or later when the rounding
-- differs, e.g. fused multiply-add on a GPU, so a small fraction of pixels may differ).
-- Usage: kiln scripts/labs/julia.lua [--size WIDTH] [--dtype float64|float32] [--max-iter N] [--re X] [--im Y]
--                                     [--out DIR] [--reps R] [--full]
local here = arg and arg[0] and arg[0]:match("^(.*)/[^/]*$") or "."
package.path = here .. "/../lib/?.lua;" .. package.path
local labs = require "labs"
local plot = require "plot"

local opts = labs.args(arg, { size = 512, dtype = "float64", ["max-iter"] = 256,
                              re = -0.8, im = 0.156 }, { size = 1536 }, {
  usage = "kiln scripts/labs/julia.lua [--size WIDTH] [--dtype float64|float32] [--max-iter N] [--re X] [--im Y] [--out DIR] [--reps R] [--full]\n"
       .. "  WIDTH x 3/4 WIDTH pixels (default 512, --full 1536); c = X + Yi (default -0.8 + 0.156i)",
  options = { size = "count", dtype = { "float64", "float32" }, ["max-iter"] = "count" },
})
labs.header("julia", "Julia set on a 2-D grid")
local w = opts.size
local h = w * 3 // 4
local max_iter = opts["max-iter"]
local x_min, x_max, y_min, y_max = -1.6, 1.6, -1.2, 1.2
local k = cuda.jit_file("julia.cu", { defines = { MAX_ITER = max_iter } })

local d = cuda.device_array({ h, w }, opts.dtype)
local tpb = 16
local grid = { labs.blocks(w, tpb), labs.blocks(h, tpb) }
local function launch() k[{ grid, { tpb, tpb } }](d, opts.re, opts.im, x_min, x_max, y_min, y_max) end
local ms = labs.time_device(launch, opts.reps)
local iters = d:copy_to_host():reshape(h * w):totable()

-- The reference: the same iteration in Lua's doubles.
local dx, dy = (x_max - x_min) / w, (y_max - y_min) / h
local cr, ci = opts.re, opts.im
local differ, total_iters = 0, 0
for row = 0, h - 1 do
  for col = 0, w - 1 do
    local zr, zi = x_min + col * dx, y_min + row * dy
    local n = 0
    while n < max_iter and zr * zr + zi * zi <= 4 do
      zr, zi = zr * zr - zi * zi + cr, 2 * zr * zi + ci
      n = n + 1
    end
    local got = iters[row * w + col + 1]
    total_iters = total_iters + got
    if got ~= n then differ = differ + 1 end
  end
end

-- The picture: escape speed through the colour map; points that never escape are black.
local cv = plot.canvas(w, h)
for row = 0, h - 1 do
  for col = 0, w - 1 do
    local n = iters[row * w + col + 1]
    local c = n >= max_iter and { 0, 0, 0 } or plot.colormap(math.sqrt(n / max_iter))
    cv:set(col, row, c)
  end
end
local png = not opts["no-pictures"] and labs.out_path(opts, "julia.png")
if png then cv:save(png) end

labs.line("size", ("%d x %d pixels, %s, c = %g%+gi, MAX_ITER %d"):format(w, h, opts.dtype, cr, ci, max_iter))
labs.line("time per launch", labs.fmt_ms(ms))
labs.line("throughput", labs.fmt_gflops(7 * total_iters, ms) .. (" (%.3g iterations, ~7 flops each)"):format(total_iters))
labs.line("picture", png or "(skipped)")
local allowed = opts.dtype == "float64" and 0.001 or 0.03
labs.verdict("julia", differ <= allowed * w * h,
  ("%d of %d pixels differ from the Lua reference; allowed %.1f%% for %s"):format(differ, w * h, 100 * allowed, opts.dtype))
