-- The host opens Lua's standard libraries and preloads kiln's modules.
assert(type(cuda) == "table" and type(array) == "table")
assert(require("kiln.cuda") == cuda and require("kiln.array") == array)
assert(string.format("%d", 1 + 1) == "2" and math.pi and table.concat and io.write and os.time)

-- cuda.memory_info() on the cpu backend: the host's RAM (MemTotal, read here from /proc/meminfo)
-- and what is available of it; no pool.
if cuda.backend() == "cpu" then
  local free, total, reserved, used = cuda.memory_info()
  local kib
  for line in io.lines("/proc/meminfo") do kib = kib or tonumber(line:match("^MemTotal:%s+(%d+) kB")) end
  assert(total == kib * 1024, ("memory_info total %d, MemTotal %d kB"):format(total, kib))
  assert(free > 0 and free <= total and reserved == 0 and used == 0, "memory_info: " .. free)
end
