// Conformance: cuRAND's device API (<curand_kernel.h>) as Monte Carlo kernels use it: states
// made in the kernel that draws, or kept in a device array between launches.
#include <curand_kernel.h>

// Raw numbers: XORWOW (curandState, the default) with seed + thread at subsequence 0, and
// Philox4_32_10 with one seed at subsequence = thread, both from `offset` on.
__global__ void raw_xorwow(unsigned* out, unsigned long long seed, unsigned long long offset,
                           int per) {
  const int i = threadIdx.x;
  curandState s;
  curand_init(seed + i, 0, offset, &s);
  for (int k = 0; k < per; ++k) out[i * per + k] = curand(&s);
}

__global__ void raw_philox(unsigned* out, unsigned long long seed, unsigned long long offset,
                           int per) {
  const int i = threadIdx.x;
  curandStatePhilox4_32_10_t s;
  curand_init(seed, i, offset, &s);
  for (int k = 0; k < per; ++k) out[i * per + k] = curand(&s);
}

// One state per thread in a device array, drawn from across launches; set up by a template
// over the state type, instantiated by name (`setup<curandStatePhilox4_32_10_t>`).
template <typename State>
__global__ void setup(State* states, unsigned long long seed, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) curand_init(seed, i, 0, &states[i]);
}

__global__ void draw(curandStatePhilox4_32_10_t* states, float* uniform, float* normal, int n,
                     int per) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  curandStatePhilox4_32_10_t s = states[i];
  for (int k = 0; k < per; ++k) uniform[i * per + k] = curand_uniform(&s);
  for (int k = 0; k < per; ++k) normal[i * per + k] = curand_normal(&s);
  states[i] = s;
}
