-- Lab: sum reduction, the seed 004 notebook. First one size checked three ways (cuda.reduce,
-- a hand-written shared-memory + warp-shuffle kernel, and the host), then the benchmark: host
-- sum against the device for N = 2^12 .. 2^20 (2^27 with --full), with the data copied to the
-- device on every call (a host array passed to the reducer) and with the data already there.
-- The lesson: copies dominate; data resident on the device wins at large N.
-- Usage: kiln scripts/labs/reduce.lua [--size N] [--min-exp E] [--max-exp E] [--reps R] [--out DIR] [--full]
local here = arg and arg[0] and arg[0]:match("^(.*)/[^/]*$") or "."
package.path = here .. "/../lib/?.lua;" .. package.path
local labs = require "labs"
local sweep = require "sweep"

local opts = labs.args(arg, { size = 1 << 20, ["min-exp"] = 12, ["max-exp"] = 20 }, { ["max-exp"] = 27 }, {
  usage = "kiln scripts/labs/reduce.lua [--size N] [--min-exp E] [--max-exp E] [--reps R] [--out DIR] [--full]\n"
       .. "  --size N: the checked run (default 2^20); the sweep: N = 2^min-exp .. 2^max-exp (12 .. 20,\n"
       .. "  --full 27)",
  options = { size = "count", ["min-exp"] = "count", ["max-exp"] = "count" },
})
labs.header("reduce", "sum reduction: cuda.reduce and a hand-written kernel")
local TPB = 256
local sum_reduce = cuda.reduce("a + b")
local k = cuda.jit_file("reduce.cu", { defines = { TPB = TPB } })

-- The hand-written reduction: pass 1 leaves one partial sum per block, pass 2 adds them.
local hand_sum = labs.two_pass(k, TPB)

-- The blank run the seed recommends: compile on tiny data first.
local blank = sum_reduce(array.from({ 1, 2, 3, 4, 5, 6, 7, 8, 9 }, "float32"))
labs.verdict("reduce (blank run)", blank == 45, ("sum of 1..9 = %g"):format(blank))

-- One size, checked against the host in double precision.
local n = opts.size
local a = array.random.normal(n, { loc = 0, scale = 10, dtype = "float32", seed = 3 })
local ref, ref_abs = 0.0, 0.0
for _, v in ipairs(a:totable()) do ref = ref + v; ref_abs = ref_abs + math.abs(v) end
local d = cuda.to_device(a)
local got_reduce, got_hand = sum_reduce(d), hand_sum(d)
local tol = 1e-5 * ref_abs
labs.line("size", ("%d float32 values, normal(0, 10)"):format(n))
labs.line("reference (Lua, f64)", ("%.6f"):format(ref))
labs.line("cuda.reduce", ("%.6f"):format(got_reduce))
labs.line("hand kernel", ("%.6f"):format(got_hand))
labs.verdict("reduce", math.abs(got_reduce - ref) <= tol and math.abs(got_hand - ref) <= tol,
  ("errors %.3g (cuda.reduce) and %.3g (hand kernel), tolerance 1e-5 * sum|x| = %.3g"):format(
    math.abs(got_reduce - ref), math.abs(got_hand - ref), tol))
d:free()

-- The same on integers, where every sum is exact: a dropped or doubled element shows (a
-- tolerance for rounding could hide one). The reference is Lua's own integer sum.
local ints = array.random.integers(-100, 101, n, { dtype = "int32", seed = 4 })
local exact = 0
for _, v in ipairs(ints:totable()) do exact = exact + v end
local di = cuda.to_device(ints)
local int_reduce, int_hand = sum_reduce(di), hand_sum(di)
labs.verdict("reduce (int32, exact)", int_reduce == exact and int_hand == exact,
  ("reference %d, cuda.reduce %d, hand kernel %d"):format(exact, int_reduce, int_hand))
di:free()

-- The benchmark sweep.
print(("  sweep N = 2^%d .. 2^%d, median of %d calls each:"):format(opts["min-exp"], opts["max-exp"], opts.reps))
local rows, bad = {}, 0
for _, N in ipairs(sweep.sizes(opts["min-exp"], opts["max-exp"])) do
  local A = array.random.normal(N, { loc = 0, scale = 10, dtype = "float32", seed = N })
  local host_sum
  local row = { N = N }
  row.host = labs.time_host(function() host_sum = A:sum() end, opts.reps)
  row.copy = labs.time_device(function() sum_reduce(A) end, opts.reps)
  local dA = cuda.to_device(A)
  row.resident = labs.time_device(function() sum_reduce(dA) end, opts.reps)
  row.hand = labs.time_device(function() hand_sum(dA) end, opts.reps)
  -- E|x| = 10 * sqrt(2/pi) ~ 7.98 for normal(0, 10): the same tolerance as above, in expectation.
  local t = 1e-5 * 8 * N
  if math.abs(sum_reduce(dA) - host_sum) > t or math.abs(hand_sum(dA) - host_sum) > t then bad = bad + 1 end
  rows[#rows + 1] = row
  dA:free()
  A = nil
  collectgarbage()
end
sweep.report(opts, "reduce_sweep", "Sum reduction: host vs device", {
  { key = "host", name = "host (array:sum)" },
  { key = "copy", name = "cuda.reduce, copy each call" },
  { key = "resident", name = "cuda.reduce, data on device" },
  { key = "hand", name = "hand kernel, data on device" },
}, rows)
labs.verdict("reduce sweep", bad == 0, ("%d of %d sizes disagree with the host sum"):format(bad, #rows))
