// The cpu backend end to end: compile, load, launch; signatures, errors, validation.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>

#include <unistd.h>

#include "cpu_test_util.h"
#include "jit/cpu/host_compiler.h"
#include "jit/cpu/plan.h"
#include "jit/jit.h"
#include "runtime/error.h"
#include "runtime/interrupt.h"

namespace kiln::cpu_test {
namespace {

// GCC 13 dropped --param=max-unswitch-level: only a GCC named older gets it.
TEST(CpuBackend, GccMajorVersionFromTheBinarysName) {
  using kiln::jit::gcc_major_in_name;
  EXPECT_EQ(gcc_major_in_name("/usr/bin/x86_64-linux-gnu-g++-12@123@456"), 12);
  EXPECT_EQ(gcc_major_in_name("/usr/bin/x86_64-linux-gnu-g++-13@1@2"), 13);
  EXPECT_EQ(gcc_major_in_name("/opt/gcc/bin/g++-9@1@2"), 9);
  EXPECT_EQ(gcc_major_in_name("/usr/bin/g++@1@2"), 0);
  EXPECT_EQ(gcc_major_in_name("/usr/lib/llvm-14/bin/clang@1@2"), 0);
  EXPECT_EQ(gcc_major_in_name("/usr/bin/x86_64-linux-gnu-g++-x@1@2"), 0);
  EXPECT_EQ(gcc_major_in_name("c++ (not found)"), 0);
}

TEST(CpuBackend, VecAddAndSignature) {
  auto t0 = std::chrono::steady_clock::now();
  Built b = build(R"(
__global__ void vec_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
})",
                  "vec_add");
  double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf("cold compile of vec_add: %.0f ms\n", ms);
  EXPECT_EQ(b.result.image_kind, "so");
  EXPECT_EQ(b.result.lowered_names[0], "kiln_entry_0");
  EXPECT_EQ(b.result.signatures[0], "void (*)(float const*, float const*, float*, int)");
  const int n = 1000;
  std::vector<float> a(n), c(n);
  for (int i = 0; i < n; ++i) a[i] = float(i), c[i] = float(2 * i + 1);
  Buffer<float> da(a), db(c), dc(n, -1.0f);
  launch(*b.kernel, {4}, {256}, 0, da.p, db.p, dc.p, n);
  auto out = dc.host();
  for (int i = 0; i < n; ++i) ASSERT_EQ(out[i], float(3 * i + 1)) << i;
}

}  // namespace
}  // namespace kiln::cpu_test

namespace kiln::cpu_test {
namespace {

// Written in the style of NVIDIA's NVRTC saxpy sample: extern "C", grid-stride loop, size_t n.
// Loop mode keeps thread identity in registers and vectorises across threads: every thread of
// every block shape must still see its own indices, each element written once.
TEST(CpuBackend, LoopModeThreadIdentityForEveryBlockShape) {
  Built b = build(R"(
__global__ void ids(long long* out) {
  long long block = blockIdx.x + (long long)gridDim.x * (blockIdx.y + (long long)gridDim.y * blockIdx.z);
  long long t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  long long i = block * (blockDim.x * blockDim.y * blockDim.z) + t;
  out[i] += 1 + 10 * threadIdx.x + 1000 * threadIdx.y + 100000 * threadIdx.z + 10000000 * block;
})",
                  "ids");
  EXPECT_EQ(b.kernel->attributes().threads, "loop");
  for (Dim3 block : {Dim3{1, 1, 1}, Dim3{3, 1, 1}, Dim3{33, 1, 1}, Dim3{7, 5, 1}, Dim3{4, 3, 5},
                     Dim3{1024, 1, 1}}) {
    for (Dim3 grid : {Dim3{1, 1, 1}, Dim3{5, 1, 1}, Dim3{3, 2, 2}}) {
      const std::size_t threads = block.count(), n = grid.count() * threads;
      Buffer<long long> out(n, 0);
      launch(*b.kernel, grid, block, 0, out.p);
      auto o = out.host();
      for (std::size_t i = 0; i < n; ++i) {
        const long long t = (long long)(i % threads), blk = (long long)(i / threads);
        const long long x = t % block.x, y = t / block.x % block.y, z = t / (block.x * block.y);
        ASSERT_EQ(o[i], 1 + 10 * x + 1000 * y + 100000 * z + 10000000 * blk)
            << "element " << i << " block (" << block.x << "," << block.y << "," << block.z << ")";
      }
    }
  }
}

TEST(CpuBackend, NvrtcStyleSaxpyRunsUnmodified) {
  Built b = build(R"(
#include <cuda_runtime.h>
extern "C" __global__
void saxpy(float a, float *x, float *y, float *out, size_t n)
{
  for (size_t tid = blockIdx.x * blockDim.x + threadIdx.x; tid < n; tid += blockDim.x * gridDim.x) {
    out[tid] = a * x[tid] + y[tid];
  }
}
)",
                  "saxpy", {"--use_fast_math", "-arch=sm_90", "-lineinfo"});
  EXPECT_EQ(b.result.signatures[0], "void (*)(float, float*, float*, float*, unsigned long)");
  const std::size_t n = 5000;
  std::vector<float> x(n), y(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = float(i), y[i] = float(n - i);
  Buffer<float> dx(x), dy(y), out(n);
  launch(*b.kernel, {3}, {128}, 0, 2.0f, dx.p, dy.p, out.p, n);
  auto o = out.host();
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(o[i], 2.0f * float(i) + float(n - i)) << i;
}

TEST(CpuBackend, TemplatesSeveralKernelsAndGlobals) {
  CompileRequest req;
  req.source = R"(
__constant__ float coeffs[4];
__device__ int counter;
template <typename T, int K>
__global__ void scale(T* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * (T)K + (T)coeffs[i % 4];
  if (i == 0) counter += 1;
}
__global__ void read_counter(int* out) { *out = counter; }
)";
  req.filename = "multi.cu";
  req.name_expressions = {"scale<double, 3>", "read_counter"};
  CompileResult r = compiler()->compile(req);
  EXPECT_EQ(r.signatures[0], "void (*)(double*, int)");
  EXPECT_EQ(r.signatures[1], "void (*)(int*)");
  auto m = backend()->load(r);
  float c[4] = {0.5f, 1, 2, 4};
  m->set_global("coeffs", c, sizeof c);
  int seven = 7;
  m->set_global("counter", &seven, sizeof seven);
  EXPECT_THROW(m->set_global("coeffs", c, 2 * sizeof c), Error);
  EXPECT_THROW(m->set_global("nothing_here", c, 4), Error);
  auto k0 = m->kernel(r.lowered_names[0]), k1 = m->kernel(r.lowered_names[1]);
  Buffer<double> x(std::vector<double>{1, 2, 3, 4, 5});
  launch(*k0, {1}, {32}, 0, x.p, 5);
  EXPECT_EQ(x.host(), (std::vector<double>{3.5, 7, 11, 16, 15.5}));
  Buffer<int> out(1);
  launch(*k1, {1}, {1}, 0, out.p);
  EXPECT_EQ(out.host()[0], 8);
  EXPECT_THROW(m->kernel("kiln_entry_7"), Error);
}

