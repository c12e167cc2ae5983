// libFuzzer target: cpu::form_regions, and cpu::translate_inline_ptx, cpu::expand_barrier_macros,
// cpu::resolve_kernel_conditionals, cpu::lower_block_groups, cpu::signed_index_arithmetic,
// cpu::inline_sync_functions and cpu::thread_plans before it and cpu::wide_subscripts and
// cpu::gpu_integer_casts and cpu::gpu_shifts after it (as the cpu compiler runs them), on
// arbitrary source text. They must never crash, hang or read out of bounds, what they return keeps
// the source's line count (compiler messages and check-mode reports name the user's lines), and
// each kernel's plan says why (scripts/fuzz.sh runs it).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "jit/cpu/barrier_macros.h"
#include "jit/cpu/block_groups.h"
#include "jit/cpu/conditionals.h"
#include "jit/cpu/gpu_casts.h"
#include "jit/cpu/inline_ptx.h"
#include "jit/cpu/inline_sync.h"
#include "jit/cpu/plan.h"
#include "jit/cpu/regions.h"
#include "jit/cpu/signed_indices.h"
#include "jit/cpu/wide_subscripts.h"
#include "jit/kernel_decl.h"

namespace {
bool same_lines(std::string_view a, std::string_view b) {
  return std::count(a.begin(), a.end(), '\n') == std::count(b.begin(), b.end(), '\n');
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view source(reinterpret_cast<const char*>(data), size);
  std::string why;
  auto out = kiln::cpu::form_regions(source, &why);
  if (out && !same_lines(*out, source)) __builtin_trap();
  if (!out && why.empty()) __builtin_trap();  // a refusal says why
  const kiln::cpu::PtxTranslation ptx = kiln::cpu::translate_inline_ptx(source);
  if (!same_lines(ptx.source, source)) __builtin_trap();
  for (const auto& left : ptx.left)  // (each names a line of the source, and why)
    if (left.line < 1 || left.line > 1 + std::count(source.begin(), source.end(), '\n') ||
        left.why.empty())
      __builtin_trap();
  const std::string expanded = kiln::cpu::expand_barrier_macros(source);
  if (!same_lines(expanded, source)) __builtin_trap();
  const std::string resolved = kiln::cpu::resolve_kernel_conditionals(
      expanded, kiln::cpu::known_macros({"-DFUZZ=1", "-DLEVEL=3"}, 800));
  if (!same_lines(resolved, source)) __builtin_trap();
  const std::string lowered = kiln::cpu::lower_block_groups(resolved);
  if (!same_lines(lowered, source)) __builtin_trap();
  const std::string signed_indices = kiln::cpu::signed_index_arithmetic(lowered);
  if (!same_lines(signed_indices, source)) __builtin_trap();
  const std::string inlined = kiln::cpu::inline_sync_functions(signed_indices);
  if (!same_lines(inlined, source)) __builtin_trap();
  std::vector<std::string> names;
  for (const auto& body : kiln::jit::find_kernel_bodies(inlined)) names.push_back(body.name);
  // (from a folder that does not exist: quoted #includes find nothing)
  const auto plans = kiln::cpu::thread_plans(inlined, "/nonexistent/fuzz.cu", {}, names);
  if (plans.size() != names.size()) __builtin_trap();
  std::set<std::string> loops;  // (their grid-stride loops may run in lockstep)
  for (std::size_t i = 0; i < plans.size(); ++i) {
    if (plans[i].why.empty()) __builtin_trap();
    if (plans[i].mode == kiln_cpu::mode_loop) loops.insert(names[i]);
  }
  const kiln::cpu::RegionRewrite r = kiln::cpu::form_regions_by_kernel(inlined, loops);
  if (!same_lines(r.source, source)) __builtin_trap();
  for (const std::string& name : r.lockstep)
    if (!loops.count(name)) __builtin_trap();
  const std::string wide = kiln::cpu::wide_subscripts(r.source);
  if (!same_lines(wide, source)) __builtin_trap();
  const std::string cast = kiln::cpu::gpu_integer_casts(wide);
  if (!same_lines(cast, source)) __builtin_trap();
  if (!same_lines(kiln::cpu::gpu_shifts(cast), source)) __builtin_trap();
  return 0;
}
