-- Lab: vector copy, the seed's first kernel (foo). Shows a launch with blocks x threads, the
-- bounds check that makes any grid safe, host arrays passed straight to a kernel (copied to the
-- device and back, as Numba does), and device arrays that stay on the device.
-- Usage: kiln scripts/labs/copy.lua [--size N] [--dtype float32|float64] [--reps R] [--full]
local here = arg and arg[0] and arg[0]:match("^(.*)/[^/]*$") or "."
package.path = here .. "/../lib/?.lua;" .. package.path
local labs = require "labs"

local opts = labs.args(arg, { size = 1 << 20, dtype = "float32" }, { size = 1 << 24 }, {
  usage = "kiln scripts/labs/copy.lua [--size N] [--dtype float32|float64] [--reps R] [--full]\n"
       .. "  --size N: elements copied (default 2^20, --full 2^24)",
  options = { size = "count", dtype = { "float32", "float64" } },
})
labs.header("copy", "vector copy (the seed's foo)")
local k = cuda.jit_file("copy.cu")

-- The seed's toy run: ten values, one block of ten threads, host arrays in and out.
local input = array.arange(10, opts.dtype)
local output = array.zeros(10, opts.dtype)
k[{ 1, 10 }](input, output)
cuda.synchronize()
labs.line("toy output", table.concat(output:totable(), " "))
labs.verdict("copy (toy, host arrays)", array.equal(input, output), "10 of 10 values copied")

-- The real run: device arrays, 256 threads per block, enough blocks to cover n.
local n, tpb = opts.size, 256
local h = array.random.uniform(n, { dtype = opts.dtype, seed = 1 })
local d_in = cuda.to_device(h)
local d_out = cuda.device_array_like(d_in)
local blocks = labs.blocks(n, tpb)
local ms = labs.time_device(function() k[{ blocks, tpb }](d_in, d_out) end, opts.reps)
local out = d_out:copy_to_host()
local bytes = 2 * n * labs.dtype_bytes(opts.dtype)
labs.line("size", ("%d %s (%d blocks x %d threads)"):format(n, opts.dtype, blocks, tpb))
labs.line("time per launch", labs.fmt_ms(ms))
labs.line("bandwidth", labs.fmt_gbs(bytes, ms) .. " (read + write)")
local same = array.equal(out, h)
local bad = same and 0 or nil
if not same then
  bad = 0
  local a, b = out:totable(), h:totable()
  for i = 1, n do if a[i] ~= b[i] then bad = bad + 1 end end
end
labs.verdict("copy", same, ("%d of %d values differ"):format(bad, n))
