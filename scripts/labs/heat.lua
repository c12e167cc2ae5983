-- Lab: the 2-D heat equation on several ranks, the distributed lab. The domain (size x size
-- cells, a hot top edge and a warm square in the middle, the other edges cold) is cut into bands
-- of rows, one band per rank; before each step a rank swaps its edge rows with the ranks above
-- and below (mpi.sendrecv on device-array views: a halo exchange), then runs heat.cu's
-- five-point stencil on its band. At the end the bands come to rank 0 (mpi.send/recv), the
-- total and the hottest cell through mpi.allreduce, and rank 0 checks them:
--   * the answer on N ranks equals, bit for bit, the one-process answer (rank 0 runs the same
--     kernel over the whole domain alone), since every cell sees the same arithmetic;
--   * the one-process answer agrees with a Lua loop (at the default sizes), an independent
--     reference.
-- Usage: mpirun -n 4 kiln scripts/labs/heat.lua [--size N] [--steps S] [--dtype float64]
--                                                [--full] [--reps R]
--        kiln scripts/labs/heat.lua ...    (without mpirun: one rank)
-- Add --oversubscribe to mpirun for more ranks than cores. docs/mpi.md has the scaling model.
local here = arg and arg[0] and arg[0]:match("^(.*)/[^/]*$") or "."
package.path = here .. "/../lib/?.lua;" .. package.path
local labs = require "labs"

local opts = labs.args(arg, { size = 128, steps = 50, dtype = "float64" },
                       { size = 4096, steps = 200 })
labs.usage(opts, "mpirun -n 4 kiln scripts/labs/heat.lua [--size N] [--steps S] [--dtype T] "
                 .. "[--reps R] [--full]")

-- kiln.mpi under mpirun; one rank otherwise, so that the lab also runs alone (and in the tour).
local ok, mpi = pcall(require, "kiln.mpi")
local alone = not ok
if alone then
  local why = tostring(mpi):match("^[^\n]*")
  -- Alone only where MPI is absent; any other failure of kiln.mpi is the lab's failure.
  if not (why:find("needs mpirun", 1, true) or why:find("built without MPI", 1, true)) then
    error(mpi, 0)
  end
  mpi = { rank = function() return 0 end, size = function() return 1 end,
          allreduce = function(a) return a end, barrier = function() end,
          sendrecv = function() end }
  mpi.why = why
end
local rank, nranks = mpi.rank(), mpi.size()
local n, steps, dtype = opts.size, opts.steps, opts.dtype
if n < nranks or n < 3 then error(("heat: --size %d is too small for %d ranks"):format(n, nranks), 0) end
local quiet = rank ~= 0  -- rank 0 reports for the job

-- The starting temperature of global row i (0 and n + 1 are the fixed top and bottom edges)
-- and column j (0-based).
local function initial(i, j)
  if i == 0 then return 1.0 end
  local q = n // 4
  if i > q and i <= 2 * q and j >= q and j < 2 * q then return 0.5 end
  return 0.0
end

-- The rows [first, first + count) of the global interior (1-based), with a halo row on each side.
local function band(first, count)
  local h = array.zeros({ count + 2, n }, dtype)
  for i = 0, count + 1 do
    for j = 0, n - 1 do h[i * n + j + 1] = initial(first - 1 + i, j) end
  end
  return h
end

-- This rank's share of the n interior rows: the first ranks take one more when n does not divide.
local function share(r)
  local base, extra = n // nranks, n % nranks
  local count = base + (r < extra and 1 or 0)
  local first = r * base + math.min(r, extra) + 1
  return first, count
end

local k = cuda.jit_file("heat.cu")
local tx, ty = 32, 8

