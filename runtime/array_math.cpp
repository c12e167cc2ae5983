// Element-wise host arithmetic (array_math.h): the result dtype, then one loop that reads each
// operand as int64 or double and stores through the checked setters.
#include "runtime/array_math.h"

#include <cmath>

#include "runtime/error.h"

namespace kiln {
namespace {

bool is_float(DType t) { return !dtype_info(t).is_integer; }

// Throws unless a and b have one shape (or one is 0-d); returns the result's shape.
Shape common_shape(const HostArray& a, const HostArray& b, const char* what) {
  if (a.ndim() == 0) return b.shape();
  if (b.ndim() == 0 || a.shape() == b.shape()) return a.shape();
  throw Error(std::string("array ") + what + ": shapes " + shape_string(a.shape()) + " and " +
              shape_string(b.shape()) + " differ");
}

// The dtype a op b gives (the header says the rules).
DType result_dtype(const HostArray& a, const HostArray& b, ArithOp op) {
  const bool a_scalar = a.ndim() == 0, b_scalar = b.ndim() == 0;
  const DType ta = a.dtype(), tb = b.dtype();
  if (op == ArithOp::div || is_float(ta) || is_float(tb)) {
    // A narrower float keeps its dtype with itself or with a scalar.
    for (DType narrow : {DType::float32, DType::float16, DType::bfloat16}) {
      auto keeps = [&](const HostArray& x, bool scalar) { return scalar || x.dtype() == narrow; };
      if ((ta == narrow || tb == narrow) && keeps(a, a_scalar) && keeps(b, b_scalar)) return narrow;
    }
    return DType::float64;
  }
  if (ta == tb) return ta == DType::boolean ? DType::int64 : ta;
  if (a_scalar && tb != DType::boolean) return tb;
  if (b_scalar && ta != DType::boolean) return ta;
  return DType::int64;
}

// Element i of x, broadcasting a 0-d x.
std::int64_t at(const HostArray& x, std::int64_t i) { return x.ndim() == 0 ? 0 : i; }

}  // namespace

HostArray arithmetic(const HostArray& a, const HostArray& b, ArithOp op) {
  static const char* const names[] = {"+", "-", "*", "/"};
  Shape shape = common_shape(a, b, names[int(op)]);
  const DType t = result_dtype(a, b, op);
  HostArray out(shape, t);
  const std::int64_t n = out.size();
  if (is_float(t)) {
    for (std::int64_t i = 0; i < n; ++i) {
      const double x = a.get_number(at(a, i)), y = b.get_number(at(b, i));
      out.set_number(i, op == ArithOp::add   ? x + y
                        : op == ArithOp::sub ? x - y
                        : op == ArithOp::mul ? x * y
                                             : x / y);
    }
    return out;
  }
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t x = a.get_integer(at(a, i)), y = b.get_integer(at(b, i));
    std::int64_t r = 0;
    const bool overflow = op == ArithOp::add   ? __builtin_add_overflow(x, y, &r)
                          : op == ArithOp::sub ? __builtin_sub_overflow(x, y, &r)
                                               : __builtin_mul_overflow(x, y, &r);
    if (overflow)
      throw Error("array " + std::string(names[int(op)]) + ": element " + std::to_string(i) +
                  " overflows int64 (" + std::to_string(x) + " " + names[int(op)] + " " +
                  std::to_string(y) + ")");
    out.set_integer(i, r);
  }
  return out;
}

HostArray negate(const HostArray& a) {
  HostArray out(a.shape(), a.dtype() == DType::boolean ? DType::int64 : a.dtype());
  for (std::int64_t i = 0; i < a.size(); ++i) {
    if (is_float(a.dtype())) {
      out.set_number(i, -a.get_number(i));
    } else {
      const std::int64_t v = a.get_integer(i);
      if (v == INT64_MIN) throw Error("array -: element " + std::to_string(i) + " overflows int64");
      out.set_integer(i, -v);
    }
  }
  return out;
}

HostArray compare(const HostArray& a, const HostArray& b, CompareOp op) {
  static const char* const names[] = {"eq", "ne", "lt", "le", "gt", "ge"};
  HostArray out(common_shape(a, b, names[int(op)]), DType::boolean);
  const bool floats = is_float(a.dtype()) || is_float(b.dtype());
  for (std::int64_t i = 0; i < out.size(); ++i) {
    // Integers compare exactly as int64 (doubles would round past 2^53).
    int sign;
    bool unordered = false;
    if (floats) {
      const double x = a.get_number(at(a, i)), y = b.get_number(at(b, i));
      unordered = std::isnan(x) || std::isnan(y);
      sign = x < y ? -1 : x > y ? 1 : 0;
    } else {
      const std::int64_t x = a.get_integer(at(a, i)), y = b.get_integer(at(b, i));
      sign = x < y ? -1 : x > y ? 1 : 0;
    }
    bool r = false;
    switch (op) {
      case CompareOp::eq: r = !unordered && sign == 0; break;
      case CompareOp::ne: r = unordered || sign != 0; break;
      case CompareOp::lt: r = !unordered && sign < 0; break;
      case CompareOp::le: r = !unordered && sign <= 0; break;
      case CompareOp::gt: r = !unordered && sign > 0; break;
      case CompareOp::ge: r = !unordered && sign >= 0; break;
    }
    out.set_integer(i, r);
  }
  return out;
}

HostArray linspace(double start, double stop, std::int64_t n, DType dtype) {
  if (n < 0) throw Error("linspace: a negative count (" + std::to_string(n) + ")");
  HostArray out(Shape{n}, dtype);
  for (std::int64_t i = 0; i < n; ++i)
    out.set_number(i, n == 1 ? start : start + (stop - start) * double(i) / double(n - 1));
  if (n > 1) out.set_number(n - 1, stop);  // exactly stop, as numpy gives
  return out;
}

}  // namespace kiln
