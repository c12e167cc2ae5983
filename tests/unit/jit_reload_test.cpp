// Hot reload of a kernel file (jit::Kernel on the cpu backend): an edit that fails to compile is
// reported once and the previous build runs on; an edit whose compile Ctrl-C interrupted is
// compiled again at the next call.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "cpu_test_util.h"
#include "jit/headers.h"
#include "jit/jit.h"
#include "runtime/interrupt.h"
#include "temp_dir.h"

namespace kiln::jit {
namespace {
namespace fs = std::filesystem;
using cpu_test::backend;
using cpu_test::Buffer;

// Replaces the file's contents.
void write(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

// A kernel file that stores `value` in x[threadIdx.x] (each value a different file size, so the
// cheap stat in SourceText::refresh sees every edit).
std::string storing(const std::string& value) {
  return "__global__ void k(int* x) { x[threadIdx.x] = " + value + "; }\n";
}

// The kernel of the file, with no disk cache (every edit compiles).
struct FileKernel {
  explicit FileKernel(const fs::path& path)
      : jit(std::make_shared<Jit>(backend(), cpu_test::compiler(),
                                  DiskCache(path.parent_path() / "cache", 0, false, nullptr),
                                  KILN_KERNELS_DIR)),
        source(std::make_shared<SourceText>(SourceText::from_file(path))),
        kernel(jit, source, select_kernels(*source, "", false), {}, std::make_shared<Globals>()) {}

  // Launches k on 4 threads over out; returns what the threads stored.
  std::vector<int> run(Buffer<int>& out) {
    ArgValue a;
    a.kind = ArgValue::Kind::device_array;
    a.dtype = DType::int32;
    a.ndim = 1;
    a.data = out.p;
    a.shape = {std::int64_t(out.n)};
    std::vector<ArgValue> args{a};
    kernel.launch(kernel.specialise(args), LaunchConfig{{1, 1, 1}, {4, 1, 1}}, args);
    return out.host();
  }

  std::shared_ptr<Jit> jit;
  std::shared_ptr<SourceText> source;
  Kernel kernel;
};

// A kernel file storing 7, built and run once.
class JitReload : public ::testing::Test {
 protected:
  void SetUp() override {
    write(path, storing("7"));
    kernel = std::make_unique<FileKernel>(path);
    ASSERT_EQ(kernel->run(out), std::vector<int>(4, 7));
  }

  test::TempDir dir;
  fs::path path = dir.path() / "k.cu";
  std::unique_ptr<FileKernel> kernel;
  Buffer<int> out{4, 0};
};

TEST_F(JitReload, InterruptedCompileOfAnEditIsRetried) {
  write(path, storing("1234"));
  interrupt_flag().store(true);  // Ctrl-C arrives while the edit compiles
  EXPECT_THROW(kernel->run(out), Interrupted);
  EXPECT_FALSE(interrupt_flag().load());
  EXPECT_EQ(kernel->run(out), std::vector<int>(4, 1234));  // the same edit, compiled this time
}

TEST_F(JitReload, BrokenEditIsReportedOnceAndThePreviousBuildRunsOn) {
  write(path, storing("7 +* no_such_name"));
  EXPECT_THROW(kernel->run(out), CompileError);
  EXPECT_EQ(kernel->run(out), std::vector<int>(4, 7));
  write(path, storing("-5"));
  EXPECT_EQ(kernel->run(out), std::vector<int>(4, -5));
}

}  // namespace
}  // namespace kiln::jit
