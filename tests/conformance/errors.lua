-- Conformance: compile errors point at the user's file and line, never at code kiln generates.
local here = arg[0]:match("^(.*)/") or "."
local path = here .. "/kernels/unclosed.cu"

-- Returns the error of launching kernels/unclosed.cu.
local function launch_error()
  local ok, err = pcall(function()
    cuda.jit_file(path)[{ 1, 32 }](cuda.device_array(32, "int32"), 32)
  end)
  assert(not ok, "a kernel with an unclosed brace compiled")
  return tostring(err)
end
local err = launch_error()
assert(err:find("unclosed.cu", 1, true), "the error names the file: " .. err)
assert(err:find("unclosed.cu[:(]4"), "the error names the line: " .. err)
assert(not err:find("<kiln", 1, true) and not err:find("<kernel ", 1, true),
       "the error points at generated code: " .. err)

-- The same from the host compiler alone (no NVRTC check), in a separate kiln.
local kiln = os.getenv("KILN_BINARY")
if kiln and cuda.backend() == "cpu" then
  local script = os.tmpname()
  local f = assert(io.open(script, "w"))
  f:write(([[
local ok, err = pcall(function() cuda.jit_file(%q)[{ 1, 32 }](cuda.device_array(32, "int32"), 32) end)
io.write(tostring(err))]]):format(path))
  f:close()
  local p = assert(io.popen("KILN_NVRTC_CHECK=0 " .. kiln .. " " .. script .. " 2>&1"))
  local out = p:read("a")
  p:close()
  os.remove(script)
  assert(out:find("unclosed.cu:4: error: this '{' is never closed", 1, true), "host compiler path: " .. out)
end
print("ok")
