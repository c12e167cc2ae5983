-- GPU probe (not a test): the time of each large device allocation while the previous one is
-- still referenced, as in tests/gpu/cuda_roundtrip.lua's collected-arrays loop (whose `err`
-- local keeps each array alive through that iteration's collectgarbage()). On the H200 of
-- 2026-11-27 that loop took 60 s and more for under 24 allocations of 9.4 GB, while the same
-- allocations with nothing kept took 2 ms each. Prints, per allocation: the allocation and the
-- collection in ms, and the memory pool's state.
-- Usage: KILN_BACKEND=cuda kiln bench/probes/alloc_alternating.lua [count]
local count = tonumber(arg[1]) or 6
local function now()
  local p = io.popen("date +%s.%N")
  local t = tonumber(p:read("l"))
  p:close()
  return t
end
local _, total = cuda.memory_info()
local piece = math.max(1 << 28, (total // 16) // 4)  -- float32 elements: 1/16 of the device
print(("piece %.1f GB"):format(piece * 4 / 1e9))
for _, keep in ipairs({ false, true }) do
  for i = 1, count do
    local t0 = now()
    local ok, array = pcall(cuda.device_array, piece, "float32")
    local t1 = now()
    if not keep then array = nil end
    collectgarbage()
    local t2 = now()
    local free, _, reserved, used = cuda.memory_info()
    print(("%s %d: %s, alloc %.1f ms, gc %.1f ms; %.1f GB free, pool %.1f GB, arrays %.1f GB"):format(
      keep and "kept" or "dropped", i, ok and "ok" or tostring(array), (t1 - t0) * 1e3,
      (t2 - t1) * 1e3, free / 1e9, reserved / 1e9, used / 1e9))
  end
  collectgarbage()
end
