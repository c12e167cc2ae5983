// Inline PTX on the cpu backend. Kernels from the wild read special registers (`%laneid`,
// `%smid`, `%clock64`), do bit tricks (`lop3`, `prmt`, `bfe`, `shf`), chain carries for wide
// integers (`add.cc`, `madc.hi`), and load and store with cache hints (`ld.global.nc.v4.f32`,
// `st.release.gpu`) in `asm("..." : outputs : inputs)` statements, which the host's assembler
// cannot read. This rewrite turns each such statement whose every instruction it knows into
// C++ with the same meaning (kernels_src/kiln/cpu_ptx.h holds the operations). Any other PTX
// statement becomes a trap naming its line, instruction and reason, so the module's other
// kernels still build and run.
//
// The statement's operands bind as GCC binds them: an output (`=r`, `+r`) is a reference to
// the caller's lvalue, an input a copy taken before any instruction runs. Warp and block
// operations (`shfl.sync`, `vote`, `bar.sync`) become their CUDA functions in the kernel's own
// text, so the plan sees them. Shared-memory addresses (`ld.shared`, `cp.async`, `ldmatrix`:
// 32-bit windows into a GPU's shared memory) have no cpu meaning: their statements trap.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace kiln::cpu {

// An inline assembly statement not translated: its line and why.
struct UntranslatedPtx {
  int line;
  std::string why;  // "`cp.async.ca.shared.global`: a shared-memory address ..."
  bool trapped;     // PTX, replaced by a trap that stops the thread reaching it with why;
                    // else (not PTX: x86's own asm) left for the host compiler
};

struct PtxTranslation {
  std::string source;                 // every translatable statement rewritten, lines kept
  std::vector<UntranslatedPtx> left;  // the statements left, in order
};

// source with its inline PTX statements turned into C++ where each instruction has a meaning
// on the cpu backend.
// on the cpu backend (file: the source's name in a trap's message).
PtxTranslation translate_inline_ptx(std::string_view source, const std::string& file = "kernel.cu");

}  // namespace kiln::cpu
