// Casts to integer types as a GPU converts (jit/cpu/gpu_casts.h): which casts the rewrite takes,
// where it ends each operand, and what it leaves alone.
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "jit/cpu/gpu_casts.h"

namespace kiln {
namespace {

TEST(CpuGpuCasts, ExplicitIntegerCastsConvertAsAGpu) {
  const std::pair<std::string, std::string> cases[] = {
      {"int b = (int)(x * n);", "int b = kiln_cpu::gpu_cast<int>((x * n));"},
      {"c[i] = (unsigned char)v[i] + 1;", "c[i] = kiln_cpu::gpu_cast<unsigned char>(v[i]) + 1;"},
      {"y = (int)a < b;", "y = kiln_cpu::gpu_cast<int>(a) < b;"},
      {"y = (long long)-p->x.y;", "y = kiln_cpu::gpu_cast<long long>(-p->x.y);"},
      {"return (int)std::floor(v)[2];", "return kiln_cpu::gpu_cast<int>(std::floor(v)[2]);"},
      {"y = (int)(float)x;", "y = kiln_cpu::gpu_cast<int>((float)x);"},
      {"y = (int)((int)x * 2);", "y = kiln_cpu::gpu_cast<int>((kiln_cpu::gpu_cast<int>(x) * 2));"},
      {"f((unsigned)s, (std::size_t)t);",
       "f(kiln_cpu::gpu_cast<unsigned>(s), kiln_cpu::gpu_cast<std::size_t>(t));"},
      {"y = size_t(x) + unsigned(z);",
       "y = kiln_cpu::gpu_cast<size_t>(x) + kiln_cpu::gpu_cast<unsigned>(z);"},
      {"y = std::int64_t(d);", "y = kiln_cpu::gpu_cast<std::int64_t>(d);"},
      {"y = static_cast<short>(d);", "y = kiln_cpu::gpu_cast<short>(d);"},
      {"y = (int)x++;", "y = kiln_cpu::gpu_cast<int>(x++);"},
      {"y = (long long)(unsigned long long)f;",
       "y = kiln_cpu::gpu_cast<long long>(kiln_cpu::gpu_cast<unsigned long long>(f));"},
      {"y = (int)(unsigned)(short)x;",
       "y = kiln_cpu::gpu_cast<int>(kiln_cpu::gpu_cast<unsigned>(kiln_cpu::gpu_cast<short>(x)));"},
      // Left alone: no operand (declarations, sizeof), integer operands, templates, other
      // types, directives, declarations that look like casts.
      {"void f(int);", ""},
      {"n = sizeof(int) * k;", ""},
      {"y = (int)threadIdx.x;", ""},
      {"y = (int)3 + int(7);", ""},
      {"y = (int)foo<3>(x);", ""},
      {"y = (float)x + static_cast<float>(z);", ""},
      // A one-line macro's body is code too; one continued on the next line is left alone.
      {"#define BIN(x) (int)(x)", "#define BIN(x) kiln_cpu::gpu_cast<int>((x))"},
      {"#define TO_INT (int)\\\n  (x)", ""},
      {"int(x);", ""},
      {"y = int(*p);", ""},
      {"using Fn = int(float);", ""},
      {"auto f = [](int (&a)[4]) { return a[0]; };", ""},
      {"int (S::*member) = &S::m;", ""},
      {"y = (int)s.template get<3>() + (int)q.at<2>(i);",
       "y = kiln_cpu::gpu_cast<int>(s.template get<3>()) + kiln_cpu::gpu_cast<int>(q.at<2>(i));"},
      {"y = (int)p->v < 3;", "y = kiln_cpu::gpu_cast<int>(p->v) < 3;"},
      {"y = int(float(x) * 2);", "y = kiln_cpu::gpu_cast<int>(float(x) * 2);"},
      {"y = (MyInt)x;", ""},
      {"operator int() const;", ""},
  };
  for (const auto& [code, expected] : cases)
    EXPECT_EQ(cpu::gpu_integer_casts(code), expected.empty() ? code : expected) << code;
}

TEST(CpuGpuCasts, KeepsLines) {
  const std::string code = "int a = (int)(x +\n  y);\nint b = 1;\n";
  const std::string out = cpu::gpu_integer_casts(code);
  EXPECT_EQ(out, "int a = kiln_cpu::gpu_cast<int>((x +\n  y));\nint b = 1;\n");
}

// Shifts as a GPU shifts: each count but a small literal read through kiln_cpu::shift_count,
// the whole additive expression; templates' ends, operator names and kernel launches left.
TEST(CpuGpuShifts, CountsClampAsAGpu) {
  const std::pair<std::string, std::string> cases[] = {
      {"m = (1u << bits) - 1;", "m = (1u << ::kiln_cpu::shift_count(bits)) - 1;"},
      {"y = x >> 32 - k;", "y = x >> ::kiln_cpu::shift_count(32 - k);"},
      {"y = x << a * b + c << d;",
       "y = x << ::kiln_cpu::shift_count(a * b + c) << ::kiln_cpu::shift_count(d);"},
      {"y = x << n+1;", "y = x << ::kiln_cpu::shift_count(n+1);"},
      {"h ^= h >> s[i];", "h ^= h >> ::kiln_cpu::shift_count(s[i]);"},
      {"v <<= n;", "v <<= ::kiln_cpu::shift_count(n);"},
      {"f(v >>= n, 2);", "f(v >>= ::kiln_cpu::shift_count(n), 2);"},
      {"y = (v >> bit) & 1;", "y = (v >> ::kiln_cpu::shift_count(bit)) & 1;"},
      {"y = 1 << (int)f;", "y = 1 << ::kiln_cpu::shift_count((int)f);"},
      {"y = x << -n;", "y = x << ::kiln_cpu::shift_count(-n);"},
      {"int a[1 << LOG];", "int a[1 << ::kiln_cpu::shift_count(LOG)];"},
      {"y = x << (a >> b);",
       "y = x << ::kiln_cpu::shift_count((a >> ::kiln_cpu::shift_count(b)));"},
      // Left alone: small literal counts, templates' ends, operator names, launches, a count
      // the rewrite cannot read, a compound shift whose count goes on past its operand.
      {"y = x << 3 | z >> 0x1f;", ""},
      {"std::vector<std::vector<int>> v;", ""},
      {"auto p = static_cast<A<B>>(x);", ""},
      {"S& operator<<(int n);", ""},
      {"k<<<grid, block>>>(a);", ""},
      {"y = x << \"s\";", ""},
      {"v <<= n ? 1 : 2;", ""},
      {"#define MASK(n) ((1u << (n)) - 1)", ""},
      {"y = a < b ? v >> s : 0;", ""},
  };
  for (const auto& [code, expected] : cases)
    EXPECT_EQ(cpu::gpu_shifts(code), expected.empty() ? code : expected) << code;
}

}  // namespace
}  // namespace kiln
