-- Conformance: cooperative groups (kernels/groups.cu) against references computed here.
local here = arg[0]:match("^(.*)/") or "."
local m = cuda.module({ file = here .. "/kernels/groups.cu" })

local nb, bs = 3, 128
local input = array.random.integers(-50, 50, nb * bs, { dtype = "int32", seed = 11 })
local out = cuda.device_array(nb * bs * 12, "int32")
m.groups[{ nb, bs }](cuda.to_device(input), out)
local h = out:copy_to_host()
local bad = 0
local function check(i, k, want)
  local got = h[i * 12 + k + 1]
  if got ~= want then
    bad = bad + 1
    if bad < 10 then print(("thread %d field %d: got %d want %d"):format(i, k, got, want)) end
  end
end
for i = 0, nb * bs - 1 do
  local r = i % bs
  local v = input[i + 1]
  local function at(j) return input[i - r + j + 1] end  -- value of block thread j
  -- tile of 16
  local t0 = r - r % 16
  local inc, exc = 0, 0
  for j = t0, r do inc = inc + at(j) end
  exc = inc - v
  check(i, 0, inc); check(i, 1, exc)
  check(i, 2, r % 8 + 10000 * 8)
  check(i, 3, r % 64 + 100 * (r // 64))
  -- warp partitions by parity
  local w0 = r - r % 32
  local sum, rank, size, sc = 0, 0, 0, 0
  for j = w0, w0 + 31 do
    if at(j) & 1 == v & 1 then
      sum = sum + at(j); size = size + 1
      if j < r then rank = rank + 1 end
    end
  end
  check(i, 4, sum); check(i, 5, rank + 100 * size); check(i, 10, rank + 1)
  local mx, n = math.mininteger, 0
  for j = w0, w0 + 31 do
    if (at(j) > 0) == (v > 0) then mx = math.max(mx, at(j)); n = n + 1 end
  end
  check(i, 6, mx); check(i, 7, n)
  local mask = 0
  for j = t0, t0 + 15 do if at(j) & 3 == v & 3 then mask = mask | (1 << (j - t0)) end end
  check(i, 8, mask)
  check(i, 9, 0xffff + 1000000)
  check(i, 11, bs // 16 + 100 * 16)
end
assert(bad == 0, bad .. " mismatches")

-- block_sum: integers, so every partial is exact; 7 blocks of 256 over 100003 values.
local n = 100003
local v = array.random.integers(-1000, 1000, n, { dtype = "int32", seed = 12 })
local sums = cuda.device_array(7, "int32")
m.block_sum[{ 7, 256, 0, 8 * 4 }](cuda.to_device(v), sums, n)
local want = { 0, 0, 0, 0, 0, 0, 0 }
for i = 0, n - 1 do  -- the grid-stride loop gives element i to block (i // 256) % 7
  local b = (i // 256) % 7 + 1
  want[b] = want[b] + v[i + 1]
end
local hs = sums:copy_to_host()
for b = 1, 7 do assert(hs[b] == want[b], ("block_sum block %d: %d, expected %d"):format(b - 1, hs[b], want[b])) end

-- invoke_one, invoke_one_broadcast (the value the warp's first thread computed) and the
-- asynchronous reductions (each warp's sum, stored and folded into an atomic).
local ones, bcast = cuda.device_array(3 * nb, "int32"), cuda.device_array(nb * bs, "int32")
m.one_thread_calls[{ nb, bs }](cuda.to_device(input), ones, bcast)
local ho, hb = ones:copy_to_host(), bcast:copy_to_host()
for b = 0, nb - 1 do
  local sum = 0
  for t = 0, bs - 1 do sum = sum + input[b * bs + t + 1] end
  assert(ho[3 * b + 1] == 5 + b, ("invoke_one, block %d: %d"):format(b, ho[3 * b + 1]))
  assert(ho[3 * b + 2] == sum and ho[3 * b + 3] == sum,
         ("reduce_*_async, block %d: %d and %d, expected %d"):format(b, ho[3 * b + 2], ho[3 * b + 3], sum))
  for t = 0, bs - 1 do
    local w = t // 32
    local want = 7 + w + input[b * bs + w * 32 + 1]
    assert(hb[b * bs + t + 1] == want, ("invoke_one_broadcast, block %d thread %d"):format(b, t))
  end
end
print("ok")
