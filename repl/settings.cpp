// Reading the environment into Settings, once.
#include "repl/settings.h"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "runtime/process.h"

namespace kiln {
namespace fs = std::filesystem;

namespace {

// An environment variable, or "" when unset.
std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// $HOME, else the password database's home folder, else "".
std::string home_folder() {
  std::string home = env("HOME");
  if (home.empty())
    if (const passwd* pw = ::getpwuid(::geteuid()); pw && pw->pw_dir) home = pw->pw_dir;
  return home;
}

// Jupyter's user data folder (jupyter_core's jupyter_data_dir on Linux).
fs::path read_jupyter_data_dir() {
  if (std::string dir = env("JUPYTER_DATA_DIR"); !dir.empty()) return dir;
  if (std::string xdg = env("XDG_DATA_HOME"); !xdg.empty() && fs::path(xdg).is_absolute())
    return fs::path(xdg) / "jupyter";
  std::string home = home_folder();
  return home.empty() ? fs::path() : fs::path(home) / ".local" / "share" / "jupyter";
}

// The cache's folder, size cap and switch (docs/jit.md, "The disk cache").
CacheSettings read_cache(Settings& s) {
  CacheSettings c;
  c.enabled = env("KILN_CACHE") != "0";
  c.dir = env("KILN_CACHE_DIR");
  if (c.dir.empty()) {
    std::string xdg = env("XDG_CACHE_HOME"), home = home_folder();
    if (!xdg.empty() && fs::path(xdg).is_absolute())
      c.dir = fs::path(xdg) / "kiln";
    else if (!home.empty())
      c.dir = fs::path(home) / ".cache" / "kiln";
    else
      c.enabled = false;  // nowhere sensible to put it
  }
  if (std::string cap = env("KILN_CACHE_MAX"); !cap.empty()) {
    if (std::optional<std::uint64_t> n = parse_size(cap))
      c.max_bytes = *n;
    else
      s.warnings.push_back("kiln: KILN_CACHE_MAX=" + cap +
                           " is not a size (bytes, or a number with K, M or G); using 1G");
  }
  return c;
}

// KILN_CPU_THREADS: a worker count from 1 to 4096, or 0 (one per core) when unset.
int read_workers(Settings& s) {
  std::string text = env("KILN_CPU_THREADS");
  if (text.empty()) return 0;
  char* end = nullptr;
  long n = std::strtol(text.c_str(), &end, 10);
  if (*end || n < 1 || n > 4096) {
    s.error = "KILN_CPU_THREADS='" + text + "': expected a worker count from 1 to 4096";
    return 0;
  }
  return int(n);
}

// A switch that is on unless the variable is "0" (default_on), or on when set to anything but
// "0" (!default_on).
bool flag(const char* name, bool default_on) {
  std::string v = env(name);
  return v.empty() ? default_on : v != "0";
}

// An integer variable, or fallback when unset or not a number.
int int_env(const char* name, int fallback) {
  std::string text = env(name);
  char* end = nullptr;
  long n = std::strtol(text.c_str(), &end, 10);
  return text.empty() || *end || n < 0 || n > 1 << 20 ? fallback : int(n);
}

// The MPI launcher's variables, if one started this process.
MpiSettings read_mpi() {
  MpiSettings m;
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK"})
    m.launched = m.launched || getenv(var) != nullptr;
  m.local_rank = int_env("OMPI_COMM_WORLD_LOCAL_RANK", int_env("MPI_LOCALRANKID", 0));
  m.local_size = std::max(1, int_env("OMPI_COMM_WORLD_LOCAL_SIZE", int_env("MPI_LOCALNRANKS", 1)));
  return m;
}

}  // namespace

Settings Settings::from_environment() {
  Settings s;
  jit::PlatformOptions& p = s.platform;
  p.backend = env("KILN_BACKEND").empty() ? "auto" : env("KILN_BACKEND");
  std::string home = env("KILN_HOME");
  p.kernels_dir = home.empty() ? fs::path(KILN_KERNELS_DIR) : fs::path(home) / "kernels_src";
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
    if (std::string dir = env(var); !dir.empty()) p.cuda_toolkits.push_back(dir);
  p.cpu.workers = read_workers(s);
  s.mpi = read_mpi();
  p.local_rank = s.mpi.local_rank;
  // Ranks sharing a node share its cores: each takes its part, as one per core would oversubscribe.
  if (p.cpu.workers == 0 && s.mpi.local_size > 1)
    p.cpu.workers = std::max(1, usable_cores() / s.mpi.local_size);
  p.cpu.check = flag("KILN_CHECK", false);
  p.host_compiler = env("KILN_CXX").empty() ? KILN_CXX_COMPILER : env("KILN_CXX");
  if (p.host_compiler.empty()) p.host_compiler = "c++";
  p.regions = flag("KILN_REGIONS", true);
  p.precompiled_prelude = flag("KILN_PCH", true);
  s.jit.arch = env("KILN_ARCH");
  // KILN_NVRTC_CHECK: 0 off; 1 (default) on; or the GPU architectures to build each kernel for
  // ("sm_80,sm_90": a cubin for each must assemble).
  s.jit.nvrtc_check = flag("KILN_NVRTC_CHECK", true);
  if (std::string archs = env("KILN_NVRTC_CHECK"); archs.starts_with("sm_")) {
    for (std::size_t at = 0; at <= archs.size();) {
      std::size_t comma = std::min(archs.find(',', at), archs.size());
      if (comma > at) s.jit.check_archs.push_back(archs.substr(at, comma - at));
      at = comma + 1;
    }
  }
  // KILN_COMPILE_NOTICE: milliseconds before a compile says so (default 500; 0 never).
  if (std::string notice = env("KILN_COMPILE_NOTICE"); !notice.empty()) {
    char* end = nullptr;
    const double ms = std::strtod(notice.c_str(), &end);
    if (end == notice.c_str() || *end != '\0' || ms < 0)
      s.warnings.push_back("kiln: KILN_COMPILE_NOTICE='" + notice +
                           "' is not a number of milliseconds; using 500");
    else
      s.jit.compile_notice_ms = ms;
  }
  s.jit.cuda_toolkits = p.cuda_toolkits;
  // KILN_NOTES=0: no notes on stderr (a kernel that runs as fibers, and why).
  s.notes = flag("KILN_NOTES", true);
  s.cache = read_cache(s);
  s.history_file = env("KILN_HISTORY");
  if (s.history_file.empty() && !getenv("KILN_HISTORY") && !env("HOME").empty())
    s.history_file = env("HOME") + "/.kiln_history";
  s.editor = !env("EDITOR").empty() ? env("EDITOR") : !env("VISUAL").empty() ? env("VISUAL") : "vi";
  s.jupyter_data_dir = read_jupyter_data_dir();
  return s;
}

std::optional<std::uint64_t> parse_size(std::string_view s) {
  if (s.empty()) return std::nullopt;
  std::uint64_t mult = 1;
  char last = static_cast<char>(std::toupper(static_cast<unsigned char>(s.back())));
  if (last == 'B' && s.size() > 1) {
    s.remove_suffix(1);
    last = static_cast<char>(std::toupper(static_cast<unsigned char>(s.back())));
  }
  if (last == 'K' || last == 'M' || last == 'G' || last == 'T') {
    mult = last == 'K'   ? 1ull << 10
           : last == 'M' ? 1ull << 20
           : last == 'G' ? 1ull << 30
                         : 1ull << 40;
    s.remove_suffix(1);
  }
  if (s.empty() || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  std::uint64_t n = 0;
  for (char c : s) {
    if (n > (UINT64_MAX - 9) / 10) return std::nullopt;
    n = n * 10 + static_cast<std::uint64_t>(c - '0');
  }
  if (n > UINT64_MAX / mult) return std::nullopt;
  return n * mult;
}

}  // namespace kiln
