// Casts to integer types as a GPU converts. A GPU's float-to-integer conversion (PTX cvt.rzi)
// saturates: `(int)3e9f` is INT_MAX, `(unsigned)-1.0f` is 0, NaN is 0, and a type narrower than
// 32 bits takes the low bits of the 32-bit result, as NVRTC converts. On the host the same casts
// are undefined, and x86 gives INT_MIN ("integer indefinite") or wraps: a kernel that bins with
// `(int)(x * bins)` and clamps afterwards would silently differ.
//
// The rewrite turns each explicit cast to an integer type in a kernel source, `(int)e`,
// `unsigned(e)`, `static_cast<size_t>(e)`, into `kiln_cpu::gpu_cast<T>(e)` (cpu_types.h), which
// converts floating-point values as the GPU does and anything else exactly as the cast did.
// Implicit conversions (`int i = x;`) are left as they are: finding them needs types.
//
// Shifts too: a GPU's shl and shr clamp the count, so that `x << 32` is 0 for a 32-bit x (and
// `x >> 40` its sign), where x86 takes the count modulo the width (`1u << 32` is 1) and C++
// calls it undefined: `(1u << bits) - 1` with bits 32, a GPU's all-ones mask, would be 0. The
// rewrite turns the count of each `<<`, `>>`, `<<=` and `>>=` (but a literal below 32) into
// `::kiln_cpu::shift_count(n)`, whose operators (cpu_math.h) shift an integer as the GPU does
// and which converts back to the count for any other operand (a stream's `<<`).
#pragma once
#include <string>
#include <string_view>

namespace kiln::cpu {

// source with each explicit cast to an integer type read as kiln_cpu::gpu_cast (lines and the
// rest of the text kept), or source itself.
std::string gpu_integer_casts(std::string_view source);

// source with the count of each shift read as kiln_cpu::shift_count, or source itself.
std::string gpu_shifts(std::string_view source);

}  // namespace kiln::cpu
