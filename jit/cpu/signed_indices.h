// Signed index arithmetic for the cpu backend. CUDA's thread and block indices are unsigned, so
// `int col = blockIdx.x * TILE + tx;` computes in unsigned arithmetic, which wraps, and only then
// becomes an int. To GCC, an unsigned sum that may wrap is no affine function of the thread loop's
// index: `out[row * cols + col]` is then no run of consecutive elements, and the region's thread
// loop stays scalar (or loads by gathers). Read as int, the same indices give the same values
// (each is below 2^31) and let the compiler see consecutive elements.
//
// The rewrite is taken only where it cannot change a result: in the initialiser of an `int`
// variable (`int v = E;`, `const int`, a for header's declaration, each declarator of a list),
// when E is built from identifiers, members, integer literals, parentheses and + - * alone.
// Those operations agree with the unsigned ones modulo 2^32, and the int the initialiser
// converts to keeps exactly that much. The one difference: an intermediate beyond int's range
// is undefined where the unsigned one wrapped; with indices below 2^31, such an E computes an
// index that is itself out of int's range, which a GPU program cannot use either. Hashes and
// random generators wrap on purpose (`int h = threadIdx.x * 1103515245 + 12345;`, where GCC
// then folded `h > 12345` to `threadIdx.x > 0`): an initialiser with a literal beyond 2^20, or
// a name the source defines as one (a macro, a constant), is left as it computes.
#pragma once
#include <string>
#include <string_view>

namespace kiln::cpu {

// source with each threadIdx.c, blockIdx.c, blockDim.c and gridDim.c in such an initialiser
// read as `int(threadIdx.c)` (lines and the rest of the text kept), or source itself.
std::string signed_index_arithmetic(std::string_view source);

}  // namespace kiln::cpu
