-- A garbage-collected kernel module is unloaded, and kernels made afterwards run their own code.
-- Regression: a template kernel with __shared__ arrays (histogram.cu) loaded from the disk cache
-- stayed loaded after its module was collected, and the next module, loaded under the same
-- /proc/self/fd name, was that stale library: copy.cu ran the histogram code and crashed, and a
-- new cuda.reduce crashed at its first call.
-- The histogram module must come from the disk cache (no compile in this process), so a child
-- kiln (KILN_BINARY, set by ctest) compiles it first with the same KILN_CACHE_DIR.
local BINS = 64

-- Counts values (uint8) into bins with the histogram kernel; returns the bins as a table.
local function histogram(values)
  local k = cuda.jit_file("histogram.cu", { defines = { BINS = BINS } })
  local d_bins = cuda.to_device(array.zeros(BINS, "uint32"))
  k[{ 4, 128 }](cuda.to_device(values), d_bins)
  return d_bins:copy_to_host():totable()
end

local list = {}
for i = 0, 999 do list[#list + 1] = i % BINS end
local values = array.from(list, "uint8")
if arg[1] == "--warm" then
  histogram(values)
  os.exit(0)
end

local kiln = os.getenv("KILN_BINARY")
if kiln then
  local ok = os.execute("'" .. kiln .. "' '" .. arg[0] .. "' --warm")
  assert(ok, "the child kiln that warms the cache failed")
end

local bins = histogram(values)
for b = 1, BINS do
  local expected = 1000 // BINS + ((b - 1) < 1000 % BINS and 1 or 0)
  assert(bins[b] == expected, ("bin %d: %d, expected %d"):format(b - 1, bins[b], expected))
end
collectgarbage()
collectgarbage()

-- A new module after the collection: copy.cu copies exactly.
local n = 1000
local halves = {}
for i = 0, n - 1 do halves[#halves + 1] = i * 0.5 end
local src = array.from(halves, "float32")
local d_src, d_dst = cuda.to_device(src), cuda.device_array(n, "float32")
local copy = cuda.jit_file("copy.cu")
copy[{ (n + 127) // 128, 128 }](d_src, d_dst)
local got = d_dst:copy_to_host():totable()
for i = 1, n do assert(got[i] == (i - 1) * 0.5, ("copy[%d] = %s"):format(i - 1, got[i])) end
copy = nil
collectgarbage()
collectgarbage()

-- And a reduction made after two collections sums exactly (integers in float32 below 2^24).
local sum = cuda.reduce("a + b")
assert(sum(cuda.to_device(array.arange(n, "float32"))) == n * (n - 1) / 2)
print("cpu_unload: OK")
