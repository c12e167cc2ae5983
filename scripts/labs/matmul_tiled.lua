-- Lab: matrix multiply with shared-memory tiles (TPB = 16), the seed's cuda_fast_matmul, fixed
-- for sizes that are not multiples of the tile. Runs the naive kernel too, for the speedup.
-- Validated in float32 against a Lua double-precision reference: |c - ref| <= 1e-4 * sum|a*b|.
-- Usage: kiln scripts/labs/matmul_tiled.lua [--m M --k K --n N | --size S] [--reps R] [--full]
local here = arg and arg[0] and arg[0]:match("^(.*)/[^/]*$") or "."
package.path = here .. "/../lib/?.lua;" .. package.path
local labs = require "labs"
local matref = require "matref"

local opts = labs.args(arg, { m = 200, k = 150, n = 180 }, { size = 1000 })
labs.usage(opts, "kiln scripts/labs/matmul_tiled.lua [--m M --k K --n N | --size S] [--reps R] [--full]")
labs.header("matmul_tiled", "matrix multiply, shared-memory tiles of 16 x 16")
local m, kdim, n = opts.m, opts.k, opts.n
if opts.size then m, kdim, n = opts.size, opts.size, opts.size end
local TPB = 16
local naive = cuda.jit_file("matmul.cu")
local tiled = cuda.jit_file("matmul_tiled.cu", { defines = { TPB = TPB } })

local a = array.random.normal({ m, kdim }, { loc = 0, scale = 10, dtype = "float32", seed = 11 })
local b = array.random.normal({ kdim, n }, { loc = 0, scale = 10, dtype = "float32", seed = 12 })
local da, db = cuda.to_device(a), cuda.to_device(b)
local dc, dc_naive = cuda.device_array({ m, n }, "float32"), cuda.device_array({ m, n }, "float32")
local grid = { labs.blocks(n, TPB), labs.blocks(m, TPB) }
local ms_naive = labs.time_device(function() naive[{ grid, { TPB, TPB } }](da, db, dc_naive) end, opts.reps)
local ms = labs.time_device(function() tiled[{ grid, { TPB, TPB } }](da, db, dc) end, opts.reps)
local c = dc:copy_to_host()
local bad, checked, worst = matref.check(a, b, c, 1e-4)
local flops = 2 * m * n * kdim
labs.line("size", ("(%d x %d) * (%d x %d), float32, tiles of %d x %d"):format(m, kdim, kdim, n, TPB, TPB))
labs.line("naive", labs.fmt_ms(ms_naive) .. " per launch, " .. labs.fmt_gflops(flops, ms_naive))
labs.line("tiled", labs.fmt_ms(ms) .. " per launch, " .. labs.fmt_gflops(flops, ms))
labs.line("speedup over naive", ("%.2fx"):format(ms_naive / ms))
labs.line("max |tiled - naive|", ("%.3g"):format(array.max_abs_diff(c, dc_naive:copy_to_host())))
labs.verdict("matmul_tiled", bad == 0, ("%d of %d checked elements outside 1e-4 * sum|a*b|; worst %.2g"):format(bad, checked, worst))
