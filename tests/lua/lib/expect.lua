-- Assertions the Lua tests share. A test loads it from its own folder's lib/:
--   package.path = arg[0]:gsub("[^/]*$", "") .. "lib/?.lua;" .. package.path
--   local expect = require("expect")
local expect = {}

-- Calls f(...) and returns its error message as a string. Fails, at the caller's line, when f
-- raises no error or when the message does not contain needle (plain text, not a pattern).
function expect.error(needle, f, ...)
  local ok, err = pcall(f, ...)
  if ok then error("expected an error containing '" .. needle .. "', got none", 2) end
  err = tostring(err)
  if not err:find(needle, 1, true) then error("error '" .. err .. "' lacks '" .. needle .. "'", 2) end
  return err
end

return expect
