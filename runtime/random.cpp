#include "runtime/random.h"

#include <chrono>
#include <cmath>
#include <random>
#include <string>

#include "runtime/error.h"

namespace kiln {
namespace {

const char* dtype_name(DType t) {
  return dtype_info(t).name.data();
}

// Throws unless a has a float dtype.
void require_float(const HostArray& a, const char* what) {
  if (dtype_info(a.dtype()).is_integer || is_vector(a.dtype()))
    throw Error(std::string(what) + ": dtype must be float32, float64, float16 or bfloat16, got " +
                dtype_name(a.dtype()));
}

// Stores v, drawn from [low, high), into element i of a 16-bit float array: rounded, and a step
// down where rounding reached high.
template <typename Narrow>
void store_below(HostArray& a, std::int64_t i, double v, double high) {
  Narrow r(v);
  if (static_cast<double>(r) >= high)
    r = Narrow::from_bits(std::signbit(static_cast<double>(r)) ? r.bits() + 1 : r.bits() - 1);
  a.as<Narrow>()[i] = r;
}

}  // namespace

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

Xoshiro256::Xoshiro256(std::uint64_t seed) {
  for (std::uint64_t& s : s_) s = splitmix64(seed);
}

Xoshiro256 Xoshiro256::from_state(std::uint64_t s0, std::uint64_t s1, std::uint64_t s2,
                                  std::uint64_t s3) {
  Xoshiro256 g(0);
  g.s_[0] = s0, g.s_[1] = s1, g.s_[2] = s2, g.s_[3] = s3;
  return g;
}

std::uint64_t Xoshiro256::next() {
  auto rotl = [](std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); };
  std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Xoshiro256::uniform() {
  return static_cast<double>(next() >> 11) * 0x1.0p-53;
}

std::uint64_t Xoshiro256::bounded(std::uint64_t range) {
  __extension__ typedef unsigned __int128 U128;
  U128 m = static_cast<U128>(next()) * range;
  std::uint64_t low = static_cast<std::uint64_t>(m);
  if (low < range) {
    std::uint64_t threshold = (0 - range) % range;  // 2^64 mod range
    while (low < threshold) {
      m = static_cast<U128>(next()) * range;
      low = static_cast<std::uint64_t>(m);
    }
  }
  return static_cast<std::uint64_t>(m >> 64);
}

std::uint64_t entropy_seed() {
  try {
    std::random_device rd;
    return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
  } catch (const std::exception&) {
    int local = 0;  // no entropy device: the clock and an address (ASLR) will have to do
    return static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
           reinterpret_cast<std::uintptr_t>(&local);
  }
}

void fill_uniform(HostArray& a, double low, double high, Xoshiro256& g) {
  if (!(low < high) || !std::isfinite(high - low))
    throw Error("uniform: need finite low < high, got low=" + std::to_string(low) +
                ", high=" + std::to_string(high));
  require_float(a, "uniform");
  for (std::int64_t i = 0; i < a.size(); ++i) {
    double v = low + (high - low) * g.uniform();
    if (a.dtype() == DType::float32) {
      float f = static_cast<float>(v);  // rounding may reach high: step back below it
      if (f >= high) f = std::nextafter(static_cast<float>(high), -INFINITY);
      a.as<float>()[i] = f;
    } else if (a.dtype() == DType::float16) {
      store_below<Float16>(a, i, v, high);
    } else if (a.dtype() == DType::bfloat16) {
      store_below<BFloat16>(a, i, v, high);
    } else {
      a.as<double>()[i] = v >= high ? std::nextafter(high, low) : v;
    }
  }
}

void fill_normal(HostArray& a, double loc, double scale, Xoshiro256& g) {
  if (!(scale >= 0) || !std::isfinite(loc) || !std::isfinite(scale))
    throw Error("normal: need finite loc and scale >= 0, got loc=" + std::to_string(loc) +
                ", scale=" + std::to_string(scale));
  require_float(a, "normal");
  for (std::int64_t i = 0; i < a.size(); i += 2) {
    double u, v, r2;
    do {
      u = 2 * g.uniform() - 1;
      v = 2 * g.uniform() - 1;
      r2 = u * u + v * v;
    } while (r2 >= 1 || r2 == 0);
    double f = std::sqrt(-2 * std::log(r2) / r2);
    a.set_number(i, loc + scale * u * f);
    if (i + 1 < a.size()) a.set_number(i + 1, loc + scale * v * f);
  }
}

void fill_integers(HostArray& a, std::int64_t low, std::int64_t high, Xoshiro256& g) {
  if (low >= high)
    throw Error("integers: need low < high (high is exclusive), got low=" + std::to_string(low) +
                ", high=" + std::to_string(high));
  if (!dtype_info(a.dtype()).is_integer)
    throw Error(std::string("integers: dtype must be an integer dtype, got ") +
                dtype_name(a.dtype()));
  try {  // the dtype must hold low and high - 1
    HostArray probe(Shape{2}, a.dtype());
    probe.set_integer(0, low);
    probe.set_integer(1, high - 1);
  } catch (const Error& e) {
    throw Error(std::string("integers: [low, high) does not fit in ") + dtype_name(a.dtype()) +
                ": " + e.what());
  }
  std::uint64_t range = static_cast<std::uint64_t>(high) - static_cast<std::uint64_t>(low);
  dispatch_dtype(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* x = a.as<T>();
    for (std::int64_t i = 0; i < a.size(); ++i)
      x[i] = static_cast<T>(
          static_cast<std::int64_t>(static_cast<std::uint64_t>(low) + g.bounded(range)));
  });
}

}  // namespace kiln
