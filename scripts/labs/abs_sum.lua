-- Lab: the seed's abs-sum reduction sum_i |x_i|, three ways: a serial host loop (Lua), the
-- hand-written kernel (abs_sum.cu) and cuda.reduce; then the seed's benchmark over
-- N = 2^12 .. 2^20 (2^27 with --full). A lesson on the way: the seed's reduce expression
-- "b < 0 ? a - b : a + b" is not a valid reduction operator. A tree reduction (Numba's and
-- kiln's alike) starts each thread's partial sum from a raw element, which the expression never
-- negates, so negative "first" elements are added as they are. The operator must treat both
-- sides alike: "|a| + |b|" (partial sums are non-negative, so |partial| = partial).
-- On the cpu backend the "device" runs on every host core: it is the seed's parallel-CPU
-- column (numba prange); run the lab with KILN_BACKEND=cuda for the GPU column.
-- Usage: kiln scripts/labs/abs_sum.lua [--size N] [--min-exp E] [--max-exp E] [--max-serial-exp E] [--reps R] [--out DIR] [--full]
local here = arg and arg[0] and arg[0]:match("^(.*)/[^/]*$") or "."
package.path = here .. "/../lib/?.lua;" .. package.path
local labs = require "labs"
local sweep = require "sweep"

local opts = labs.args(arg, { size = 1 << 20, ["min-exp"] = 12, ["max-exp"] = 20, ["max-serial-exp"] = 22 },
                       { ["max-exp"] = 27, ["max-serial-exp"] = 24 }, {
  usage = "kiln scripts/labs/abs_sum.lua [--size N] [--min-exp E] [--max-exp E] [--max-serial-exp E] [--reps R] [--out DIR] [--full]\n"
       .. "  --size N: the checked run (default 2^20); the sweep: N = 2^min-exp .. 2^max-exp (12 .. 20,\n"
       .. "  --full 27), the serial host loop up to 2^max-serial-exp (22, --full 24)",
  options = { size = "count", ["min-exp"] = "count", ["max-exp"] = "count", ["max-serial-exp"] = "int" },
})
labs.header("abs_sum", "abs-sum reduction: host loop, hand kernel, cuda.reduce")
local TPB = 256
local seed_reduce = cuda.reduce("b < 0 ? a - b : a + b")
local abs_reduce = cuda.reduce("(a < 0 ? -a : a) + (b < 0 ? -b : b)")
local k = cuda.jit_file("abs_sum.cu", { defines = { TPB = TPB } })

-- Pass 2 folds the partials with the same kernel: they are >= 0, so |p| = p.
local hand_abs_sum = labs.two_pass(k, TPB)

-- The serial host loop: what numpy_reduce / an unparallelised loop does.
local function serial_abs_sum(values)
  local s = 0.0
  for i = 1, #values do
    local v = values[i]
    if v < 0 then s = s - v else s = s + v end
  end
  return s
end

-- The seed's check: x = {-1, 3, 5, -2} gives 11.
local toy = array.from({ -1, 3, 5, -2 }, "float32")
local toy_kernel, toy_reduce = hand_abs_sum(cuda.to_device(toy)), abs_reduce(toy)
labs.verdict("abs_sum (toy)", toy_kernel == 11 and toy_reduce == 11,
  ("|-1| + 3 + 5 + |-2| = %g (kernel), %g (cuda.reduce with |a| + |b|)"):format(toy_kernel, toy_reduce))
labs.line("seed's expression", ("cuda.reduce(\"b < 0 ? a - b : a + b\") gives %g for the toy%s"):format(
  seed_reduce(toy), seed_reduce(toy) == 11 and "" or ": -1 started the sum and was never negated"))

local n = opts.size
local a = array.random.normal(n, { loc = 0, scale = 10, dtype = "float32", seed = 5 })
local ref = serial_abs_sum(a:totable())
local d = cuda.to_device(a)
local got_kernel, got_reduce, got_seed = hand_abs_sum(d), abs_reduce(d), seed_reduce(d)
local tol = 1e-5 * ref
labs.line("size", ("%d float32 values, normal(0, 10)"):format(n))
labs.line("reference (Lua, f64)", ("%.6f"):format(ref))
labs.line("hand kernel", ("%.6f"):format(got_kernel))
labs.line("cuda.reduce |a|+|b|", ("%.6f"):format(got_reduce))
labs.line("seed's expression", ("%.6f (off by %.3g)"):format(got_seed, ref - got_seed))
labs.verdict("abs_sum", math.abs(got_kernel - ref) <= tol and math.abs(got_reduce - ref) <= tol,
  ("errors %.3g (kernel) and %.3g (cuda.reduce), tolerance 1e-5 * sum|x| = %.3g"):format(
    math.abs(got_kernel - ref), math.abs(got_reduce - ref), tol))
d:free()

print(("  sweep N = 2^%d .. 2^%d (serial host loop up to 2^%d), median of %d calls each:"):format(
  opts["min-exp"], opts["max-exp"], opts["max-serial-exp"], opts.reps))
local rows, bad = {}, 0
for _, N in ipairs(sweep.sizes(opts["min-exp"], opts["max-exp"])) do
  local A = array.random.normal(N, { loc = 0, scale = 10, dtype = "float32", seed = N })
  local row = { N = N }
  local dA = cuda.to_device(A)
  row.kernel = labs.time_device(function() hand_abs_sum(dA) end, opts.reps)
  row.reduce = labs.time_device(function() abs_reduce(dA) end, opts.reps)
  if N <= 1 << opts["max-serial-exp"] then
    local values = A:totable()
    local s
    row.serial = labs.time_host(function() s = serial_abs_sum(values) end, math.min(opts.reps, 3))
    if math.abs(hand_abs_sum(dA) - s) > 1e-5 * s or math.abs(abs_reduce(dA) - s) > 1e-5 * s then bad = bad + 1 end
    values = nil
  end
  rows[#rows + 1] = row
  dA:free()
  A = nil
  collectgarbage()
end
sweep.report(opts, "abs_sum_sweep", "Abs-sum: serial host vs parallel", {
  { key = "serial", name = "host serial (Lua loop)" },
  { key = "kernel", name = "abs_sum kernel (" .. cuda.backend() .. ")" },
  { key = "reduce", name = "cuda.reduce (" .. cuda.backend() .. ")" },
}, rows)
labs.verdict("abs_sum sweep", bad == 0, ("%d of %d checked sizes disagree with the host loop"):format(bad, #rows))
