-- The labs tour: runs every lab in turn (default sizes, or the seed's with --full), writes all
-- their pictures and CSV files to --out, prints a summary and exits non-zero if any lab failed.
-- Usage: kiln scripts/labs/tour.lua [--full] [--out DIR] [--reps R] [--only a,b,...] [--skip a,b,...]
--                                    [--no-pictures]
local here = arg and arg[0] and arg[0]:match("^(.*)/[^/]*$") or "."
package.path = here .. "/../lib/?.lua;" .. package.path
local labs = require "labs"

local LABS = { "copy", "julia", "blur", "blur_shared", "histogram", "reduce", "abs_sum", "matmul",
               "matmul_tiled", "normalize", "overflow", "heat" }
local opts = labs.args(arg, {}, {}, {
  usage = "kiln scripts/labs/tour.lua [--full] [--out DIR] [--reps R] [--only a,b,...] [--skip a,b,...] [--no-pictures]\n"
       .. "  the labs: " .. table.concat(LABS, ", "),
  options = { only = "string", skip = "string" },
})

-- The set of lab names in a comma-separated list; a name that is not a lab is a usage error
-- (a typo must not silently run nothing).
local function set_of(list, option)
  local s, known = {}, {}
  for _, name in ipairs(LABS) do known[name] = true end
  for name in tostring(list or ""):gmatch("[^,]+") do
    if not known[name] then
      labs.usage_error(("%s: no lab named '%s'; the labs are %s"):format(option, name, table.concat(LABS, ", ")))
    end
    s[name] = true
  end
  if option == "--only" and next(s) == nil then
    labs.usage_error("--only names no lab; the labs are " .. table.concat(LABS, ", "))
  end
  return s
end
local only, skip = opts.only and set_of(opts.only, "--only"), set_of(opts.skip, "--skip")
local pass = { "--out", labs.out_dir(opts), "--reps", tostring(opts.reps) }
if opts.full then pass[#pass + 1] = "--full" end
if opts["no-pictures"] then pass[#pass + 1] = "--no-pictures" end

labs.in_tour = true
local results, failed = {}, 0
local saved_arg = arg
for _, name in ipairs(LABS) do
  if (not only or only[name]) and not skip[name] then
    local path = here .. "/" .. name .. ".lua"
    local chunk, err = loadfile(path)
    local ok, t0 = false, os.time()
    if chunk then
      arg = { [0] = path, table.unpack(pass) }
      ok, err = pcall(chunk, table.unpack(pass))
      arg = saved_arg
    end
    if not ok then
      failed = failed + 1
      print(("%s: FAILED: %s"):format(name, tostring(err)))
    end
    results[#results + 1] = { name = name, ok = ok, s = os.time() - t0 }
    collectgarbage()
    print()
  end
end
print(("== tour summary [backend %s], output in %s"):format(cuda.backend(), opts.out))
for _, r in ipairs(results) do
  print(("  %-14s %-6s ~%ds"):format(r.name, r.ok and "OK" or "FAILED", r.s))
end
print(("%d of %d labs passed"):format(#results - failed, #results))
os.exit(failed == 0 and 0 or 1)
