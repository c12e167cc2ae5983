// kiln's kernel-side helpers: #include <kiln.cuh> in a kernel.
//
//   kiln::Array<T, N>   an N-d array parameter: .data, .shape[i], .size(), a(i, j, ...)
//   kiln::grid<N>()     the thread's global position (Numba's cuda.grid(N))
//   kiln::gridsize<N>() the grid's extent in threads (Numba's cuda.gridsize(N))
//
//   __global__ void blur(kiln::Array<const float, 2> in, kiln::Array<float, 2> out) {
//     auto [x, y] = kiln::grid<2>();
//     if (y < out.shape[0] && x < out.shape[1]) out(y, x) = in(y, x);
//   }
//
// It compiles under NVRTC (no standard headers: __CUDACC_RTC__) and on kiln's cpu backend (a host
// compiler with a prelude that defines __global__, __device__, __host__, threadIdx, blockIdx,
// blockDim, gridDim): it uses only those and the core language (C++17).
#pragma once

// The cpu backend defines this under KILN_CHECK=1 to report out-of-bounds element accesses;
// elsewhere it costs nothing.
#ifndef KILN_ARRAY_CHECK
#define KILN_ARRAY_CHECK(array_ptr, dim, index, extent) ((void)0)
#endif

namespace kiln {

// An N-d row-major array as kiln passes it: the data pointer and the extents, laid out as
// struct { T* data; long long shape[N]; } (8 + 8N bytes, 8-byte aligned). A
// kiln::Array<const T, N> parameter takes the same arrays and makes the elements read-only.
template <typename T, int N>
struct Array {
  static_assert(N >= 1, "kiln::Array needs at least one dimension");
  T* data;
  long long shape[N];

  // Number of elements: the product of the extents.
  __host__ __device__ long long size() const {
    long long n = 1;
    for (int d = 0; d < N; ++d) n *= shape[d];
    return n;
  }

  // The flat (row-major) offset of element (i, j, ...), one index per dimension.
  template <typename... I>
  __host__ __device__ long long offset(I... index) const {
    static_assert(sizeof...(I) == N, "kiln::Array: give one index per dimension");
    const long long idx[N] = {static_cast<long long>(index)...};
    long long off = 0;
    for (int d = 0; d < N; ++d) {
      KILN_ARRAY_CHECK(this, d, idx[d], shape[d]);
      off = off * shape[d] + idx[d];
    }
    return off;
  }

  // Element (i, j, ...), 0-based as everywhere in C++.
  template <typename... I>
  __host__ __device__ T& operator()(I... index) const {
    return data[offset(index...)];
  }

  // Element i of a 1-d array.
  __host__ __device__ T& operator[](long long i) const {
    static_assert(N == 1, "kiln::Array: [] is for 1-d arrays; use a(i, j, ...)");
    KILN_ARRAY_CHECK(this, 0, i, shape[0]);
    return data[i];
  }
};

// A 2-d or 3-d position: auto [x, y] = kiln::grid<2>(); (x is the fastest-varying axis, as in
// Numba's cuda.grid(2)).
template <int N>
struct Index;
template <>
struct Index<2> {
  long long x, y;
};
template <>
struct Index<3> {
  long long x, y, z;
};

// The thread's global index: a long long for N = 1 (Numba's cuda.grid(1)), an Index<N> with
// x, y (and z) for N = 2, 3. Each axis is blockIdx * blockDim + threadIdx, in 64 bits.
template <int N>
__device__ inline auto grid() {
  static_assert(N >= 1 && N <= 3, "kiln::grid<N>: N is 1, 2 or 3");
  long long x = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if constexpr (N == 1) {
    return x;
  } else {
    long long y = static_cast<long long>(blockIdx.y) * blockDim.y + threadIdx.y;
    if constexpr (N == 2) {
      return Index<2>{x, y};
    } else {
      long long z = static_cast<long long>(blockIdx.z) * blockDim.z + threadIdx.z;
      return Index<3>{x, y, z};
    }
  }
}

// The number of threads in the grid along each axis (Numba's cuda.gridsize(N)): the stride of
// a grid-stride loop. A long long for N = 1, an Index<N> for N = 2, 3.
template <int N>
__device__ inline auto gridsize() {
  static_assert(N >= 1 && N <= 3, "kiln::gridsize<N>: N is 1, 2 or 3");
  long long x = static_cast<long long>(gridDim.x) * blockDim.x;
  if constexpr (N == 1) {
    return x;
  } else {
    long long y = static_cast<long long>(gridDim.y) * blockDim.y;
    if constexpr (N == 2) {
      return Index<2>{x, y};
    } else {
      return Index<3>{x, y, static_cast<long long>(gridDim.z) * blockDim.z};
    }
  }
}

}  // namespace kiln
