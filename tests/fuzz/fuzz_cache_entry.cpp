// libFuzzer target: jit::decode_entry on arbitrary bytes (a garbage, truncated or foreign cache
// file). It must return an entry or nullopt with a reason, never crash; an entry it accepts
// must encode back to the same bytes (the format has one encoding per entry).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "jit/cache.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  std::string why;
  auto entry = kiln::jit::decode_entry(bytes, &why);
  if (!entry && why.empty()) __builtin_trap();  // a rejection always says why
  if (entry && kiln::jit::encode_entry(*entry) != bytes) __builtin_trap();
  return 0;
}
