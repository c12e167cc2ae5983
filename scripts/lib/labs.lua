-- Shared helpers for the labs in scripts/labs/: command-line options, timing, reports,
-- validation verdicts, launch geometry and CSV output. Every lab starts with
--   local here = arg[0]:match("^(.*)/[^/]*$") or "."
--   package.path = here .. "/../lib/?.lua;" .. package.path
--   local labs = require "labs"
local M = {}

-- Set by the tour: a failed check raises an error (caught by the tour) instead of exiting.
M.in_tour = false

-- Options every lab takes (the tour passes --out, --reps, --full and --no-pictures to each), and
-- the kind of value each takes.
local COMMON = { full = "flag", help = "flag", ["no-pictures"] = "flag", out = "folder", reps = "count" }

-- What --help adds under a lab's own usage line: the common options.
local COMMON_HELP = [[
options every lab takes:
  --out DIR      an existing folder for pictures and CSV files (default: a new temporary folder)
  --reps R       timed launches; the median is reported (default 5)
  --full         the tutorials' full sizes
  --no-pictures  write no PNG files
  --help         this text]]

-- The script's file name, for messages ("matmul.lua").
local function script_name()
  return (arg and arg[0] and arg[0]:match("([^/]*)$")) or "lab"
end

-- A usage error: raised in the tour (which counts the lab as failed), else printed on stderr
-- with exit status 2, without a Lua traceback (the mistake is the caller's, not the script's).
function M.usage_error(msg)
  msg = script_name() .. ": " .. msg
  if M.in_tour then error(msg, 0) end
  io.stderr:write(msg, "\n")
  os.exit(2)
end

-- nil when path is an existing folder this process can write into, else why not. Checked before
-- the lab runs, so that a typo in --out does not cost a whole run.
local function folder_problem(path)
  local f, err = io.open(path .. "/.", "r")
  if not f then
    if err:find("Not a directory", 1, true) then return "is not a folder" end
    if err:find("No such file", 1, true) then return "does not exist (make it first, or leave --out out for a temporary folder)" end
    return err
  end
  f:close()
  -- Writable? A probe file, removed at once (never a file that was already there).
  local probe = path .. "/.kiln-labs-probe"
  local existing = io.open(probe, "r")
  if existing then existing:close(); return nil end
  local w, werr = io.open(probe, "w")
  if not w then return "cannot be written to (" .. tostring(werr):gsub("^.*: ", "") .. ")" end
  w:close()
  os.remove(probe)
  return nil
end

-- Converts text v for option (or positional argument) name of the given kind, or raises a usage
-- error. Kinds: "flag" (no value), "count" (an integer >= 1), "int", "number", "string",
-- "folder" (an existing, writable folder), or a list of the allowed strings.
local function convert(name, kind, v)
  local num = tonumber(v)
  if kind == "count" or kind == "int" then
    local i = math.tointeger(num)
    if not i or (kind == "count" and i < 1) then
      M.usage_error(("%s wants %s, not '%s'"):format(name, kind == "count" and "a positive integer" or "an integer", v))
    end
    return i
  elseif kind == "number" then
    if not num then M.usage_error(("%s wants a number, not '%s'"):format(name, v)) end
    return math.tointeger(num) or num
  elseif kind == "folder" then
    local why = folder_problem(v)
    if why then M.usage_error(("%s %s: %s"):format(name, v, why)) end
    return v
  elseif type(kind) == "table" then
    for _, allowed in ipairs(kind) do
      if v == allowed then return v end
    end
    M.usage_error(("%s wants one of %s, not '%s'"):format(name, table.concat(kind, ", "), v))
  end
  return v
end

-- The kind of an option known only by its default value (labs that give no spec).
local function kind_of(default)
  if math.type(default) == "integer" then return "int" end
  if type(default) == "number" then return "number" end
  return "string"
end

