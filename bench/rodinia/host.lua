-- The host side of the Rodinia-style benchmarks on kiln: inputs, compiles and host loops of
-- hotspot, pathfinder, nw and srad (bench/rodinia/<name>.cu). bench/rodinia.lua times them and
-- checks them against their OpenMP versions (bench/rodinia/omp.cpp);
-- tests/conformance/rodinia.lua runs them at small sizes against Lua references.
--   local rodinia = dofile(".../bench/rodinia/host.lua")
--   local b = rodinia.prepare("hotspot", { rows = 64, cols = 64, steps = 5 }, { nonce = 1 })
--   local out = b.run()           -- the result, a device array; b.kernels: name -> kernel
-- Sizes left out take rodinia.DEFAULTS; inputs come from inputs.cu with rodinia.SEEDS, which
-- omp.cpp uses too, so both sides start from the same numbers.
local M = {}

M.dir = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "."

M.NAMES = { "hotspot", "pathfinder", "nw", "srad" }

-- Sizes of the benchmark (each about 20-200 ms per run on kiln on 2 cores). Kernel-side
-- parameters (pyramid heights) are kiln's alone; the OpenMP versions have no pyramid.
M.DEFAULTS = {
  hotspot = { rows = 1024, cols = 1024, steps = 20, pyramid = 2 },
  pathfinder = { rows = 100, cols = 100000, pyramid = 20 },
  nw = { n = 2048, penalty = 10 },
  srad = { rows = 1024, cols = 1024, iterations = 3, lambda = 0.5 },
}

-- The generator's seeds, and the constants of the heat model, as omp.cpp has them.
M.SEEDS = { temp = 1, power = 2, wall = 3, reference = 4, image = 5 }
M.HOTSPOT = { cap_step = 0.05, rx_1 = 2.0, ry_1 = 2.0, rz_1 = 0.1, amb_temp = 300.0 }
M.NW_TILE = 16
M.SRAD_BLOCK, M.SRAD_SUM_THREADS, M.SRAD_SUM_BLOCKS = 16, 256, 256

local function blocks(n, per_block) return (n + per_block - 1) // per_block end

-- Sizes: defaults overridden by what is given; unknown keys are an error (a typo must not
-- silently measure the default).
local function sizes_of(name, given)
  local s = {}
  for k, v in pairs(M.DEFAULTS[name]) do s[k] = v end
  for k, v in pairs(given or {}) do
    if s[k] == nil then error(("rodinia %s: unknown size '%s'"):format(name, k), 0) end
    s[k] = v
  end
  return s
end

local function require_size(name, ok, what)
  if not ok then error(("rodinia %s: %s"):format(name, what), 0) end
end

-- The input generator (inputs.cu), compiled once per process.
local generator
local function inputs()
  generator = generator or cuda.module({ file = M.dir .. "/inputs.cu" })
  return generator
end

function M.random_ints(n, seed, lo, hi)
  local d = cuda.device_array(n, "int32")
  inputs().random_ints[{ blocks(n, 256), 256 }](d, n, seed, lo, hi)
  return d
end

function M.random_floats(n, seed, lo, span)
  local d = cuda.device_array(n, "float32")
  inputs().random_floats[{ blocks(n, 256), 256 }](d, n, seed, lo, span)
  return d
end

-- A kernel module of bench/rodinia/<file> with these defines (plus the nonce, which makes a
-- fresh compile: neither cache has seen it).
local function compile(file, defines, options)
  defines = defines or {}
  if options and options.nonce then defines.KILN_BENCH_NONCE = options.nonce end
  return cuda.module({ file = M.dir .. "/" .. file }, { defines = defines })
end

local PREPARE = {}

