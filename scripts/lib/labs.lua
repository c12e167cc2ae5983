-- Shared helpers for the labs in scripts/labs/: command-line options, timing, reports,
-- validation verdicts, launch geometry and CSV output. Every lab starts with
--   local here = arg[0]:match("^(.*)/[^/]*$") or "."
--   package.path = here .. "/../lib/?.lua;" .. package.path
--   local labs = require "labs"
local M = {}

-- Set by the tour: a failed check raises an error (caught by the tour) instead of exiting.
M.in_tour = false

-- Options that take no value; every other --name takes the next argument.
local FLAGS = { full = true, quiet = true, help = true, ["no-pictures"] = true }

-- Parses argv (the arg table: arg[1], arg[2], ...) into a table: opts.full, opts.size, opts.out,
-- opts.reps, any other --name value (numbers converted), and positional arguments in opts[1..].
-- defaults fills what is not given; with --full, full_defaults (the seed's sizes) come first.
function M.args(argv, defaults, full_defaults)
  local opts = {}
  local i = 1
  while argv and argv[i] ~= nil do
    local a = argv[i]
    local name, inline = a:match("^%-%-([%w%-_]+)=(.*)$")
    name = name or a:match("^%-%-([%w%-_]+)$")
    if name and FLAGS[name] then
      opts[name] = true
    elseif name then
      local v = inline
      if v == nil then
        i = i + 1
        v = argv[i]
        if v == nil then error("option --" .. name .. " needs a value", 0) end
      end
      opts[name] = math.tointeger(tonumber(v)) or tonumber(v) or v
    else
      opts[#opts + 1] = math.tointeger(tonumber(a)) or tonumber(a) or a
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

-- Prints usage text and ends the script when --help was given.
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
