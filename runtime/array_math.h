// Element-wise arithmetic and comparisons of host arrays, for checks written in Lua without a
// loop: `a + b`, `a * 2`, `-a`, `a:lt(b)`. Operands are arrays of one shape, or an array and a
// scalar (a 0-d array, which broadcasts). Results are new arrays, never views.
//
// Result dtypes (numpy's, simplified): integers with integers stay in the array's dtype when both
// share it (a scalar takes the array's), else int64; anything with a float is float64, except
// float32, float16 or bfloat16 with itself or with a scalar; `/` is true division, float. Values
// are computed in int64 (overflow checked) or double and stored as kiln stores any value: a result
// out of the dtype's range is a kiln::Error naming it, never wrapped. bool arrays count as 0/1
// integers; vector dtypes are refused (their lanes: a:view).
#pragma once
#include "runtime/host_array.h"

namespace kiln {

enum class ArithOp { add, sub, mul, div };
enum class CompareOp { eq, ne, lt, le, gt, ge };

// a op b; throws kiln::Error when the shapes differ (a 0-d operand broadcasts).
HostArray arithmetic(const HostArray& a, const HostArray& b, ArithOp op);
// -a, in a's dtype (unsigned dtypes: an error for any nonzero element).
HostArray negate(const HostArray& a);
// a op b element by element, as a bool array.
HostArray compare(const HostArray& a, const HostArray& b, CompareOp op);
// n evenly spaced values from start to stop, both included (numpy's linspace).
HostArray linspace(double start, double stop, std::int64_t n, DType dtype);

}  // namespace kiln
