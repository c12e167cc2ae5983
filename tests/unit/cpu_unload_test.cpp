// The cpu backend unloads kernel modules for real: a module whose template kernel has __shared__
// arrays (static locals of a template, STB_GNU_UNIQUE by default in GCC) once stayed loaded after
// dlclose, the next module loaded under the same /proc/self/fd name was that stale one, and
// same-named shared arrays of different modules were one variable.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "cpu_test_util.h"
#include "runtime/error.h"

namespace kiln::cpu_test {
namespace {

// A template kernel with a __shared__ array and a barrier (its threads run as fibers).
constexpr const char* kRotate = R"(
template <class T>
__global__ void rotate(const T* in, T* out) {
  __shared__ T tile[64];
  tile[threadIdx.x] = in[threadIdx.x];
  __syncthreads();
  out[threadIdx.x] = tile[(threadIdx.x + 1) % blockDim.x] * 10;
}
)";

// The compiled image of req, compiled in a child process so that this process has never loaded
// any copy of it (as when it comes from the disk cache).
CompileResult compile_in_child(const CompileRequest& req) {
  int fds[2];
  if (::pipe(fds) != 0) throw Error("pipe failed");
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    int code = 1;
    try {
      CompileResult r = jit::make_cpu_compiler(compiler_options())->compile(req);
      std::size_t done = 0;
      while (done < r.image.size()) {
        ssize_t n = ::write(fds[1], r.image.data() + done, r.image.size() - done);
        if (n <= 0) break;
        done += std::size_t(n);
      }
      code = done == r.image.size() ? 0 : 1;
    } catch (...) {
    }
    ::_exit(code);
  }
  ::close(fds[1]);
  CompileResult r;
  char buf[65536];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;)
    r.image.insert(r.image.end(), buf, buf + n);
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) throw Error("the child compile failed");
  r.image_kind = "so";
  r.lowered_names = {"kiln_entry_0"};
  return r;
}

TEST(CpuUnload, ModuleLoadedAfterAnUnloadedFiberModuleIsItself) {
  CompileRequest req;
  req.source = kRotate;
  req.filename = "rotate.cu";
  req.name_expressions = {"rotate<int>"};
  CompileResult image = compile_in_child(req);
  {
    auto module = backend()->load(image);
    auto kernel = module->kernel(image.lowered_names[0]);
    Buffer<int> in(std::vector<int>{1, 2, 3, 4}), out(4);
    launch(*kernel, {1, 1, 1}, {4, 1, 1}, 0, static_cast<const int*>(in.p), out.p);
    EXPECT_EQ(out.host(), (std::vector<int>{20, 30, 40, 10}));
  }  // the module goes: its library is closed and must be unloaded
  Built twice = build(R"(__global__ void twice(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 2 * in[i];
  })",
                      "twice");
  Buffer<float> in(std::vector<float>{1, 2, 3, 4, 5}), out(5);
  launch(*twice.kernel, {1, 1, 1}, {8, 1, 1}, 0, static_cast<const float*>(in.p), out.p, 5);
  EXPECT_EQ(out.host(), (std::vector<float>{2, 4, 6, 8, 10}));
}

TEST(CpuUnload, SameNamedSharedArraysOfTwoModulesAreDistinct) {
  // One source, two modules (SIZE differs): on a GPU each module's shared array is its own.
  // (No barrier: a loop-mode kernel's shared arrays are the module's thread-locals; a region
  // kernel's outermost ones live on the block's stack.)
  const char* probe = R"(
template <class T>
__global__ void probe(T* out, int write) {
  __shared__ T s[SIZE];
  if (write) s[0] = 42;
  out[0] = write ? s[0] : -1;
  out[1] = s[0];
})";
  Built small = build(probe, "probe<int>", {"-DSIZE=1"});
  Built large = build(probe, "probe<int>", {"-DSIZE=512"});
  Buffer<int> out(2);
  launch(*small.kernel, {1, 1, 1}, {1, 1, 1}, 0, out.p, 1);
  EXPECT_EQ(out.host()[0], 42);
  launch(*large.kernel, {1, 1, 1}, {1, 1, 1}, 0, out.p, 0);  // reads its own, never-written array
  EXPECT_NE(out.host()[1], 42) << "the two modules share one __shared__ array";
}

}  // namespace
}  // namespace kiln::cpu_test
