-- The collector is told about array buffers (Lua does not see their memory): 60 arrays of 20 MB,
-- each written in full and dropped at once, must not pile up. Without the accounting the resident
-- size passes the bound after about 16 arrays.

local function rss_mb()
  local f = assert(io.open("/proc/self/statm"))
  local _, resident = f:read("n", "n")
  f:close()
  return resident * 4096 / 2^20
end

local start = rss_mb()
for i = 1, 60 do
  local a = array.full(2.5e6, 1.5)  -- 20 MB, every page touched
  assert(a[2.5e6] == 1.5)
  local grown = rss_mb() - start
  if grown > 300 then
    error(string.format("resident size grew by %.0f MB after %d arrays of 20 MB", grown, i))
  end
end
