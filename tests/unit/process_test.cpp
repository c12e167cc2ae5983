// Subprocesses (runtime/process.h): argv vectors, captured output, and the limits a host
// compile runs under, so that a hostile source cannot take the machine; and the sweep of
// temporary folders that killed processes left behind.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "runtime/process.h"

namespace kiln {
namespace {

TEST(Process, CapturesOutputAndExitCodeFromAnArgvVector) {
  ProcessResult r = run_process({"sh", "-c", "echo one; echo two >&2; exit 3"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.output, "one\ntwo\n");
  // An argv vector: a word with spaces and a ';' is one argument, never a command line.
  r = run_process({"echo", "a; rm -rf /nothing", "$HOME"});
  EXPECT_EQ(r.output, "a; rm -rf /nothing $HOME\n");
}

TEST(Process, EndlessOutputIsCutAndTheProgramStopped) {
  const auto start = std::chrono::steady_clock::now();
  ProcessResult r = run_process({"yes", "an error, again"}, {}, {0, 0, 10000});
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
  EXPECT_NE(r.exit_code, 0);  // killed
  EXPECT_EQ(r.output.substr(0, 16), "an error, again\n");
  EXPECT_NE(r.output.find("[kiln: output cut at 10000 bytes; yes was stopped]"), std::string::npos);
  EXPECT_LT(r.output.size(), 10100u);
}

TEST(Process, AMemoryLimitStopsAGreedyProgram) {
  // 2 GiB asked for under a 512 MiB limit: the allocation fails in the child, not the machine.
  const std::vector<std::string> greedy = {"python3", "-c", "x = bytearray(2 << 30); print('got it')"};
  ProcessResult free_run = run_process({"python3", "-c", "print('ok')"});
  if (free_run.exit_code != 0) GTEST_SKIP() << "no python3 to play the greedy compiler";
  ProcessResult r = run_process(greedy, {}, {512ull << 20, 0, 0});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("MemoryError"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("got it"), std::string::npos);
}

TEST(Process, AProcessorTimeLimitStopsALoop) {
  const auto start = std::chrono::steady_clock::now();
  ProcessResult r = run_process({"sh", "-c", "while :; do :; done"}, {}, {0, 1, 0});
  EXPECT_NE(r.exit_code, 0);  // SIGXCPU after a second of processor time
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
}

TEST(Process, BesideThisProgramIsTheTestBinarysFolder) {
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe");
  EXPECT_EQ(beside_this_program("libkiln_mpi.so"),
            (self.parent_path() / "libkiln_mpi.so").string());
  EXPECT_NE(beside_this_program("x"), "x");
}

TEST(Process, ReadFolderVisitsFilesInPathOrder) {
  TempDir dir;
  const std::filesystem::path root = dir.path();
  std::filesystem::create_directories(root / "sub" / "deeper");
  write_file((root / "b.h").string(), "bee");
  write_file((root / "sub" / "a.h").string(), "");
  write_file((root / "sub" / "deeper" / "z.h").string(), std::string(100000, 'z'));  // > buffer
  write_file((root / "a.h").string(), "ay");
  std::filesystem::create_symlink(root / "b.h", root / "c.h");  // followed
  std::filesystem::create_directory_symlink(root, root / "sub" / "loop");  // not followed
  std::vector<std::string> seen;
  read_folder(dir.path(), true, [&](const std::string& name, std::string_view text) {
    seen.push_back(name + "=" + std::to_string(text.size()) + std::string(text.substr(0, 1)));
  });
  EXPECT_EQ(seen, (std::vector<std::string>{"a.h=2a", "b.h=3b", "c.h=3b", "sub/a.h=0",
                                            "sub/deeper/z.h=100000z"}));
  seen.clear();
  read_folder(dir.path(), false,
              [&](const std::string& name, std::string_view) { seen.push_back(name); });
  EXPECT_EQ(seen, (std::vector<std::string>{"a.h", "b.h", "c.h"}));
  seen.clear();
  read_folder((root / "missing").string(), true,
              [&](const std::string& name, std::string_view) { seen.push_back(name); });
  EXPECT_TRUE(seen.empty());
}

}  // namespace
}  // namespace kiln
