// The kernel-side headers kiln hands to its compilers (kiln.cuh, ...), read from kernels_src/.
#pragma once
#include <filesystem>
#include <map>
#include <string>

namespace kiln::jit {

// The headers kernels may #include by name, {file name: contents}: every *.cuh in kernels_dir
// ("kiln.cuh" at least), and the C library headers NVRTC lacks (<stdio.h>, <cstdint>, ...; as
// jitify2 does), from kernels_dir/kiln/nvrtc_include. Throws kiln::Error when kiln.cuh cannot be
// read.
std::map<std::string, std::string> builtin_headers(const std::filesystem::path& kernels_dir);

}  // namespace kiln::jit
