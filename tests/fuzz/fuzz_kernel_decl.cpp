// libFuzzer target: jit::find_kernels, find_kernel_bodies, scan_sync, find_identifier,
// find_struct and declares_enum on arbitrary source text. They must never crash, hang or read
// out of bounds, whatever the text (scripts/fuzz.sh runs it).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "jit/kernel_decl.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view source(reinterpret_cast<const char*>(data), size);
  auto kernels = kiln::jit::find_kernels(source);
  for (const auto& k : kernels)
    if (k.line < 1 || k.name.empty()) __builtin_trap();  // every kernel found has a name and a line
  for (const auto& b : kiln::jit::find_kernel_bodies(source))
    if (b.open >= b.close || b.close > size || source[b.open] != '{') __builtin_trap();
  (void)kiln::jit::scan_sync(source);
  for (std::size_t at : kiln::jit::find_identifier(source, "return"))
    if (source.substr(at, 6) != "return") __builtin_trap();
  (void)kiln::jit::find_struct(source, "P");
  (void)kiln::jit::declares_enum(source, "E");
  return 0;
}
