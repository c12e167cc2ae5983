-- Lab: matrix multiply with shared-memory tiles (TPB = 16), the seed's cuda_fast_matmul, fixed
-- for sizes that are not multiples of the tile. Runs the naive kernel too, for the speedup.
-- Validated in float32 against a Lua double-precision reference: |c - ref| <= 1e-4 * sum|a*b|.
-- Usage: kiln scripts/labs/matmul_tiled.lua [M [N [K]]] [--m M] [--n N] [--k K] [--size S] [--reps R] [--full]
--   C (M x N) = A (M x K) * B (K x N); defaults M 200, N 180, K 150; --size S sets all three
--   (--full: 1000); a size given on its own, positionally or as --m, --n, --k, wins over both.
local here = arg and arg[0] and arg[0]:match("^(.*)/[^/]*$") or "."
package.path = here .. "/../lib/?.lua;" .. package.path
local labs = require "labs"
local matref = require "matref"

local opts = labs.args(arg, {}, { size = 1000 }, {
  usage = "kiln scripts/labs/matmul_tiled.lua [M [N [K]]] [--m M] [--n N] [--k K] [--size S] [--reps R] [--full]\n"
       .. "  C (M x N) = A (M x K) * B (K x N); defaults M 200, N 180, K 150; --size S sets all\n"
       .. "  three (--full: 1000); a size given on its own, positionally or as --m, --n, --k, wins",
  options = { m = "count", n = "count", k = "count", size = "count" },
  positional = { "m", "n", "k" },
})
labs.header("matmul_tiled", "matrix multiply, shared-memory tiles of 16 x 16")
-- A size given on its own wins over --size (and --full), which wins over the defaults.
local m, kdim, n = opts.m or opts.size or 200, opts.k or opts.size or 150, opts.n or opts.size or 180
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
