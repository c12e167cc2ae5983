// libFuzzer target: load_npy on arbitrary bytes (a truncated, foreign or hostile .npy file). It
// must return an array or throw kiln::Error, never crash or read past what it was given; an
// array it accepts must save back to a file it loads again with the same shape, dtype and bytes.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "runtime/error.h"
#include "runtime/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = "/tmp/kiln_fuzz_npy_" + std::to_string(::getpid()) + ".npy";
  static const int removed_at_exit = std::atexit([] { std::remove(path.c_str()); });
  (void)removed_at_exit;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  try {
    kiln::HostArray a = kiln::load_npy(path);
    kiln::save_npy(path, a);
    kiln::HostArray b = kiln::load_npy(path);
    if (b.shape() != a.shape() || b.dtype() != a.dtype() ||
        std::memcmp(a.data(), b.data(), a.nbytes()) != 0)
      __builtin_trap();
  } catch (const kiln::Error&) {
  }
  return 0;
}
