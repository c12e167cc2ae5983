// Random arrays: the xoshiro256** generator behind array.random and the distributions drawn from
// it (docs/arrays.md says how each is derived, so that a seed gives the same numbers anywhere).
#pragma once
#include <cstdint>

#include "runtime/host_array.h"

namespace kiln {

// The generator behind array.random: xoshiro256** (Blackman and Vigna), seeded by running
// splitmix64 from the 64-bit seed. docs/arrays.md describes the derived distributions.
class Xoshiro256 {
 public:
  explicit Xoshiro256(std::uint64_t seed);
  // A generator in the given raw state (for tests against the reference implementation).
  static Xoshiro256 from_state(std::uint64_t s0, std::uint64_t s1, std::uint64_t s2,
                               std::uint64_t s3);
  std::uint64_t next();
  // Uniform double in [0, 1) from the top 53 bits.
  double uniform();
  // Uniform integer in [0, range) without bias (Lemire's multiply-and-reject); range > 0.
  std::uint64_t bounded(std::uint64_t range);

 private:
  std::uint64_t s_[4];
};

// One splitmix64 step: advances state and returns the next output.
std::uint64_t splitmix64(std::uint64_t& state);

// A seed from the operating system's entropy source (the clock and an address without one).
std::uint64_t entropy_seed();

// Fills a (float32 or float64) with uniform numbers in [low, high); throws kiln::Error naming
// the problem when low < high is not finite or the dtype is not a float type.
void fill_uniform(HostArray& a, double low, double high, Xoshiro256& g);

// Fills a (float32 or float64) with normal numbers of mean loc and deviation scale (Marsaglia's
// polar method, pairs in order); throws kiln::Error on a non-finite loc, a negative scale or a
// non-float dtype.
void fill_normal(HostArray& a, double loc, double scale, Xoshiro256& g);

// Fills a (an integer dtype) with integers in [low, high) without bias; throws kiln::Error when
// low >= high, the dtype is not an integer one or does not hold [low, high).
void fill_integers(HostArray& a, std::int64_t low, std::int64_t high, Xoshiro256& g);

}  // namespace kiln
