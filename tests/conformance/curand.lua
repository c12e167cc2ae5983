-- Conformance: cuRAND's device API (kernels/curand.cu). Raw numbers against generators written
-- here from their definitions: Philox4x32-10 (Salmon et al., SC'11; its known answer for a zero
-- counter and key) and XORWOW (Marsaglia 2003) from cuRAND's seeding; uniforms from cuRAND's
-- documented (0, 1] mapping; normals by their moments.
local here = arg[0]:match("^(.*)/") or "."
local m = cuda.module({ file = here .. "/kernels/curand.cu" })
local M32 = 0xffffffff

-- Philox4x32-10 of counter c (4 words) and key k (2 words).
local function philox(c, k)
  c, k = { c[1], c[2], c[3], c[4] }, { k[1], k[2] }
  for _ = 1, 10 do
    local p0, p1 = 0xD2511F53 * c[1], 0xCD9E8D57 * c[3]  -- 64-bit products (signed, same bits)
    c = { ((p1 >> 32) ~ c[2] ~ k[1]) & M32, p1 & M32, ((p0 >> 32) ~ c[4] ~ k[2]) & M32, p0 & M32 }
    k = { (k[1] + 0x9E3779B9) & M32, (k[2] + 0xBB67AE85) & M32 }
  end
  return c
end
local kat = philox({ 0, 0, 0, 0 }, { 0, 0 })
assert(kat[1] == 0x6627e8d5 and kat[2] == 0xe169c58d and kat[3] == 0xbc57ac4c and kat[4] == 0x9b00dbd8,
       "the Lua Philox misses its known answer")

-- cuRAND's Philox stream: key = seed, counter = (offset / 4, subsequence), numbers in order.
local function philox_stream(seed, subsequence, offset)
  local ctr = { 0, 0, subsequence & M32, subsequence >> 32 }
  local function add(n)  -- the 128-bit counter += n (n < 2^32 here)
    for w = 1, 4 do
      local v = ctr[w] + n
      ctr[w], n = v & M32, v >> 32
      if n == 0 then break end
    end
  end
  add(offset // 4)
  local index, block = offset % 4, philox(ctr, { seed & M32, seed >> 32 })
  return function()
    local v = block[index + 1]
    index = index + 1
    if index == 4 then add(1); block, index = philox(ctr, { seed & M32, seed >> 32 }), 0 end
    return v
  end
end

-- cuRAND's XORWOW at subsequence 0: its seeding, then offset steps.
local function xorwow_stream(seed, offset)
  local t0 = (1099087573 * ((seed & M32) ~ 0xaad26b49)) & M32
  local t1 = (2591861531 * ((seed >> 32) ~ 0xf7dcefdd)) & M32
  local d = (6615241 + t1 + t0) & M32
  local v = { (123456789 + t0) & M32, 362436069 ~ t0, (521288629 + t1) & M32, 88675123 ~ t1,
              (5783321 + t0) & M32 }
  local function step()
    local t = v[1] ~ (v[1] >> 2)
    v = { v[2], v[3], v[4], v[5], (v[5] ~ ((v[5] << 4) & M32)) ~ (t ~ ((t << 1) & M32)) }
    d = (d + 362437) & M32
    return (v[5] + d) & M32
  end
  for _ = 1, offset do step() end
  return step
end

local threads, per = 64, 10
for _, case in ipairs({ { 0, 0 }, { 1234, 0 }, { 0x123456789abcdef, 7 } }) do
  local seed, offset = case[1], case[2]
  local out = cuda.device_array(threads * per, "uint32")
  m.raw_philox[{ 1, threads }](out, seed, offset, per)
  local got = out:copy_to_host()
  m.raw_xorwow[{ 1, threads }](out, seed, offset, per)
  local got_x = out:copy_to_host()
  for i = 0, threads - 1 do
    local p, x = philox_stream(seed, i, offset), xorwow_stream(seed + i, offset)
    for k = 1, per do
      local want_p, want_x = p(), x()
      assert(got[i * per + k] == want_p, ("philox seed %d thread %d number %d: %d, expected %d"):format(
        seed, i, k, got[i * per + k], want_p))
      assert(got_x[i * per + k] == want_x, ("xorwow seed %d thread %d number %d: %d, expected %d"):format(
        seed, i, k, got_x[i * per + k], want_x))
    end
  end
end

-- States in a device array: two launches continue each thread's stream; uniforms are
-- x * 2^-32 + 2^-33 rounded once to float, so never 0 and at most 1.
local n, draws = 1000, 16
local states = cuda.device_array(n * 64, "uint8")  -- curandStatePhilox4_32_10_t: 64 bytes
local setup = cuda.jit_file(here .. "/kernels/curand.cu", { name = "setup<curandStatePhilox4_32_10_t>" })
setup[{ (n + 127) // 128, 128 }](states, 42, n)
local uniform, normal = cuda.device_array(n * draws, "float32"), cuda.device_array(n * draws, "float32")
local function f32(x) return string.unpack("f", string.pack("f", x)) end
local sum, sum2, count = 0, 0, 0
for launch = 1, 2 do
  m.draw[{ (n + 127) // 128, 128 }](states, uniform, normal, n, draws)
  local u, z = uniform:copy_to_host(), normal:copy_to_host()
  for _, i in ipairs({ 0, 1, 517, n - 1 }) do
    local stream = philox_stream(42, i, 0)
    for _ = 1, (launch - 1) * 2 * draws do stream() end  -- what the first launch drew
    for k = 1, draws do
      local want = f32(stream() * 2.0 ^ -32 + 2.0 ^ -33)
      assert(u[i * draws + k] == want, ("launch %d thread %d uniform %d: %.9g, expected %.9g"):format(
        launch, i, k, u[i * draws + k], want))
    end
  end
  for j = 1, n * draws do sum, sum2, count = sum + z[j], sum2 + z[j] * z[j], count + 1 end
end
local mean, var = sum / count, sum2 / count - (sum / count) ^ 2
assert(math.abs(mean) < 0.02 and math.abs(var - 1) < 0.03, ("normals: mean %g, variance %g"):format(mean, var))
print("ok")
