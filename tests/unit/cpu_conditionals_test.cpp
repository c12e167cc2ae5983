// Conditional directives in kernel bodies (jit/cpu/conditionals.h): resolved, lines kept, where
// every macro they test is known; left as written where one is not.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "jit/cpu/conditionals.h"

namespace kiln::cpu {
namespace {

// The source's lines that hold more than blanks, joined by '|'.
std::string kept(const std::string& source) {
  std::string out;
  std::size_t at = 0;
  while (at <= source.size()) {
    std::size_t nl = source.find('\n', at);
    if (nl == std::string::npos) nl = source.size();
    std::string line = source.substr(at, nl - at);
    line.erase(0, line.find_first_not_of(' '));
    line.erase(line.find_last_not_of(' ') + 1);
    if (!line.empty()) out += (out.empty() ? "" : "|") + line;
    at = nl + 1;
  }
  return out;
}

std::string resolved(const std::string& source, std::vector<std::string> options = {}) {
  const std::string out = resolve_kernel_conditionals(source, known_macros(options, 800));
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'),
            std::count(source.begin(), source.end(), '\n'));
  return kept(out);
}

TEST(CpuConditionals, KnownGroupsAreResolved) {
  const std::string source = R"(#define GPU_DELTA_REDUCTION
#define THREADS 256
#define HALF (THREADS / 2)
__global__ void k(int* x) {
#ifdef GPU_DELTA_REDUCTION
  a();
#else
  b();
#endif
#ifndef GPU_DELTA_REDUCTION
  c();
#endif
#if __CUDA_ARCH__ >= 700 && HALF == 128
  d();
#elif defined(THREADS)
  e();
#else
  f();
#endif
#if 0
  g();
#endif
})";
  EXPECT_EQ(resolved(source),
            "#define GPU_DELTA_REDUCTION|#define THREADS 256|"
            "#define HALF (THREADS / 2)|__global__ void k(int* x) {|a();|d();|}");
}

TEST(CpuConditionals, OptionsDefineAndUndefine) {
  const std::string source =
      "__global__ void k() {\n#if defined(FAST) && LEVEL > 1\n  fast();\n"
      "#else\n  slow();\n#endif\n}\n";
  EXPECT_EQ(resolved(source, {"-DFAST", "-DLEVEL=2"}), "__global__ void k() {|fast();|}");
  // C's operators and their precedence: (8 % 5 == 3) && 1 || 0, then 2 - 3 * 2 < -3 is false.
  EXPECT_EQ(resolved("__global__ void k() {\n#if (1 << 3) % 5 == 3 && !(2 > 3) || 0\n  a();\n"
                     "#endif\n#if 2 - 3 * 2 < -4 || (6 ^ 3) != 5 || ~0 != -1\n  b();\n#endif\n}\n"),
            "__global__ void k() {|a();|}");
  EXPECT_EQ(resolved(source, {"-DFAST", "-DLEVEL=1"}), "__global__ void k() {|slow();|}");
  // Not defined anywhere kiln can see (a header may define it): left as written.
  EXPECT_EQ(resolved(source, {"-DLEVEL=2"}),
            "__global__ void k() {|#if defined(FAST) && LEVEL > 1|fast();|#else|slow();|#endif|}");
  EXPECT_NE(resolved(source, {"-DFAST", "-DLEVEL=2", "-UFAST"}).find("#if defined(FAST)"),
            std::string::npos);
}

TEST(CpuConditionals, WhatIsNotKnownStaysAsWritten) {
  // A macro defined under a condition, one with parameters, an unknown name in an #elif before
  // the branch taken, and directives outside kernel bodies: all left alone. A known group nested
  // in an unknown one is still resolved.
  const std::string source = R"(#ifndef TILE
#define TILE 16
#endif
#define SQUARE(x) ((x) * (x))
#define ON 1
__global__ void k() {
#if TILE > 8
  a();
#endif
#if SQUARE(2) == 4
  b();
#endif
#if UNKNOWN
  c();
#elif ON
  d();
#endif
#ifdef MAYBE
#if ON
  e();
#endif
#endif
})";
  EXPECT_EQ(resolved(source),
            "#ifndef TILE|#define TILE 16|#endif|#define SQUARE(x) ((x) * (x))|#define ON 1|"
            "__global__ void k() {|#if TILE > 8|a();|#endif|#if SQUARE(2) == 4|b();|#endif|"
            "#if UNKNOWN|c();|#elif ON|d();|#endif|#ifdef MAYBE|e();|#endif|}");
  // #pragma lines are no conditionals; a file without directives comes back as it was.
  EXPECT_EQ(resolved("__global__ void k() {\n#pragma unroll\n  for (;;) {}\n}\n"),
            "__global__ void k() {|#pragma unroll|for (;;) {}|}");
  EXPECT_EQ(resolve_kernel_conditionals("__global__ void k() {}", {}), "__global__ void k() {}");
}

}  // namespace
}  // namespace kiln::cpu
