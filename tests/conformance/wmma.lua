-- Conformance: warp matrix multiply-accumulate (kernels/wmma.cu) against products computed here
-- in Lua. Inputs are small integers (or tf32 values with a tolerance) so that every backend's
-- order of summation gives the same result.
local here = arg[0]:match("^(.*)/") or "."
local m = cuda.module({ file = here .. "/kernels/wmma.cu" })

-- An array of n integers in [lo, hi] as dtype.
local function ints(n, lo, hi, dtype, seed)
  return array.random.integers(lo, hi + 1, n, { seed = seed }):astype(dtype)
end

-- Expects got[at(i, j)] == want for every element of the M x N product of A(i, k) and B(k, j),
-- plus c(i, j), through check(sum) (the exact sum in Lua; returns the value expected).
local function expect_product(what, M, N, K, A, B, c, got, at, check)
  for i = 0, M - 1 do
    for j = 0, N - 1 do
      local s = c(i, j)
      for k = 0, K - 1 do s = s + A(i, k) * B(k, j) end
      local want = check and check(s) or s
      local g = got[at(i, j) + 1]
      assert(g == want, ("%s: element (%d, %d) is %.17g, expected %.17g"):format(what, i, j, g, want))
    end
  end
end

-- cudaTensorCoreGemm's shape: shared-memory slabs, four warps a block, alpha and beta.
do
  local M, N, K = 64, 96, 48
  local a, b = ints(M * K, -3, 3, "float16", 1), ints(K * N, -3, 3, "float16", 2)
  local c0 = ints(M * N, -5, 5, "float32", 3)
  local c = cuda.to_device(c0)
  m.gemm_shared[{ { N // 32, M // 32 }, 128 }](cuda.to_device(a), cuda.to_device(b), c, M, N, K, 2, -1)
  expect_product("gemm_shared", M, N, K,
                 function(i, k) return 2 * a[i * K + k + 1] end,      -- alpha folded into A
                 function(k, j) return b[j * K + k + 1] end,          -- B is column-major
                 function(i, j) return -c0[i * N + j + 1] end, c:copy_to_host(),
                 function(i, j) return i * N + j end)
  print("gemm_shared ok (" .. m.gemm_shared:info().threads .. ")")
end

-- One tile of each other shape and type: A and B row-major, C row-major, D column-major.
local function one_tile(name, M, N, K, dtype, cdtype, lo, hi)
  local a, b = ints(M * K, lo, hi, dtype, 4), ints(K * N, lo, hi, dtype, 5)
  local c = ints(M * N, -4, 4, cdtype, 6)
  local d = cuda.device_array(M * N, cdtype)
  m[name][{ 1, 32 }](cuda.to_device(a), cuda.to_device(b), cuda.to_device(c), d)
  expect_product(name, M, N, K, function(i, k) return a[i * K + k + 1] end,
                 function(k, j) return b[k * N + j + 1] end,
                 function(i, j) return c[i * N + j + 1] end, d:copy_to_host(),
                 function(i, j) return j * M + i end)
end
one_tile("tile_32x8x16_half", 32, 8, 16, "float16", "float16", -2, 2)
one_tile("tile_8x32x16_bf16", 8, 32, 16, "bfloat16", "float32", -3, 3)
one_tile("tile_8x8x4_double", 8, 8, 4, "float64", "float64", -1000, 1000)
one_tile("tile_16x16x16_u8", 16, 16, 16, "uint8", "int32", 0, 255)

-- tf32: the rounding itself exactly (to nearest, ties away from zero: 13 bits dropped), the
-- product within float's rounding of tf32 values.
local function tf32(x)
  local bits = string.unpack("<I4", string.pack("<f", x))
  bits = ((bits + 0x1000) & 0xffffe000) & 0xffffffff
  return string.unpack("<f", string.pack("<I4", bits))
end
do
  local x = array.random.uniform(256, { low = -4, high = 4, dtype = "float32", seed = 7 })
  x[1] = string.unpack("<f", string.pack("<I4", 0x3f801000))  -- 1 + half a tf32 ulp: a tie, away
  x[2] = -x[1]
  local y = cuda.device_array(256, "float32")
  m.to_tf32[{ 1, 256 }](cuda.to_device(x), y, 256)
  local hy = y:copy_to_host()
  assert(hy[1] == 1 + 2 ^ -10 and hy[2] == -(1 + 2 ^ -10), "tf32 ties round away from zero")
  for i = 1, 256 do assert(hy[i] == tf32(x[i]), ("tf32(%.9g): %.9g, expected %.9g"):format(x[i], hy[i], tf32(x[i]))) end

  local a, b = array.random.uniform(128, { low = -4, high = 4, dtype = "float32", seed = 8 }),
               array.random.uniform(128, { low = -4, high = 4, dtype = "float32", seed = 9 })
  local d = cuda.device_array(256, "float32")
  m.tile_tf32[{ 1, 32 }](cuda.to_device(a), cuda.to_device(b), d)
  local hd = d:copy_to_host()
  for i = 0, 15 do
    for j = 0, 15 do
      local s, mag = 0, 0
      for k = 0, 7 do
        local p = tf32(a[i * 8 + k + 1]) * tf32(b[j * 8 + k + 1])  -- B column-major
        s, mag = s + p, mag + math.abs(p)
      end
      assert(math.abs(hd[i * 16 + j + 1] - s) <= mag * 2 ^ -20, ("tile_tf32 (%d, %d): %.9g, expected %.9g"):format(i, j, hd[i * 16 + j + 1], s))
    end
  end
end

-- int8 from a C near the int32 limits: wrapped without satf, clamped with it.
do
  local a, b = ints(256, -128, 127, "int8", 10), ints(256, -128, 127, "int8", 11)
  local c = array.zeros(256, "int32")
  for i = 1, 256 do c[i] = i % 2 == 0 and 2147483000 or -2147483000 end
  local wrapped, clamped = cuda.device_array(256, "int32"), cuda.device_array(256, "int32")
  m.tile_s8_satf[{ 1, 32 }](cuda.to_device(a), cuda.to_device(b), cuda.to_device(c), wrapped, clamped)
  local A = function(i, k) return a[i * 16 + k + 1] end
  local B = function(k, j) return b[j * 16 + k + 1] end  -- column-major
  local C = function(i, j) return c[i * 16 + j + 1] end
  local at = function(i, j) return i * 16 + j end
  expect_product("tile_s8 wrapped", 16, 16, 16, A, B, C, wrapped:copy_to_host(), at,
                 function(s) return ((s + 2 ^ 31) % 2 ^ 32 | 0) - 2 ^ 31 end)
  expect_product("tile_s8 clamped", 16, 16, 16, A, B, C, clamped:copy_to_host(), at,
                 function(s) return math.max(math.min(s, 2 ^ 31 - 1), -2 ^ 31) end)
end
print("ok")
