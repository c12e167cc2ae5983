-- Conformance: 16-bit floats (kernels/half.cu). References round through binary16 and bfloat16
-- here, in Lua, bit by bit: round to nearest, ties to even.
local here = arg[0]:match("^(.*)/") or "."
local m = cuda.module({ file = here .. "/kernels/half.cu" })

-- x rounded to a binary float with `bits` fraction bits and exponents from emin (subnormals
-- below it) up to emax (infinity above).
local function round_to(x, bits, emin, emax)
  if x == 0 or x ~= x or x == math.huge or x == -math.huge then return x end
  local _, e = math.frexp(math.abs(x))  -- |x| = f * 2^e, f in [0.5, 1)
  local exp = math.max(e - 1, emin)
  local ulp = 2.0 ^ (exp - bits)
  local q = math.abs(x) / ulp
  local r = math.floor(q)
  if q - r > 0.5 or (q - r == 0.5 and r % 2 == 1) then r = r + 1 end
  local y = r * ulp
  if y >= 2.0 ^ (emax + 1) then y = math.huge end
  return x < 0 and -y or y
end
-- x rounded toward zero ("rz"), down ("rd") or up ("ru") to the same kind of float.
local function round_dir(x, bits, emin, emax, mode)
  if x == 0 or x ~= x or x == math.huge or x == -math.huge then return x end
  local ax = math.abs(x)
  local _, e = math.frexp(ax)
  local ulp = 2.0 ^ (math.max(e - 1, emin) - bits)
  local away = (mode == "ru" and x > 0) or (mode == "rd" and x < 0)  -- the magnitude rounds up
  local y = (away and math.ceil(ax / ulp) or math.floor(ax / ulp)) * ulp
  local max = (2 - 2.0 ^ -bits) * 2.0 ^ emax
  if y > max then y = away and math.huge or max end
  return x < 0 and -y or y
end
local function f16(x) return round_to(x, 10, -14, 15) end
local function ints(n, lo, hi, dtype, seed)
  return array.random.integers(lo, hi + 1, n, { seed = seed }):astype(dtype)
end
local function bf16(x) return round_to(x, 7, -126, 127) end
local function f32(x) return round_to(x, 23, -126, 127) end