TEST(CpuBackend, CompileErrorPointsAtUserLine) {
  CompileRequest req;
  req.source =
      "// line 1\n__global__ void k(float* x) {\n  x[0] = 1.0f;\n  undefined_thing(x);\n}\n";
  req.filename = "my_kernel.cu";
  req.name_expressions = {"k"};
  try {
    compiler()->compile(req);
    FAIL() << "compiled";
  } catch (const CompileError& e) {
    EXPECT_NE(e.log().find("my_kernel.cu:4:"), std::string::npos) << e.log();
    EXPECT_NE(e.log().find("undefined_thing"), std::string::npos) << e.log();
    EXPECT_EQ(e.log().find("/tmp/kiln-"), std::string::npos) << e.log();
  }
}

TEST(CpuBackend, RejectsUnknownOptions) {
  CompileRequest req;
  req.source = "__global__ void k() {}";
  req.name_expressions = {"k"};
  req.options = {"-DX=1", "-fplugin=evil.so"};
  try {
    compiler()->compile(req);
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("-fplugin=evil.so"), std::string::npos) << e.what();
  }
  EXPECT_THROW(cpu::translate_options({"-o", "x"}), Error);
  EXPECT_EQ(cpu::translate_options({"-D", "R=4", "-O3", "-arch=sm_80", "--std=c++20"}),
            (std::vector<std::string>{"-DR=4", "-O3", "-std=c++20"}));
  // Every option kiln's own allow-list (jit.cpp validate_options) lets through is one the cpu
  // backend takes.
  for (const char* o : {"--ftz=true", "--prec-div=false", "--prec-sqrt=false", "--restrict",
                        "-restrict", "--device-as-default-execution-space", "-default-device",
                        "--extra-device-vectorization", "--maxrregcount=32", "-lineinfo", "-G"}) {
    EXPECT_NO_THROW(jit::validate_options({o})) << o;
    EXPECT_EQ(cpu::translate_options({o}), std::vector<std::string>{}) << o;
  }
}

TEST(CpuBackend, LaunchValidation) {
  Built b = build("__global__ void k(int* x) { x[0] = 1; }", "k");
  Buffer<int> x(1);
  auto expect_error = [&](Dim3 grid, Dim3 block, std::size_t shared, const char* part) {
    try {
      launch(*b.kernel, grid, block, shared, x.p);
      ADD_FAILURE() << "accepted " << part;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("kernel 'k'"), std::string::npos) << e.what();
    }
  };
  expect_error({1}, {1025}, 0, "(1025,1,1)");
  expect_error({1}, {512, 4}, 0, "2048 threads");
  expect_error({1}, {32, 32, 2}, 0, "(32,32,2)");
  expect_error({1}, {1, 1, 65}, 0, "(1,1,65)");
  expect_error({1, 65536}, {1}, 0, "(1,65536,1)");
  expect_error({0}, {1}, 0, "zero");
  expect_error({1}, {0}, 0, "zero");
  expect_error({1}, {1}, 1 << 20, "1048576 bytes");
  launch(*b.kernel, {1}, {1024}, 0, x.p);
  EXPECT_EQ(x.host()[0], 1);
}

TEST(CpuBackend, PrintfReachesStdout) {
  Built b = build(R"(
#include <cstdio>
__global__ void k(int v) {
  __syncthreads();
  if (threadIdx.x == 2) printf("hello from thread %d of block %d: %d\n", threadIdx.x, blockIdx.x, v);
})",
                  "k");
  std::fflush(stdout);
  testing::internal::CaptureStdout();
  launch(*b.kernel, {1}, {4}, 0, 42);
  std::string out = testing::internal::GetCapturedStdout();
  EXPECT_EQ(out, "hello from thread 2 of block 0: 42\n");
}

TEST(CpuBackend, InterruptStopsALongKernel) {
  Built b = build(R"(
__global__ void k(unsigned long long* done) {
  volatile double x = 0;
  for (int i = 0; i < 20000; ++i) x = x + 1.0;
  if (threadIdx.x == 0) atomicAdd(done, 1ull);
})",
                  "k");
  Buffer<unsigned long long> done(1, 0);
  interrupt_flag().store(true);
  EXPECT_THROW(launch(*b.kernel, {100000}, {64}, 0, done.p), Interrupted);
  EXPECT_FALSE(interrupt_flag().load());
  EXPECT_LT(done.host()[0], 100000ull);
}

