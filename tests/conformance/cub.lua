-- Conformance: CUB's collectives (kernels/cub_collectives.cu) against references computed here.
local here = arg[0]:match("^(.*)/") or "."
local m = cuda.module({ file = here .. "/kernels/cub_collectives.cu" })
local blocks, tile = 5, 128 * 4
local n = blocks * tile
local x = array.random.integers(-1000, 1000, n, { dtype = "int32", seed = 21 })
local sums, maxes = cuda.device_array(blocks, "int32"), cuda.device_array(blocks, "int32")
local prefix, sorted = cuda.device_array(n, "int32"), cuda.device_array(n, "int32")
m.tiles[{ blocks, 128 }](cuda.to_device(x), sums, maxes, prefix, sorted)
local hs, hm, hp, hsort = sums:copy_to_host(), maxes:copy_to_host(), prefix:copy_to_host(), sorted:copy_to_host()
for b = 0, blocks - 1 do
  local values, run, biggest = {}, 0, math.mininteger
  for k = 1, tile do
    local v = x[b * tile + k]
    assert(hp[b * tile + k] == run, ("block %d item %d: prefix %d, expected %d"):format(b, k, hp[b * tile + k], run))
    run = run + v
    biggest = math.max(biggest, v)
    values[k] = v
  end
  assert(hs[b + 1] == run, ("block %d: sum %d, expected %d"):format(b, hs[b + 1], run))
  assert(hm[b + 1] == biggest, ("block %d: max %d, expected %d"):format(b, hm[b + 1], biggest))
  table.sort(values)
  for k = 1, tile do
    assert(hsort[b * tile + k] == values[k], ("block %d: sorted item %d is %d, expected %d"):format(b, k, hsort[b * tile + k], values[k]))
  end
end

local wn = 2 * 128
local w = array.random.integers(-50, 50, wn, { dtype = "int32", seed = 22 })
local ws, wi, we = cuda.device_array(wn // 16, "int32"), cuda.device_array(wn, "int32"), cuda.device_array(wn, "int32")
m.warps[{ 2, 128 }](cuda.to_device(w), ws, wi, we)
local hws, hwi, hwe = ws:copy_to_host(), wi:copy_to_host(), we:copy_to_host()
for g = 0, wn // 16 - 1 do
  local run = 0
  for l = 1, 16 do
    local i = g * 16 + l
    assert(hwe[i] == 1000 + run, ("warp %d lane %d: exclusive %d, expected %d"):format(g, l - 1, hwe[i], 1000 + run))
    run = run + w[i]
    assert(hwi[i] == run, ("warp %d lane %d: inclusive %d, expected %d"):format(g, l - 1, hwi[i], run))
  end
  assert(hws[g + 1] == run, ("warp %d: sum %d, expected %d"):format(g, hws[g + 1], run))
end

-- Runs: exchange, discontinuity flags, adjacent differences, a histogram, ThreadReduce.
local rblocks = 3
local runs_in = array.zeros(rblocks * 256, "int32")
for i = 1, rblocks * 256 do runs_in[i] = ((i - 1) // 3) % 7 * 5 + ((i - 1) // 100) end  -- runs of about 3
local rh, rt, rd = cuda.device_array(rblocks * 256, "int32"), cuda.device_array(rblocks * 256, "int32"), cuda.device_array(rblocks * 256, "int32")
local rbins, rsums = cuda.device_array(rblocks * 16, "uint32"), cuda.device_array(rblocks * 64, "int32")
m.runs[{ rblocks, 64 }](cuda.to_device(runs_in), rh, rt, rd, rbins, rsums)
local hh, ht, hd, hbins, hsums = rh:copy_to_host(), rt:copy_to_host(), rd:copy_to_host(), rbins:copy_to_host(), rsums:copy_to_host()
for b = 0, rblocks - 1 do
  -- The kernel loads striped: blocked item j of the tile is in[base + j] read back in order.
  local tilev = {}
  for j = 0, 255 do tilev[j] = runs_in[b * 256 + j + 1] end
  local counts = {}
  for k = 0, 15 do counts[k] = 0 end
  for j = 0, 255 do
    local at = b * 256 + j + 1
    local head = (j == 0 or tilev[j - 1] ~= tilev[j]) and 1 or 0
    local tail = (j == 255 or tilev[j + 1] ~= tilev[j]) and 1 or 0
    local diff = j == 0 and tilev[0] or tilev[j] - tilev[j - 1]
    assert(hh[at] == head and ht[at] == tail and hd[at] == diff,
           ("runs block %d item %d: head %d tail %d diff %d"):format(b, j, hh[at], ht[at], hd[at]))
    counts[tilev[j] & 15] = counts[tilev[j] & 15] + 1
  end
  for k = 0, 15 do assert(hbins[b * 16 + k + 1] == counts[k], ("runs block %d bin %d: %d"):format(b, k, hbins[b * 16 + k + 1])) end
  for t = 0, 63 do
    local want = tilev[4 * t] + tilev[4 * t + 1] + tilev[4 * t + 2] + tilev[4 * t + 3]
    assert(hsums[b * 64 + t + 1] == want, ("runs block %d thread %d: sum %d"):format(b, t, hsums[b * 64 + t + 1]))
  end
end
print("ok")
