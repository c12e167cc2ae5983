-- The shared test helper (lib/expect.lua) itself: it passes only on a raised error whose message
-- contains the needle as plain text, and names the caller's line when it fails.
package.path = arg[0]:gsub("[^/]*$", "") .. "lib/?.lua;" .. package.path
local expect = require("expect")

-- The message of the error that expect.error(needle, f) raises (nil when none), and the line
-- it was called from.
local function failure(needle, f)
  local line
  local ok, err = pcall(function()
    line = debug.getinfo(1, "l").currentline; expect.error(needle, f)
  end)
  return not ok and tostring(err) or nil, line
end

-- Passing: the message comes back as a string, arguments reach f, a table error is tostring'd.
assert(expect.error("bad size", function(n) error("bad size " .. n) end, 7):find("bad size 7", 1, true))
local t = setmetatable({}, {__tostring = function() return "table error" end})
assert(expect.error("table error", function() error(t) end) == "table error")
-- Failing: no error at all, or a message without the needle; '.' and '%' are not patterns.
local none, line = failure("anything", function() return 1 end)
assert(none and none:find("expected an error containing 'anything', got none", 1, true), tostring(none))
assert(none:find("expect_lib.lua:" .. line .. ":", 1, true), "the failure names the caller's line: " .. none)
local other = failure("bad size", function() error("bad shape") end)
assert(other and other:find("lacks 'bad size'", 1, true), tostring(other))
assert(failure("a.c", function() error("abc") end), "'.' is plain text")
assert(failure("100%", function() error("100 percent") end), "'%' is plain text")
assert(not failure("50%", function() error("50% off") end))
print("expect_lib: ok")
