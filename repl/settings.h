// kiln's settings: every environment variable kiln reads (KILN_*, XDG_CACHE_HOME, CUDA_HOME,
// CUDA_PATH, HOME, EDITOR, JUPYTER_DATA_DIR, XDG_DATA_HOME, and an MPI launcher's rank
// variables), read once, here, when the program starts (as lua.c reads LUA_INIT only in the
// standalone program), then passed down: the layers below read none.
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "jit/backends.h"
#include "jit/jit.h"

namespace kiln {

struct CacheSettings {
  std::filesystem::path dir;  // KILN_CACHE_DIR, else $XDG_CACHE_HOME/kiln, else ~/.cache/kiln
  std::uint64_t max_bytes = 1ull << 30;  // KILN_CACHE_MAX (bytes; suffixes K, M, G, T)
  bool enabled = true;                   // KILN_CACHE=0 turns it off (as does no folder)
};

// How mpirun started this process, from the launcher's variables (Open MPI's OMPI_COMM_WORLD_*,
// PMIx's PMIX_RANK, MPICH's PMI_RANK and MPI_LOCALRANKID).
struct MpiSettings {
  bool launched = false;  // started by an MPI launcher: kiln.mpi may initialise MPI
  int local_rank = 0;     // this rank's place among the ranks on its node
  int local_size = 1;     // the ranks on this node
};

struct Settings {
  jit::PlatformOptions platform;  // KILN_BACKEND, KILN_HOME, KILN_CPU_THREADS, KILN_CHECK,
                                  // KILN_CXX, KILN_REGIONS, KILN_PCH, CUDA_HOME, CUDA_PATH
  jit::JitOptions jit;            // KILN_ARCH, KILN_NVRTC_CHECK, KILN_COMPILE_NOTICE (ms; 0: off)
  CacheSettings cache;
  MpiSettings mpi;  // under mpirun: platform.local_rank is set from it, and the cpu backend
                    // takes its share of the cores unless KILN_CPU_THREADS says otherwise
  std::string history_file;  // KILN_HISTORY, else ~/.kiln_history ("" : none)
  std::string editor;        // EDITOR, else VISUAL, else vi
  bool notes = true;         // KILN_NOTES=0: no notes on stderr (a kernel running as fibers)
  // Where --install-kernel --user puts kernelspecs: JUPYTER_DATA_DIR, else
  // $XDG_DATA_HOME/jupyter, else ~/.local/share/jupyter (Jupyter's own rule; "" when unknown).
  std::filesystem::path jupyter_data_dir;
  // What was wrong with a variable: warnings are printed when a backend opens; an error
  // (a bad KILN_CPU_THREADS, say) is raised then instead of opening one.
  std::vector<std::string> warnings;
  std::string error;

  // The settings from this process's environment.
  static Settings from_environment();
};

// Parses "512M", "2G", "1048576" into bytes; nullopt when malformed.
std::optional<std::uint64_t> parse_size(std::string_view s);

}  // namespace kiln
