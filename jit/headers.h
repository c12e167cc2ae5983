// The kiln headers kernels may #include (<kiln.cuh>), by name, for NVRTC's in-memory headers.
#pragma once
#include <filesystem>
#include <map>
#include <string>

namespace kiln::jit {

// {"kiln.cuh": text of kernels_dir/kiln.cuh, ...}; empty entries are left out.
std::map<std::string, std::string> builtin_headers(const std::filesystem::path& kernels_dir);

}  // namespace kiln::jit
