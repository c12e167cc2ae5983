// Reading kiln's kernel-side headers for the compilers.
#include "jit/headers.h"

#include <fstream>
#include <sstream>
#include <system_error>

#include "runtime/error.h"

namespace kiln::jit {
namespace fs = std::filesystem;

std::map<std::string, std::string> builtin_headers(const fs::path& kernels_dir) {
  std::map<std::string, std::string> out;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(kernels_dir, ec)) {
    if (e.path().extension() != ".cuh" || !e.is_regular_file(ec)) continue;
    std::ifstream in(e.path(), std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (in) out[e.path().filename().string()] = text.str();
  }
  if (!out.count("kiln.cuh"))
    throw Error("kiln: cannot read kiln.cuh in " + kernels_dir.string() +
                " (set KILN_HOME to the folder that holds kernels_src/)");
  return out;
}

}  // namespace kiln::jit
