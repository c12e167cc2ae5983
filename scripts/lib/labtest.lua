-- Runs one lab as a ctest (tests/lua/labs_*.lua): small sizes, the cpu backend, pictures and
-- CSV files into a private temporary folder, removed afterwards. A mismatch ends the process with status 1
-- (the lab's own verdict); a Lua error fails the test as well. Afterwards, checks that every
-- expected output file exists and is not empty.
local M = {}

-- Checks an output's content: a PNG decodes to an image that is not one flat colour; a CSV has
-- a header and at least one row with as many cells.
function M.check_output(name, path)
  if path:match("%.png$") then
    local img = array.load_image(path)
    assert(img.size > 0, name .. ": " .. path .. " decodes to an empty image")
    assert(img:max() > img:min(), name .. ": " .. path .. " is one flat colour")
  elseif path:match("%.csv$") then
    local lines = {}
    for line in io.lines(path) do lines[#lines + 1] = line end
    assert(#lines >= 2, name .. ": " .. path .. " has no data rows")
    local _, columns = lines[1]:gsub(",", ",")
    for i = 2, #lines do
      local _, cells = lines[i]:gsub(",", ",")
      assert(cells == columns, name .. ": " .. path .. " row " .. (i - 1) .. " has the wrong cell count")
    end
  end
end

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
    M.check_output(name, out .. "/" .. file)
    os.remove(out .. "/" .. file)
  end
  -- Only an empty folder can be removed: a file the lab wrote but did not declare fails the test.
  assert(os.remove(out), name .. ": wrote files it does not declare, left in " .. out)
end

return M
