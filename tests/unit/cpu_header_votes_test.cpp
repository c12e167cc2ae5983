// Block votes in if and loop headers hoisted into statements (jit/cpu/header_votes.h): the
// rewrite's text, what it leaves alone, and kernels that then run as regions with a GPU's
// answers.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "cpu_test_util.h"
#include "jit/cpu/header_votes.h"

namespace kiln::cpu_test {
namespace {

TEST(CpuHeaderVotes, EachHeaderForm) {
  EXPECT_EQ(cpu::hoist_header_votes("{ while (__syncthreads_or(f[t] > 0)) { f[t]--; } }"),
            "{ while (true) { int kiln_vote1_ = __syncthreads_or(f[t] > 0); if (!(kiln_vote1_)) "
            "break; { { f[t]--; } } } }");
  EXPECT_EQ(cpu::hoist_header_votes("; if (!__syncthreads_and(x)) a(); else b();"),
            "; int kiln_vote1_ = __syncthreads_and(x); if (!kiln_vote1_) a(); else b();");
  EXPECT_EQ(cpu::hoist_header_votes("{ for (int i = 0; __syncthreads_count(i < n) > 2; ++i) "
                                    "{ k++; } }"),
            "{ for (int i = 0; ; ++i) { int kiln_vote1_ = __syncthreads_count(i < n); if (!( "
            "kiln_vote1_ > 2)) break; { { k++; } } } }");
  EXPECT_EQ(cpu::hoist_header_votes("{ do { x--; } while (__syncthreads_or(x > 0)); }"),
            "{ do { { x--; } int kiln_vote1_ = __syncthreads_or(x > 0); if (!(kiln_vote1_)) "
            "break; } while (true); }");
  EXPECT_EQ(cpu::hoist_header_votes("{ while (__syncthreads_or(x)) x--; }"),
            "{ while (true) { int kiln_vote1_ = __syncthreads_or(x); if (!(kiln_vote1_)) break; { "
            "x--; } } }");
  // A loop's end right before the next hoisted header: the insertion comes first.
  EXPECT_EQ(
      cpu::hoist_header_votes("{ while (__syncthreads_or(a)) a--;if (__syncthreads_or(b)) f(); }"),
      "{ while (true) { int kiln_vote1_ = __syncthreads_or(a); if (!(kiln_vote1_)) break; { "
      "a--; } }int kiln_vote2_ = __syncthreads_or(b); if (kiln_vote2_) f(); }");
  // Lines stay where a header spans several.
  const std::string spread = "{\n while (__syncthreads_or(a &&\n b)\n && c) {\n x(); } }";
  const std::string out = cpu::hoist_header_votes(spread);
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'),
            std::count(spread.begin(), spread.end(), '\n'));
  EXPECT_NE(out.find("if (!(kiln_vote1_\n && c)) break;"), std::string::npos) << out;
  // Left alone: a vote after && or ?:, two votes, an else if, a loop body that is an if, a do body
  // that continues, a vote outside any header, one after a comma operator or an if's
  // init-statement, a do body without braces, an if in a switch's block or beside a goto.
  for (const char* kept :
       {"{ while (k < 3 && __syncthreads_or(x)) { } }", "{ if (c ? __syncthreads_or(x) : 0) f(); }",
        "{ while (__syncthreads_or(x) || __syncthreads_and(y)) { } }",
        "{ if (a) f(); else if (__syncthreads_or(x)) g(); }",
        "{ while (__syncthreads_or(x)) if (x) x--; }",
        "{ do { if (x) continue; } while (__syncthreads_or(x)); }",
        "{ int v = __syncthreads_or(x); }", "{ while ((x = r < t), __syncthreads_or(x)) {} }",
        "{ if (int a = t; __syncthreads_count(a > 3) == 4) f(); }",
        "{ do x--; while (__syncthreads_or(x > 0)); }",
        "{ switch (k) { case 0: if (__syncthreads_or(x)) f(); break; case 1: g(); } }",
        "{ if (__syncthreads_or(x)) goto done; done: ; }"})
    EXPECT_EQ(cpu::hoist_header_votes(kept), kept) << kept;
}

// A BFS-style sweep (each thread counts down its own frontier entry while any thread of the
// block still has one) and a for loop on a vote count, as regions, with the answers.
TEST(CpuHeaderVotes, VoteLoopsRunAsRegions) {
  Built b = build(R"(
__global__ void levels(int* frontier, int* level, int* rounds) {
  int t = threadIdx.x, depth = 0, r = 0;
  while (__syncthreads_or(frontier[t] > 0)) {
    if (frontier[t] > 0) { frontier[t]--; depth++; }
    ++r;
  }
  level[t] = depth;
  for (int i = 0; __syncthreads_count(i < depth) > 0; ++i) r++;
  if (t == 0) rounds[0] = r;
})",
                  "levels");
  EXPECT_EQ(b.kernel->attributes().threads, "regions") << b.kernel->attributes().why;
  std::vector<int> start(64);
  for (int i = 0; i < 64; ++i) start[i] = (i * 7) % 13;
  Buffer<int> frontier(start), level(64), rounds(1);
  launch(*b.kernel, {1}, {64}, 0, frontier.p, level.p, rounds.p);
  EXPECT_EQ(level.host(), start);
  EXPECT_EQ(rounds.host()[0], 24);  // 12 rounds of the while, then 12 of the for
}

}  // namespace
}  // namespace kiln::cpu_test
