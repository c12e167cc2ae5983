// The host C++ compiler's identity: its version line, and a fingerprint of its binary.
#include "jit/cpu/host_compiler.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "runtime/error.h"
#include "runtime/interrupt.h"
#include "runtime/process.h"

namespace kiln::jit {

std::string compiler_version(const std::string& compiler) {
  try {
    ProcessResult r = run_process({compiler, "--version"});
    if (r.exit_code != 0) return "";
    return r.output.substr(0, r.output.find('\n'));
  } catch (const Interrupted&) {
    throw;  // Ctrl-C stops the work that needed the version too
  } catch (const Error&) {
    return "";
  }
}

std::string compiler_fingerprint(const std::string& compiler) {
  namespace fs = std::filesystem;
  fs::path path = compiler;
  if (compiler.find('/') == std::string::npos)
    if (std::string found = find_program(compiler); !found.empty()) path = found;
  std::error_code ec;
  fs::path real = fs::canonical(path, ec);
  struct stat st {};
  if (ec || ::stat(real.c_str(), &st) != 0) return compiler + " (not found)";
  return real.string() + "@" + std::to_string(st.st_size) + "@" +
         std::to_string(std::int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec);
}

int gcc_major_in_name(const std::string& fingerprint) {
  std::string path = fingerprint.substr(0, fingerprint.find('@'));
  std::string name = path.substr(path.rfind('/') + 1);
  std::size_t dash = name.rfind('-');
  if (name.find("g++") == std::string::npos || dash == std::string::npos) return 0;
  std::string digits = name.substr(dash + 1);
  if (digits.empty() || digits.size() > 3 ||
      digits.find_first_not_of("0123456789") != std::string::npos)
    return 0;
  return std::stoi(digits);
}

}  // namespace kiln::jit