-- Parses argv (the arg table: arg[1], arg[2], ...) into a table: opts.full, opts.out, opts.reps,
-- the lab's own options (opts.size, ...) and its positional arguments by name. defaults fills
-- what is not given; with --full, full_defaults (the tutorials' full sizes) come first.
-- spec (optional) says what the lab takes, so that every mistake is caught before it runs:
--   usage = "kiln scripts/labs/x.lua [...]"   printed by --help (with the common options)
--   options = { size = "count", dtype = { "float32", "float64" }, ... }   options without a
--             default, or with a stricter kind than the default's (see convert)
--   positional = { "m", "n", "k" }            names that positional arguments fill, in order
-- An option the lab does not take, a missing or malformed value, a positional argument too
-- many, or an --out that is not a writable folder is a usage error naming it.
function M.args(argv, defaults, full_defaults, spec)
  spec = spec or {}
  local kinds = {}
  for name, v in pairs(defaults or {}) do kinds[name] = kind_of(v) end
  for name, v in pairs(full_defaults or {}) do kinds[name] = kinds[name] or kind_of(v) end
  for name, kind in pairs(spec.options or {}) do kinds[name] = kind end
  for name, kind in pairs(COMMON) do kinds[name] = kind end
  local function known()
    local names = {}
    for name in pairs(kinds) do names[#names + 1] = "--" .. name end
    table.sort(names)
    return table.concat(names, " ")
  end

  -- --help wins over any mistake elsewhere on the line.
  if spec.usage then
    for _, a in ipairs(argv or {}) do
      if a == "--help" then
        print("usage: " .. spec.usage)
        print(COMMON_HELP)
        if M.in_tour then error("help", 0) end
        os.exit(0)
      end
    end
  end

  local opts, given = {}, {}
  local positional = spec.positional or {}
  local npos = 0
  local i = 1
  while argv and argv[i] ~= nil do
    local a = argv[i]
    local name, inline = a:match("^%-%-([%w%-_]+)=(.*)$")
    name = name or a:match("^%-%-([%w%-_]+)$")
    if name then
      local kind = kinds[name]
      if not kind then
        M.usage_error(("unknown option --%s; its options are %s%s"):format(name, known(),
          spec.usage and " (--help says more)" or ""))
      end
      if given[name] then M.usage_error(("--%s given twice (as %s before)"):format(name, given[name])) end
      given[name] = "--" .. name
      if kind == "flag" then
        if inline then M.usage_error(("--%s takes no value"):format(name)) end
        opts[name] = true
      else
        local v = inline
        if v == nil then
          i = i + 1
          v = argv[i]
          -- "--out --full": the next word is an option, so --out's value is missing.
          if v == nil or v:match("^%-%-%a") then M.usage_error(("option --%s needs a value"):format(name)) end
        end
        opts[name] = convert("--" .. name, kind, v)
      end
    else
      npos = npos + 1
      local pname = positional[npos]
      if not pname then
        M.usage_error(("unexpected argument '%s'%s"):format(a, #positional == 0 and
          " (it takes no positional arguments; its options are " .. known() .. ")" or
          (" (it takes at most %d: %s)"):format(#positional, table.concat(positional, " "):upper())))
      end
      if given[pname] then M.usage_error(("%s given twice (as %s before)"):format(pname:upper(), given[pname])) end
      given[pname] = "argument " .. npos
      opts[pname] = convert(pname:upper(), kinds[pname] or "string", a)
    end
    i = i + 1
  end
  if opts.full then
    for k, v in pairs(full_defaults or {}) do
      if opts[k] == nil then opts[k] = v end
    end
  end
  for k, v in pairs(defaults or {}) do
    if opts[k] == nil then opts[k] = v end
  end
  opts.reps = opts.reps or 5
  return opts
end

-- Prints usage text and ends the script when --help was given (for labs that give args no
-- spec.usage; with one, args itself answers --help).
function M.usage(opts, text)
  if opts.help then
    print(text)
    if M.in_tour then error("help", 0) end
    os.exit(0)
  end
end

-- The folder output goes to: --out DIR, else a new temporary folder (made on first need, once,
-- and named on a line of its own, so nothing lands in the current folder unasked).
function M.out_dir(opts)
  if not opts.out then
    opts.out = os.mkdtemp("kiln-labs")
    M.line("output", opts.out .. "  (name a folder with --out DIR)")
  end
  return opts.out
end

-- The path of an output file in the output folder (M.out_dir).
function M.out_path(opts, file)
  return (M.out_dir(opts):gsub("/$", "")) .. "/" .. file
end

-- Median of a list of numbers (sorts a copy).
function M.median(t)
  local s = {}
  for i, v in ipairs(t) do s[i] = v end
  table.sort(s)
  local n = #s
  if n == 0 then return 0 / 0 end
  if n % 2 == 1 then return s[(n + 1) // 2] end
  return (s[n // 2] + s[n // 2 + 1]) / 2
end

-- Median time in milliseconds of fn() on the device timeline: one warm-up call first (it
-- compiles the kernel, which must not count), then reps calls each between two recorded events.
-- fn may launch several kernels or copy: everything it enqueues is timed.
function M.time_device(fn, reps)
  reps = reps or 5
  fn()
  cuda.synchronize()
  local start, stop = cuda.event(), cuda.event()
  local times = {}
  for i = 1, reps do
    start:record()
    fn()
    stop:record()
    stop:synchronize()
    times[i] = cuda.event_elapsed_time(start, stop)
  end
  return M.median(times)
end

-- Median time in milliseconds of a host-only fn() (a Lua loop, a host array method), measured
-- with os.clock: processor time of this (single-threaded) code, so no device work may run in it.
function M.time_host(fn, reps)
  reps = reps or 5
  local times = {}
  for i = 1, reps do
    local t0 = os.clock()
    fn()
    times[i] = (os.clock() - t0) * 1e3
  end
  return M.median(times)
end

-- "1.234 ms" / "56.7 us" / "2.5 s".
function M.fmt_ms(ms)
  if ms >= 1000 then return ("%.3g s"):format(ms / 1000) end
  if ms >= 1 then return ("%.4g ms"):format(ms) end
  return ("%.4g us"):format(ms * 1000)
end

-- Effective bandwidth of moving bytes in ms, as text.
function M.fmt_gbs(bytes, ms)
  return ("%.3g GB/s"):format(bytes / (ms * 1e-3) / 1e9)
end

-- Arithmetic rate of flops in ms, as text.
function M.fmt_gflops(flops, ms)
  return ("%.3g GFLOP/s"):format(flops / (ms * 1e-3) / 1e9)
end

-- Bytes per element of a dtype.
local DTYPE_BYTES = {
  float32 = 4, float64 = 8, int8 = 1, uint8 = 1, int16 = 2, uint16 = 2, int32 = 4, uint32 = 4,
  int64 = 8, uint64 = 8, bool = 1,
}
function M.dtype_bytes(dtype)
  return DTYPE_BYTES[dtype] or error("unknown dtype " .. tostring(dtype), 2)
end

-- The scalar dtypes' names, sorted (an option kind for labs.args).
function M.dtype_names()
  local names = {}
  for name in pairs(DTYPE_BYTES) do names[#names + 1] = name end
  table.sort(names)
  return names
end

-- The header line of a lab's report: its name, what it does and the backend it runs on.
function M.header(name, what)
  print(("== %s: %s  [backend %s]"):format(name, what, cuda.backend()))
end

-- One "  key: value" line of a report.
function M.line(key, value)
  print(("  %-22s %s"):format(key .. ":", value))
end

-- The verdict of a validation: "name: OK (detail)" or "name: MISMATCH (detail)"; a mismatch
-- ends the script with exit status 1 (or, in the tour, raises an error the tour counts).
function M.verdict(name, ok, detail)
  print(("%s: %s (%s)"):format(name, ok and "OK" or "MISMATCH", detail))
  if not ok then
    if M.in_tour then error(name .. ": MISMATCH", 0) end
    os.exit(1)
  end
end

-- Blocks needed to cover n items with tpb threads per block.
function M.blocks(n, tpb)
  return (n + tpb - 1) // tpb
end

-- A two-pass block reduction with kernel k, tpb threads per block: pass 1 leaves one partial
-- result per block (at most 1024 blocks), pass 2 folds them in one block. Returns f(d) -> the
-- result as a Lua value; the scratch arrays are made once per block count and dtype.
function M.two_pass(k, tpb)
  local scratch = {}
  return function(d)
    local blocks = math.min(1024, M.blocks(d.size, tpb))
    local key = blocks .. " " .. d.dtype
    local s = scratch[key]
    if not s then
      s = { partial = cuda.device_array(blocks, d.dtype), result = cuda.device_array(1, d.dtype) }
      scratch[key] = s
    end
    k[{ blocks, tpb }](d, s.partial)
    k[{ 1, tpb }](s.partial, s.result)
    return s.result:copy_to_host()[1]
  end
end

-- Writes rows (a list of tables) to a CSV file with the given column names.
function M.write_csv(path, columns, rows)
  local f = assert(io.open(path, "w"))
  f:write(table.concat(columns, ","), "\n")
  for _, row in ipairs(rows) do
    local cells = {}
    for i, c in ipairs(columns) do
      local v = row[c]
      cells[i] = type(v) == "number" and ("%.9g"):format(v) or tostring(v == nil and "" or v)
    end
    f:write(table.concat(cells, ","), "\n")
  end
  f:close()
end

-- Prints rows as an aligned table: columns = { {key=, title=, fmt=function or format}, ... }.
function M.print_table(columns, rows)
  local cells, widths = {}, {}
  for j, c in ipairs(columns) do widths[j] = #c.title end
  for i, row in ipairs(rows) do
    cells[i] = {}
    for j, c in ipairs(columns) do
      local v = row[c.key]
      local s
      if v == nil then s = "-"
      elseif type(c.fmt) == "function" then s = c.fmt(v)
      elseif c.fmt then s = c.fmt:format(v)
      else s = tostring(v) end
      cells[i][j] = s
      if #s > widths[j] then widths[j] = #s end
    end
  end
  local function emit(values)
    local parts = {}
    for j, s in ipairs(values) do parts[j] = (" "):rep(widths[j] - #s) .. s end
    print("  " .. table.concat(parts, "  "))
  end
  local titles = {}
  for j, c in ipairs(columns) do titles[j] = c.title end
  emit(titles)
  for _, r in ipairs(cells) do emit(r) end
end

-- The flat values of an array (host or device) as a Lua table, for CPU references.
function M.values(a)
  if a.copy_to_host then a = a:copy_to_host() end
  if a.ndim ~= 1 then a = a:reshape(a.size) end
  return a:totable()
end

return M
