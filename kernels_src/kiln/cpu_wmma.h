// <mma.h> for the cpu backend: nvcuda::wmma's fragments, loads, stores and mma_sync for every
// shape and type CUDA has short of the experimental sub-byte ones.
//
// On a GPU a warp's 32 lanes hold a tile between them in an unspecified layout and mma_sync
// trades values between lanes. Here each lane holds just what its own share of the product
// needs, so no lane ever waits for another and the kernel stays a plain loop over threads (or
// regions): lane l owns the E = M*N/32 accumulator elements l*E .. l*E+E-1 of the M x N tile
// in row-major order (one run within a row, as N is a multiple of E for every shape), its
// matrix_a fragment is that row of A (K elements) and its matrix_b fragment those E columns of B
// (K*E elements). Element-wise code over x[0 .. num_elements) sees each lane's share, as CUDA
// promises; the mapping itself is unspecified there too.
#pragma once
#include <climits>
#include <cstddef>
#include <cstring>

#include "kiln/cpu_narrow.h"
#include "kiln/cpu_prelude.h"

namespace nvcuda {
namespace wmma {

struct row_major;
struct col_major;
struct matrix_a;
struct matrix_b;
struct accumulator;
namespace precision {
struct tf32;
}
namespace experimental {
namespace precision {
struct u4;
struct s4;
struct b1;
}  // namespace precision
enum bmmaBitOp { bmmaBitOpXOR = 1, bmmaBitOpAND = 2 };
enum bmmaAccumulateOp { bmmaAccumulateOpPOPC = 1 };
}  // namespace experimental

enum layout_t { mem_row_major, mem_col_major };

template <typename T>
struct helper_traits {
  typedef T element_type;
  typedef T storage_element_type;
  typedef T fill_argument_type;
};
template <>
struct helper_traits<precision::tf32> {
  typedef precision::tf32 element_type;
  typedef float storage_element_type;
  typedef float fill_argument_type;
};

// A float rounded to tf32 (10 fraction bits), to nearest with ties away from zero, as
// cvt.rna.tf32.f32 does; the result is a float with its low 13 bits clear.
inline float __float_to_tf32(float in) {
  unsigned bits;
  memcpy(&bits, &in, 4);
  if ((bits & 0x7f800000u) != 0x7f800000u) bits = (bits + 0x1000u) & 0xffffe000u;
  float out;
  memcpy(&out, &bits, 4);
  return out;
}

template <typename T, int size, int packed_size = size>
struct __attribute__((aligned(8))) __frag_base {
  enum { num_elements = size };
  enum { num_storage_elements = packed_size };
  typedef T element_type;
  typedef typename helper_traits<T>::storage_element_type storage_element_type;
  storage_element_type x[num_storage_elements];
};

}  // namespace wmma
}  // namespace nvcuda

namespace kiln_cpu::wmma {
namespace w = nvcuda::wmma;

// Whether CUDA has an M x N x K WMMA for element type T (of A and B).
template <int M, int N, int K, typename T>
constexpr bool valid_shape() {
  if constexpr (__is_same(T, w::precision::tf32))
    return M == 16 && N == 16 && K == 8;
  else if constexpr (__is_same(T, double))
    return M == 8 && N == 8 && K == 4;
  else
    return K == 16 && ((M == 16 && N == 16) || (M == 32 && N == 8) || (M == 8 && N == 32));
}

// How many elements of each fragment one lane holds (the header says which).
template <typename Use, int M, int N, int K>
constexpr int lane_share() {
  constexpr int owned = M * N / 32;
  if constexpr (__is_same(Use, w::matrix_a))
    return K;
  else if constexpr (__is_same(Use, w::matrix_b))
    return K * owned;
  else
    return owned;
}

// The first accumulator element this lane owns, as (row, column) of the tile.
template <int M, int N>
inline void owned_origin(int* row, int* col) {
  const int first = int(kiln_cpu::lane_id()) * (M * N / 32);
  *row = first / N;
  *col = first % N;
}

// The value an element of A or B enters the product as: tf32 keeps its 10 fraction bits (the
// tensor cores read no more), 16-bit floats widen to float, integers to int.
template <typename T, typename S>
inline auto operand(S v) {
  if constexpr (__is_same(T, w::precision::tf32)) {
    unsigned bits;
    float f = v;
    memcpy(&bits, &f, 4);
    bits &= 0xffffe000u;
    memcpy(&f, &bits, 4);
    return f;
  } else if constexpr (__is_same(T, double)) {
    return double(v);
  } else if constexpr (__is_same(T, signed char) || __is_same(T, unsigned char)) {
    return int(v);
  } else {
    return float(v);
  }
}

// An int32 accumulation: wrapped as the hardware wraps, or clamped when satf is set.
inline int saturate(long long v, bool satf) {
  if (satf) return v > INT_MAX ? INT_MAX : v < INT_MIN ? INT_MIN : int(v);
  return int((unsigned)(unsigned long long)v);
}

}  // namespace kiln_cpu::wmma