// A launch of few small blocks that each take long (a wavefront's diagonal: 16 threads a block,
// many regions) runs on every worker once the kernel's blocks have been timed: the grid's
// 128 threads alone would keep it on the launching thread. A region-mode block's shared array
// lives on its worker's block stack, so its address tells the workers apart.
TEST(CpuBackend, FewLongBlocksShareTheWorkers) {
  if (backend()->device().multiprocessors < 2) GTEST_SKIP() << "one worker";
  Built b = build(R"(
__global__ void k(unsigned long long* where, float* out, int rounds) {
  __shared__ float s[16];
  s[threadIdx.x] = threadIdx.x;
  __syncthreads();
  float x = s[(threadIdx.x + 1) % 16];
  for (int i = 0; i < rounds; ++i) x = x * 0.999f + 1.0f;
  out[blockIdx.x * 16 + threadIdx.x] = x;
  if (threadIdx.x == 0) where[blockIdx.x] = (unsigned long long)&s[0];
})",
                  "k");
  ASSERT_EQ(b.kernel->attributes().threads, "regions");
  Buffer<unsigned long long> where(8, 0);
  Buffer<float> out(8 * 16, 0.0f);
  launch(*b.kernel, {8}, {16}, 0, where.p, out.p, 20000);  // timed: about 0.1 ms a block
  std::set<unsigned long long> workers;
  // (a worker may be slow to wake, the more so on a loaded machine)
  for (int run = 0; run < 40 && workers.size() < 2; ++run) {
    launch(*b.kernel, {8}, {16}, 0, where.p, out.p, 20000);
    for (auto w : where.host()) workers.insert(w);
  }
  EXPECT_GE(workers.size(), 2u);
  float x = 0;  // thread 15 of each block starts from s[0]
  for (int i = 0; i < 20000; ++i) x = x * 0.999f + 1.0f;
  EXPECT_NEAR(out.host()[15], x, 1e-3f * x);
}

TEST(CpuBackend, LoopModeKernelReachingABarrierIsAnError) {
  // The barrier hides behind a macro built by token pasting, so the source scan misses it.
  Built b = build(R"(
#define CAT(a, b) a##b
__global__ void k(int* x) { x[threadIdx.x] = 1; CAT(__sync, threads)(); })",
                  "k");
  Buffer<int> x(8);
  EXPECT_THROW(launch(*b.kernel, {1}, {8}, 0, x.p), Error);
}

TEST(CpuBackend, SourceScanAndRewrite) {
  using M = std::vector<kiln_cpu::ThreadMode>;
  constexpr auto loop = kiln_cpu::mode_loop, fibers = kiln_cpu::mode_fibers,
                 coroutines = kiln_cpu::mode_coroutines;
  auto thread_modes = [](std::string_view source, const std::string& file,
                         const std::vector<std::string>& dirs,
                         const std::vector<std::string>& names) {
    M modes;
    for (const cpu::ThreadPlan& p : cpu::thread_plans(source, file, dirs, names))
      modes.push_back(p.mode);
    return modes;
  };
  const char* two = R"(
__global__ void plain(float* x) { x[0] = 1; }
template <int N> __global__ void tiled(float* x) { __shared__ float s[N]; s[0] = x[0]; __syncthreads(); }
__global__ void comment(float* x) { /* __syncthreads() */ x[0] = 2; } // __shfl_sync
)";
  EXPECT_EQ(thread_modes(two, "", {}, {"plain", "tiled<4>", "comment"}),
            (M{loop, coroutines, loop}));
  const char* helper = R"(
__device__ float warp_sum(float v) { return v + __shfl_xor_sync(0xffffffff, v, 1); }
__global__ void k(float* x) { x[0] = warp_sum(x[0]); }
__global__ void j(float* x) { x[0] = 1; }
)";
  EXPECT_EQ(thread_modes(helper, "", {}, {"k", "j"}), (M{fibers, loop}));
  // Each plan says why, naming the construct and its line.
  EXPECT_EQ(cpu::thread_plans(helper, "w.cu", {}, {"k"})[0].why,
            "its body does not synchronise, but it may call code that does: warp or group "
            "operation __shfl_xor_sync at w.cu:2");
  // A warp operation, or a lambda beside a barrier, in another kernel leaves a barrier kernel a
  // candidate for regions (it would not build as coroutines beside them: no_coroutines says
  // why), while kernels that synchronise not at all stay loops.
  const char* warp = R"(
__global__ void b(float* x) { __syncthreads(); x[0] = 1; }
__global__ void w(float* x) { x[0] = __shfl_down_sync(0xffffffff, x[0], 1); }
__global__ void p(float* x) { x[0] = 2; }
)";
  // (A kernel with warp shuffles and votes is a candidate too: the region rewrite runs them
  // as steps; if it declines, the kernel runs as fibers, which no_coroutines says.)
  EXPECT_EQ(thread_modes(warp, "", {}, {"b", "w", "p"}), (M{coroutines, coroutines, loop}));
  EXPECT_EQ(cpu::thread_plans(warp, "", {}, {"w"})[0].no_coroutines,
            "warp or group operation __shfl_down_sync at kernel.cu:3");
  EXPECT_EQ(cpu::thread_plans(warp, "", {}, {"b"})[0].no_coroutines,
            "warp or group operation __shfl_down_sync at kernel.cu:3");
  const char* lambda = R"(
__global__ void l(float* x) { auto f = [](float v) { return v * 2; }; __syncthreads(); x[0] = f(x[0]); }
)";
  // (not coroutines, whose rewrite of `return` would reach into the lambda: regions or fibers)
  EXPECT_EQ(thread_modes(lambda, "", {}, {"l"}), (M{coroutines}));
  EXPECT_EQ(cpu::thread_plans(lambda, "l.cu", {}, {"l"})[0].why,
            "a lambda in kernel l, which has barriers, at l.cu:2");
  EXPECT_EQ(cpu::thread_plans(lambda, "l.cu", {}, {"l"})[0].no_coroutines,
            "a lambda in kernel l, which has barriers, at l.cu:2");
  // Tokens in strings and comments do not count; __syncthreads_or alone is a block barrier.
  const char* quiet =
      "__global__ void s(const char** x) { x[0] = \"__syncwarp() g.sync()\"; /* __shfl_sync */ }\n"
      "__global__ void o(int* x) { x[0] = __syncthreads_or(x[threadIdx.x]); }\n";
  EXPECT_EQ(thread_modes(quiet, "", {}, {"s", "o"}), (M{loop, coroutines}));
  // Warp operations make their own kernel a candidate for regions only, cooperative groups
  // and the warp operations the region rewrite has no step for make it fibers.
  const char* warp_sync = R"(