-- Runs steps steps over a band (a host array of count + 2 rows); exchange(u) fills u's halo rows
-- first. Returns the band's device array after the last step.
local function run(h, count, exchange)
  local u, v = cuda.to_device(h), cuda.to_device(h)  -- both hold the fixed edges
  local grid = { { (n + tx - 1) // tx, (count + ty - 1) // ty }, { tx, ty } }
  for _ = 1, steps do
    exchange(u)
    k[grid](u, v, count, n)
    u, v = v, u
  end
  cuda.synchronize()
  return u
end

-- The halo exchange with the ranks above (up) and below (down); nil where there is none (the
-- fixed edge stays). Views of a band's rows, made once per device array.
local up = rank > 0 and rank - 1 or nil
local down = rank < nranks - 1 and rank + 1 or nil
local first, count = share(rank)
local views = setmetatable({}, { __mode = "k" })
local function exchange(u)
  local w = views[u]
  if not w then
    w = { top_halo = u:sub(1, 1), top = u:sub(2, 2), bottom = u:sub(count + 1, count + 1),
          bottom_halo = u:sub(count + 2, count + 2) }
    views[u] = w
  end
  mpi.sendrecv(w.top, up, w.bottom_halo, down)   -- my first row up; my lower halo from below
  mpi.sendrecv(w.bottom, down, w.top_halo, up)   -- my last row down; my upper halo from above
end

if not quiet then
  labs.header("heat", "2-D heat equation, bands of rows on MPI ranks with a halo exchange")
  local note = alone and (mpi.why:find("needs mpirun") and "not started by mpirun" or mpi.why)
  labs.line("ranks", alone and ("1 (" .. note .. ")") or tostring(nranks))
  labs.line("size", ("%d x %d %s cells, %d steps"):format(n, n, dtype, steps))
end

-- The distributed run, timed from a common start; the slowest rank's time is the job's.
local h = band(first, count)
run(band(first, count), count, function() end)  -- compiles the kernel; not timed
local times = {}
local u
for rep = 1, opts.reps do
  mpi.barrier()
  local start, stop = cuda.event(), cuda.event()
  start:record()
  u = run(h, count, exchange)
  stop:record()
  stop:synchronize()
  local slowest = array.from({ cuda.event_elapsed_time(start, stop) })
  times[rep] = mpi.allreduce(slowest, "max")[1]
end
local ms = labs.median(times)

-- Totals through allreduce: every rank's sum and maximum of its own rows.
local mine = u:copy_to_host():sub(2, count + 1)
local total = mpi.allreduce(array.from({ mine:sum() }), "sum")[1]
local hottest = mpi.allreduce(array.from({ mine:max() }), "max")[1]

-- The bands to rank 0, each into its rows of the whole field.
local whole
if rank == 0 then
  whole = band(1, n)
  local own = whole:sub(2, count + 1)
  for i = 1, own.size do own[i] = mine[i] end
  for r = 1, nranks - 1 do
    local f, c = share(r)
    mpi.recv(whole:sub(f + 1, f + c), r, 1)
  end
else
  mpi.send(u:sub(2, count + 1), 0, 1)
end
if quiet then return end

local bytes = labs.dtype_bytes(dtype)
labs.line("time per step", labs.fmt_ms(ms / steps) .. (" (%s for %d steps, slowest rank)"):format(labs.fmt_ms(ms), steps))
labs.line("rate", ("%.3f Gcell/s"):format(n * n * steps / (ms * 1e6)))
labs.line("halo per step", ("%d bytes per rank boundary each way"):format(n * bytes))

-- The one-process answer: the same kernel over the whole domain on rank 0 alone.
local one = nranks == 1 and whole or run(band(1, n), n, function() end):copy_to_host()
local interior = whole:sub(2, n + 1)
local same = array.equal(whole, one)
labs.verdict(("%d ranks = 1 rank"):format(nranks), same,
             same and "every cell equal" or "the bands differ from the one-process run")
local one_total, one_max = one:sub(2, n + 1):sum(), one:sub(2, n + 1):max()
labs.verdict("allreduce totals", math.abs(total - one_total) <= 1e-9 * math.abs(one_total)
             and hottest == one_max,
             ("sum %.9g (one rank %.9g), max %.9g (one rank %.9g)"):format(total, one_total, hottest, one_max))

-- An independent reference: the stencil as a Lua loop in doubles, where it takes a moment.
if n * n * steps <= 4e6 then
  local alpha = 1 / 5
  local a, b = {}, {}
  for i = 0, n + 1 do
    for j = 0, n - 1 do a[i * n + j] = initial(i, j); b[i * n + j] = a[i * n + j] end
  end
  for _ = 1, steps do
    for i = 1, n do
      local row = i * n
      for j = 1, n - 2 do
        local c = row + j
        b[c] = a[c] + alpha * (a[c - n] + a[c + n] + a[c - 1] + a[c + 1] - 4 * a[c])
      end
    end
    a, b = b, a
  end
  local tol = dtype == "float64" and 1e-12 or 1e-5
  local worst = 0
  for i = 1, n do
    for j = 0, n - 1 do
      worst = math.max(worst, math.abs(interior[(i - 1) * n + j + 1] - a[i * n + j]))
    end
  end
  labs.verdict("Lua reference", worst <= tol, ("max |difference| %.3g (tolerance %g)"):format(worst, tol))
else
  labs.line("Lua reference", "skipped at this size (n * n * steps > 4e6)")
end
