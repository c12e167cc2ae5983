// The host C++ compiler that builds cpu-backend kernels, named without running it where possible.
#pragma once
#include <string>

namespace kiln::jit {

// The first line of `compiler --version` ("c++ (Debian 12.2.0-14) 12.2.0"), or "" on failure.
std::string compiler_version(const std::string& compiler);

// The compiler binary's identity without running it: its resolved path (through PATH and
// symlinks), size and modification time. A new or reinstalled compiler changes it.
std::string compiler_fingerprint(const std::string& compiler);

// The major version a GCC binary's resolved file name carries (Debian's and Ubuntu's
// x86_64-linux-gnu-g++-12, g++-13), read from a compiler_fingerprint(); 0 where the name has none.
int gcc_major_in_name(const std::string& fingerprint);

}  // namespace kiln::jit
