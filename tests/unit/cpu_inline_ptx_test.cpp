// Inline PTX as C++ (jit/cpu/inline_ptx.h): how statements, operands and lines come out, and
// which statements are left with their reason. (What the C++ computes: conformance/inline_ptx.)
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "jit/cpu/inline_ptx.h"

namespace kiln {
namespace {

std::size_t lines(const std::string& s) {
  return std::count(s.begin(), s.end(), '\n');
}

TEST(CpuInlinePtx, PlainOperandsAreWrittenInPlace) {
  const auto r = cpu::translate_inline_ptx(
      "__global__ void k(unsigned* o) {\n"
      "  unsigned lane;\n"
      "  asm volatile(\"mov.u32 %0, %%laneid;\" : \"=r\"(lane));\n"
      "  o[0] = lane;\n"
      "}\n");
  EXPECT_TRUE(r.left.empty());
  EXPECT_EQ(r.source.find("asm"), std::string::npos) << r.source;
  EXPECT_NE(r.source.find("{ kiln_ptx::set((lane), kiln_ptx::get<uint32_t>(((threadIdx.x + "
                          "blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) & 31u))); }\n"
                          "  o[0] = lane;"),
            std::string::npos)
      << r.source;
}

TEST(CpuInlinePtx, InputsAreCopiedOnceBeforeAnyInstruction) {
  // GCC reads every input once, before any output is written: a copy of the register's type.
  const auto r = cpu::translate_inline_ptx(
      "__device__ void f(unsigned* p, int i) {\n"
      "  asm(\"add.u32 %0, %1, %1;\" : \"=r\"(p[i]) : \"r\"(g(i++)));\n"
      "}\n");
  ASSERT_TRUE(r.left.empty());
  EXPECT_NE(r.source.find("const uint32_t kiln_ptx_1 = kiln_ptx::get<uint32_t>((g(i++)));"),
            std::string::npos)
      << r.source;
  EXPECT_NE(
      r.source.find("kiln_ptx::set((p[i]), kiln_ptx::add(kiln_ptx::get<uint32_t>(kiln_ptx_1), "
                    "kiln_ptx::get<uint32_t>(kiln_ptx_1)));"),
      std::string::npos)
      << r.source;
  // mov writes %0 (x) before add reads %1 (x + 1): the copy holds x's value before.
  const auto a = cpu::translate_inline_ptx(
      "__device__ void f(unsigned& x) {\n"
      "  asm(\"mov.u32 %0, 5;\\n\\tadd.u32 %0, %0, %1;\" : \"=&r\"(x) : \"r\"(x + 1));\n"
      "}\n");
  ASSERT_TRUE(a.left.empty());
  EXPECT_NE(a.source.find("const uint32_t kiln_ptx_1 = kiln_ptx::get<uint32_t>((x + 1));"),
            std::string::npos)
      << a.source;
  // An output with effects is bound once by reference; so is every output in a macro, whose
  // parameter may stand for anything (`LD(q[i++], p)`).
  const auto m = cpu::translate_inline_ptx(
      "#define LD(v, p) asm(\"ld.global.u32 %0, [%1];\" : \"=r\"(v) : \"l\"(p))\n"
      "__device__ void f(unsigned* q, const unsigned* p) {\n"
      "  asm(\"mov.u32 %0, 1;\" : \"=r\"(*q++));\n"
      "  LD(q[0], p);\n"
      "}\n");
  ASSERT_TRUE(m.left.empty());
  EXPECT_NE(m.source.find("auto& kiln_ptx_0 = (*q++);"), std::string::npos) << m.source;
  EXPECT_NE(m.source.find("do { auto& kiln_ptx_0 = (v); const uint64_t kiln_ptx_1 ="),
            std::string::npos)
      << m.source;
}

TEST(CpuInlinePtx, KeepsLinesAndStatementShape) {
  const std::string source =
      "__global__ void k(unsigned* o, unsigned a, unsigned b) {\n"
      "  unsigned lo, hi;\n"
      "  if (a)\n"
      "    asm(\"add.cc.u32 %0, %2, %3;\\n\\t\"\n"
      "        \"addc.u32 %1, 0, 0;\"\n"
      "        : \"=r\"(lo), \"=r\"(hi)\n"
      "        : \"r\"(a), \"r\"(b));\n"
      "  else\n"
      "    lo = hi = 0;\n"
      "  o[0] = lo;\n"
      "}\n";
  const auto r = cpu::translate_inline_ptx(source);
  ASSERT_TRUE(r.left.empty());
  EXPECT_EQ(lines(r.source), lines(source));
  // (a block in place of the statement and its `;`, so the `else` still follows its `if`)
  EXPECT_NE(r.source.find("unsigned& kiln_ptx_cc = kiln_ptx::carry_flag();"), std::string::npos)
      << r.source;
  EXPECT_NE(r.source.find("}\n\n\n\n  else\n    lo = hi = 0;\n  o[0] = lo;"), std::string::npos)
      << r.source;
}

TEST(CpuInlinePtx, MacroBodiesBecomeDoWhileStatements) {
  const std::string source =
      "#define SYNC() asm volatile(\"bar.sync 0;\" \\\n  ::: \"memory\")\n"
      "__global__ void k() { SYNC(); }\n";
  const auto r = cpu::translate_inline_ptx(source);
  ASSERT_TRUE(r.left.empty());
  EXPECT_EQ(lines(r.source), lines(source));
  EXPECT_NE(r.source.find("#define SYNC() do { __syncthreads(); } while (0) \\\n"),
            std::string::npos)
      << r.source;
}

TEST(CpuInlinePtx, TrapsWhatHasNoCpuMeaningWithItsReason) {
  // PTX the cpu cannot run becomes a trap naming it (the module's other kernels still build);
  // asm that is not PTX (no dotted opcode, no %% register) stays for the host compiler.
  const std::string source =
      "asm(\".globl x\");\n"  // file scope: not a statement
      "__global__ void k(const float* g, unsigned* o) {\n"
      "  __shared__ float s[32];\n"
      "  asm volatile(\"\" ::: \"memory\");\n"  // a compiler barrier: the host reads it
      "  unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(s));\n"
      "  asm volatile(\"cp.async.ca.shared.global [%0], [%1], 4;\" :: \"r\"(a), \"l\"(g));\n"
      "  asm volatile(\"ld.shared.u32 %0, [%1];\" : \"=r\"(o[0]) : \"r\"(a));\n"
      "  asm(\"mov.u32 %0, %%r5;\" : \"=r\"(o[1]));\n"
      "  asm(\"L1: bra L1;\");\n"
      "  asm(\"min.NaN.f32 %0, %1, %1;\" : \"=f\"(s[2]) : \"f\"(1.0f));\n"
      "  asm(\"add.u32 %0, %1, 1;\" :: \"r\"(o[3]), \"r\"(o[4]));\n"
      "}\n";
  const auto r = cpu::translate_inline_ptx(source, "my.cu");
  ASSERT_EQ(r.left.size(), 6u);
  const std::string expected[] = {"`cp.async.ca.shared.global`: a GPU's shared-memory",
                                  "`ld.shared.u32`: a .shared address",
                                  "`mov.u32`: `%r5` is not an operand",
                                  "`L1`: a label",
                                  "`min.NaN.f32`: its .NaN modifier",
                                  "`add.u32`: writes an operand that is not an output"};
  for (std::size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(r.left[i].line, int(i) + 6);
    EXPECT_EQ(r.left[i].why.rfind(expected[i], 0), 0u) << r.left[i].why;
    EXPECT_EQ(r.left[i].trapped, i != 3) << i;
  }
  EXPECT_EQ(std::count(r.source.begin(), r.source.end(), '\n'),
            std::count(source.begin(), source.end(), '\n'));
  EXPECT_NE(r.source.find("  { ::kiln_cpu::trap(\"my.cu:6: inline PTX the cpu backend cannot run: "
                          "`cp.async.ca.shared.global`: a GPU's shared-memory"),
            std::string::npos)
      << r.source;
  for (const char* kept :
       {"asm(\".globl x\");", "asm volatile(\"\" ::: \"memory\");", "asm(\"L1: bra L1;\");"})
    EXPECT_NE(r.source.find(kept), std::string::npos) << kept;
}

}  // namespace
}  // namespace kiln