__global__ void w(int* x) { __syncwarp(); x[0] = 1; }
__global__ void t(int* x) { __syncthreads(); x[0] = 1; }
)";
  EXPECT_EQ(thread_modes(warp_sync, "", {}, {"w", "t"}), (M{coroutines, coroutines}));
  EXPECT_EQ(cpu::thread_plans(warp_sync, "", {}, {"w"})[0].why,
            "warp or group operation __syncwarp at kernel.cu:2");
  for (const char* body : {"auto g = coalesced_threads(); x[0] = g.size();",
                           "x[0] = __uni_sync(~0u, x[0]);", "grid.sync(); x[0] = 1;",
                           "x[0] = __match_all_sync(~0u, x[0], x) + __shfl_sync(~0u, 1, 0);"}) {
    std::string src = std::string("__global__ void k(int* x) { ") + body + " }";
    EXPECT_EQ(thread_modes(src, "", {}, {"k"}), (M{fibers})) << body;
  }
  // The reason names what regions cannot take, not the first warp operation before it; of
  // cooperative groups, a member the lowering never takes before the block that names it.
  EXPECT_EQ(cpu::thread_plans("__global__ void k(int* x) {\n x[0] = __ballot_sync(~0u, 1);\n int "
                              "p; x[1] = __match_all_sync(~0u, 1, &p);\n}",
                              "", {}, {"k"})[0]
                .why,
            "warp or group operation __match_all_sync at kernel.cu:3");
  EXPECT_EQ(cpu::thread_plans("namespace cg = cooperative_groups;\n__global__ void k(int* s) {\n "
                              "cg::thread_block b = cg::this_thread_block();\n "
                              "b.sync(); cg::this_grid().sync();\n}",
                              "", {}, {"k"})[0]
                .why,
            "warp or group operation cg::this_grid at kernel.cu:4");

  // Each `return` of a synchronising kernel body becomes co_return; nothing else changes.
  const char* returns = R"(__device__ int f(int v) { return v; }
__global__ void r(int* x, int n) { // return
  if (threadIdx.x >= n) return;
  printf("return\n"); __syncthreads(); x[0] = f(n); int return_value = 0; (void)return_value; }
