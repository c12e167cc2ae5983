// Running tools (the host C++ compiler, addr2line) as subprocesses: argv vectors, never a shell;
// output captured; temporary files in a private folder that is removed afterwards.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln {

// A private mkdtemp folder under $TMPDIR (or /tmp), removed with its contents on destruction.
class TempDir {
 public:
  TempDir();  // throws kiln::Error when the folder cannot be made
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Removes the private temporary folders (kiln-XXXXXX under $TMPDIR, else /tmp) that killed kiln
// processes left behind: only this user's, only real folders (not links), only those untouched
// for an hour (a running compile's folder is younger). Other kiln folders (the labs'
// kiln-labs-XXXXXX output) are never touched. Returns how many it removed.
int sweep_stale_temp_dirs();

struct ProcessResult {
  int exit_code = -1;  // 128 + signal number when the process was killed by a signal
  std::string output;  // stdout and stderr together, in order
};

// What a subprocess may use (0: no limit): its address space and processor time (setrlimit's
// RLIMIT_AS and RLIMIT_CPU, inherited by what it starts), and the output kept; past
// output_bytes the process is killed and the output ends with a line saying so.
struct ProcessLimits {
  std::uint64_t memory_bytes = 0;
  unsigned cpu_seconds = 0;
  std::size_t output_bytes = 0;
  // Whether Ctrl-C kills it (the flag is polled, and lowered when it is answered). Work beside
  // the one the user waits for (a header precompiled on the side) is not: it must not take the
  // Ctrl-C that is the other's.
  bool interruptible = true;
};

// Runs argv[0] (searched in PATH) with argv, waits for it and captures its output. Polls the
// Ctrl-C flag: an interrupted run is killed and throws kiln::Interrupted. Throws kiln::Error when
// the program cannot be started. A non-empty tmpdir becomes the program's TMPDIR (a compiler's
// own temporary files then live, and die, in kiln's private compile folder).
ProcessResult run_process(const std::vector<std::string>& argv, const std::string& tmpdir = {},
                          const ProcessLimits& limits = {});

// Writes bytes to path (created or truncated); throws kiln::Error naming the path on failure.
void write_file(const std::string& path, const std::string& bytes);
// Reads a whole file; throws kiln::Error naming the path on failure.
std::vector<char> read_file(const std::string& path);

// Calls visit(name, contents) for each regular file in folder that keep(name) accepts (all
// without keep), in name order, with POSIX calls (each file opened relative to its folder, read
// whole); recursive: also the files of its subfolders (not those reached through a link),
// named by their path below folder ("cpu_include/assert.h"), each folder's entries in name order
// (fs::path's order). An unreadable folder visits nothing; an unreadable file throws
// kiln::Error naming it. For kiln's kernel-side headers, which a cached kernel's first launch
// reads: an ifstream per file cost it half a millisecond.
void read_folder(
    const std::string& folder, bool recursive,
    const std::function<void(const std::string& name, std::string_view contents)>& visit,
    const std::function<bool(const std::string& name)>& keep = {});

// The path of an executable named name: the first in dirs, then in PATH; "" when none.
std::string find_program(const std::string& name, const std::vector<std::string>& dirs = {});

// The file name in the folder of the running program (/proc/self/exe): kiln's plugins,
// libkiln_mpi.so and libkiln_jupyter.so, live beside the binary. "" when that folder is unknown.
std::string beside_this_program(const std::string& name);

// The cores this process may run on: its CPU affinity mask (taskset, a cgroup's cpuset, or
// mpirun's binding of a rank to a core), else every core.
int usable_cores();

}  // namespace kiln
