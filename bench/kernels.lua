-- kiln's Lua-side benchmarks, run by build/kiln on the current backend. Prints one line per
-- figure: "FIG,id,unit,median,min,max,reps" (bench/run.sh collects them into the CSV), and
-- "FACT,key,value" lines. Figures:
--   compile.cold.<lab>   cold compile of each lab kernel on this backend (k:info().compile_ms)
--   compile.ptx.<lab>    kiln's NVRTC path from Lua, k:ptx(), wall time (the target compares
--                        nvrtc_kiln/<lab> with nvrtc_bare/<lab>, both in bench/micro.cpp's process)
--   lua_launch/<n>       an empty <<<1, 32>>> launch from a Lua loop with n = 0, 1, 4, 16 arguments
--   lab.<lab>            each lab kernel's time per launch at the benchmark sizes
--   (FACT resources.<lab>.<arch>: registers|spill stores/loads|shared|local|occupancy|limit
--   from k:resources(arch, 256), for the report's table)
-- Every compile gets a fresh -DKILN_BENCH_NONCE so neither cache can answer; run.sh also points
-- KILN_CACHE_DIR at an empty folder. Sizes: KILN_BENCH_IMAGE, KILN_BENCH_MATMUL, KILN_BENCH_N.
-- Usage: kiln bench/kernels.lua [--only compile,launch,labs] [--reps R]
local here = arg and arg[0] and arg[0]:match("^(.*)/[^/]*$") or "."

local opts = { reps = 5, only = "compile,launch,labs" }
do
  local i = 1
  while arg[i] do
    local name = arg[i]:match("^%-%-(.*)$")
    if name then opts[name] = math.tointeger(tonumber(arg[i + 1])) or arg[i + 1]; i = i + 1 end
    i = i + 1
  end
end
local function wanted(part) return ("," .. opts.only .. ","):find("," .. part .. ",", 1, true) ~= nil end

local IMAGE = math.tointeger(tonumber(os.getenv("KILN_BENCH_IMAGE") or "")) or 1024
local MATMUL = math.tointeger(tonumber(os.getenv("KILN_BENCH_MATMUL") or "")) or 512
local N = math.tointeger(tonumber(os.getenv("KILN_BENCH_N") or "")) or (1 << 24)

-- Median, min and max of a list.
local function stats(t)
  local s = {}
  for i, v in ipairs(t) do s[i] = v end
  table.sort(s)
  local n = #s
  local median = n % 2 == 1 and s[(n + 1) // 2] or (s[n // 2] + s[n // 2 + 1]) / 2
  return median, s[1], s[n]
end

-- Prints one figure line from a list of samples.
local function fig(id, unit, samples)
  local median, lo, hi = stats(samples)
  print(("FIG,%s,%s,%.6g,%.6g,%.6g,%d"):format(id, unit, median, lo, hi, #samples))
  io.stdout:flush()
end

-- Wall-clock milliseconds of fn(), including all work it queued: events bracket it (the cpu
-- backend's events read the wall clock; on a GPU the second waits for the queued work).
local function wall_ms(fn)
  local a, b = cuda.event(), cuda.event()
  a:record()
  fn()
  b:record()
  b:synchronize()
  return cuda.event_elapsed_time(a, b)
end

local function blocks(n, tpb) return (n + tpb - 1) // tpb end

local dev = cuda.get_current_device()
local SMS = dev.multiprocessors or 8

-- Each lab kernel: file, defines, and a function making its arguments for a size factor
-- (false: tiny, for compiles; true: the benchmark size) and returning a launch function.
-- Both matrix multiplies: square float32 matrices, 16 x 16 blocks.
local function matmul_setup(big)
  local m = big and MATMUL or 16
  local a = cuda.to_device(array.random.uniform({ m, m }, { dtype = "float32", seed = 6 }))
  local b = cuda.to_device(array.random.uniform({ m, m }, { dtype = "float32", seed = 7 }))
  local c = cuda.device_array({ m, m }, "float32")
  return function(k) k[{ { blocks(m, 16), blocks(m, 16) }, { 16, 16 } }](a, b, c) end, { a, b, c }
end

local LABS = {
  { lab = "copy", file = "copy.cu", defines = {}, setup = function(big)
      local n = big and N or 1024
      local a, b = cuda.to_device(array.random.uniform(n, { dtype = "float32", seed = 1 })), cuda.device_array(n, "float32")
      return function(k) k[{ blocks(n, 256), 256 }](a, b) end, { a, b }
    end },
  { lab = "julia", file = "julia.cu", defines = {}, setup = function(big)
      local s = big and IMAGE or 16
      local d = cuda.device_array({ s, s }, "float64")
      return function(k) k[{ { blocks(s, 16), blocks(s, 16) }, { 16, 16 } }](d, -0.8, 0.156, -1.6, 1.6, -1.2, 1.2) end, { d, -0.8, 0.156, -1.6, 1.6, -1.2, 1.2 }
    end },
  { lab = "blur", file = "blur.cu", defines = { RADIUS = 4 }, setup = function(big)
      local s = big and IMAGE or 16
      local a, b = cuda.to_device(array.random.uniform({ s, s }, { dtype = "float32", seed = 2 })), cuda.device_array({ s, s }, "float32")
      return function(k) k[{ { blocks(s, 16), blocks(s, 16) }, { 16, 16 } }](a, b) end, { a, b }
    end },
  { lab = "blur_shared", file = "blur_shared.cu", defines = { RADIUS = 4, TILE = 16 }, setup = function(big)
      local s = big and IMAGE or 16
      local a, b = cuda.to_device(array.random.uniform({ s, s }, { dtype = "float32", seed = 2 })), cuda.device_array({ s, s }, "float32")
      return function(k) k[{ { blocks(s, 16), blocks(s, 16) }, { 16, 16 } }](a, b) end, { a, b }
    end },
  { lab = "histogram", file = "histogram.cu", defines = { BINS = 256 }, setup = function(big)
      local n = big and N or 1024
      local v = cuda.to_device(array.random.integers(0, 256, n, { dtype = "uint8", seed = 3 }))
      local bins = cuda.to_device(array.zeros(256, "uint32"))
      local nb = math.min(blocks(n, 256), 4 * SMS)
      return function(k) k[{ nb, 256 }](v, bins) end, { v, bins }
    end },
  { lab = "reduce", file = "reduce.cu", defines = { TPB = 256 }, setup = function(big)
      local n = big and N or 1024
      local a = cuda.to_device(array.random.uniform(n, { dtype = "float32", seed = 4 }))
      local nb = math.min(1024, blocks(n, 256))
      local partial, result = cuda.device_array(nb, "float32"), cuda.device_array(1, "float32")
      return function(k) k[{ nb, 256 }](a, partial); k[{ 1, 256 }](partial, result) end, { a, partial }
    end },
  { lab = "abs_sum", file = "abs_sum.cu", defines = { TPB = 256 }, setup = function(big)
      local n = big and N or 1024
      local a = cuda.to_device(array.random.uniform(n, { low = -1, dtype = "float32", seed = 5 }))
      local nb = math.min(1024, blocks(n, 256))
      local partial, result = cuda.device_array(nb, "float32"), cuda.device_array(1, "float32")
      return function(k) k[{ nb, 256 }](a, partial); k[{ 1, 256 }](partial, result) end, { a, partial }
    end },
  { lab = "matmul", file = "matmul.cu", defines = {}, setup = matmul_setup },
  { lab = "matmul_tiled", file = "matmul_tiled.cu", defines = { TPB = 16 }, setup = matmul_setup },
  { lab = "normalize", file = "normalize.cu", defines = { TPB = 256 }, setup = function(big)
      local n = big and (N // 16) or 1024
      local x, y = cuda.to_device(array.random.uniform(n, { dtype = "float64", seed = 8 })), cuda.device_array(n, "float64")
      return function(k) k[{ 1, 256 }](x, y) end, { x, y }
    end },
}

-- A kernel of the lab that neither cache has seen: the nonce changes its compile options.
local nonce = 0
local function fresh_kernel(l)
  nonce = nonce + 1
  local defines = { KILN_BENCH_NONCE = nonce }
  for k, v in pairs(l.defines) do defines[k] = v end
  return cuda.jit_file(l.file, { defines = defines })
end

print(("FACT,backend,%s"):format(cuda.backend()))
print(("FACT,device,%s"):format((dev.name or "?"):gsub(",", ";")))
print(("FACT,sizes,image %dx%d; matmul %dx%d; N %d"):format(IMAGE, IMAGE, MATMUL, MATMUL, N))

if wanted("compile") then
  local reps = math.min(opts.reps, 3)
  local ptx_ok, why = pcall(function() local k = fresh_kernel(LABS[1]); k:ptx(cuda.device_array(4, "float32"), cuda.device_array(4, "float32")) end)
  if not ptx_ok then print(("FACT,skip.ptx,%s"):format(tostring(why):gsub("[,\n]", ";"))) end
  for _, l in ipairs(LABS) do
    local launch, args = l.setup(false)
    local cold, ptx = {}, {}
    for i = 1, reps do
      local k = fresh_kernel(l)
      launch(k)
      cuda.synchronize()
      local info = k:info()
      cold[i] = info.compile_ms
      if i == 1 then print(("FACT,kiln.name.%s,%s"):format(l.lab, (info.name_expression or info.name):gsub(",", ";"))) end
      if ptx_ok then
        local k2 = fresh_kernel(l)
        ptx[i] = wall_ms(function() k2:ptx(table.unpack(args)) end)
      end
    end
    fig("compile.cold." .. l.lab, "ms", cold)
    if ptx_ok and #ptx > 0 then fig("compile.ptx." .. l.lab, "ms", ptx) end
  end
end

if wanted("launch") then
  local f = io.open(here .. "/launch_args.cu")
  local src = f:read("a")
  f:close()
  local p = {}
  for i = 1, 8 do p[i] = cuda.device_array(16, "float32") end
  local calls = {
    [0] = function(k) k[{ 1, 32 }]() end,
    [1] = function(k) k[{ 1, 32 }](p[1]) end,
    [4] = function(k) k[{ 1, 32 }](p[1], p[2], 3, 4.5) end,
    [16] = function(k) k[{ 1, 32 }](p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], 1, 2, 3, 4, 1.5, 2.5, 3.5, 4.5) end,
  }
  local loops = 20000
  for _, n in ipairs({ 0, 1, 4, 16 }) do
    local k = cuda.jit(src, { name = "args" .. n })
    local call = calls[n]
    call(k)
    local samples = {}
    for r = 1, 7 do
      samples[r] = wall_ms(function() for _ = 1, loops do call(k) end end) * 1e3 / loops
    end
    fig("lua_launch/" .. n, "us", samples)
  end
end

if wanted("labs") then
  for _, l in ipairs(LABS) do
    local k = cuda.jit_file(l.file, { defines = l.defines })
    local launch = l.setup(true)
    launch(k)  -- compiles (or loads from the cache), warms caches
    cuda.synchronize()
    if k:info().threads then print(("FACT,threads.%s,%s"):format(l.lab, k:info().threads)) end
    -- What its cubins say, for sm_80 and sm_90 (no GPU needed), at 256 threads a block.
    for _, arch in ipairs({ "sm_80", "sm_90" }) do
      local ok, r = pcall(k.resources, k, arch, 256)
      if ok then
        print(("FACT,resources.%s.%s,%d|%s|%d|%d|%.2f|%s"):format(l.lab, arch, r.registers,
          r.spill_stores and (r.spill_stores .. "/" .. r.spill_loads) or "?", r.shared_bytes,
          r.local_bytes, r.occupancy, r.occupancy_limit))
      end
    end
    local reps = (l.lab:find("matmul") and cuda.backend() == "cpu") and 3 or opts.reps
    local samples = {}
    for r = 1, reps do samples[r] = wall_ms(function() launch(k) end) end
    fig("lab." .. l.lab, "ms", samples)
    collectgarbage()
  end
end
