-- The start of every GPU test: on the cuda backend it returns. It skips (exit 77, saying why)
-- only where no GPU is expected, and fails where one is: with KILN_BACKEND=cuda, or when the
-- NVIDIA driver's device node exists (a driver and a device), a cuda backend that does not
-- start is a failure, never a skip.
local M = {}

-- Why a GPU is expected here, or nil.
function M.expected()
  if os.getenv("KILN_BACKEND") == "cuda" then return "KILN_BACKEND=cuda" end
  if os.getenv("KILN_BACKEND") == "cpu" then return nil end  -- the cpu backend was chosen
  local node = io.open("/dev/nvidiactl", "rb")
  if node then
    node:close()
    return "/dev/nvidiactl exists"
  end
  return nil
end

-- Returns on the cuda backend; otherwise skips or fails, as above.
function M.require_cuda()
  local ok, backend = pcall(cuda.backend)
  if ok and backend == "cuda" then return end
  local why = ok and ("the backend is " .. backend .. ", cuda: " .. tostring(cuda.info().cuda))
                 or tostring(backend)
  local expected = M.expected()
  if expected then
    io.stderr:write("FAIL: a GPU is expected here (" .. expected .. "), but " .. why .. "\n")
    os.exit(1)
  end
  print("SKIP: no GPU expected here (" .. why .. ")")
  os.exit(77)
end

return M