__global__ void q(int* x) { if (!x) return; x[0] = 1; }
__global__ void __launch_bounds__(64) s(int* x) { /* return */ if (!x) return; __syncthreads_and(1); })";
  std::string rewritten = cpu::rewrite_coroutine_returns(returns);
  std::string expected(returns);
  expected.replace(expected.find(">= n) return"), 12, ">= n) co_return");
  expected.replace(expected.rfind("return;"), 6, "co_return");
  EXPECT_EQ(rewritten, expected);
  // A kernel's extern "C" goes (GCC's coroutine clones would take its C name); columns stay.
  EXPECT_EQ(cpu::rewrite_coroutine_returns(
                "extern \"C\" __global__ void k() { __syncthreads(); }\nextern \"C\" int g();"),
            "           __global__ void k() { __syncthreads(); }\nextern \"C\" int g();");
  std::string src = "extern __shared__ __align__(16) float\n  buf[];\nint y;";
  std::string out = cpu::rewrite_extern_shared(src);
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 2);
  EXPECT_NE(out.find("float* const buf"), std::string::npos) << out;
  EXPECT_NE(out.find("int y;"), std::string::npos);
  // Any legal order of the qualifiers; a template's type; extern "C" kernels left alone.
  std::string mixed = cpu::rewrite_extern_shared(
      "extern \"C\" __global__ void k() { extern T __shared__ s[]; }\n"
      "extern unsigned char __shared__ __align__(8) raw[ ];");
  EXPECT_NE(mixed.find("extern \"C\" __global__ void k() { static thread_local T* const s = "),
            std::string::npos)
      << mixed;
  EXPECT_NE(mixed.find("static thread_local unsigned char* const raw"), std::string::npos) << mixed;
  EXPECT_EQ(mixed.find("extern T"), std::string::npos) << mixed;
  // Pointer casts, which may read memory through another type (-fno-strict-aliasing), and
  // what only looks like one.
  for (const char* cast : {"int4 r = *reinterpret_cast<const int4*>(p);", "float* f = (float*)&r;",
                           "auto h = (const __half2 *)(q + 1);", "T* t = static_cast<T*>(v);",
                           "x = (unsigned char*)0;"})
    EXPECT_TRUE(cpu::casts_pointers(cast, "", {})) << cast;
  for (const char* plain : {"n = sizeof(float*);", "y = (a * b);", "void (*f)(int) = g;",
                            "z = static_cast<int>(w);", "// reinterpret_cast<float*>(p)"})
    EXPECT_FALSE(cpu::casts_pointers(plain, "", {})) << plain;
  // Rows of a size (cudaTensorCoreGemm's `shmem[][CHUNK_K * K + SKEW]`): a pointer to them.
  std::string rows = cpu::rewrite_extern_shared(
      "extern __shared__ half tile[][CHUNK * (K + 1)][2];\nextern __shared__ int odd[3][];");
  EXPECT_NE(rows.find("static thread_local half (*const tile)[CHUNK*(K+1)][2] = "
                      "reinterpret_cast<half (*)[CHUNK*(K+1)][2]>"),
            std::string::npos)
      << rows;
  EXPECT_NE(rows.find("extern __shared__ int odd[3][];"), std::string::npos) << rows;
  EXPECT_NE(cpu::rewrite_extern_shared("extern __shared__ float s[][8];", true)
                .find("::kiln_cpu::dyn_shared<float[8]> s{}"),
            std::string::npos);
  // In check mode, an array the source casts (no class takes a reinterpret_cast) stays a pointer.
  EXPECT_NE(cpu::rewrite_extern_shared("extern __shared__ float smem[];\n"
                                       "float4* v = reinterpret_cast<float4*>(smem);",
                                       true)
                .find("static thread_local float* const smem"),
            std::string::npos);

  // Pointer parameters become checked pointers (check mode); others stay as written.
  std::string params = cpu::rewrite_pointer_params(
      "__global__ void k(const float* __restrict__ a, kiln::Vec<int, 2>* v, int& r, float* b[4],\n"
      "                  unsigned int n, volatile int * flag, unsigned int* h, const long long* "
      "l,\n"
      "                  Thing Other* x) {}");
  EXPECT_NE(params.find("::kiln_cpu::checked_ptr<unsigned int> h"), std::string::npos) << params;
  EXPECT_NE(params.find("::kiln_cpu::checked_ptr<const long long> l"), std::string::npos) << params;
  EXPECT_NE(params.find("Thing Other* x"), std::string::npos) << params;
  EXPECT_NE(params.find("::kiln_cpu::checked_ptr<const float> a"), std::string::npos) << params;
  EXPECT_NE(params.find("::kiln_cpu::checked_ptr<kiln::Vec<int, 2>> v"), std::string::npos)
      << params;
  EXPECT_NE(params.find("::kiln_cpu::checked_ptr<volatile int> flag"), std::string::npos) << params;
  EXPECT_NE(params.find("int& r, float* b[4],\n"), std::string::npos) << params;
  EXPECT_NE(params.find("unsigned int n"), std::string::npos) << params;

  // Sizes that overflowed std::regex's recursion: a licence header of 5000 comment lines and
  // 100 000 identifiers in one declaration. They are tokens now: no crash, lines kept.
  // (Appended piece by piece: "x" + std::to_string(i) trips GCC 12's -Wrestrict false positive.)
  std::string huge = "/*";
  huge.append(5000, '\n').append("*/ extern __shared__ float s[];\n__global__ void k(int* x");
  for (int i = 0; i < 100000; ++i) huge.append(", int a").append(std::to_string(i));
  huge += ") { extern __shared__ int t ";
  for (int i = 0; i < 100000; ++i) huge.append("u").append(std::to_string(i)).append(" ");
  huge += "; }\n";
  for (const std::string& r : {cpu::rewrite_extern_shared(huge), cpu::rewrite_pointer_params(huge)})
    EXPECT_EQ(std::count(r.begin(), r.end(), '\n'), std::count(huge.begin(), huge.end(), '\n'));
  EXPECT_NE(cpu::rewrite_extern_shared(huge).find("float* const s"), std::string::npos);
}

// Check mode's static __shared__ arrays: each declarator a kiln_cpu::shared_array with its
// extents, storage and alignment kept, lines kept; scalars, pointers, initialised and
// reinterpreted arrays as they were.
TEST(CpuRewrite, StaticSharedArraysBecomeCheckedArrays) {
  EXPECT_EQ(cpu::rewrite_shared_arrays("  __shared__ float s[32];"),
            "  __shared__ ::kiln_cpu::shared_array<float, (32)> s;");
  EXPECT_EQ(cpu::rewrite_shared_arrays("static __shared__ __align__(16) volatile unsigned int\n"
                                       "  a[T][T + 1], n, b[2 * (T)];"),
            "static __shared__ __align__(16) ::kiln_cpu::shared_array<volatile unsigned int, (T), "
            "(T + 1)> a; static __shared__ __align__(16) volatile unsigned int n; static "
            "__shared__ __align__(16) ::kiln_cpu::shared_array<volatile unsigned int, (2 * (T))> "
            "b\n;");
  EXPECT_EQ(cpu::rewrite_shared_arrays("float __shared__ s[4];"),
            "__shared__ ::kiln_cpu::shared_array<float, (4)> s;");
  EXPECT_EQ(cpu::rewrite_shared_arrays("__shared__ Pair<int, float> p[4];"),
            "__shared__ ::kiln_cpu::shared_array<Pair < int , float >, (4)> p;");
  EXPECT_EQ(cpu::rewrite_shared_arrays("__shared__ typename R::Temp t[2];"),
            "__shared__ ::kiln_cpu::shared_array<typename R::Temp, (2)> t;");
  for (const char* kept :
       {"__shared__ float x;", "__shared__ float* p[4];", "__shared__ int s[] = {1};",
        "__shared__ int s[4] = {};", "extern __shared__ float d[];",
        "__shared__ float4 v[8]; f(reinterpret_cast<float*>(v));"})
    EXPECT_EQ(cpu::rewrite_shared_arrays(kept), kept) << kept;
}

