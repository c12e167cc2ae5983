// Conformance: the C library headers device code includes, in both spellings, used the way
// published samples use them (fixed-width types, limits, float constants, math, assert, printf).
#include <assert.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cassert>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#define CHECK(cond) assert(cond)

// out[0..7]: limits and sizes as the kernel sees them; out[8..]: per-thread math.
__global__ void limits_and_math(const float* __restrict__ in, double* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  CHECK(n > 0);
  if (i == 0) {
    out[0] = INT_MAX;
    out[1] = (double)UINT32_MAX;
    out[2] = FLT_EPSILON;
    out[3] = DBL_EPSILON;
    out[4] = sizeof(std::int64_t) + 10 * sizeof(uint16_t) + 100 * sizeof(int8_t);
    out[5] = CHAR_BIT * (double)SHRT_MAX;
    out[6] = FLT_MAX;
    out[7] = offsetof(float2, y);
    printf("limits_and_math: %d threads\n", n);
  }
  if (i < n) {
    float v = in[i];
    float scratch[2];
    memset(scratch, 0, sizeof scratch);
    memcpy(scratch, &v, sizeof v);
    out[8 + i] = std::sqrt(scratch[0]) + fabsf(-v) + (double)(M_PI > 3.14) + abs(-2) +
                 (isinf(INFINITY) ? 1 : 0) + (isnan(NAN) ? 10 : 0);
  }
}
