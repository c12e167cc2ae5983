// libFuzzer target: cpu::form_regions on arbitrary source text. It must never crash, hang or
// read out of bounds, and what it returns keeps the source's line count (compiler messages and
// check-mode reports name the user's lines) (scripts/fuzz.sh runs it).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "jit/cpu/regions.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view source(reinterpret_cast<const char*>(data), size);
  std::string why;
  auto out = kiln::cpu::form_regions(source, &why);
  if (out &&
      std::count(out->begin(), out->end(), '\n') != std::count(source.begin(), source.end(), '\n'))
    __builtin_trap();
  if (!out && why.empty()) __builtin_trap();  // a refusal says why
  return 0;
}
