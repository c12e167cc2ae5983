#include "runtime/cpu/check.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <sstream>

#include "runtime/process.h"

namespace kiln::cpu {

void Allocations::add(const void* base, std::size_t bytes) {
  std::lock_guard lock(mutex_);
  ranges_[reinterpret_cast<std::uintptr_t>(base)] = bytes;
}

void Allocations::remove(const void* base) {
  std::lock_guard lock(mutex_);
  ranges_.erase(reinterpret_cast<std::uintptr_t>(base));
}

bool Allocations::find(const void* p, const void** lo, const void** hi) const {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  std::lock_guard lock(mutex_);
  auto it = ranges_.upper_bound(a);
  if (it == ranges_.begin()) return false;
  --it;
  if (a > it->first + it->second) return false;  // one past the end still belongs to it
  *lo = reinterpret_cast<const void*>(it->first);
  *hi = reinterpret_cast<const void*>(it->first + it->second);
  return true;
}

std::string OutOfBounds::with_source_line() const {
  Dl_info info{};
  if (!code_ || !::dladdr(code_, &info) || !info.dli_fname) return where_ + ": " + what_;
  std::string path = info.dli_fname;
  if (path.rfind("/proc/self/", 0) == 0)  // addr2line runs in its own process
    path = "/proc/" + std::to_string(::getpid()) + path.substr(10);
  char offset[32];
  // The return address is just after the call: step back into the access's instruction.
  std::snprintf(
      offset, sizeof offset, "0x%zx",
      std::size_t(static_cast<const char*>(code_) - static_cast<const char*>(info.dli_fbase) - 1));
  std::string line;
  try {
    ProcessResult r = run_process({"addr2line", "-i", "-e", path, offset});
    // Innermost first: the first position outside kiln's own headers is the kernel's line.
    std::istringstream lines(r.exit_code == 0 ? r.output : "");
    for (std::string l; std::getline(lines, l);) {
      if (l.empty() || l[0] == '?' || l.find("kiln/cpu_") != std::string::npos ||
          l.find("kiln.cuh") != std::string::npos || l.find("<kiln ") != std::string::npos ||
          l.find("<kernel ") != std::string::npos || l.find("/usr/") == 0 ||
          (l.find("/kiln-") != std::string::npos && l.find("/kernel.cpp:") != std::string::npos))
        continue;
      line = l.substr(0, l.find(" ("));
      // addr2line joins a relative #line name with the compiler's folder, this process's.
      std::error_code ec;
      std::string cwd = std::filesystem::current_path(ec).string() + "/";
      if (!ec && line.rfind(cwd, 0) == 0) line = line.substr(cwd.size());
      break;
    }
  } catch (const Error&) {
  }
  return where_ + ": " + what_ + (line.empty() ? "" : " at " + line);
}

}  // namespace kiln::cpu