namespace nvcuda {
namespace wmma {

template <typename Use, int m, int n, int k, typename T, typename Layout = void>
class fragment : public __frag_base<T, kiln_cpu::wmma::lane_share<Use, m, n, k>()> {
  static_assert(!__is_same(T, experimental::precision::u4) &&
                    !__is_same(T, experimental::precision::s4) &&
                    !__is_same(T, experimental::precision::b1),
                "kiln's cpu backend does not run the experimental sub-byte WMMA types "
                "(u4, s4, b1)");
  static_assert(__is_same(Use, accumulator) || kiln_cpu::wmma::valid_shape<m, n, k, T>(),
                "CUDA has no WMMA of this shape for this element type (16x16x16, 32x8x16 and "
                "8x32x16 for half, bfloat16 and 8-bit integers; 16x16x8 for tf32; 8x8x4 for "
                "double)");
};

template <typename FragEleType, int size, int packed_size>
inline void fill_fragment(__frag_base<FragEleType, size, packed_size>& f,
                          const typename helper_traits<FragEleType>::fill_argument_type& in) {
  for (int i = 0; i < packed_size; i++) f.x[i] = in;
}

// Loads and stores take any pointer: a T*, or a kernel parameter that check mode bounds-checks
// (kiln_cpu::checked_ptr), so that a tile read past its array is named there.

// matrix_a: this lane's row of A, K elements, from row- or column-major memory.
template <int m, int n, int k, typename T, typename Layout, typename Ptr>
inline void load_matrix_sync(fragment<matrix_a, m, n, k, T, Layout>& a, Ptr p, unsigned ldm) {
  int row, col;
  kiln_cpu::wmma::owned_origin<m, n>(&row, &col);
  for (int i = 0; i < k; i++)
    a.x[i] = __is_same(Layout, row_major) ? p[size_t(row) * ldm + i] : p[size_t(i) * ldm + row];
}

// matrix_b: this lane's columns of B, K rows of E, from row- or column-major memory.
template <int m, int n, int k, typename T, typename Layout, typename Ptr>
inline void load_matrix_sync(fragment<matrix_b, m, n, k, T, Layout>& b, Ptr p, unsigned ldm) {
  constexpr int owned = m * n / 32;
  int row, col;
  kiln_cpu::wmma::owned_origin<m, n>(&row, &col);
  for (int i = 0; i < k; i++)
    for (int j = 0; j < owned; j++)
      b.x[i * owned + j] = __is_same(Layout, row_major) ? p[size_t(i) * ldm + col + j]
                                                        : p[size_t(col + j) * ldm + i];
}

// The accumulator elements this lane owns, from memory of either layout.
template <int m, int n, int k, typename T, typename Ptr>
inline void load_matrix_sync(fragment<accumulator, m, n, k, T>& c, Ptr p, unsigned ldm,
                             layout_t layout) {
  int row, col;
  kiln_cpu::wmma::owned_origin<m, n>(&row, &col);
  for (int j = 0; j < m * n / 32; j++)
    c.x[j] =
        layout == mem_row_major ? p[size_t(row) * ldm + col + j] : p[size_t(col + j) * ldm + row];
}

template <int m, int n, int k, typename T, typename Ptr>
inline void store_matrix_sync(Ptr p, const fragment<accumulator, m, n, k, T>& c, unsigned ldm,
                              layout_t layout) {
  int row, col;
  kiln_cpu::wmma::owned_origin<m, n>(&row, &col);
  for (int j = 0; j < m * n / 32; j++)
    (layout == mem_row_major ? p[size_t(row) * ldm + col + j] : p[size_t(col + j) * ldm + row]) =
        c.x[j];
}

// d = a * b + c for this lane's elements: products and sums in float for 16-bit and tf32
// inputs (exact products, one rounding per addition), double for double, int for 8-bit integers.
template <int m, int n, int k, typename TD, typename TA, typename LA, typename LB, typename TC>
inline void mma_sync(fragment<accumulator, m, n, k, TD>& d,
                     const fragment<matrix_a, m, n, k, TA, LA>& a,
                     const fragment<matrix_b, m, n, k, TA, LB>& b,
                     const fragment<accumulator, m, n, k, TC>& c, bool satf = false) {
  using kiln_cpu::wmma::operand;
  constexpr int owned = m * n / 32;
  for (int j = 0; j < owned; j++) {
    if constexpr (__is_same(TA, signed char) || __is_same(TA, unsigned char)) {
      long long acc = c.x[j];
      for (int i = 0; i < k; i++) acc += operand<TA>(a.x[i]) * operand<TA>(b.x[i * owned + j]);
      d.x[j] = kiln_cpu::wmma::saturate(acc, satf);
    } else {
      using Acc = decltype(operand<TA>(a.x[0]));  // float or double
      Acc acc = Acc(c.x[j]);
      for (int i = 0; i < k; i++) acc += operand<TA>(a.x[i]) * operand<TA>(b.x[i * owned + j]);
      d.x[j] = acc;
    }
  }
}

}  // namespace wmma
}  // namespace nvcuda
