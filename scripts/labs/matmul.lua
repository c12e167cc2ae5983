-- Lab: matrix multiply C = A * B, naive (one thread per element of C, every operand read from
-- global memory), the seed 002/004 exercise. Sizes need not be multiples of the block size.
-- Validated in float32 against a Lua double-precision reference: |c - ref| <= 1e-4 * sum|a*b|.
-- Usage: kiln scripts/labs/matmul.lua [M [N [K]]] [--m M] [--n N] [--k K] [--size S] [--reps R] [--full]
--   C (M x N) = A (M x K) * B (K x N); defaults M 200, N 180, K 150; --size S sets all three
--   (--full: 1000); a size given on its own, positionally or as --m, --n, --k, wins over both.
local here = arg and arg[0] and arg[0]:match("^(.*)/[^/]*$") or "."
package.path = here .. "/../lib/?.lua;" .. package.path
local labs = require "labs"
local matref = require "matref"

local opts = labs.args(arg, {}, { size = 1000 }, {
  usage = "kiln scripts/labs/matmul.lua [M [N [K]]] [--m M] [--n N] [--k K] [--size S] [--reps R] [--full]\n"
       .. "  C (M x N) = A (M x K) * B (K x N); defaults M 200, N 180, K 150; --size S sets all\n"
       .. "  three (--full: 1000); a size given on its own, positionally or as --m, --n, --k, wins",
  options = { m = "count", n = "count", k = "count", size = "count" },
  positional = { "m", "n", "k" },
})
labs.header("matmul", "matrix multiply, naive")
-- A size given on its own wins over --size (and --full), which wins over the defaults.
local m, kdim, n = opts.m or opts.size or 200, opts.k or opts.size or 150, opts.n or opts.size or 180
local kern = cuda.jit_file("matmul.cu")

local a = array.random.normal({ m, kdim }, { loc = 0, scale = 10, dtype = "float32", seed = 11 })
local b = array.random.normal({ kdim, n }, { loc = 0, scale = 10, dtype = "float32", seed = 12 })
local da, db = cuda.to_device(a), cuda.to_device(b)
local dc = cuda.device_array({ m, n }, "float32")
local grid = { labs.blocks(n, 16), labs.blocks(m, 16) }
local ms = labs.time_device(function() kern[{ grid, { 16, 16 } }](da, db, dc) end, opts.reps)
local c = dc:copy_to_host()
local bad, checked, worst = matref.check(a, b, c, 1e-4)
labs.line("size", ("(%d x %d) * (%d x %d), float32, blocks of 16 x 16"):format(m, kdim, kdim, n))
labs.line("time per launch", labs.fmt_ms(ms))
labs.line("throughput", labs.fmt_gflops(2 * m * n * kdim, ms))
labs.verdict("matmul", bad == 0, ("%d of %d checked elements outside 1e-4 * sum|a*b|; worst %.2g"):format(bad, checked, worst))
