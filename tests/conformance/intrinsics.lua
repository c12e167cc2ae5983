-- Conformance: architecture macros, qualifiers and intrinsics (kernels/intrinsics.cu) against
-- references computed here with Lua's 64-bit integers and doubles.
local here = arg[0]:match("^(.*)/") or "."
local path = here .. "/kernels/intrinsics.cu"
local m = cuda.module({ file = path })

-- __CUDA_ARCH__ is what nvcc would give device code: sm_80 unless another arch is asked for.
local flags = cuda.device_array(2, "int32")
m.arch[{ 1, 1 }](flags)
local f = flags:copy_to_host()
assert(f[2] == 1, "__CUDACC__ is not defined")
if cuda.backend() == "cpu" then
  assert(f[1] == 800, "__CUDA_ARCH__ on the cpu backend: " .. f[1])
  local m90 = cuda.module({ file = path }, { arch = "sm_90" })
  m90.arch[{ 1, 1 }](flags)
  assert(flags:copy_to_host()[1] == 900, "__CUDA_ARCH__ with opts.arch = sm_90")
else
  local cc = cuda.get_current_device().compute_capability
  assert(f[1] >= 700 and f[1] <= (cc[1] * 10 + cc[2]) * 10, "__CUDA_ARCH__ on the GPU: " .. f[1])
end

