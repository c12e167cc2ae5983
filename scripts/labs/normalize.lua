-- Lab: vector normalisation y = x / |x| with shared memory (the seed's exercise): one block,
-- each thread owns a strided part of the vector, a shared-memory tree reduction gives the norm,
-- and each thread scales its part. Validated against Lua: max |y - ref| <= 1e-12 (float64) or
-- 1e-6 (float32), relative to max |ref|.
-- Usage: kiln scripts/labs/normalize.lua [--size N] [--dtype float64|float32] [--reps R] [--full]
local here = arg and arg[0] and arg[0]:match("^(.*)/[^/]*$") or "."
package.path = here .. "/../lib/?.lua;" .. package.path
local labs = require "labs"

local opts = labs.args(arg, { size = 100000, dtype = "float64" }, { size = 1 << 24 }, {
  usage = "kiln scripts/labs/normalize.lua [--size N] [--dtype float64|float32] [--reps R] [--full]\n"
       .. "  --size N: the vector's length (default 100000, --full 2^24)",
  options = { size = "count", dtype = { "float64", "float32" } },
})
labs.header("normalize", "vector normalisation, one block, shared-memory reduction")
local n, TPB = opts.size, 256
local k = cuda.jit_file("normalize.cu", { defines = { TPB = TPB } })
local x = array.random.uniform(n, { low = -1, high = 1, dtype = opts.dtype, seed = 21 })
local dx = cuda.to_device(x)
local dy = cuda.device_array_like(dx)
local ms = labs.time_device(function() k[{ 1, TPB }](dx, dy) end, opts.reps)
local y = dy:copy_to_host():totable()

local xs = x:totable()
local norm = 0.0
for i = 1, n do norm = norm + xs[i] * xs[i] end
norm = math.sqrt(norm)
local worst, biggest, sumsq = 0, 0, 0.0
for i = 1, n do
  local ref = xs[i] / norm
  worst = math.max(worst, math.abs(y[i] - ref))
  biggest = math.max(biggest, math.abs(ref))
  sumsq = sumsq + y[i] * y[i]
end
local rtol = opts.dtype == "float64" and 1e-12 or 1e-6
labs.line("size", ("%d %s, 1 block x %d threads"):format(n, opts.dtype, TPB))
labs.line("time per launch", labs.fmt_ms(ms))
labs.line("bandwidth", labs.fmt_gbs(3 * n * labs.dtype_bytes(opts.dtype), ms) .. " (x read twice, y written)")
labs.line("|x|, |y|^2", ("%.9g, %.12f"):format(norm, sumsq))
labs.verdict("normalize", worst <= rtol * biggest,
  ("max |y - ref| = %.3g, tolerance %.0e * max|ref| = %.3g"):format(worst, rtol, rtol * biggest))
