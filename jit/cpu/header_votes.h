// Block votes in the headers of ifs and loops, hoisted into statements of their own for the
// region rewrite. BFS-style kernels loop on a vote, `while (__syncthreads_or(changed)) {...}`;
// the region rewrite reads a loop's header once per block, so a vote there (which every thread
// casts) sent the kernel to coroutines. As a statement, `int v = __syncthreads_or(changed);`,
// the rewrite takes it (regions.cpp vote_statement):
//   if (V(p) ...) S          -> int v = V(p); if (v ...) S
//   while (V(p) ...) B       -> while (true) { int v = V(p); if (!(v ...)) break; { B } }
//   for (I; V(p) ...; N) B   -> for (I; ; N) { int v = V(p); if (!(v ...)) break; { B } }
//   do { B } while (V(p));   -> do { { B } int v = V(p); if (!(v)) break; } while (true);
// `continue` keeps its meaning in each (a do body's stays only where it has none). A vote is
// hoisted only where the header evaluates it first and always (none after `&&`, `||`, `?` or a
// comma operator; no if init-statement), alone there; a loop's body a block or a plain
// statement, a do's a block; an if in a statement list (not an `else if`, not in a switch's
// block, none in a source with goto). Lines are kept.
#pragma once
#include <string>
#include <string_view>

namespace kiln::cpu {

// source with its header votes hoisted, or source itself when it has none.
std::string hoist_header_votes(std::string_view source);

}  // namespace kiln::cpu
