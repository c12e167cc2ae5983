// Conformance: libcu++ as modern kernels use it: fixed-width types and limits from
// <cuda/std/...>, cuda::std::array and tuple in device code, and cuda::atomic_ref for a global
// histogram and a running maximum.
#include <cuda/atomic>
#include <cuda/std/array>
#include <cuda/std/cstdint>
#include <cuda/std/limits>
#include <cuda/std/tuple>
#include <cuda/std/type_traits>

__device__ cuda::std::tuple<int, float> split(float v) {
  const int whole = (int)v;
  return cuda::std::make_tuple(whole, v - (float)whole);
}

__global__ void stats(const float* in, cuda::std::uint32_t* bins, float* biggest, float* parts,
                      int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  static_assert(cuda::std::is_same<cuda::std::int32_t, int>::value, "int32_t is int");
  if (i == 0) parts[2 * n] = cuda::std::numeric_limits<float>::max();
  if (i >= n) return;
  const float v = in[i];
  cuda::std::array<float, 3> edges = {1.0f, 2.0f, 3.0f};
  int bin = 0;
  for (float e : edges) bin += v >= e;
  cuda::atomic_ref<cuda::std::uint32_t, cuda::thread_scope_device> count(bins[bin]);
  count.fetch_add(1u, cuda::std::memory_order_relaxed);
  cuda::atomic_ref<float, cuda::thread_scope_device> top(*biggest);
  float seen = top.load(cuda::std::memory_order_relaxed);
  while (seen < v && !top.compare_exchange_weak(seen, v, cuda::std::memory_order_relaxed)) {
  }
  auto [whole, frac] = split(v);
  parts[2 * i] = (float)whole;
  parts[2 * i + 1] = frac;
}
