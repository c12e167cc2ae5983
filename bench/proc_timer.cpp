// Times whole processes from outside: forks and execs a command N times and prints the median,
// min and max milliseconds from fork to the process's exit, or to the moment a given text first
// appears in its output. With --pty the child runs on a pseudo-terminal (forkpty), so kiln's REPL
// shows its prompt as it does for a person; the child is killed once the text is seen.
// Usage: kiln_proc_timer [--reps N] [--warmup N] [--pty] [--until TEXT] -- program args...
// Output: one line "median_ms min_ms max_ms".
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  int reps = 10;
  int warmup = 1;
  bool pty = false;
  std::string until;  // empty: time to exit
  std::vector<char*> argv;
};

// Starts argv on a pipe or a pty; returns the child's pid and the read end of its output.
pid_t start(const Options& o, int* out_fd) {
  if (o.pty) {
    int master = -1;
    pid_t pid = forkpty(&master, nullptr, nullptr, nullptr);
    if (pid == 0) {
      execvp(o.argv[0], o.argv.data());
      _exit(127);
    }
    *out_fd = master;
    return pid;
  }
  int fds[2];
  if (pipe(fds) != 0) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    dup2(fds[1], STDERR_FILENO);
    close(fds[0]);
    close(fds[1]);
    execvp(o.argv[0], o.argv.data());
    _exit(127);
  }
  close(fds[1]);
  *out_fd = fds[0];
  return pid;
}

// One run: milliseconds from fork to exit (or to `until` in the output); -1 on failure.
double run_once(const Options& o) {
  const Clock::time_point t0 = Clock::now();
  int fd = -1;
  pid_t pid = start(o, &fd);
  if (pid < 0) return -1;
  std::string seen;
  double ms = -1;
  char buf[4096];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) break;  // EOF (pipe) or EIO (pty whose child exited)
    if (o.until.empty()) continue;
    seen.append(buf, std::size_t(n));
    if (seen.find(o.until) != std::string::npos) {
      ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
      kill(pid, SIGKILL);
      break;
    }
  }
  int status = 0;
  waitpid(pid, &status, 0);
  close(fd);
  if (o.until.empty()) {
    ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::fprintf(stderr, "kiln_proc_timer: %s exited with status %d\n", o.argv[0], status);
      return -1;
    }
  } else if (ms < 0) {
    std::fprintf(stderr, "kiln_proc_timer: '%s' never appeared in the output of %s: %s\n",
                 o.until.c_str(), o.argv[0], seen.c_str());
  }
  return ms;
}

// Parses the command line; exits with usage on a mistake.
Options parse(int argc, char** argv) {
  Options o;
  int i = 1;
  for (; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--") { ++i; break; }
    if (a == "--pty") o.pty = true;
    else if (a == "--reps" && i + 1 < argc) o.reps = std::atoi(argv[++i]);
    else if (a == "--warmup" && i + 1 < argc) o.warmup = std::atoi(argv[++i]);
    else if (a == "--until" && i + 1 < argc) o.until = argv[++i];
    else break;
  }
  for (; i < argc; ++i) o.argv.push_back(argv[i]);
  if (o.argv.empty() || o.reps < 1) {
    std::fprintf(stderr, "usage: kiln_proc_timer [--reps N] [--warmup N] [--pty] [--until TEXT] -- program args...\n");
    std::exit(2);
  }
  o.argv.push_back(nullptr);
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parse(argc, argv);
  for (int i = 0; i < o.warmup; ++i)
    if (run_once(o) < 0) return 1;
  std::vector<double> t;
  for (int i = 0; i < o.reps; ++i) {
    double ms = run_once(o);
    if (ms < 0) return 1;
    t.push_back(ms);
  }
  std::sort(t.begin(), t.end());
  const std::size_t n = t.size();
  const double median = n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
  std::printf("%.4f %.4f %.4f\n", median, t.front(), t.back());
  return 0;
}
