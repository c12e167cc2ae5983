// cpu backend shim for CUDA's cuComplex.h: single and double precision complex numbers as
// float2 and double2 (their real part in x), and the arithmetic CUDA declares on them.
#pragma once
#include "kiln/cpu_prelude.h"

typedef float2 cuFloatComplex;
typedef double2 cuDoubleComplex;
typedef cuFloatComplex cuComplex;

inline float cuCrealf(cuFloatComplex z) {
  return z.x;
}
inline float cuCimagf(cuFloatComplex z) {
  return z.y;
}
inline cuFloatComplex make_cuFloatComplex(float re, float im) {
  return make_float2(re, im);
}
inline cuComplex make_cuComplex(float re, float im) {
  return make_float2(re, im);
}
inline cuFloatComplex cuConjf(cuFloatComplex z) {
  return make_float2(z.x, -z.y);
}
inline cuFloatComplex cuCaddf(cuFloatComplex a, cuFloatComplex b) {
  return make_float2(a.x + b.x, a.y + b.y);
}
inline cuFloatComplex cuCsubf(cuFloatComplex a, cuFloatComplex b) {
  return make_float2(a.x - b.x, a.y - b.y);
}
inline cuFloatComplex cuCmulf(cuFloatComplex a, cuFloatComplex b) {
  return make_float2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}
// a / b, both scaled by b's larger part first, so that |b|^2 neither overflows nor underflows.
inline cuFloatComplex cuCdivf(cuFloatComplex a, cuFloatComplex b) {
  const float s = 1.0f / (fabsf(b.x) + fabsf(b.y));
  const float ar = a.x * s, ai = a.y * s, br = b.x * s, bi = b.y * s;
  const float q = 1.0f / (br * br + bi * bi);
  return make_float2((ar * br + ai * bi) * q, (ai * br - ar * bi) * q);
}
inline float cuCabsf(cuFloatComplex z) {
  return hypotf(z.x, z.y);
}
// a * b + d
inline cuFloatComplex cuCfmaf(cuFloatComplex a, cuFloatComplex b, cuFloatComplex d) {
  return make_float2(a.x * b.x - a.y * b.y + d.x, a.x * b.y + a.y * b.x + d.y);
}

inline double cuCreal(cuDoubleComplex z) {
  return z.x;
}
inline double cuCimag(cuDoubleComplex z) {
  return z.y;
}
inline cuDoubleComplex make_cuDoubleComplex(double re, double im) {
  return make_double2(re, im);
}
inline cuDoubleComplex cuConj(cuDoubleComplex z) {
  return make_double2(z.x, -z.y);
}
inline cuDoubleComplex cuCadd(cuDoubleComplex a, cuDoubleComplex b) {
  return make_double2(a.x + b.x, a.y + b.y);
}
inline cuDoubleComplex cuCsub(cuDoubleComplex a, cuDoubleComplex b) {
  return make_double2(a.x - b.x, a.y - b.y);
}
inline cuDoubleComplex cuCmul(cuDoubleComplex a, cuDoubleComplex b) {
  return make_double2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}
inline cuDoubleComplex cuCdiv(cuDoubleComplex a, cuDoubleComplex b) {
  const double s = 1.0 / (fabs(b.x) + fabs(b.y));
  const double ar = a.x * s, ai = a.y * s, br = b.x * s, bi = b.y * s;
  const double q = 1.0 / (br * br + bi * bi);
  return make_double2((ar * br + ai * bi) * q, (ai * br - ar * bi) * q);
}
inline double cuCabs(cuDoubleComplex z) {
  return hypot(z.x, z.y);
}
inline cuDoubleComplex cuCfma(cuDoubleComplex a, cuDoubleComplex b, cuDoubleComplex d) {
  return make_double2(a.x * b.x - a.y * b.y + d.x, a.x * b.y + a.y * b.x + d.y);
}

inline cuDoubleComplex cuComplexFloatToDouble(cuFloatComplex z) {
  return make_double2(z.x, z.y);
}
inline cuFloatComplex cuComplexDoubleToFloat(cuDoubleComplex z) {
  return make_float2(float(z.x), float(z.y));
}
