-- Conformance: <cuda_fp8.h>'s conversions (E4M3 and E5M2, saturating and not) against bytes
-- worked out by hand from the formats: round to nearest even, 448 / 57344 at most, E4M3's one
-- NaN and no infinity, subnormals down to half the smallest one; and the classes' round trip.
local m = cuda.module([[
#include <cuda_fp8.h>
__global__ void conv(const float* x, unsigned char* bytes, float* back, int n) {
  int i = threadIdx.x;
  if (i >= n) return;
  bytes[4 * i + 0] = __nv_cvt_float_to_fp8(x[i], __NV_SATFINITE, __NV_E4M3);
  bytes[4 * i + 1] = __nv_cvt_float_to_fp8(x[i], __NV_SATFINITE, __NV_E5M2);
  bytes[4 * i + 2] = __nv_cvt_float_to_fp8(x[i], __NV_NOSAT, __NV_E4M3);
  bytes[4 * i + 3] = __nv_cvt_float_to_fp8(x[i], __NV_NOSAT, __NV_E5M2);
  __nv_fp8_e4m3 a(x[i]);
  __nv_fp8_e5m2 b(x[i]);
  back[2 * i] = float(a);
  back[2 * i + 1] = static_cast<float>(b);
}
__global__ void integers(int* out, unsigned short* nan_half) {
  out[0] = (unsigned char)__nv_fp8_e4m3(300.0f);      // 288, clamped to 255
  out[1] = (short)__nv_fp8_e5m2(57344.0f);            // clamped to 32767
  out[2] = (signed char)__nv_fp8_e4m3(-100.0f);       // -96
  out[3] = (unsigned short)__nv_fp8_e5m2(-3.0f);      // clamped to 0
  out[4] = (int)__nv_fp8_e4m3(__int_as_float(0x7fc00000));  // NaN: 0
  nan_half[0] = __nv_cvt_fp8_to_halfraw(0xff, __NV_E4M3).x;
}
__global__ void pairs(const float4* x, float4* y, __half* h) {
  __nv_fp8x4_e4m3 q(x[0]);
  y[0] = static_cast<float4>(q);
  __half_raw r = __nv_cvt_fp8_to_halfraw(__nv_cvt_float_to_fp8(-0.75f, __NV_SATFINITE, __NV_E5M2), __NV_E5M2);
  h[0] = __half(r);
}]])
-- x: E4M3, E5M2 (saturating), E4M3, E5M2 (not), and the values the classes give back.
local cases = {
  { 1, 0x38, 0x3c, 0x38, 0x3c, 1, 1 },
  { 1.0625, 0x38, 0x3c, 0x38, 0x3c, 1, 1 },          -- a tie: to the even 1.0
  { 1.1875, 0x3a, 0x3d, 0x3a, 0x3d, 1.25, 1.25 },
  { -3.3, 0xc5, 0xc3, 0xc5, 0xc3, -3.25, -3.5 },
  { 464, 0x7e, 0x5f, 0x7e, 0x5f, 448, 448 },          -- E4M3's tie below overflow: 448
  { 465, 0x7e, 0x5f, 0x7f, 0x5f, 448, 448 },          -- beyond: 448, or NaN
  { 61440, 0x7e, 0x7b, 0x7f, 0x7c, 448, 57344 },      -- E5M2's tie above 57344: infinity
  { -1 / 0, 0xfe, 0xfb, 0xff, 0xfc, -448, -57344 },
  { 2 ^ -10, 0x00, 0x14, 0x00, 0x14, 0, 2 ^ -10 },    -- half E4M3's smallest subnormal: 0
  { 1.5 * 2 ^ -10, 0x01, 0x16, 0x01, 0x16, 2 ^ -9, 1.5 * 2 ^ -10 },
  { 2 ^ -17, 0x00, 0x00, 0x00, 0x00, 0, 0 },
  { -0.0, 0x80, 0x80, 0x80, 0x80, 0, 0 },
}
local n = #cases
local xs = {}
for i, c in ipairs(cases) do xs[i] = c[1] end
local bytes, back = cuda.device_array(4 * n, "uint8"), cuda.device_array(2 * n, "float32")
m.conv[{ 1, 32 }](cuda.to_device(array.from(xs, "float32")), bytes, back, n)
local hb, hv = bytes:copy_to_host(), back:copy_to_host()
for i, c in ipairs(cases) do
  for j = 1, 4 do
    assert(hb[4 * (i - 1) + j] == c[j + 1],
           ("fp8 of %g, form %d: 0x%02x, want 0x%02x"):format(c[1], j, hb[4 * (i - 1) + j], c[j + 1]))
  end
  assert(hv[2 * i - 1] == c[6] and hv[2 * i] == c[7], ("fp8 round trip of %g: %g %g"):format(c[1], hv[2 * i - 1], hv[2 * i]))
end
-- Four at once (float4 in, float4 back), and an E5M2 byte read as a half.
local y, h = cuda.device_array(4, "float32"), cuda.device_array(1, "float16")
m.pairs[{ 1, 1 }](cuda.to_device(array.from({ 0.3, -7, 1000, 2 ^ -8 }, "float32")):view("float4"), y:view("float4"), h)
local hy = y:copy_to_host()
for i, want in ipairs({ 0.3125, -7, 448, 2 ^ -8 }) do assert(hy[i] == want, ("fp8x4 %d: %g"):format(i, hy[i])) end
assert(h:copy_to_host()[1] == -0.75, "fp8 to half")
-- The classes' integer conversions clamp to each type's range; a NaN becomes 0, and as a half
-- the canonical 0x7FFF.
local ints, nan_half = cuda.device_array(5, "int32"), cuda.device_array(1, "uint16")
m.integers[{ 1, 1 }](ints, nan_half)
local hi = ints:copy_to_host()
for i, want in ipairs({ 255, 32767, -96, 0, 0 }) do assert(hi[i] == want, ("fp8 to integer %d: %d"):format(i, hi[i])) end
assert(nan_half:copy_to_host()[1] == 0x7fff, "fp8 NaN as a half")
print("ok")