local n = 3000
local a = array.random.uniform(n, { low = -300, high = 300, dtype = "float32", seed = 9 })
local b = array.random.uniform(n, { low = -2, high = 2, dtype = "float32", seed = 10 })
a[1], b[1] = 65519, 1e-7      -- rounds to 65504; to a subnormal
a[2], b[2] = 65520, -6e-8     -- rounds to infinity; the smallest subnormal
a[3], b[3] = 2049, 1.00048828125  -- a tie: to even
local out = cuda.device_array(8 * n, "float32")
m.narrow_math[{ (n + 127) // 128, 128 }](cuda.to_device(a), cuda.to_device(b), out, n)
local h = out:copy_to_host()
local bad = 0
for i = 1, n do
  local ha, hb = f16(a[i]), f16(b[i])
  local ba, bb = bf16(a[i]), bf16(b[i])
  local want = { ha, f16(ha + hb), f16(ha * hb), f16(ha * hb + 1), f32(f16(2 * ha) + f16(2 * hb)),
                 ba, bf16(f32(ba + bb)), ha < hb and 1 or 0 }
  for k = 1, 8 do
    local got = h[(i - 1) * 8 + k]
    if got ~= want[k] then
      bad = bad + 1
      if bad <= 5 then print(("input %d (%.9g, %.9g), result %d: %.9g, expected %.9g"):format(i, a[i], b[i], k - 1, got, want[k])) end
    end
  end
end
assert(bad == 0, bad .. " results differ")

-- float16 arrays in and out: elements read back as the binary16 nearest each value, and __hfma
-- rounds a * x + y once (exact in a Lua double for these magnitudes).
local xs = array.random.uniform(n, { low = -4, high = 4, dtype = "float16", seed = 11 })
local ys = array.random.uniform(n, { low = -4, high = 4, dtype = "float16", seed = 12 })
for i = 1, 20 do assert(xs[i] == f16(xs[i]), "float16 element " .. i .. " is not a binary16 value") end
local dy = cuda.to_device(ys)
m.haxpy[{ (n + 127) // 128, 128 }](cuda.to_device(xs), dy, 1.5, n)
local hy = dy:copy_to_host()
assert(hy.dtype == "float16")
for i = 1, n do
  local want = f16(1.5 * xs[i] + ys[i])
  assert(hy[i] == want, ("haxpy %d: %.9g, expected %.9g"):format(i, hy[i], want))
end
-- The same through __half2: the arrays viewed as pairs, a given as a table of lanes.
local dy2 = cuda.to_device(ys)
m.haxpy2[{ (n // 2 + 127) // 128, 128 }](cuda.to_device(xs):view("half2"), dy2:view("half2"),
                                          { x = 1.5, y = -0.25 }, n // 2)
local hy2 = dy2:copy_to_host()
for i = 1, n do
  local want = f16((i % 2 == 1 and 1.5 or -0.25) * xs[i] + ys[i])
  assert(hy2[i] == want, ("haxpy2 %d: %.9g, expected %.9g"):format(i, hy2[i], want))
end

-- bfloat16 rows summed in float: each element is a bfloat16 value, each sum is float32's.
local rows, cols = 50, 7
local mat = array.random.uniform({ rows, cols }, { low = -100, high = 100, dtype = "bf16", seed = 13 })
local sums = cuda.device_array(rows, "float32")
m.bf16_row_sums[{ 1, 64 }](cuda.to_device(mat), sums, rows, cols)
local hs = sums:copy_to_host()
for r = 1, rows do
  local s = 0
  for c = 1, cols do
    local v = mat:get(r, c)
    assert(v == bf16(v), "bfloat16 element is not a bfloat16 value")
    s = f32(s + v)
  end
  assert(hs[r] == s, ("row %d: %.9g, expected %.9g"):format(r, hs[r], s))
end

-- The rest of the API (narrow_api): references from the rules CUDA's documentation states.
local function rint(x)  -- to an integer, ties to even
  local f = math.floor(x)
  local d = x - f
  if d > 0.5 or (d == 0.5 and f % 2 == 1) then f = f + 1 end
  return f
end
local function clamp(v, lo, hi) return math.max(lo, math.min(hi, v)) end
local function trunc(x) return x < 0 and math.ceil(x) or math.floor(x) end
local api = cuda.device_array(20 * n, "float32")
m.narrow_api[{ (n + 127) // 128, 128 }](cuda.to_device(a), cuda.to_device(b), api, n)
local got = api:copy_to_host()
for i = 1, n do
  local x = a[i]
  local ha, hb = f16(a[i]), f16(b[i])
  local h200 = f16(f32(x * 200))
  local int1000 = trunc(f32(x * 1000))
  local fma_relu = f16(ha * hb + 1)
  local gt_mask = (ha > hb and 0xffff or 0) | (hb > ha and 0xffff0000 or 0)
  local cx, cy = f16(ha * ha + ha), f16(ha * hb + hb)  -- __hcmadd: two fused steps
  local want = {
    round_dir(x, 10, -14, 15, "rz"), round_dir(x, 10, -14, 15, "rd"), round_dir(x, 10, -14, 15, "ru"),
    round_dir(x, 7, -126, 127, "rz"), round_dir(x, 7, -126, 127, "ru"),
    f32(clamp(math.floor(ha), -2 ^ 31, 2 ^ 31 - 1)), f32(clamp(math.ceil(ha), -2 ^ 31, 2 ^ 31 - 1)),
    (h200 == math.huge and 32767) or (h200 == -math.huge and -32768) or clamp(rint(h200), -32768, 32767),
    f32(clamp(trunc(ha), 0, 2 ^ 32 - 1)),
    round_dir(int1000, 10, -14, 15, "ru"), round_dir(int1000, 10, -14, 15, "rz"),
    round_dir(trunc(x * 1e12), 7, -126, 127, "rd"),
    clamp(f16(ha + hb), 0, 1), fma_relu < 0 and 0 or fma_relu,
    1 + 0 + 0 + 8 + 16 + 32, gt_mask,
    f16(-hb * hb + cx), f16(hb * ha + cy), rint(ha), clamp(f16(hb - ha), 0, 1) }
  for k = 1, 20 do
    local g = got[(i - 1) * 20 + k]
    assert(g == want[k], ("narrow_api input %d (%.9g, %.9g), result %d: %.9g, expected %.9g"):format(
      i, a[i], b[i], k - 1, g, want[k]))
  end
end

-- atomicAdd on a __half and a __half2 from 1000 threads: sums exact in binary16.
local total, pair = cuda.to_device(array.zeros(1, "float16")), cuda.to_device(array.zeros(1, "half2"))
m.count_half[{ 8, 128 }](total, pair, 1000)
local ht, hp = total:copy_to_host(), pair:copy_to_host()
assert(ht[1] == 1000 and hp[1].x == 1000 and hp[1].y == 500, "16-bit atomicAdd")

-- An int4 load read as half2s: each sum of 8 small integers, exact in half.
local eights = ints(800, -9, 9, "float16", 14)
local sums8 = cuda.device_array(100, "float32")
m.pun_sum[{ 1, 128 }](cuda.to_device(eights), sums8, 100)
local hs8 = sums8:copy_to_host()
for i = 0, 99 do
  local lo, hi = 0, 0  -- the two lanes' sums, then added
  for k = 0, 7 do
    if k % 2 == 0 then lo = lo + eights[8 * i + k + 1] else hi = hi + eights[8 * i + k + 1] end
  end
  assert(hs8[i + 1] == lo + hi, ("pun_sum %d: %g, expected %g"):format(i, hs8[i + 1], lo + hi))
end
print("ok")
