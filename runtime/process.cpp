// Subprocesses with posix_spawnp and a pipe; temporary folders with mkdtemp; whole files.
#include "runtime/process.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <thread>

#include "runtime/error.h"
#include "runtime/interrupt.h"

extern char** environ;

namespace kiln {

namespace {

// Closes a file descriptor when it goes out of scope.
struct Fd {
  int fd = -1;
  ~Fd() { reset(); }
  void reset() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

// Waits for pid and turns its status into an exit code (128 + signal when killed).
int wait_exit_code(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

}  // namespace

TempDir::TempDir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/kiln-XXXXXX";
  if (!::mkdtemp(pattern.data()))
    throw Error("cannot create a temporary folder " + pattern + ": " + std::strerror(errno));
  path_ = pattern;
}

int sweep_stale_temp_dirs() {
  const char* tmp = std::getenv("TMPDIR");
  const std::filesystem::path dir = tmp && *tmp ? tmp : "/tmp";
  std::error_code ec;
  int removed = 0;
  const auto now = std::chrono::system_clock::now();
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.size() != 11 || !name.starts_with("kiln-") ||
        !std::all_of(name.begin() + 5, name.end(), [](char c) { return std::isalnum((unsigned char)c); }))
      continue;
    struct stat st {};
    if (::lstat(e.path().c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid())
      continue;
    const auto modified = std::chrono::system_clock::time_point(
        std::chrono::seconds(st.st_mtim.tv_sec));
    if (now - modified < std::chrono::hours(1)) continue;
    std::error_code rm;
    if (std::filesystem::remove_all(e.path(), rm) > 0 && !rm) ++removed;
  }
  return removed;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

namespace {

// This process's environment with TMPDIR replaced by tmpdir (unchanged when tmpdir is empty).
std::vector<std::string> environment_with_tmpdir(const std::string& tmpdir) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e)
    if (tmpdir.empty() || std::strncmp(*e, "TMPDIR=", 7) != 0) env.emplace_back(*e);
  if (!tmpdir.empty()) env.push_back("TMPDIR=" + tmpdir);
  return env;
}

}  // namespace

ProcessResult run_process(const std::vector<std::string>& argv, const std::string& tmpdir,
                          const ProcessLimits& limits) {
  if (argv.empty()) throw Error("run_process: empty argv");
  std::vector<std::string> env = environment_with_tmpdir(tmpdir);
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw Error(std::string("pipe: ") + std::strerror(errno));
  Fd read_end{fds[0]}, write_end{fds[1]};

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, write_end.fd, 1);
  posix_spawn_file_actions_adddup2(&actions, write_end.fd, 2);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // The child starts with SIGINT's default action and unblocked, whatever this process does
  // with it at the moment (ignored around an NVRTC compile on another thread, blocked in a
  // helper thread): a Ctrl-C must end the compiler.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t interrupt, none;
  sigemptyset(&interrupt);
  sigaddset(&interrupt, SIGINT);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attributes, &interrupt);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  pid_t pid = 0;
  int rc = ::posix_spawnp(&pid, args[0], &actions, &attributes, args.data(), envp.data());
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw Error("cannot run '" + argv[0] + "': " + std::strerror(rc));
  write_end.reset();
  // Limits set right after the spawn, before the program (a compiler driver) starts its own.
  if (limits.memory_bytes) {
    const rlimit mem{limits.memory_bytes, limits.memory_bytes};
    ::prlimit(pid, RLIMIT_AS, &mem, nullptr);
  }
  if (limits.cpu_seconds) {
    const rlimit cpu{limits.cpu_seconds, limits.cpu_seconds + 5};
    ::prlimit(pid, RLIMIT_CPU, &cpu, nullptr);
  }

  ProcessResult result;
  char buf[4096];
  for (;;) {
    pollfd p{read_end.fd, POLLIN, 0};
    int n = ::poll(&p, 1, 100);
    if (limits.interruptible && interrupt_flag().load(std::memory_order_relaxed)) {
      ::kill(pid, SIGKILL);
      wait_exit_code(pid);
      check_interrupt();
    }
    if (n < 0 && errno != EINTR) break;
    if (n <= 0) continue;
    ssize_t got = ::read(read_end.fd, buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    result.output.append(buf, std::size_t(got));
    if (limits.output_bytes && result.output.size() > limits.output_bytes) {
      ::kill(pid, SIGKILL);  // 200 000 lines of errors help no one
      result.output.resize(limits.output_bytes);
      result.output += "\n[kiln: output cut at " + std::to_string(limits.output_bytes) +
                       " bytes; " + argv[0] + " was stopped]\n";
      break;
    }
  }
  result.exit_code = wait_exit_code(pid);
  // Killed by the terminal's Ctrl-C (it reaches kiln's whole process group) while kiln's own
  // handler could not see it (SIGINT ignored around an NVRTC compile): an interrupt all the same.
  if (limits.interruptible && result.exit_code == 128 + SIGINT) {
    interrupt_flag().store(false, std::memory_order_relaxed);
    throw Interrupted();
  }
  return result;
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
  if (!out.good()) throw Error("cannot write " + path);
}