// Check mode: an element's address becomes element_address (the last subscript apart, lines
// kept); a bitwise and, a member's address, an atomic's argument and a macro stay.
TEST(CpuRewrite, ElementAddressesBecomeCalls) {
  EXPECT_EQ(cpu::rewrite_element_addresses("f(&s[0], &s[N]);"),
            "f(::kiln_cpu::element_address(s, (0)), ::kiln_cpu::element_address(s, (N)));");
  EXPECT_EQ(cpu::rewrite_element_addresses("q = &\n  s[i];"),
            "q = ::kiln_cpu::element_address(\n  s, (i));");
  EXPECT_EQ(cpu::rewrite_element_addresses("return &t[y][x +\n 1];"),
            "return ::kiln_cpu::element_address(t[y], (x +\n 1));");
  EXPECT_EQ(cpu::rewrite_element_addresses("p = &a[b[i]] - 1;"),
            "p = ::kiln_cpu::element_address(a, (b[i])) - 1;");
  EXPECT_EQ(cpu::rewrite_element_addresses("p = c ? &a[i] :&b[j];"),
            "p = c ? ::kiln_cpu::element_address(a, (i)) : ::kiln_cpu::element_address(b, (j));");
  EXPECT_EQ(cpu::rewrite_element_addresses("t = sum<float>(&s[0], &s[N]);"),
            "t = sum<float>(::kiln_cpu::element_address(s, (0)), "
            "::kiln_cpu::element_address(s, (N)));");
  for (const char* kept : {"x = m & a[i];",
                           "x = f(y) & a[i];",
                           "x = a[j] & b[i];",
                           "p = &s[i].x;",
                           "p = &s[i]->y;",
                           "atomicAdd(&h[b], 1);",
                           "v = __ldg(&p[i]);",
                           "#define END(a) &a[N]",
                           "r = (char*)&s[N];",
                           "float& operator[](int i);",
                           "auto& r = s[i];",
                           "b = a && s[i];",
                           "b = i++ & s[j];",
                           "p = &s[i]++;",
                           "v = *reinterpret_cast<const float4*>(&in[4 * i]);",
                           "memcpy(&d[i], src, 4);",
                           "x = *&s[i];",
                           "y = (&s[i])[1];",
                           "f = is_same_v<T, float> & m[i];",
                           "x = Mask{} & m[i];"})
    EXPECT_EQ(cpu::rewrite_element_addresses(kept), kept) << kept;
}

// A template kernel run as loops or regions is compiled once, inside the module's loops: its
// instantiation is not also built standalone (only fibers call it one thread at a time), which
// was a quarter of a lab kernel's cold compile. As regions and as fibers, it runs.
TEST(CpuBackend, TemplateKernelsAreBuiltOnlyWhereTheyRun) {
  const std::string src = R"(
template <class T> __global__ void spin(T* x, int n) {
  __shared__ T s[64];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  for (int r = 0; r < 3; ++r) {
    s[threadIdx.x] = i < n ? x[i] : T(0);
    __syncthreads();
    if (i < n) x[i] += s[(threadIdx.x + 1) % blockDim.x] > 0 ? T(1) : T(2);
    __syncthreads();
  }
}
)";
  // (a helper with a warp operation that every kernel may reach, through a macro: fibers)
  const std::string fibers = src +
                             "__device__ inline void use_fibers() { __syncwarp(); }\n"
                             "#define KILN_TEST_WARP_STEP use_fibers()\n";
  const std::string symbol("\0_Z4spinIfEvPT_i\0", 17);  // (a whole name of the symbol table)
  const std::vector<float> in{1, 2, 3, 4, 5, 6, 7, 8};
  for (const char* mode : {"regions", "fibers"}) {
    Built b = build(std::string(mode) == "regions" ? src : fibers, "spin<float>");
    EXPECT_EQ(b.kernel->attributes().threads, mode);
    const bool standalone = std::search(b.result.image.begin(), b.result.image.end(),
                                        symbol.begin(), symbol.end()) != b.result.image.end();
    EXPECT_FALSE(standalone && std::string(mode) == "regions");
    Buffer<float> x(in);
    launch(*b.kernel, {1}, {8}, 0, x.p, 8);
    EXPECT_EQ(x.host(), std::vector<float>({4, 5, 6, 7, 8, 9, 10, 11})) << mode;
  }
}

// Plain kernels and device functions get internal linkage, so that the compiler builds them
// only where they are used (inlined); what `static` would break or change is left as written. End
// to end: a kernel defined once, and one declared before its definition (the declaration takes
// `static`), both run, and neither leaves a symbol.
TEST(CpuBackend, PlainKernelsHaveInternalLinkage) {
  const std::string kStatic = "static __attribute__((unused)) ";
  for (const auto& [source, internal] : std::vector<std::pair<std::string, bool>>{
           {"__global__ void k(int* x) { x[0] = 1; }", true},
           {"#include <cstdio>\n#define N(x) (x)\n__global__ void k(int* x) {}", true},
           {"__global__\n#ifdef WIDE\nvoid k(long* x)\n#else\nvoid k(int* x)\n#endif\n{}", true},
           {"namespace n { __global__ void k(int* x) {} }", true},
           {"__global__ void __launch_bounds__(256, 2) k(int* x) {}", true},
           {"struct S { int a; };\n__global__ void k(S s) {}", true},
           {"__global__ void k(int* x);\n__global__ void k(int* x) {}", true},  // the first
           {"void k(int* x);\n__global__ void k(int* x) {}", false},            // named before
           {"template <class T> __global__ void k(T* x) {}", false},
           {"template <> __global__ void k<int>(int* x) {}", false},
           {"extern \"C\" __global__ void k(int* x) {}", false},
           {"extern \"C\" { __global__ void k(int* x) {} }", false},
           {"static __global__ void k(int* x) {}", false},
           {"__global__ static void k(int* x) {}", false},
           {"__global__ void n::k(int* x) {}", false},
           {"struct S { friend __global__ void k(int* x); };", false},
           {"#define K __global__ void k(int* x) {}\nK", false},
           // device functions: definitions only, variables never
           {"__device__ int twice(int v) { return 2 * v; }", true},
           {"__host__ __device__ __forceinline__ int same(int v) { return v; }", true},
           {"__device__ int twice(int v);", false},
           {"__device__ float x = sinf(1.0f);", false},
           {"__device__ int table[4] = {1, 2, 3, 4};", false},
           {"__device__ int counter;", false},
           {"__device__ float2 operator+(float2 a, float2 b) { return a; }", false},
           {"struct P { __device__ int get() const { return 1; } };", false}}) {
    const std::string out = cpu::internal_kernels(source);
    EXPECT_EQ(out.find(kStatic) != std::string::npos, internal) << source;
    EXPECT_EQ(out.find(kStatic, out.find(kStatic) + 1), std::string::npos) << source;
    std::string without = out;
    if (const std::size_t at = out.find(kStatic); at != std::string::npos)
      without.erase(at, kStatic.size());
    EXPECT_EQ(without, source);  // nothing else changes
  }
  const std::string symbol("\0_Z4bumpPii\0", 12);  // (a whole name of the symbol table)
  for (const char* declared : {"", "__global__ void bump(int* x, int n);\n"}) {
    Built b = build(std::string(declared) + R"(
__global__ void bump(int* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += i;
}
)",
                    "bump");
    EXPECT_EQ(b.kernel->attributes().threads, "loop");
    EXPECT_EQ(
        std::search(b.result.image.begin(), b.result.image.end(), symbol.begin(), symbol.end()),
        b.result.image.end())
        << declared;
    Buffer<int> x(std::vector<int>{5, 5, 5});
    launch(*b.kernel, {1}, {4}, 0, x.p, 3);
    EXPECT_EQ(x.host(), std::vector<int>({5, 6, 7}));
  }
  // A header the scan does not read declares the kernel: `static` clashes, and the unit is
  // compiled again with its kernels external, still as regions.
  const auto dir =
      std::filesystem::temp_directory_path() / ("kiln_internal_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "declares.cuh") << "__global__ void shift(int* x, int n);\n";
  Built b = build(R"(#include "declares.cuh"
__global__ void shift(int* x, int n) {
  __shared__ int s[4];
  s[threadIdx.x] = threadIdx.x < n ? x[threadIdx.x] : 0;
  __syncthreads();
  if (threadIdx.x < n) x[threadIdx.x] = s[(threadIdx.x + 1) % 4];
}
)",
                  "shift", {"-I" + dir.string()});
  std::filesystem::remove_all(dir);
  EXPECT_EQ(b.kernel->attributes().threads, "regions") << b.kernel->attributes().why;
  Buffer<int> x(std::vector<int>{1, 2, 3, 4});
  launch(*b.kernel, {1}, {4}, 0, x.p, 4);
  EXPECT_EQ(x.host(), std::vector<int>({2, 3, 4, 1}));
}

