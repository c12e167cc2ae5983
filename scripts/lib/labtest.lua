-- Runs one lab as a ctest (tests/lua/labs_*.lua): small sizes, the cpu backend, pictures and
-- CSV files into a private temporary folder, removed afterwards. A mismatch ends the process with status 1
-- (the lab's own verdict); a Lua error fails the test as well. Afterwards, checks that every
-- expected output file exists and is not empty.
local M = {}

-- root: the repository; name: the lab; args: its arguments; outputs: files it must write.
function M.run(root, name, args, outputs)
  local out = os.mkdtemp("kiln-labtest")
  local path = root .. "/scripts/labs/" .. name .. ".lua"
  local full = { "--out", out, "--reps", "2" }
  for _, a in ipairs(args) do full[#full + 1] = a end
  local chunk = assert(loadfile(path))
  arg = { [0] = path, table.unpack(full) }
  chunk(table.unpack(full))
  for _, file in ipairs(outputs or {}) do
    local f = io.open(out .. "/" .. file, "rb")
    assert(f, name .. ": expected output " .. out .. "/" .. file .. " was not written")
    local size = f:seek("end")
    f:close()
    assert(size > 0, name .. ": output " .. file .. " is empty")
    os.remove(out .. "/" .. file)
  end
  -- Only an empty folder can be removed: a file the lab wrote but did not declare fails the test.
  assert(os.remove(out), name .. ": wrote files it does not declare, left in " .. out)
end

return M
