// Subscripts computed in 64 bits for the cpu backend. GCC 12 vectorises a region's thread loop
// only where each access steps evenly with the thread. Code under a condition (`if (in_grid)
// dst[(row + i) * cols + col] = ...`) is if-converted first, and GCC then rewrites its signed
// arithmetic as unsigned, so that computing it for a thread that skips the branch cannot
// overflow. An unsigned 32-bit sum that may wrap, widened to an address, no longer steps evenly:
// every such load becomes a gather, and every such store a scatter (Rodinia's pathfinder spent
// 80% of its time in one gather of consecutive elements). A 64-bit sum keeps its form.
//
// The rewrite takes a subscript `a[E]` whose E is built with + - * / % from names, members,
// integer literals, parentheses and casts like int(x), and computes E in long long where E's type
// is int (decided by the host compiler: `::kiln_cpu::wide_index<decltype((E) + 0)>(W, E)`, W being
// E with each operand widened). An int E has only int operands, whose arithmetic is undefined where
// it overflows; where it does not, the 64-bit value is the same (C++ divides both toward zero). Any
// other E (unsigned, long) is left as it computes.
#pragma once
#include <string>
#include <string_view>

namespace kiln::cpu {

// source with each such subscript computed wide (lines and the rest of the text kept), or
// source itself.
std::string wide_subscripts(std::string_view source);

}  // namespace kiln::cpu
