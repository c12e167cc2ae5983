-- Conformance: warp shuffles, ballots and their device functions (kernels/warps.cu) against
-- Lua references. On the cpu backend they run as regions (each warp operation one step for the
-- block's threads), and as fibers with KILN_REGIONS=0; the answers are the same.
local here = arg[0]:match("^(.*)/") or "."
local m = cuda.module({ file = here .. "/kernels/warps.cu" })
local n = 1000
local h = array.zeros(n, "int32")
for i = 1, n do h[i] = (i * 7919) % 97 - 10 end
local din = cuda.to_device(h)
local out = cuda.device_array(n, "int32")
m.block_scan[{ 4, 256 }](din, out, n)
local o = out:copy_to_host()
-- reference: per block of 256, inclusive scan
for b = 0, 3 do
  local acc = 0
  for t = 0, 255 do
    local i = b * 256 + t
    if i < n then acc = acc + h[i + 1]; assert(o[i + 1] == acc, ("scan %d: %d vs %d"):format(i, o[i + 1], acc)) end
  end
end
local cout = cuda.to_device(array.full(1024, -7, "int32"))
local counts = cuda.device_array(32, "int32")
m.compact[{ 4, 256 }](din, cout, counts, n)
local co, cc = cout:copy_to_host(), counts:copy_to_host()
for w = 0, 31 do
  local k = 0
  for l = 0, 31 do
    local i = w * 32 + l
    local v = i < n and h[i + 1] or -1
    if v >= 0 and v % 3 ~= 0 then assert(co[w * 32 + k + 1] == v, "compact " .. i); k = k + 1 end
  end
  assert(cc[w + 1] == k, "count " .. w)
end
local rows, cols = 8, 100
local f = array.zeros(rows * cols, "float32")
for i = 1, rows * cols do f[i] = ((i * 31) % 53) + 1 end
local df, dout = cuda.to_device(f), cuda.device_array(rows * cols, "float32")
m.normalize_rows[{ rows, 32 }](df, dout, cols)
local fo = dout:copy_to_host()
for r = 0, rows - 1 do
  local mx = -1e30
  for c = 0, cols - 1 do mx = math.max(mx, f[r * cols + c + 1]) end
  for c = 0, cols - 1 do
    local want = f[r * cols + c + 1] / mx
    assert(math.abs(fo[r * cols + c + 1] - want) < 1e-6, ("norm %d %d: %g vs %g"):format(r, c, fo[r * cols + c + 1], want))
  end
end
if cuda.backend() == "cpu" and os.getenv("KILN_REGIONS") ~= "0" then
  for _, k in ipairs({ m.block_scan, m.compact, m.normalize_rows }) do
    assert(k:info().threads == "regions", k:info().why)
  end
end
