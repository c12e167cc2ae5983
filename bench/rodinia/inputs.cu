// The benchmarks' inputs, made on the device from a counter-based generator: element i of a
// stream is a function of (seed, i) alone, so any grid produces the same values, and omp.cpp's
// scramble() is the same function written again for the host. Both sides therefore start from
// identical inputs without shipping files between them.

// An integer mix of the element's index: a multiplicative step spreads neighbouring indices,
// then xor-shifts and multiplies carry the high bits down into the low ones.
__device__ unsigned scramble(unsigned i, unsigned seed) {
  unsigned x = i * 2654435761u + seed * 0x9e3779b9u + 1u;
  x ^= x >> 16;
  x *= 0x6b43a9b5u;
  x ^= x >> 15;
  x *= 0xa1f3c2d7u;
  x ^= x >> 16;
  return x;
}

// out[i] uniform in [lo, hi] (inclusive): the integer inputs (costs, scores).
__global__ void random_ints(int* out, int n, unsigned seed, int lo, int hi) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = lo + (int)(scramble(i, seed) % (unsigned)(hi - lo + 1));
}

// out[i] in [lo, lo + span): 24 random bits scaled, exact in float before the affine step.
__global__ void random_floats(float* out, int n, unsigned seed, float lo, float span) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = lo + span * ((float)(scramble(i, seed) >> 8) * (1.0f / 16777216.0f));
}
