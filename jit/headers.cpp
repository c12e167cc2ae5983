// Reading kiln's kernel-side headers for the compilers.
#include "jit/headers.h"

#include "runtime/error.h"
#include "runtime/process.h"

namespace kiln::jit {
namespace fs = std::filesystem;

std::map<std::string, std::string> builtin_headers(const fs::path& kernels_dir) {
  std::map<std::string, std::string> out;
  read_folder(
      kernels_dir.string(), false,
      [&](const std::string& name, std::string_view text) { out.emplace(name, text); },
      [](const std::string& name) { return name.ends_with(".cuh"); });
  read_folder((kernels_dir / "kiln" / "nvrtc_include").string(), true,
              [&](const std::string& name, std::string_view text) { out[name] = text; });
  if (!out.count("kiln.cuh"))
    throw Error("kiln: cannot read kiln.cuh in " + kernels_dir.string() +
                " (set KILN_HOME to the folder that holds kernels_src/)");
  return out;
}

}  // namespace kiln::jit
