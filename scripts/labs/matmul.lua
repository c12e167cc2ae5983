-- Lab: matrix multiply C = A * B, naive (one thread per element of C, every operand read from
-- global memory), the seed 002/004 exercise. Sizes need not be multiples of the block size.
-- Validated in float32 against a Lua double-precision reference: |c - ref| <= 1e-4 * sum|a*b|.
-- Usage: kiln scripts/labs/matmul.lua [--m M --k K --n N | --size S] [--reps R] [--full]
local here = arg and arg[0] and arg[0]:match("^(.*)/[^/]*$") or "."
package.path = here .. "/../lib/?.lua;" .. package.path
local labs = require "labs"
local matref = require "matref"

local opts = labs.args(arg, { m = 200, k = 150, n = 180 }, { size = 1000 })
labs.usage(opts, "kiln scripts/labs/matmul.lua [--m M --k K --n N | --size S] [--reps R] [--full]")
labs.header("matmul", "matrix multiply, naive")
local m, kdim, n = opts.m, opts.k, opts.n
if opts.size then m, kdim, n = opts.size, opts.size, opts.size end
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