local n = 4000
local a = array.random.integers(0, 1 << 32, n, { dtype = "uint32", seed = 5 })
local b = array.random.integers(0, 1 << 32, n, { dtype = "uint32", seed = 6 })
a[1], b[1], a[2], b[2] = 0, 0, 0xffffffff, 1  -- edge cases: zero, all ones
local out = cuda.device_array(n * 16, "int64")
m.integer_ops[{ (n + 255) // 256, 256 }](cuda.to_device(a), cuda.to_device(b), out, n)
local h = out:copy_to_host()

local M32 = 0xffffffff
local function s32(v) v = v & M32; return v >= 1 << 31 and v - (1 << 32) or v end
local function s24(v) v = v & 0xffffff; return v >= 1 << 23 and v - (1 << 24) or v end
local function s8(v) v = v & 0xff; return v >= 128 and v - 256 or v end
local function popc(v) local c = 0; while v ~= 0 do c = c + (v & 1); v = v >> 1 end; return c end
local function clz(v, bits) local c = 0; for k = bits - 1, 0, -1 do if (v >> k) & 1 == 1 then break end; c = c + 1 end; return c end
local function ffs(v) if v == 0 then return 0 end; local k = 1; while v & 1 == 0 do v = v >> 1; k = k + 1 end; return k end
local function brev(v) local r = 0; for k = 0, 31 do r = r | (((v >> k) & 1) << (31 - k)) end; return r end
local function byte_perm(x, y, s)
  local v, r = (y << 32) | x, 0
  for k = 0, 3 do r = r | (((v >> (8 * ((s >> (4 * k)) & 7))) & 0xff) << (8 * k)) end
  return r
end
local function funnel_l(lo, hi, s) return (((hi << 32) | lo) << (s & 31) >> 32) & M32 end
local function funnel_r(lo, hi, s) return ((((hi << 32) | lo) >> (s & 31))) & M32 end
local function umulhi(x, y)
  local xl, xh, yl, yh = x & 0xffff, x >> 16, y & 0xffff, y >> 16
  local mid = (xl * yl >> 16) + (xh * yl & 0xffffffff) + (xl * yh & 0xffffffff)
  return (xh * yh + (xh * yl >> 32) + (xl * yh >> 32) + (mid >> 16)) & M32
end
local function mulhi_s(x, y)  -- signed high word, from the unsigned one
  local hi = umulhi(x, y)
  if s32(x) < 0 then hi = hi - y end
  if s32(y) < 0 then hi = hi - x end
  return s32(hi)
end
local bad = 0
for i = 1, n do
  local x, y = a[i], b[i]
  local want = {
    popc(x), clz(x, 32), ffs(x), brev(x), byte_perm(x, y, 0x7531), funnel_l(x, y, y & 63),
    funnel_r(x, y, y & 63), s32(s24(x) * s24(y)), umulhi(x, y), ((x & 0xffffff) * (y & 0xffffff)) & M32,
    popc(x) + popc(y), clz(y, 64), (x << 7 | x >> 25) & M32,
    5 + s8(x) * s8(y) + s8(x >> 8) * s8(y >> 8) + s8(x >> 16) * s8(y >> 16) + s8(x >> 24) * s8(y >> 24),
    (3 + math.abs(x - y)) & M32, mulhi_s(x, y),
  }
  for k = 1, 16 do
    local got = h[(i - 1) * 16 + k]
    if got ~= want[k] then
      bad = bad + 1
      if bad <= 5 then print(("integer op %d, inputs %#x %#x: %d, expected %d"):format(k - 1, x, y, got, want[k])) end
    end
  end
end
assert(bad == 0, bad .. " integer results differ")

local fa = array.random.uniform(n, { low = -4, high = 4, dtype = "float32", seed = 7 })
local fb = array.random.uniform(n, { low = 0.25, high = 8, dtype = "float32", seed = 8 })
local fo = cuda.device_array(n * 8, "float32")
m.float_ops[{ (n + 255) // 256, 256 }](cuda.to_device(fa), cuda.to_device(fb), fo, n)
local hf = fo:copy_to_host()
for i = 1, n do
  local x, y = fa[i], fb[i]
  local want = { x / y, math.min(math.max(x - 0.5, 0), 1), 1 / math.sqrt(y), math.sin(x), math.cos(x),
                 x * y + 1, x + y, -x }
  -- __fdividef and rsqrtf are approximate (2 ulp on a GPU); the rest within float rounding.
  local tol = { 4e-7, 1e-7, 4e-7, 2e-7, 2e-7, 2e-7, 1e-7, 0 }
  for k = 1, 8 do
    local got = hf[(i - 1) * 8 + k]
    if math.abs(got - want[k]) > tol[k] * math.max(1, math.abs(want[k])) then
      bad = bad + 1
      if bad <= 5 then print(("float op %d, inputs %g %g: %.9g, expected %.9g"):format(k - 1, x, y, got, want[k])) end
    end
  end
end
assert(bad == 0, bad .. " float results differ")

-- The SIMD video intrinsics (lanes of bytes or halfwords, wrapping or saturated, signed or
-- not), __fns (the n-th set bit from a base, as PTX's fns) and __dp4a on char4, against values
-- worked out by hand from their definitions.
local simd = cuda.jit([[
__global__ void simd(unsigned* o, int* d) {
  o[0] = __vadd4(0x01ff7f80u, 0x01010101u);
  o[1] = __vaddss4(0x7f80017fu, 0x01ff0101u);
  o[2] = __vaddus4(0xff01fe00u, 0x01010101u);
  o[3] = __vsubus2(0x00050010u, 0x00060001u);
  o[4] = __vabsdiffu4(0x10200030u, 0x20100040u);
  o[5] = __vcmpgtu4(0x10200030u, 0x20100040u);
  o[6] = __vsetlts2(0xffff0001u, 0x00000002u);
  o[7] = __vsadu4(0x10200030u, 0x20100040u);
  o[8] = __vabsss4(0x80ff7f01u);
  o[9] = __vneg2(0x00018000u);
  o[10] = __vmaxs4(0x80ff7f01u, 0x01010101u);
  o[11] = __vavgu4(0x01030507u, 0x02020202u);
  o[12] = __fns(0xaaaaaaaau, 2, -1);
  o[13] = __fns(0xaaaaaaaau, 2, 1);
  o[14] = __fns(0xaaaaaaaau, 3, 0);
  o[15] = __fns(0xaaaaaaaau, 2, 0);
  o[16] = __fns(0x1u, 5, 1);
  o[17] = __vavgs4(0x7f0201ffu, 0x7f0102feu);
  d[0] = __dp4a(make_char4(1, -2, 3, -4), make_char4(5, 6, -7, 8), 10);
}]])
local so, sd = cuda.device_array(18, "uint32"), cuda.device_array(1, "int32")
simd[{ 1, 1 }](so, sd)
local want_simd = { 0x02008081, 0x7f80027f, 0xff02ff01, 0x0000000f, 0x10100010, 0x00ff0000,
                    0x00010001, 0x30, 0x7f017f01, 0xffff8000, 0x01017f01, 0x02030405, 1, 3, 3,
                    0xffffffff, 0xffffffff, 0x7f0202fe }
local hs = so:copy_to_host()
for j, w in ipairs(want_simd) do
  assert(hs[j] == w, ("simd result %d: %08x, expected %08x"):format(j - 1, hs[j], w))
end
assert(sd:copy_to_host()[1] == -50, "__dp4a(char4, char4, int)")

-- Arithmetic in a rounding direction (_rz, _ru, _rd), against the neighbours of the exact
-- values: 1 + 2^-23 is the float after 1, 1/3 lies between 0x3eaaaaaa and 0x3eaaaaab.
local dr = cuda.jit([[
__global__ void dr(float* f, double* d) {
  f[0] = __fadd_ru(1.0f, 1e-9f); f[1] = __fadd_rd(1.0f, 1e-9f); f[2] = __fadd_rz(-1.0f, -1e-9f);
  f[3] = __fadd_rd(-1.0f, -1e-9f); f[4] = __fdiv_rd(1.0f, 3.0f); f[5] = __fdiv_ru(1.0f, 3.0f);
  f[6] = __fsqrt_ru(2.0f); f[7] = __fsqrt_rd(2.0f); f[8] = __fmul_rz(3.4e38f, 10.0f);
  f[9] = __fmaf_ru(1.0f, 1.0f, 1e-30f); f[10] = __frcp_rd(3.0f); f[11] = __fsub_rd(1.0f, 1.0f);
  d[0] = __dadd_ru(1.0, 1e-30); d[1] = __ddiv_rz(-1.0, 3.0); d[2] = __dsqrt_ru(2.0);
  d[3] = __dmul_rd(0.1, 3.0); d[4] = __fma_ru(1.0, 1.0, 1e-300); d[5] = __fma_rz(-1.0, 1.0, -1e-300);
  d[6] = __fma_rd(0.1, 3.0, 0.0);
}]])
local df, dd = cuda.device_array(12, "float32"), cuda.device_array(7, "float64")
dr[{ 1, 1 }](df, dd)
local third_lo, third_hi = 0xaaaaaa / 2 ^ 25, 0xaaaaab / 2 ^ 25
local want_f = { 1 + 2 ^ -23, 1, -1, -(1 + 2 ^ -23), third_lo, third_hi, 0xb504f4 / 2 ^ 23,
                 0xb504f3 / 2 ^ 23, (2 - 2 ^ -23) * 2 ^ 127, 1 + 2 ^ -23, third_lo, 0 }
local hf, hd = df:copy_to_host(), dd:copy_to_host()
for i, w in ipairs(want_f) do assert(hf[i] == w, ("directed float %d: %.9g, expected %.9g"):format(i - 1, hf[i], w)) end
assert(1 / hf[12] < 0, "__fsub_rd(1, 1) is -0")
local want_d = { 1 + 2 ^ -52, -1 / 3, math.sqrt(2), 0.3, 1 + 2 ^ -52, -1, 0.3 }
for i, w in ipairs(want_d) do assert(hd[i] == w, ("directed double %d: %.17g"):format(i - 1, hd[i])) end
-- Infinities stay infinite (but an overflow toward zero does not), and results in the
-- subnormal range round as the rest.
local edges = cuda.jit([[
__global__ void edges(float* o, double* d) {
  const float inf = __int_as_float(0x7f800000), dm = __int_as_float(1);
  o[0] = __fadd_rz(inf, 1.0f); o[1] = __fmul_rz(inf, 2.0f); o[2] = __frcp_rz(0.0f);
  o[3] = __fsqrt_rd(inf); o[4] = __fmaf_rz(1.0f, 1.0f, inf);
  o[5] = __fmul_ru(1e-30f, 1e-30f) / dm; o[6] = __fmul_rz(1.5f, dm) / dm;
  o[7] = __fdiv_ru(2.0f * dm, 1.5f) / dm; o[8] = __fsqrt_ru(dm) > __fsqrt_rd(dm) ? 1.0f : 0.0f;
  d[0] = __dmul_ru(1e-200, 1e-200) / __longlong_as_double(1ll);
  d[1] = __dadd_rz(__longlong_as_double(0x7ff0000000000000ll), 1.0);
}]])
local eo, ed = cuda.device_array(9, "float32"), cuda.device_array(2, "float64")
edges[{ 1, 1 }](eo, ed)
local he, hed = eo:copy_to_host(), ed:copy_to_host()
local want_e = { math.huge, math.huge, math.huge, math.huge, math.huge, 1, 1, 2, 1 }
for i, w in ipairs(want_e) do assert(he[i] == w, ("directed edge %d: %.9g"):format(i - 1, he[i])) end
assert(hed[1] == 1 and hed[2] == math.huge, "directed double edges")

-- The scaled complementary error function and the modified Bessel functions of orders 0, 1,
-- against values from mpmath at 30 digits.
local special = cuda.jit([[
__global__ void special(double* d, float* f) {
  d[0] = erfcx(0.5); d[1] = erfcx(30.0); d[2] = cyl_bessel_i0(1.0); d[3] = cyl_bessel_i1(-1.0);
  f[0] = erfcxf(2.0f); f[1] = cyl_bessel_i0f(2.0f); f[2] = cyl_bessel_i1f(0.5f);
}]])
local sd, sf = cuda.device_array(4, "float64"), cuda.device_array(3, "float32")
special[{ 1, 1 }](sd, sf)
local want_sd = { 0.615690344192925875, 0.0187958888614167515, 1.26606587775200834, -0.565159103992485027 }
local want_sf = { 0.255395676310505744, 2.27958530233606727, 0.257894305390896316 }
local hsd, hsf = sd:copy_to_host(), sf:copy_to_host()
for i, w in ipairs(want_sd) do assert(math.abs(hsd[i] - w) <= 1e-13 * math.abs(w), "special " .. i) end
for i, w in ipairs(want_sf) do assert(math.abs(hsf[i] - w) <= 1e-6 * math.abs(w), "special float " .. i) end

-- erfcx within 4 ulp (CUDA's bound) on both sides of x = 26, where its formula changes: x^2's
-- rounding, exp(x^2) amplified, and the asymptotic series' last terms both matter there.
local xs = { 18.7, 25.99, 26.0, 27.0, 40.0 }
local want_x = { 0.0301276106833040747135, 0.0216919155962841744831, 0.0216835848505629066162,
                 0.0208816079904209406741, 0.0141003359833778136247 }
local scaled = cuda.jit([[
__global__ void scaled(const double* x, double* y) { y[threadIdx.x] = erfcx(x[threadIdx.x]); }]])
local ey = cuda.device_array(#xs, "float64")
scaled[{ 1, #xs }](cuda.to_device(array.from(xs, "float64")), ey)
local hey = ey:copy_to_host()
for i, w in ipairs(want_x) do
  assert(math.abs(hey[i] - w) <= 4 * 2 ^ -52 * w, ("erfcx(%g): %.17g, want %.17g"):format(xs[i], hey[i], w))
end

-- Explicit casts of floats to integer types convert as a GPU's cvt.rzi: out of range saturates
-- to 32 or 64 bits, and a narrower type keeps the low bits of the 32-bit result (NVRTC converts
-- to s32 / u32 and stores the low bits). NaN gives 0 from a float to 32 bits or fewer, and the
-- sign bit alone from a double or to 64 bits (as an H200 gave, 2026-11-27). x86's own conversion
-- gives INT_MIN for each of these, or wraps.
local casts = cuda.jit([[
__global__ void casts(const float* x, const double* d, unsigned char* c, int* i, unsigned* u,
                      short* s, long long* l, unsigned long long* ul, int* di, unsigned* du) {
  int k = threadIdx.x;
  c[k] = (unsigned char)x[k];
  i[k] = (int)x[k];
  u[k] = unsigned(x[k]);
  s[k] = static_cast<short>(x[k]);
  l[k] = (long long)d[k];
  ul[k] = (unsigned long long)d[k];
  di[k] = (int)d[k];
  du[k] = (unsigned)d[k];
}]])
local nan = 0 / 0
local xs = { 300, -5.5, 1e10, nan, 70000, -1e20 }
local outs = { c = "uint8", i = "int32", u = "uint32", s = "int16", l = "int64", ul = "uint64",
               di = "int32", du = "uint32" }
local dev = {}
for name, dtype in pairs(outs) do dev[name] = cuda.device_array(#xs, dtype) end
casts[{ 1, #xs }](cuda.to_device(array.from(xs, "float32")),
                  cuda.to_device(array.from({ 300, -5.5, 1e19, nan, 1e30, -1e20 }, "float64")),
                  dev.c, dev.i, dev.u, dev.s, dev.l, dev.ul, dev.di, dev.du)
local want = {
  c = { 44, 0, 255, 0, 112, 0 },
  i = { 300, -5, 2147483647, 0, 70000, -2147483648 },
  u = { 300, 0, 4294967295, 0, 70000, 0 },
  s = { 300, -5, -1, 0, 4464, 0 },
  l = { 300, -5, math.maxinteger, math.mininteger, math.maxinteger, math.mininteger },
  -- (1e19, 2^63 and 2^64 - 1 as Lua's integers hold their bits)
  ul = { 300, 0, 0x8AC7230489E80000, math.mininteger, 0xFFFFFFFFFFFFFFFF, 0 },
  di = { 300, -5, 2147483647, -2147483648, 2147483647, -2147483648 },
  du = { 300, 0, 4294967295, 2147483648, 4294967295, 0 },
}
local wrong = {}  -- (every mismatch, in a fixed order: a GPU's answers in one run)
for _, name in ipairs({ "c", "i", "u", "s", "l", "ul", "di", "du" }) do
  local h, w = dev[name]:copy_to_host(), want[name]
  for k = 1, #xs do
    if not (h[k] == w[k] or tostring(h[k]) == tostring(w[k])) then
      wrong[#wrong + 1] = ("cast to %s of element %d: %s, want %s"):format(outs[name], k - 1, tostring(h[k]), tostring(w[k]))
    end
  end
end
assert(#wrong == 0, table.concat(wrong, "; "))

-- sinpi/cospi exact at their zeros and ones (sin(M_PI * x) is not), __fdividef's flushed range,
-- and the norm family (an infinite element makes +inf even beside a NaN).
local exact = cuda.jit([[
__global__ void exact(float* f, double* d) {
  const float inf = __int_as_float(0x7f800000), nan = __int_as_float(0x7fc00000);
  f[0] = sinpif(1.0f); f[1] = cospif(0.5f); f[2] = sinpif(8388609.0f); f[3] = cospif(-3.0f);
  sincospif(2.5f, &f[4], &f[5]);
  f[6] = __fdividef(1.0f, 0x1p127f); f[7] = __fdividef(inf, 0x1p127f); f[8] = __fdividef(6.0f, 3.0f);
  f[9] = norm3df(inf, nan, 1.0f); f[10] = rnorm3df(inf, nan, 1.0f); f[11] = norm4df(1, 2, 2, 4);
  const float v[5] = {3, 4, 12, 84, 0};
  f[12] = normf(5, v); f[13] = rnormf(2, v); f[14] = rnorm4df(2, 2, 2, 2);
  d[0] = sinpi(-4.0); d[1] = cospi(7.5); d[2] = sinpi(0.25); d[3] = norm4d(1e200, 1e200, 1e200, 1e200);
  const double w[3] = {2, 3, 6};
  d[4] = norm(3, w); d[5] = rnorm(3, w); d[6] = rnorm4d(1, 1, 1, 1); d[7] = norm3d(nan, -inf, 0);
}]])
local ef, ed = cuda.device_array(15, "float32"), cuda.device_array(8, "float64")
exact[{ 1, 1 }](ef, ed)
local hf, hd = ef:copy_to_host(), ed:copy_to_host()
local want_f = { 0, 0, 0, -1, 1, 0, 0, "nan", 2, math.huge, 0, 5, 85, 0.2, 0.25 }
for i, w in ipairs(want_f) do
  local ok = w == "nan" and hf[i] ~= hf[i] or hf[i] == w or math.abs(hf[i] - w) <= 1e-7 * math.abs(w)
  assert(ok, ("exact float %d: %.9g, want %s"):format(i - 1, hf[i], tostring(w)))
end
local want_d = { 0, 0, math.sqrt(0.5), 2e200, 7, 1 / 7, 0.5, math.huge }
for i, w in ipairs(want_d) do
  assert(hd[i] == w or math.abs(hd[i] - w) <= 4e-16 * math.abs(w), ("exact double %d: %.17g, want %.17g"):format(i - 1, hd[i], w))
end
-- sm_90's DPX intrinsics, __dp2a's unsigned forms, fma in a directed mode and the correctly
-- rounded reciprocal root: the values an H200 gave (2026-11-27) for the same inputs.
local dpx = cuda.jit([[
__global__ void dpx(const unsigned* in, const float* f, unsigned* o) {
  const unsigned a = in[0], b = in[1], c = in[2];
  const int i = int(a), j = int(b), k = int(c);
  bool p = false, q = false;
  o[0] = __vimax3_s32(i, j, k); o[1] = __vimin3_u32(a, b, c); o[2] = __viaddmax_s32(i, j, k);
  o[3] = __viaddmin_s16x2(a, b, c); o[4] = __vimax3_u16x2(a, b, c); o[5] = __viaddmax_s16x2_relu(a, b, c);
  o[6] = __vimax_s16x2_relu(a, b); o[7] = __vibmax_u32(a, b, &p); o[8] = p;
  o[9] = __vibmin_s16x2(a, b, &p, &q); o[10] = p + 2 * q; o[11] = __viaddmax_u16x2(a, b, c);
  o[12] = __dp2a_lo(0x7fffffffu, 0x9abcdef0u, in[3]); o[13] = __dp2a_hi(0x7fffffffu, 0x9abcdef0u, in[3]);
  o[14] = __float_as_uint(__fmaf_ieee_rz(f[0], f[1], f[2]));
  o[15] = __float_as_uint(__fmaf_ieee_ru(f[0], f[1], f[2]));
  o[16] = __float_as_uint(__frsqrt_rn(f[3]));
}]])
local words = cuda.to_device(array.from({ 0x80008000, 0x7fff0001, 0xffff7fff, 0x7fffffff }, "uint32"))
local floats = cuda.to_device(array.from({ -1, 3, 2 ^ -26, 0x1.fffffep127 }, "float32"))
local dout = cuda.device_array(17, "uint32")
dpx[{ 1, 1 }](words, floats, dout)
local got = dout:copy_to_host()
local want = { 0x7fff0001, 0x7fff0001, 0xffff8001, 0xffff8001, 0xffff8000, 0x7fff, 0x7fff0001, 0x80008000, 1,
  0x80008000, 3, 0xffff8001, 0x815efe31, 0x8108fea9, 0xc03fffff, 0xc03fffff, 0x1f800000 }
for i, w in ipairs(want) do
  assert(got[i] == w, ("DPX and friends, result %d: 0x%x, want 0x%x"):format(i - 1, got[i], w))
end
-- A float atomicAdd gives the canonical NaN 0x7fffffff, and in global memory (atom.add.f32)
-- flushes subnormal operands and sums to zero of their sign, where in a block's shared memory it
-- keeps them (an H200's results, 2026-11-27); the value returned is the old one as it was.
local fadd = cuda.jit([[
__global__ void fadd(const unsigned* in, unsigned* out, int n) {
  __shared__ float s[8];
  const int i = threadIdx.x;
  if (i < n) s[i] = __uint_as_float(in[2 * i]);
  __syncthreads();
  if (i < n) {
    float* g = (float*)out + 3 * i;
    *g = __uint_as_float(in[2 * i]);
    const float old = atomicAdd(g, __uint_as_float(in[2 * i + 1]));
    atomicAdd(&s[i], __uint_as_float(in[2 * i + 1]));
    out[3 * i + 1] = __float_as_uint(old);
  }
  __syncthreads();
  if (i < n) out[3 * i + 2] = __float_as_uint(s[i]);
}]])
local cases = { -- old, added, global memory's sum, shared memory's
  { 0x7fc01234, 0x3f800000, 0x7fffffff, 0x7fffffff }, { 0x7f800000, 0xff800000, 0x7fffffff, 0x7fffffff },
  { 0x00000001, 0x00000001, 0, 2 }, { 0x00400000, 0x00400000, 0, 0x00800000 },
  { 0x80000001, 0, 0, 0x80000001 }, { 0x00800000, 0x80600000, 0x00800000, 0x00200000 },
  { 0x3f800000, 0x40000000, 0x40400000, 0x40400000 } }
local fin = {}
for _, c in ipairs(cases) do fin[#fin + 1], fin[#fin + 2] = c[1], c[2] end
local fout = cuda.device_array(3 * #cases, "uint32")
fadd[{ 1, 32 }](cuda.to_device(array.from(fin, "uint32")), fout, #cases)
local fo = fout:copy_to_host()
for i, c in ipairs(cases) do
  local got, old, shared = fo[3 * i - 2], fo[3 * i - 1], fo[3 * i]
  assert(got == c[3] and shared == c[4] and old == c[1], ("atomicAdd(0x%08x, 0x%08x): 0x%08x (shared 0x%08x, old 0x%08x), want 0x%08x (shared 0x%08x)"):format(c[1], c[2], got, shared, old, c[3], c[4]))
end
print("ok")
