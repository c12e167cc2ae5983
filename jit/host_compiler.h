// Running the host C++ compiler (and other tools) as subprocesses: argv vectors, never a shell;
// output captured; temporary files in a private folder that is removed afterwards.
#pragma once
#include <string>
#include <vector>

namespace kiln::jit {

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

struct ProcessResult {
  int exit_code = -1;  // 128 + signal number when the process was killed by a signal
  std::string output;  // stdout and stderr together, in order
};

// Runs argv[0] (searched in PATH) with argv, waits for it and captures its output. Polls the
// Ctrl-C flag: an interrupted run is killed and throws kiln::Interrupted. Throws kiln::Error when
// the program cannot be started. A non-empty tmpdir becomes the program's TMPDIR (a compiler's
// own temporary files then live, and die, in kiln's private compile folder).
ProcessResult run_process(const std::vector<std::string>& argv, const std::string& tmpdir = {});

// Writes bytes to path (created or truncated); throws kiln::Error naming the path on failure.
void write_file(const std::string& path, const std::string& bytes);
// Reads a whole file; throws kiln::Error naming the path on failure.
std::vector<char> read_file(const std::string& path);

// The first line of `compiler --version` ("c++ (Debian 12.2.0-14) 12.2.0"), or "" on failure.
std::string compiler_version(const std::string& compiler);

// The compiler binary's identity without running it: its resolved path (through PATH and
// symlinks), size and modification time. A new or reinstalled compiler changes it.
std::string compiler_fingerprint(const std::string& compiler);

}  // namespace kiln::jit
