// libFuzzer target: the cpu compiler's source rewrites (jit/cpu/plan.h) and the kernel scan on
// arbitrary text: huge comments, strings, deep nesting, NUL bytes. They must never crash, hang
// or overflow the stack (they run on the lexer's tokens, not regexes), and the rewrites keep the
// source's line count, since compiler messages and check-mode reports name the user's lines
// (scripts/fuzz.sh runs it).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "jit/cpu/block_barriers.h"
#include "jit/cpu/header_votes.h"
#include "jit/cpu/lockstep_stores.h"
#include "jit/cpu/plan.h"
#include "jit/cpu/template_args.h"
#include "jit/kernel_decl.h"
#include "jit/source.h"

namespace {

// Traps unless out has as many lines as source.
void same_lines(std::string_view source, const std::string& out) {
  if (std::count(out.begin(), out.end(), '\n') != std::count(source.begin(), source.end(), '\n'))
    __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view source(reinterpret_cast<const char*>(data), size);
  same_lines(source, kiln::cpu::rewrite_extern_shared(source));
  same_lines(source, kiln::cpu::rewrite_extern_shared(source, true));
  same_lines(source, kiln::cpu::rewrite_shared_arrays(source));
  same_lines(source, kiln::cpu::rewrite_element_addresses(source));
  same_lines(source, kiln::cpu::hoist_header_votes(source));
  same_lines(source, kiln::cpu::rewrite_pointer_params(source));
  same_lines(source, kiln::cpu::rewrite_coroutine_returns(source));
  same_lines(source, kiln::cpu::internal_kernels(source));
  same_lines(source, kiln::cpu::rewrite_lockstep_pointers(source));
  same_lines(source, kiln::cpu::split_lockstep_stores(source));
  same_lines(source, kiln::cpu::lower_block_barriers(source));
  same_lines(source,
             kiln::cpu::bind_template_arguments(source, {"k<8>", "reduce<float, -2, true>"}));
  same_lines(source, kiln::cpu::yield_in_spin_waits(source));
  (void)kiln::jit::find_kernels(source);
  (void)kiln::jit::written_places("at k.cu:3 and k.cu:99", source, "k.cu");
  return 0;
}