std::vector<char> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read " + path);
  return std::vector<char>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

namespace {

// read_folder below the open folder dir_fd (closed here), names prefixed with prefix.
void read_folder_at(int dir_fd, const std::string& prefix, bool recursive, std::string& buffer,
                    const std::function<bool(const std::string&)>& keep,
                    const std::function<void(const std::string&, std::string_view)>& visit) {
  std::unique_ptr<DIR, int (*)(DIR*)> dir(::fdopendir(dir_fd), ::closedir);
  if (!dir) {
    ::close(dir_fd);
    return;
  }
  std::vector<std::pair<std::string, unsigned char>> entries;
  while (const dirent* e = ::readdir(dir.get()))
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
      entries.emplace_back(e->d_name, e->d_type);
  std::sort(entries.begin(), entries.end());
  const int at = ::dirfd(dir.get());
  for (auto& [name, type] : entries) {
    // A link to a file is read; one to a folder is not followed (no loops), as
    // std::filesystem's recursive iterator does by default.
    struct stat st {};
    if (type == DT_UNKNOWN) {  // some file systems do not say
      if (::fstatat(at, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
      type = S_ISLNK(st.st_mode)   ? DT_LNK
             : S_ISDIR(st.st_mode) ? DT_DIR
             : S_ISREG(st.st_mode) ? DT_REG
                                   : DT_UNKNOWN;
    }
    if (type == DT_LNK)  // its target: a file is read
      type = ::fstatat(at, name.c_str(), &st, 0) == 0 && S_ISREG(st.st_mode) ? DT_REG : DT_UNKNOWN;
    if (type == DT_DIR && recursive) {
      const int sub = ::openat(at, name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (sub >= 0) read_folder_at(sub, prefix + name + "/", true, buffer, keep, visit);
    } else if (type == DT_REG && (!keep || keep(prefix + name))) {
      Fd file{::openat(at, name.c_str(), O_RDONLY | O_CLOEXEC)};
      if (file.fd < 0) throw Error("cannot read " + prefix + name + ": " + std::strerror(errno));
      std::size_t size = 0;
      for (ssize_t n = 1; n > 0; size += static_cast<std::size_t>(n)) {
        if (buffer.size() - size < 4096) buffer.resize(buffer.size() * 2);
        n = ::read(file.fd, buffer.data() + size, buffer.size() - size);
        if (n < 0) throw Error("cannot read " + prefix + name + ": " + std::strerror(errno));
      }
      visit(prefix + name, std::string_view(buffer.data(), size));
    }
  }
}

}  // namespace

void read_folder(const std::string& folder, bool recursive,
                 const std::function<void(const std::string&, std::string_view)>& visit,
                 const std::function<bool(const std::string&)>& keep) {
  std::string buffer(1 << 16, '\0');
  const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) read_folder_at(fd, "", recursive, buffer, keep, visit);
}

std::string find_program(const std::string& name, const std::vector<std::string>& dirs) {
  std::vector<std::string> all = dirs;
  const char* path = std::getenv("PATH");
  const std::string entries = path ? path : "/usr/bin:/bin";
  for (std::size_t start = 0, end; start <= entries.size(); start = end + 1) {
    end = std::min(entries.find(':', start), entries.size());
    if (end > start) all.push_back(entries.substr(start, end - start));
  }
  for (const std::string& dir : all) {
    const std::string candidate = dir + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

std::string beside_this_program(const std::string& name) {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : (self.parent_path() / name).string();
}

int usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
  return int(std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace kiln
