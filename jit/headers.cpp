// Reading kiln's kernel-side headers for the compilers.
#include "jit/headers.h"

#include <fstream>
#include <sstream>
#include <system_error>

#include "runtime/error.h"

namespace kiln::jit {
namespace fs = std::filesystem;

namespace {

// Adds each regular file in dir that keep() accepts to headers, by its file name.
template <typename Keep>
void add_headers(const fs::path& dir, Keep keep, std::map<std::string, std::string>& headers) {
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    if (!keep(e.path()) || !e.is_regular_file(ec)) continue;
    std::ifstream in(e.path(), std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (in) headers[e.path().filename().string()] = text.str();
  }
}

}  // namespace

std::map<std::string, std::string> builtin_headers(const fs::path& kernels_dir) {
  std::map<std::string, std::string> out;
  add_headers(kernels_dir, [](const fs::path& p) { return p.extension() == ".cuh"; }, out);
  add_headers(kernels_dir / "kiln" / "nvrtc_include", [](const fs::path&) { return true; }, out);
  if (!out.count("kiln.cuh"))
    throw Error("kiln: cannot read kiln.cuh in " + kernels_dir.string() +
                " (set KILN_HOME to the folder that holds kernels_src/)");
  return out;
}

}  // namespace kiln::jit
