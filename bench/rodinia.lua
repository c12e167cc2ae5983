-- Rodinia-style kernels on kiln (bench/rodinia/<name>.cu: hotspot, pathfinder, nw, srad), timed
-- and checked against their OpenMP versions (bench/rodinia/omp.cpp, kiln_bench_omp). Run by
-- build/kiln. Prints, per benchmark:
--   SAMPLE,rodinia.<name>.kiln,ms,<t>        each timed run (the whole host loop, every launch)
--   SAMPLE,rodinia.<name>.first_call,ms,<t>  the first run, which compiles the kernels
--   SAMPLE,rodinia.<name>.compile,ms,<t>     those compiles alone (k:info().compile_ms, summed)
--   FACT,threads.rodinia.<name>,<mode>       how the cpu backend ran a block's threads
--   FACT,size.rodinia.<name>,... FACT,rodinia.<name>.check,...  FACT,rodinia.<name>.cache,...
-- bench/run.sh turns the samples of several interleaved rounds into FIG lines.
--
-- The check: the result must equal the OpenMP version's (DIR/<name>.npy, written by
-- `kiln_bench_omp --out DIR`) exactly for the integer benchmarks (pathfinder, nw), and within a
-- relative tolerance for the float ones (hotspot, srad: the two sides round differently). A
-- wrong result fails the script (exit status 1) after the other benchmarks have run.
-- Without --ref, the script first runs kiln_bench_omp itself (--omp, default
-- build/bench/kiln_bench_omp) into a temporary folder, and ends with a table of both timings.
--
-- Usage: kiln bench/rodinia.lua [--only hotspot,pathfinder,nw,srad] [--reps R] [--ref DIR]
--          [--omp PATH] [--nonce N] [--<name>-<size> V ...]
--   sizes (defaults in bench/rodinia/host.lua): --hotspot-rows --hotspot-cols --hotspot-steps
--   --hotspot-pyramid --pathfinder-rows --pathfinder-cols --pathfinder-pyramid --nw-n
--   --nw-penalty --srad-rows --srad-cols --srad-iterations --srad-lambda (the pyramid heights
--   are kiln's alone; the others go to kiln_bench_omp too)
--   --nonce N  a define that makes every compile fresh (bench/run.sh passes each round's number)
local here = arg and arg[0] and arg[0]:match("^(.*)/[^/]*$") or "."
local rodinia = dofile(here .. "/rodinia/host.lua")

-- Relative tolerance of the float benchmarks: the largest difference over the largest value.
-- The two sides differ by float rounding alone (fused multiply-adds, sums in another order):
-- 0 to 4e-7 at the default sizes; a wrong neighbour or a missed step is far above 1e-5.
local TOLERANCE = { hotspot = 1e-5, srad = 1e-5 }

local function fail_usage(msg)
  io.stderr:write("rodinia.lua: ", msg, "\n")
  os.exit(2)
end

local opts = { reps = 3, only = table.concat(rodinia.NAMES, ","), omp = here .. "/../build/bench/kiln_bench_omp" }
local sizes, omp_args = {}, {}
do
  local i = 1
  while arg[i] do
    local key = arg[i]:match("^%-%-(.+)$")
    local value = arg[i + 1]
    if not key or value == nil then fail_usage("expected --option value, got '" .. arg[i] .. "'") end
    local name, size = key:match("^(%a+)%-(%a+)$")
    if name and rodinia.DEFAULTS[name] then
      if rodinia.DEFAULTS[name][size] == nil then fail_usage("unknown option --" .. key) end
      local v = tonumber(value) or fail_usage(("--%s wants a number, not '%s'"):format(key, value))
      sizes[name] = sizes[name] or {}
      sizes[name][size] = math.tointeger(v) or v
      if size ~= "pyramid" then omp_args[#omp_args + 1] = ("--%s %s"):format(key, value) end
    elseif key == "reps" then
      opts.reps = math.tointeger(tonumber(value))
      if not opts.reps or opts.reps < 1 then fail_usage("--reps wants a positive integer") end
    elseif key == "only" or key == "ref" or key == "omp" or key == "nonce" then
      opts[key] = value
    else
      fail_usage("unknown option --" .. key)
    end
    i = i + 2
  end
end
local only = {}
for name in opts.only:gmatch("[^,]+") do
  if not rodinia.DEFAULTS[name] then fail_usage(("no benchmark '%s' (%s)"):format(name, table.concat(rodinia.NAMES, ", "))) end
  only[#only + 1] = name
end

-- Wall-clock milliseconds of fn(), including the work it queued (events bracket it).
local function wall_ms(fn)
  local a, b = cuda.event(), cuda.event()
  a:record()
  local result = fn()
  b:record()
  b:synchronize()
  return cuda.event_elapsed_time(a, b), result
end

local function shell_quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

-- Without --ref: run the OpenMP versions now, keeping their timings for the closing table; their
-- results go to a temporary folder, removed at the end.
local omp_ms, own_ref = {}, false
if not opts.ref then
  local f = io.open(opts.omp)
  if not f then fail_usage(opts.omp .. " is missing: build it (cmake --build build --target kiln_bench_omp) or pass --ref DIR") end
  f:close()
  opts.ref, own_ref = os.mkdtemp("kiln-rodinia"), true
  local command = ("%s --only %s --reps %d --out %s %s"):format(shell_quote(opts.omp), opts.only, opts.reps,
    shell_quote(opts.ref), table.concat(omp_args, " "))
  local p = assert(io.popen(command))
  for line in p:lines() do
    print(line)
    local name, ms = line:match("^SAMPLE,rodinia%.(%a+)%.omp,ms,(.+)$")
    if name then omp_ms[name] = math.min(omp_ms[name] or math.huge, tonumber(ms)) end
  end
  if not p:close() then fail_usage("kiln_bench_omp failed: " .. command) end
end

-- How a benchmark's kernels ran their threads: one mode, or each kernel's.
local function threads_of(kernels)
  local names, modes, distinct = {}, {}, {}
  for name in pairs(kernels) do names[#names + 1] = name end
  table.sort(names)
  for _, name in ipairs(names) do
    local mode = kernels[name]:info().threads or cuda.backend()
    modes[#modes + 1] = name .. ": " .. mode
    distinct[mode] = true
  end
  local only_mode = next(distinct)
  if next(distinct, only_mode) == nil then return only_mode end
  return table.concat(modes, "; ")
end

-- nil when result (a host array) matches the reference file, else why not.
local function mismatch(name, result, exact)
  local path = opts.ref .. "/" .. name .. ".npy"
  local ok, ref = pcall(array.load, path)
  if not ok then return "no reference: " .. tostring(ref) end
  if ref.size ~= result.size then return ("%d values, the reference %d"):format(result.size, ref.size) end
  result = result:reshape(ref.shape)
  if exact then
    if array.equal(result, ref) then return nil, "equal" end
    for i = 1, ref.size do
      if result[i] ~= ref[i] then
        return ("%d of %d values differ; the first at flat index %d: %s, the reference %s"):format(
          result:ne(ref):astype("int64"):sum(), ref.size, i - 1, result[i], ref[i])
      end
    end
    return "not equal"
  end
  local scale = math.max(math.abs(ref:max()), math.abs(ref:min()))
  local relative = array.max_abs_diff(result, ref) / scale
  local note = ("largest difference %.3g of the largest value"):format(relative)
  if not (relative <= TOLERANCE[name]) then return note .. (" (tolerance %g)"):format(TOLERANCE[name]) end
  return nil, note
end

print(("FACT,rodinia.backend,%s"):format(cuda.backend()))
local failures, kiln_ms, first_ms = {}, {}, {}
for _, name in ipairs(only) do
  local ok, bench = pcall(rodinia.prepare, name, sizes[name], { nonce = opts.nonce })
  if not ok then
    -- A size the kernels cannot take is the caller's mistake; anything else is kiln's failure.
    if tostring(bench):match("^rodinia ") then fail_usage(bench) end
    error(bench, 0)
  end
  print(("FACT,size.rodinia.%s,%s"):format(name, bench.describe))
  local first = wall_ms(bench.run)  -- compiles every kernel (or loads it from a cache)
  print(("SAMPLE,rodinia.%s.first_call,ms,%.6g"):format(name, first))
  first_ms[name] = first
  local compile, cache = 0, {}
  for _, k in pairs(bench.kernels) do
    local info = k:info()
    compile = compile + (info.compile_ms or 0)
    cache[info.cache or "?"] = true
  end
  print(("SAMPLE,rodinia.%s.compile,ms,%.6g"):format(name, compile))
  print(("FACT,rodinia.%s.cache,%s"):format(name, next(cache)))
  print(("FACT,threads.rodinia.%s,%s"):format(name, threads_of(bench.kernels)))
  local result
  for _ = 1, opts.reps do
    local ms
    ms, result = wall_ms(bench.run)
    print(("SAMPLE,rodinia.%s.kiln,ms,%.6g"):format(name, ms))
    kiln_ms[name] = math.min(kiln_ms[name] or math.huge, ms)
  end
  io.stdout:flush()
  local why, note = mismatch(name, result:copy_to_host(), bench.exact)
  print(("FACT,rodinia.%s.check,%s"):format(name, (why and ("WRONG: " .. why) or note):gsub(",", ";")))
  if why then failures[#failures + 1] = ("%s: %s"):format(name, why) end
  bench = nil
  collectgarbage()
end

if next(omp_ms) then
  print()
  print(("%-11s %12s %12s %10s %14s"):format("benchmark", "kiln, ms", "OpenMP, ms", "kiln/omp", "first call, ms"))
  for _, name in ipairs(only) do
    print(("%-11s %12.4g %12.4g %9.2fx %14.4g"):format(name, kiln_ms[name], omp_ms[name] or 0 / 0,
      kiln_ms[name] / (omp_ms[name] or 0 / 0), first_ms[name]))
  end
  print("(fastest of " .. opts.reps .. " runs each; OpenMP on " .. (os.getenv("OMP_NUM_THREADS") or "its default") .. " threads)")
end

if own_ref then
  for _, name in ipairs(only) do os.remove(opts.ref .. "/" .. name .. ".npy") end
  os.remove(opts.ref)
end

if #failures > 0 then
  io.stderr:write("rodinia.lua: WRONG RESULTS against the OpenMP versions:\n  ", table.concat(failures, "\n  "), "\n")
  os.exit(1)
end