// The plan follows the functions each kernel reaches: a device function that synchronises
// makes fibers of the kernels that can call it (through other functions, a macro, a table),
// not of every kernel beside it. What it cannot follow (a struct's method, a lambda at
// namespace scope, `using namespace cooperative_groups`) still counts for every kernel.
TEST(CpuBackend, PlanFollowsTheFunctionsAKernelReaches) {
  using M = std::vector<kiln_cpu::ThreadMode>;
  constexpr auto loop = kiln_cpu::mode_loop, fibers = kiln_cpu::mode_fibers,
                 coroutines = kiln_cpu::mode_coroutines;
  auto modes = [](const std::string& source, const std::vector<std::string>& names) {
    M m;
    for (const cpu::ThreadPlan& p : cpu::thread_plans(source, "p.cu", {}, names))
      m.push_back(p.mode);
    return m;
  };
  const std::string helpers = R"(
__device__ float exchange(float* s, float v) { s[threadIdx.x] = v; __syncthreads(); return s[0]; }
namespace util {
template <typename T> __device__ T warp_sum(T v) { return v + __shfl_xor_sync(~0u, v, 1); }
}
__device__ float twice(float* s, float v) { return exchange(s, v) * 2; }
__device__ float scale(float v) { return v * 3; }
__device__ float scale(float* s, float v) { return exchange(s, v); }  // (overloads count as one)
__device__ float cube(float v) { return v * v * v; }
__device__ inline float plain(float v) noexcept { return cube(v) + 1; }
)";
  const std::string kernels = R"(
__global__ void own(float* x) { __shared__ float s[64]; s[threadIdx.x] = plain(x[0]); __syncthreads(); x[0] = s[1]; }
__global__ void none(float* x) { x[0] = plain(x[0]); }
__global__ void nested(float* x) { __shared__ float s[64]; x[0] = twice(s, x[0]); }
__global__ void warp(float* x) { x[0] = util::warp_sum<float>(x[0]); }
__global__ void overload(float* x) { x[0] = scale(x[0]); }
)";
  EXPECT_EQ(modes(helpers + kernels, {"own", "none", "nested", "warp", "overload"}),
            (M{coroutines, loop, fibers, fibers, fibers}));
  // A barrier macro left unexpanded (a quoted #include follows it): the kernel naming it runs
  // as fibers, one naming none as it would.
  EXPECT_EQ(modes("#define SYNC() __syncthreads()\n#include \"other.cuh\"\n"
                  "__global__ void rev(int* p) { __shared__ int s[64]; s[threadIdx.x] = p[0]; "
                  "SYNC(); p[0] = s[1]; }\n__global__ void copy(int* p) { p[1] = p[0]; }\n",
                  {"rev", "copy"}),
            (M{fibers, loop}));
  auto nested = cpu::thread_plans(helpers + kernels, "p.cu", {}, {"nested", "warp", "own"});
  EXPECT_EQ(nested[0].why,
            "its body does not synchronise, but it may call code that does: a barrier outside a "
            "__global__ body, at p.cu:2");
  EXPECT_EQ(nested[1].why,
            "its body does not synchronise, but it may call code that does: warp or group "
            "operation __shfl_xor_sync at p.cu:4");
  EXPECT_EQ(nested[2].no_coroutines, "a barrier outside a __global__ body, at p.cu:2");
  // A macro or a table of functions reaches them from every kernel.
  EXPECT_EQ(modes(helpers + "#define SUM(v) util::warp_sum(v)\n" + kernels, {"none"}), (M{fibers}));
  EXPECT_EQ(modes(helpers + "__device__ float (*table[])(float*, float) = {twice};\n" + kernels,
                  {"none"}),
            (M{fibers}));
  // What is not a function at namespace scope (a struct's method, a lambda) counts for the
  // kernels that name what it declares; the others keep their own plans (CloverLeaf's Reduce
  // struct sent every kernel to fibers, a saxpy 11x slower).
  const std::pair<const char*, const char*> outside_and_user[] = {
      {"struct Pair { __device__ float sum(float v) { return __shfl_xor_sync(~0u, v, 1); } };",
       "__global__ void user(float* x) { Pair p; x[0] = p.sum(x[0]); }\n"},
      {"auto lambda = [] __device__ (float v) { return __shfl_xor_sync(~0u, v, 1); };",
       "__global__ void user(float* x) { x[0] = lambda(x[0]); }\n"}};
  for (const auto& [outside, user] : outside_and_user)
    EXPECT_EQ(modes(std::string(outside) + kernels + user, {"own", "none", "user"}),
              (M{coroutines, loop, fibers}))
        << outside;
  // Cooperative groups named outside count for every kernel.
  for (const char* outside :
       {"#include <cooperative_groups.h>\nusing namespace cooperative_groups;",
        "#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n"
        "using Tile = cg::thread_block_tile<32>;"})
    EXPECT_EQ(modes(std::string(outside) + kernels, {"own", "none"}), (M{fibers, fibers}))
        << outside;
  // Cooperative groups: the #include and an alias declare; the code naming them synchronises.
  const std::string groups = R"(#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = ::cooperative_groups;
