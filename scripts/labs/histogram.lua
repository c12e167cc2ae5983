-- Lab: 256-bin histogram of random uint8 values with per-block shared bins, shared-memory
-- atomics and a grid-stride loop; checked exactly against a CPU count (numpy's bincount in the
-- seed) and drawn as a bar chart.
-- Usage: kiln scripts/labs/histogram.lua [--size N] [--blocks B] [--out DIR] [--reps R] [--full]
local here = arg and arg[0] and arg[0]:match("^(.*)/[^/]*$") or "."
package.path = here .. "/../lib/?.lua;" .. package.path
local labs = require "labs"
local plot = require "plot"

local opts = labs.args(arg, { size = 1000000 }, { size = 10000000 }, {
  usage = "kiln scripts/labs/histogram.lua [--size N] [--blocks B] [--out DIR] [--reps R] [--full]\n"
       .. "  --size N: values counted (default 10^6, --full 10^7); --blocks B: the grid (default a\n"
       .. "  few blocks per multiprocessor; a grid-stride loop covers the rest)",
  options = { size = "count", blocks = "count" },
})
labs.header("histogram", "256-bin histogram, shared bins + atomics + grid-stride loop")
local n, tpb = opts.size, 256
local dev = cuda.get_current_device()
-- A few blocks per multiprocessor: the grid-stride loop, not the grid, covers the data.
local blocks = opts.blocks or math.min(labs.blocks(n, tpb), 4 * (dev.multiprocessors or 8))
local k = cuda.jit_file("histogram.cu", { defines = { BINS = 256 } })

local values = array.random.integers(0, 256, n, { dtype = "uint8", seed = 7 })
local d_values = cuda.to_device(values)
local scratch = cuda.to_device(array.zeros(256, "uint32")) -- timing runs accumulate here
local ms = labs.time_device(function() k[{ blocks, tpb }](d_values, scratch) end, opts.reps)
local d_bins = cuda.to_device(array.zeros(256, "uint32"))
k[{ blocks, tpb }](d_values, d_bins)
local bins = d_bins:copy_to_host():totable()

-- The reference: count on the CPU (np.bincount).
local ref = {}
for b = 1, 256 do ref[b] = 0 end
for _, v in ipairs(values:totable()) do ref[v + 1] = ref[v + 1] + 1 end
local differ, total = 0, 0
for b = 1, 256 do
  if bins[b] ~= ref[b] then differ = differ + 1 end
  total = total + bins[b]
end

local png = not opts["no-pictures"] and labs.out_path(opts, "histogram.png")
if png then
  plot.bar_chart(bins, { title = ("Histogram of %d random uint8 values"):format(n),
                         xlabel = "bin (value)", ylabel = "count", width = 900 }):save(png)
end
local lo, hi = math.huge, 0
for b = 1, 256 do lo, hi = math.min(lo, bins[b]), math.max(hi, bins[b]) end
labs.line("size", ("%d uint8 values, %d blocks x %d threads"):format(n, blocks, tpb))
labs.line("time per launch", labs.fmt_ms(ms))
labs.line("bandwidth", labs.fmt_gbs(n, ms) .. " (values read)")
labs.line("bins", ("min %d, max %d, expected %.0f each"):format(lo, hi, n / 256))
labs.line("picture", png or "(skipped)")
labs.verdict("histogram", differ == 0 and total == n,
  ("%d of 256 bins differ from the CPU count; %d values counted of %d"):format(differ, total, n))