-- hotspot: temperature after `steps` steps; launches of up to `pyramid` steps each.
function PREPARE.hotspot(s, options)
  require_size("hotspot", s.pyramid >= 1 and 16 - 2 * s.pyramid >= 1, "pyramid must be 1 to 7 for 16 x 16 blocks")
  require_size("hotspot", s.rows >= 1 and s.cols >= 1 and s.steps >= 1, "rows, cols and steps must be positive")
  local m = compile("hotspot.cu", { BLOCK_SIZE = 16, PYRAMID_HEIGHT = s.pyramid }, options)
  local k = m.hotspot_pyramid
  local n = s.rows * s.cols
  local power = M.random_floats(n, M.SEEDS.power, 0.0, 2.0)
  local temp0 = M.random_floats(n, M.SEEDS.temp, 320.0, 20.0)
  local buffers = { cuda.device_array(n, "float32"), cuda.device_array(n, "float32") }
  local tile = 16 - 2 * s.pyramid
  local grid = { { blocks(s.cols, tile), blocks(s.rows, tile) }, { 16, 16 } }
  local h = M.HOTSPOT
  local function run()
    local src = temp0  -- read only: every run starts from the same temperatures
    local launch = 0
    for done = 0, s.steps - 1, s.pyramid do
      local dst = buffers[launch % 2 + 1]
      k[grid](math.min(s.pyramid, s.steps - done), power, src, dst, s.rows, s.cols,
              h.cap_step, h.rx_1, h.ry_1, h.rz_1, h.amb_temp)
      src, launch = dst, launch + 1
    end
    return src
  end
  return { kernels = { hotspot_pyramid = k }, run = run, inputs = { power = power, temp = temp0 },
           shape = { s.rows, s.cols }, exact = false,
           describe = ("%dx%d float32; %d steps; pyramid %d"):format(s.rows, s.cols, s.steps, s.pyramid) }
end

-- pathfinder: the last row of cheapest-path totals through a rows x cols grid of costs 0..9.
function PREPARE.pathfinder(s, options)
  require_size("pathfinder", s.rows >= 2 and s.cols >= 1, "needs at least 2 rows and 1 column")
  require_size("pathfinder", s.pyramid >= 1 and 256 - 2 * s.pyramid >= 1, "pyramid must be 1 to 127 for 256-thread blocks")
  local m = compile("pathfinder.cu", { BLOCK_SIZE = 256, PYRAMID_HEIGHT = s.pyramid }, options)
  local k = m.pathfinder_pyramid
  local wall = M.random_ints(s.rows * s.cols, M.SEEDS.wall, 0, 9)
  local buffers = { cuda.device_array(s.cols, "int32"), cuda.device_array(s.cols, "int32") }
  local nblocks = blocks(s.cols, 256 - 2 * s.pyramid)
  local function run()
    local src = wall  -- its first row is where every path starts
    local launch = 0
    for done = 0, s.rows - 2, s.pyramid do
      local dst = buffers[launch % 2 + 1]
      k[{ nblocks, 256 }](math.min(s.pyramid, s.rows - 1 - done), wall, src, dst, s.cols, done + 1)
      src, launch = dst, launch + 1
    end
    return src
  end
  return { kernels = { pathfinder_pyramid = k }, run = run, inputs = { wall = wall },
           shape = { s.cols }, exact = true,
           describe = ("%d columns x %d rows int32; pyramid %d"):format(s.cols, s.rows, s.pyramid) }
end

-- The score matrix's first row and column: a leading gap of i costs i * penalty.
local function nw_borders(n, penalty)
  local h = array.zeros({ n + 1, n + 1 }, "int32")
  for i = 0, n do
    h[i + 1] = -i * penalty
    h[i * (n + 1) + 1] = -i * penalty
  end
  return h
end