__device__ float tile_sum(cg::thread_block_tile<32> t, float v) { return cg::reduce(t, v, cg::plus<float>()); }
__global__ void bar(float* x) { __shared__ float s[64]; s[threadIdx.x] = x[0]; __syncthreads(); x[0] = s[1]; }
__global__ void grid(float* x) { cg::grid_group g = cg::this_grid(); x[0] = 1; cg::sync(g); }
__global__ void free_of_them(float* x) { x[0] = 1; }
)";
  EXPECT_EQ(modes(groups, {"bar", "grid", "free_of_them"}), (M{coroutines, fibers, loop}));
  EXPECT_EQ(cpu::thread_plans(groups, "g.cu", {}, {"grid"})[0].why,
            "warp or group operation cg::grid_group at g.cu:6");
  // (coroutines would build the whole unit as theirs: beside another body or a function that
  // synchronises, bar runs as regions or fibers)
  EXPECT_EQ(cpu::thread_plans(groups, "g.cu", {}, {"bar"})[0].no_coroutines,
            "warp or group operation cg::grid_group at g.cu:6");
  const std::string no_grid = groups.substr(0, groups.find("__global__ void grid"));
  EXPECT_EQ(cpu::thread_plans(no_grid, "g.cu", {}, {"bar"})[0].no_coroutines,
            "warp or group operation cg::thread_block_tile at g.cu:4");
}

TEST(CpuBackend, StreamsEventsAndDevice) {
  auto b = backend();
  EXPECT_EQ(b->name(), "cpu");
  EXPECT_GE(b->device().multiprocessors, 1);
  EXPECT_EQ(b->device().max_threads_per_block, 1024);
  EXPECT_FALSE(b->device().name.empty());
  EXPECT_NE(compiler()->identity("").find("cpu:"), std::string::npos);
  // -march=native code runs on this CPU only: a cache shared with another kind of CPU must miss.
  EXPECT_EQ(b->device().name, cpu::cpu_model_name());
  EXPECT_NE(compiler()->identity("").find(":" + cpu::cpu_model_name() + ":"), std::string::npos);
  // The name (cpuid's brand string on x86; a virtual machine's /proc/cpuinfo may say otherwise)
  // is trimmed, and the same each time: part of every cache key.
  const std::string model = cpu::cpu_model_name();
  EXPECT_EQ(model, cpu::cpu_model_name());
  EXPECT_FALSE(model.starts_with(" ") || model.ends_with(" ") ||
               model.find('\0') != std::string::npos);
  auto s = b->create_stream();
  auto e1 = b->create_event(), e2 = b->create_event();
  e1->record(s.get());
  std::vector<int> h(1000, 5), back(1000);
  void* d = b->alloc(h.size() * sizeof(int));
  b->copy_to_device(d, h.data(), h.size() * sizeof(int), s.get());
  b->memset(d, 0, 8, s.get());
  b->copy_to_host(back.data(), d, h.size() * sizeof(int), s.get());
  s->synchronize();
  e2->record(s.get());
  e2->synchronize();
  b->free(d);
  EXPECT_EQ(back[0], 0);
  EXPECT_EQ(back[1], 0);
  EXPECT_EQ(back[2], 5);
  EXPECT_GE(e2->elapsed_ms_since(*e1), 0.0);
}

}  // namespace
}  // namespace kiln::cpu_test

namespace kiln::cpu_test {
namespace {

// Loop-mode blocks run on a guarded stack too: deep recursion is an error naming the thread, and
// the worker runs kernels afterwards.
TEST(CpuLoop, StackOverflowIsReported) {
  Built b = build(std::string(kDeepRecursion) + R"(
__global__ void k(int* out, int depth) {
  if (threadIdx.x == 5) out[0] = deep(out, depth);
})",
                  "k", {"-O0"});
  ASSERT_EQ(b.kernel->attributes().threads, "loop");
  Buffer<int> out(1, 0);
  try {
    launch(*b.kernel, {1}, {32}, 0, out.p, 10000000);
    FAIL() << "no overflow reported";
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("thread (5,0,0) of block (0,0,0): overflowed its block's 8 MiB stack"),
              std::string::npos)
        << m;
  }
  launch(*b.kernel, {1}, {32}, 0, out.p, 10);  // the worker still runs kernels afterwards
}

}  // namespace
}  // namespace kiln::cpu_test
