-- Lab: the seed's memory-overflow lesson. Asks for more memory than a device (or host) has and
-- shows kiln's error, caught with pcall, instead of a crash. 2e9 float64 values (16 GB) exceeds
-- most GPUs; on the cpu backend "device" memory is host memory, and the allocation may succeed
-- when the machine has that much (the lab then frees it at once). The seed's second case, 1e12
-- float32 values on the host (4 TB), fails everywhere.
-- Usage: kiln scripts/labs/overflow.lua [--count N] [--dtype T] [--host-count N]
local here = arg and arg[0] and arg[0]:match("^(.*)/[^/]*$") or "."
package.path = here .. "/../lib/?.lua;" .. package.path
local labs = require "labs"

local opts = labs.args(arg, { count = 2e9, dtype = "float64", ["host-count"] = 1e12 }, {}, {
  usage = "kiln scripts/labs/overflow.lua [--count N] [--dtype T] [--host-count N]\n"
       .. "  --count N: device elements asked for (default 2e9), of dtype T (default float64);\n"
       .. "  --host-count N: float32 host elements asked for (default 1e12)",
  options = { count = "number", dtype = labs.dtype_names(), ["host-count"] = "number" },
})
labs.header("overflow", "asking for more memory than there is")
local gb = opts.count * labs.dtype_bytes(opts.dtype) / 1e9
local ok, result = pcall(cuda.device_array, math.tointeger(opts.count) or opts.count, opts.dtype)
if ok then
  labs.line("device_array", ("%.3g %s values (%.3g GB): allocated on the %s backend; freeing it"):format(
    opts.count, opts.dtype, gb, cuda.backend()))
  result:free()
  result = nil
  collectgarbage()
else
  labs.line("device_array", ("%.3g %s values (%.3g GB) failed:"):format(opts.count, opts.dtype, gb))
  print("    " .. tostring(result))
end
local hok, herr = pcall(array.empty, math.tointeger(opts["host-count"]) or opts["host-count"], "float32")
if hok then
  labs.line("host array", "unexpectedly allocated; freeing it")
  herr = nil
  collectgarbage()
else
  labs.line("host array", ("%.3g float32 values (%.3g TB) failed:"):format(opts["host-count"], opts["host-count"] * 4 / 1e12))
  print("    " .. tostring(herr))
end
-- The lesson holds if the device request either succeeded or failed with an error about memory,
-- and the impossible host request failed with an error naming the bytes it asked for.
local device_handled = ok or tostring(result):find("memory") ~= nil
  or tostring(result):find("allocate") ~= nil
local host_bytes = math.tointeger(opts["host-count"] * 4) or opts["host-count"] * 4
local host_named = not hok and tostring(herr):find(("cannot allocate %s bytes"):format(host_bytes), 1, true) ~= nil
labs.verdict("overflow", device_handled and host_named,
  device_handled and host_named and
    "both requests handled without a crash; the impossible one raised a catchable error naming its size"
  or ("device: %s; host: %s"):format(ok and "allocated" or tostring(result), hok and "allocated" or tostring(herr)))