-- nw: the (n + 1) x (n + 1) score matrix, one launch per anti-diagonal of 16 x 16 tiles.
function PREPARE.nw(s, options)
  local tile = M.NW_TILE
  require_size("nw", s.n >= tile and s.n % tile == 0, ("n must be a positive multiple of %d"):format(tile))
  local m = compile("nw.cu", { TILE = tile }, options)
  local k = m.nw_tile_diagonal
  local n, tiles = s.n, s.n // tile
  local reference = M.random_ints((n + 1) * (n + 1), M.SEEDS.reference, -4, 5)
  local score = cuda.to_device(nw_borders(n, s.penalty))
  local function run()
    -- Each run overwrites every cell below the borders, so runs need no reset.
    for diagonal = 0, 2 * tiles - 2 do
      local first = diagonal < tiles and 0 or diagonal - tiles + 1
      local last = math.min(diagonal, tiles - 1)
      k[{ last - first + 1, tile }](score, reference, n, s.penalty, diagonal)
    end
    return score
  end
  return { kernels = { nw_tile_diagonal = k }, run = run, inputs = { reference = reference },
           shape = { n + 1, n + 1 }, exact = true,
           describe = ("%dx%d int32; penalty %d; %dx%d tiles"):format(n, n, s.penalty, tile, tile) }
end

-- srad: the image after `iterations` iterations; q0^2 from the device's partial sums, added up
-- on the host in double precision.
function PREPARE.srad(s, options)
  local b = M.SRAD_BLOCK
  require_size("srad", s.rows >= b and s.cols >= b and s.rows % b == 0 and s.cols % b == 0,
               ("rows and cols must be positive multiples of %d"):format(b))
  local m = compile("srad.cu", { BLOCK_SIZE = b, SUM_THREADS = M.SRAD_SUM_THREADS }, options)
  local n = s.rows * s.cols
  local image = M.random_floats(n, M.SEEDS.image, 0.5, 1.0)
  local function plane() return cuda.device_array(n, "float32") end
  local dN, dS, dW, dE, c = plane(), plane(), plane(), plane(), plane()
  local buffers = { plane(), plane() }
  local nsum = M.SRAD_SUM_BLOCKS
  local sums, host_sums = cuda.device_array(2 * nsum, "float32"), array.zeros(2 * nsum, "float32")
  local grid = { { s.cols // b, s.rows // b }, { b, b } }
  local function q0sqr(J)
    m.srad_sums[{ nsum, M.SRAD_SUM_THREADS }](J, n, sums)
    sums:copy_to_host(host_sums)
    local total, total2 = 0.0, 0.0
    for i = 1, nsum do
      total, total2 = total + host_sums[i], total2 + host_sums[nsum + i]
    end
    local mean = total / n
    local variance = total2 / n - mean * mean
    return variance / (mean * mean)
  end
  local function run()
    local src = image
    for it = 1, s.iterations do
      local dst = buffers[(it - 1) % 2 + 1]
      local q = q0sqr(src)
      m.srad_coefficients[grid](src, dN, dS, dW, dE, c, s.rows, s.cols, q)
      m.srad_update[grid](src, dst, dN, dS, dW, dE, c, s.rows, s.cols, s.lambda)
      src = dst
    end
    return src
  end
  return { kernels = { srad_sums = m.srad_sums, srad_coefficients = m.srad_coefficients, srad_update = m.srad_update },
           run = run, inputs = { image = image }, shape = { s.rows, s.cols }, exact = false,
           describe = ("%dx%d float32; %d iterations; lambda %g"):format(s.rows, s.cols, s.iterations, s.lambda) }
end

-- The benchmark `name` at these sizes, compiled lazily (on its first run). options.nonce forces
-- fresh compiles. Returns { run = function() -> device array, kernels = {name = kernel},
-- inputs = {name = device array}, shape, exact (integer results), describe (sizes in words),
-- sizes }.
function M.prepare(name, given, options)
  local prepare = PREPARE[name]
  if not prepare then error(("rodinia: no benchmark '%s' (%s)"):format(name, table.concat(M.NAMES, ", ")), 0) end
  local s = sizes_of(name, given)
  local b = prepare(s, options)
  b.sizes = s
  return b
end

return M
