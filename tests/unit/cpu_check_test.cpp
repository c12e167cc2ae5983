// Check mode (KILN_CHECK=1): out-of-bounds accesses through kernel pointer parameters and
// kiln::Array elements are errors naming the kernel, block, thread and source line.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cpu_test_util.h"
#include "runtime/error.h"

namespace kiln::cpu_test {
namespace {

// A backend and compiler in check mode, shared by these tests.
const Cpu& checking() {
  static Cpu c = [] {
    CpuBackendOptions o;
    o.check = true;
    return Cpu{make_cpu_backend(o), jit::make_cpu_compiler(compiler_options(true))};
  }();
  return c;
}

struct Checked {
  CompileResult result;
  std::unique_ptr<Module> module;
  std::unique_ptr<Program> kernel;
};

Checked build_checked(const std::string& source, const std::string& name) {
  CompileRequest req;
  req.source = source;
  req.filename = "check_kernel.cu";
  req.name_expressions = {name};
  Checked c;
  c.result = checking().compiler->compile(req);
  c.module = checking().backend->load(c.result);
  c.kernel = c.module->kernel(c.result.lowered_names[0]);
  return c;
}

// The message of the error a launch (with shared bytes of dynamic shared memory) throws, or ""
// when it succeeds.
template <class... A>
std::string launch_error_shared(Program& k, Dim3 grid, Dim3 block, std::size_t shared, A... args) {
  try {
    launch(k, grid, block, shared, args...);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}
template <class... A>
std::string launch_error(Program& k, Dim3 grid, Dim3 block, A... args) {
  return launch_error_shared(k, grid, block, 0, args...);
}

constexpr const char* kCopies = R"(__global__ void offbyone(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= n) out[i] = in[i];
}
__global__ void twice(const float* __restrict__ in, float* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 2 * in[i];
})";

TEST(CpuCheck, OffByOneIsReportedWithKernelBlockThreadAndLine) {
  Checked k = build_checked(kCopies, "offbyone");
  EXPECT_EQ(k.result.signatures[0], "void (*)(float const*, float*, int)");
  const int n = 1000;
  float* in = static_cast<float*>(checking().backend->alloc(n * sizeof(float)));
  float* out = static_cast<float*>(checking().backend->alloc(n * sizeof(float)));
  std::string m =
      launch_error(*k.kernel, {8, 1, 1}, {128, 1, 1}, static_cast<const float*>(in), out, n);
  // Only i == 1000 is out of range: block 7, thread 104.
  EXPECT_NE(m.find("kernel 'offbyone'"), std::string::npos) << m;
  EXPECT_NE(m.find("thread (104,0,0) of block (7,0,0)"), std::string::npos) << m;
  EXPECT_NE(m.find("element 1000 of a device array of 1000"), std::string::npos) << m;
  EXPECT_NE(m.find("check_kernel.cu:3"), std::string::npos) << m;
  checking().backend->free(in);
  checking().backend->free(out);
}

// A kernel with barriers (run as coroutines) reports its bad access the same way.
TEST(CpuCheck, OutOfBoundsAfterABarrierIsReported) {
  Checked k = build_checked(R"(__global__ void shift(const int* in, int* out, int n) {
  __shared__ int s[32];
  int t = threadIdx.x;
  s[t] = in[t];
  __syncthreads();
  out[t + 1] = s[t];
})",
                            "shift");
  EXPECT_EQ(k.kernel->attributes().threads, "coroutines");
  int* in = static_cast<int*>(checking().backend->alloc(32 * sizeof(int)));
  int* out = static_cast<int*>(checking().backend->alloc(32 * sizeof(int)));
  std::string m =
      launch_error(*k.kernel, {1, 1, 1}, {32, 1, 1}, static_cast<const int*>(in), out, 32);
  EXPECT_NE(m.find("kernel 'shift'"), std::string::npos) << m;
  EXPECT_NE(m.find("thread (31,0,0) of block (0,0,0)"), std::string::npos) << m;
  EXPECT_NE(m.find("check_kernel.cu:6"), std::string::npos) << m;
  checking().backend->free(in);
  checking().backend->free(out);
}

// A pointer one past an allocation's end (end = base + n, as loops over [begin, end) pass it)
// still belongs to that allocation: reading end[0] is reported, not let through unchecked.
TEST(CpuCheck, ReadThroughAnEndPointerIsReported) {
  Checked k = build_checked(R"(__global__ void before_end(const float* end, float* out) {
  int t = threadIdx.x;
  out[t] = end[t - 4];
})",
                            "before_end");
  float* in = static_cast<float*>(checking().backend->alloc(4 * sizeof(float)));
  float* out = static_cast<float*>(checking().backend->alloc(5 * sizeof(float)));
  std::string m =
      launch_error(*k.kernel, {1, 1, 1}, {5, 1, 1}, static_cast<const float*>(in + 4), out);
  EXPECT_NE(m.find("thread (4,0,0) of block (0,0,0)"), std::string::npos) << m;
  EXPECT_NE(m.find("of a device array of 4"), std::string::npos) << m;
  checking().backend->free(in);
  checking().backend->free(out);
}

// The same for a write: one past the end is outside, whichever way the pointer was formed.
TEST(CpuCheck, WriteThroughAnEndPointerIsReported) {
  Checked k =
      build_checked(R"(__global__ void at_end(int* end) { end[threadIdx.x] = 1; })", "at_end");
  int* buffer = static_cast<int*>(checking().backend->alloc(16 * sizeof(int)));
  std::string m = launch_error(*k.kernel, {1, 1, 1}, {1, 1, 1}, buffer + 16);
  EXPECT_NE(m.find("kernel 'at_end'"), std::string::npos) << m;
  EXPECT_NE(m.find("of a device array of 16"), std::string::npos) << m;
  checking().backend->free(buffer);
}

// A volatile flag parameter and C-style casts of parameters to other pointer types (atomicCAS
// on the flag, atomicAdd through `(unsigned*)`) keep the kernel's checks: they lost them all,
// the build falling back to unchecked pointers without a word.
TEST(CpuCheck, VolatileParametersAndPointerCastsKeepTheChecks) {
  Checked k = build_checked(R"(__global__ void flagged(volatile int* found, int* count, int* out) {
  if (threadIdx.x == 0) atomicCAS((int*)found, 0, 1);
  atomicAdd((unsigned*)count, 1u);
  out[threadIdx.x + 1] = *found;
})",
                            "flagged");
  int* found = static_cast<int*>(checking().backend->alloc(sizeof(int)));
  int* count = static_cast<int*>(checking().backend->alloc(sizeof(int)));
  int* out = static_cast<int*>(checking().backend->alloc(8 * sizeof(int)));
  std::string m = launch_error(*k.kernel, {1, 1, 1}, {8, 1, 1}, found, count, out);
  EXPECT_NE(m.find("thread (7,0,0) of block (0,0,0): out-of-bounds access: element 8 of a device "
                   "array of 8"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("check_kernel.cu:4"), std::string::npos) << m;
  EXPECT_EQ(k.kernel->attributes().why, "no barrier or warp operation");
  checking().backend->free(found);
  checking().backend->free(count);
  checking().backend->free(out);
}

// A kernel whose checked pointers do not compile (one passed to a device function template
// deducing T from T*) builds without them, and its reason says so; a fault there says that
// check mode missed the access, not to run check mode.
TEST(CpuCheck, ABuildWithoutChecksSaysSo) {
  Checked k =
      build_checked(R"(template <class T> __device__ T at(const T* p, int i) { return p[i]; }
__global__ void k(const float* in, float* out, long long far) {
  out[threadIdx.x + far] = at(in, threadIdx.x);
})",
                    "k");
  EXPECT_NE(k.kernel->attributes().why.find("(check mode: no bounds checks in this build, whose "
                                            "checked pointers did not compile: "),
            std::string::npos)
      << k.kernel->attributes().why;
  float* in = static_cast<float*>(checking().backend->alloc(4 * sizeof(float)));
  float* out = static_cast<float*>(checking().backend->alloc(4 * sizeof(float)));
  const std::string m =
      launch_error(*k.kernel, {1, 1, 1}, {4, 1, 1}, static_cast<const float*>(in), out, 1LL << 40);
  EXPECT_NE(m.find("invalid memory access"), std::string::npos) << m;
  EXPECT_NE(m.find("a build without checks: k:info().why says"), std::string::npos) << m;
  EXPECT_EQ(m.find("`kiln --check`"), std::string::npos) << m;
  checking().backend->free(in);
  checking().backend->free(out);
}

TEST(CpuCheck, CorrectKernelIsUnaffected) {
  Checked k = build_checked(kCopies, "twice");
  EXPECT_EQ(k.result.signatures[0], "void (*)(float const*, float*, int)");
  const int n = 1000;
  float* in = static_cast<float*>(checking().backend->alloc(n * sizeof(float)));
  float* out = static_cast<float*>(checking().backend->alloc(n * sizeof(float)));
  for (int i = 0; i < n; ++i) in[i] = float(i);
  EXPECT_EQ(launch_error(*k.kernel, {8, 1, 1}, {128, 1, 1}, static_cast<const float*>(in), out, n),
            "");
  for (int i = 0; i < n; ++i) ASSERT_EQ(out[i], 2.0f * float(i)) << i;
  checking().backend->free(in);
  checking().backend->free(out);
}

TEST(CpuCheck, ArrayOutOfRangeIsReported) {
  Checked k = build_checked(R"(#include <kiln.cuh>
__global__ void fill(kiln::Array<float, 1> a) {
  __syncthreads();
  a[threadIdx.x] = 1.0f;
})",
                            "fill");
  struct {
    float* data;
    long long shape[1];
  } a{static_cast<float*>(checking().backend->alloc(32 * sizeof(float))), {32}};
  std::string m = launch_error(*k.kernel, {1, 1, 1}, {64, 1, 1}, a);
  EXPECT_NE(m.find("kernel 'fill'"), std::string::npos) << m;
  EXPECT_NE(m.find("of block (0,0,0)"), std::string::npos) << m;
  EXPECT_NE(m.find("of dimension 0 of a kiln::Array whose extent there is 32"), std::string::npos)
      << m;
  EXPECT_NE(m.find("check_kernel.cu:4"), std::string::npos) << m;
  checking().backend->free(a.data);
}

TEST(CpuCheck, CheckModeIsPartOfTheCompilerIdentity) {
  EXPECT_NE(checking().compiler->identity(""), compiler()->identity(""));
  EXPECT_NE(checking().compiler->identity("").find("-DKILN_CHECK=1"), std::string::npos);
}

// A barrier that some threads of a block return without reaching is reported, naming the
// kernel, the block, a thread that returned and one at the barrier, whichever way the threads
// run (coroutines for barriers alone, fibers with warp operations); uniform barriers are not.
TEST(CpuCheck, BarrierDivergenceIsReported) {
  const char* src = R"(
__global__ void few_wait(int* x) { if (threadIdx.x < 3) __syncthreads(); x[threadIdx.x] = 1; }
__global__ void few_leave(int* x) { if (threadIdx.x >= 40) return; __syncthreads(); x[threadIdx.x] = 1; }
__global__ void with_shuffle(int* x) {
  x[threadIdx.x] = __shfl_sync(0xffffffffu, (int)threadIdx.x, 0);
  if (threadIdx.x < 3) __syncthreads();
}
__global__ void uniform(int* x) { __syncthreads(); x[threadIdx.x] = 1; __syncthreads(); })";
  int* x = static_cast<int*>(checking().backend->alloc(64 * sizeof(int)));
  struct Case {
    const char* name;
    const char* returned;
    const char* waiting;
  };
  for (const Case& c : {Case{"few_wait", "thread (3,0,0)", "thread (0,0,0)"},
                        Case{"few_leave", "thread (40,0,0)", "thread (0,0,0)"},
                        Case{"with_shuffle", "", "thread (0,0,0)"}}) {
    Checked k = build_checked(src, c.name);
    std::string m = launch_error(*k.kernel, {1, 1, 1}, {64, 1, 1}, x);  // one block: one report
    EXPECT_NE(m.find(std::string("kernel '") + c.name + "': barrier divergence in block (0,0,0)"),
              std::string::npos)
        << m;
    EXPECT_NE(m.find(std::string(c.returned) + " returned without reaching"), std::string::npos) << m;
    EXPECT_NE(m.find(std::string("that ") + c.waiting + " reached"), std::string::npos) << m;
  }
  Checked ok = build_checked(src, "uniform");
  EXPECT_EQ(launch_error(*ok.kernel, {2, 1, 1}, {64, 1, 1}, x), "");
  checking().backend->free(x);
}

// A shuffle that reads a lane not taking part (outside the mask given, or returned) has an
// undefined value on a GPU (the CUDA samples' reduce7 does it: NVIDIA/cuda-samples#398): check
// mode reports it with the reading thread, the lane and the line. Reads inside the mask, and
// sources past a segment's edge (the caller's own value, as CUDA defines it), are fine.
TEST(CpuCheck, ShuffleFromALaneNotTakingPartIsReported) {
  const char* src = R"(
__device__ float warp_sum(unsigned mask, float v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(mask, v, offset);
  return v;
}
__global__ void eight_of_32(float* x) {
  if (threadIdx.x < 8) x[threadIdx.x] = warp_sum(0xffu, x[threadIdx.x]);
}
__global__ void after_return(float* x, int n) {
  if (threadIdx.x >= n) return;
  x[threadIdx.x] = warp_sum(0xffffffffu, x[threadIdx.x]);
}
__global__ void halves(float* x) {
  const unsigned half = threadIdx.x < 16 ? 0xffffu : 0xffff0000u;
  float v = x[threadIdx.x];
  for (int offset = 8; offset > 0; offset /= 2) v += __shfl_down_sync(half, v, offset, 16);
  x[threadIdx.x] = __shfl_up_sync(0xffffffffu, v, 1);
})";
  float* x = static_cast<float*>(checking().backend->alloc(32 * sizeof(float)));
  Checked eight = build_checked(src, "eight_of_32");
  std::string m = launch_error(*eight.kernel, {1, 1, 1}, {32, 1, 1}, x);
  EXPECT_NE(m.find("kernel 'eight_of_32'"), std::string::npos) << m;
  EXPECT_NE(m.find("__shfl_down_sync reads lane "), std::string::npos) << m;
  EXPECT_NE(m.find("not taking part (the lanes taking part: 0x000000ff"), std::string::npos) << m;
  EXPECT_NE(m.find("check_kernel.cu:3"), std::string::npos) << m;
  Checked returned = build_checked(src, "after_return");
  m = launch_error(*returned.kernel, {1, 1, 1}, {32, 1, 1}, x, 20);
  EXPECT_NE(m.find("not taking part (the lanes taking part: 0x000fffff"), std::string::npos) << m;
  EXPECT_EQ(launch_error(*returned.kernel, {1, 1, 1}, {32, 1, 1}, x, 32), "");
  Checked fine = build_checked(src, "halves");
  EXPECT_EQ(launch_error(*fine.kernel, {1, 1, 1}, {32, 1, 1}, x), "");
  checking().backend->free(x);
}

// Dynamic shared memory is checked against the bytes the launch gave: a read of it when the
// launch gave none, a write past them, both named with kernel and line; within them, indexing
// and a C-style cast of the array work.
TEST(CpuCheck, DynamicSharedMemoryIsBoundedByTheLaunch) {
  Checked k = build_checked(R"(
extern __shared__ float scratch[];
__global__ void stage(float* out, int n) {
  scratch[threadIdx.x] = threadIdx.x;
  if (threadIdx.x == 0) scratch[n] = 100;
  __syncthreads();
  float* all = (float*)scratch;
  out[threadIdx.x] = all[n - 1 - threadIdx.x] + scratch[n];
})",
                            "stage");
  float* out = static_cast<float*>(checking().backend->alloc(64 * sizeof(float)));
  // No dynamic shared memory at all: the first write is out of bounds.
  std::string m = launch_error(*k.kernel, {1, 1, 1}, {32, 1, 1}, out, 32);
  EXPECT_NE(m.find("kernel 'stage'"), std::string::npos) << m;
  EXPECT_NE(m.find("element 0 of the dynamic shared memory, of which the launch gave 0 element(s)"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("check_kernel.cu:4"), std::string::npos) << m;
  // 32 floats given: scratch[32] is one past them (line 5).
  m = launch_error_shared(*k.kernel, {1, 1, 1}, {32, 1, 1}, 32 * sizeof(float), out, 32);
  EXPECT_NE(m.find("element 32 of the dynamic shared memory, of which the launch gave 32"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("check_kernel.cu:5"), std::string::npos) << m;
  // 33 floats: in bounds, and the answer.
  EXPECT_EQ(launch_error_shared(*k.kernel, {1, 1, 1}, {32, 1, 1}, 33 * sizeof(float), out, 32), "");
  std::vector<float> host(32);
  checking().backend->copy_to_host(host.data(), out, 32 * sizeof(float), nullptr);
  for (int t = 0; t < 32; ++t) EXPECT_EQ(host[t], float(31 - t) + 100) << t;
  checking().backend->free(out);
}

// Kernels that read through __ldg, take a void* or hand a pointer to inline PTX keep their
// checks (each made the checked build fail, so the kernel ran with none).
TEST(CpuCheck, LoadHintsVoidPointersAndPtxOperandsKeepTheChecks) {
  Checked k = build_checked(R"(
__global__ void hinted(const float* in, float* out, void* scratch, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned long long address;
  asm("mov.u64 %0, %1;" : "=l"(address) : "l"(in));
  if (i <= n) out[i] = __ldg(in + i) + (scratch != nullptr) + (address != 0);
})",
                            "hinted");
  EXPECT_EQ(k.kernel->attributes().why.find("no bounds checks"), std::string::npos)
      << k.kernel->attributes().why;
  float* in = static_cast<float*>(checking().backend->alloc(64 * sizeof(float)));
  float* out = static_cast<float*>(checking().backend->alloc(64 * sizeof(float)));
  const std::string m = launch_error(*k.kernel, {1, 1, 1}, {65, 1, 1}, in, out, (void*)in, 64);
  EXPECT_NE(m.find("element 64 of a device array of 64 element(s)"), std::string::npos) << m;
  EXPECT_NE(m.find("check_kernel.cu:6"), std::string::npos) << m;
  checking().backend->free(in);
  checking().backend->free(out);
}

// A static __shared__ array's subscripts are checked against its extents (each of a 2-d
// tile's), naming the line, where the write past it once landed in the host's memory; the
// same kernel in bounds gives its answer, through the array's decay to a pointer too.
TEST(CpuCheck, StaticSharedArraysAreBoundedByTheirExtents) {
  Checked k = build_checked(R"(#define TILE 4
__global__ void transpose(float* out, int rows) {
  __shared__ float tile[TILE][TILE + 1], flat[2 * TILE];
  tile[threadIdx.y][threadIdx.x] = threadIdx.y * TILE + threadIdx.x;
  if (threadIdx.x == 0) flat[threadIdx.y] = tile[threadIdx.y][0];
  if (rows > TILE) tile[rows][0] = 1;
  __syncthreads();
  float* f = flat;
  out[threadIdx.y * TILE + threadIdx.x] = tile[threadIdx.x][threadIdx.y] + f[threadIdx.x] * 100;
})",
                            "transpose");
  float* out = static_cast<float*>(checking().backend->alloc(64 * sizeof(float)));
  EXPECT_EQ(launch_error(*k.kernel, {1, 1, 1}, {4, 4, 1}, out, 4), "");
  std::vector<float> host(16);
  checking().backend->copy_to_host(host.data(), out, 16 * sizeof(float), nullptr);
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 4; ++x)
      EXPECT_EQ(host[y * 4 + x], float(x * 4 + y) + 100 * (x * 4)) << y << x;
  std::string m = launch_error(*k.kernel, {1, 1, 1}, {4, 4, 1}, out, 6);
  EXPECT_NE(m.find("index 6 of a __shared__ array's dimension of 4 element(s)"), std::string::npos)
      << m;
  EXPECT_NE(m.find("check_kernel.cu:6"), std::string::npos) << m;
  m = launch_error(*k.kernel, {1, 1, 1}, {5, 4, 1}, out, 4);       // a fifth column of a 5-wide row
  EXPECT_NE(m.find("check_kernel.cu:9"), std::string::npos) << m;  // tile[4][y]: row 4 of 4
  checking().backend->free(out);
}

// An array that decays (`auto p = s;`) is no checked array, whose copy would be written: the
// build takes plain arrays, and gives the kernel's answer.
TEST(CpuCheck, ADecayingSharedArrayStaysAnArray) {
  Checked k = build_checked(R"(
__global__ void through(float* out) {
  __shared__ float s[64];
  auto p = s;
  p[threadIdx.x] = 2.0f * threadIdx.x;
  __syncthreads();
  out[threadIdx.x] = s[63 - threadIdx.x];
})",
                            "through");
  EXPECT_NE(k.kernel->attributes().why.find("__shared__ arrays unchecked"), std::string::npos)
      << k.kernel->attributes().why;
  float* out = static_cast<float*>(checking().backend->alloc(64 * sizeof(float)));
  EXPECT_EQ(launch_error(*k.kernel, {1, 1, 1}, {64, 1, 1}, out), "");
  std::vector<float> host(64);
  checking().backend->copy_to_host(host.data(), out, 64 * sizeof(float), nullptr);
  for (int t = 0; t < 64; ++t) EXPECT_EQ(host[t], 2.0f * (63 - t)) << t;
  checking().backend->free(out);
}

// `&a[N]`, an end pointer, is no access: a checked build takes it for a shared array, a
// pointer parameter and dynamic shared memory alike, and reports an address past it. An
// atomic's `&a[i]` is its access (it takes a raw pointer): i < N there.
TEST(CpuCheck, EndPointersAreAddressesNotAccesses) {
  Checked k = build_checked(R"(#define N 8
__device__ float sum(const float* b, const float* e) { float t = 0; while (b != e) t += *b++; return t; }
__global__ void ends(const float* in, float* out, int* hist, int n, int which, int at) {
  __shared__ float s[N];
  extern __shared__ float d[];
  s[threadIdx.x] = in[threadIdx.x];
  d[threadIdx.x] = 2 * in[threadIdx.x];
  __syncthreads();
  if (threadIdx.x == 0) {
    out[0] = sum(&s[0], &s[N]) + sum(&d[0], &d[N]) + sum(&in[0], &in[n]);
    if (which == 1) atomicAdd(&hist[at], 1);
    if (which == 2) out[1] = *(&s[at] - 1);
    if (which == 3) out[1] = *(&in[at] - 1);
    if (which == 4) out[1] = *(&d[at] - 1);
  }
})",
                            "ends");
  float* in = static_cast<float*>(checking().backend->alloc(8 * sizeof(float)));
  float* out = static_cast<float*>(checking().backend->alloc(2 * sizeof(float)));
  int* hist = static_cast<int*>(checking().backend->alloc(8 * sizeof(int)));
  std::vector<float> host_in(8);
  for (int i = 0; i < 8; ++i) host_in[i] = float(i + 1);  // sum 36
  checking().backend->copy_to_device(in, host_in.data(), 8 * sizeof(float), nullptr);
  const std::size_t dyn = 8 * sizeof(float);
  auto run = [&](int which, int at) {
    return launch_error_shared(*k.kernel, {1, 1, 1}, {8, 1, 1}, dyn, in, out, hist, 8, which, at);
  };
  EXPECT_EQ(run(0, 0), "");
  float result = 0;
  checking().backend->copy_to_host(&result, out, sizeof result, nullptr);
  EXPECT_EQ(result, 36.0f * 4);
  for (int which = 2; which <= 4; ++which) EXPECT_EQ(run(which, 8), "") << which;  // end pointers
  const struct {
    int which, at, line;
    const char* message;
  } reports[] = {{1, 8, 11, "element 8 of a device array of 8 element(s)"},
                 {2, 9, 12, "index 9 of a __shared__ array's dimension of 8"},
                 {3, 9, 13, "element 9 of a device array of 8 element(s)"},
                 {4, 9, 14, "element 9 of the dynamic shared memory"}};
  for (const auto& r : reports) {
    const std::string m = run(r.which, r.at);
    EXPECT_NE(m.find(r.message), std::string::npos) << r.which << ": " << m;
    EXPECT_NE(m.find("check_kernel.cu:" + std::to_string(r.line)), std::string::npos) << m;
  }
  checking().backend->free(in);
  checking().backend->free(out);
  checking().backend->free(hist);
}

// A pointer parameter of a built-in type of several words (`unsigned int*`) is checked as
// `int*` is: an off-by-one histogram bin is reported at its atomic.
TEST(CpuCheck, SeveralWordTypesAreCheckedToo) {
  Checked k = build_checked(R"(__global__ void bins(const int* b, int n, unsigned int* hist) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&hist[b[i]], 1u);
})",
                            "bins");
  int* b = static_cast<int*>(checking().backend->alloc(4 * sizeof(int)));
  unsigned* hist = static_cast<unsigned*>(checking().backend->alloc(16 * sizeof(unsigned)));
  const std::vector<int> host_b{0, 1, 2, 16};
  checking().backend->copy_to_device(b, host_b.data(), 4 * sizeof(int), nullptr);
  EXPECT_EQ(launch_error(*k.kernel, {1, 1, 1}, {32, 1, 1}, b, 3, hist), "");
  const std::string m = launch_error(*k.kernel, {1, 1, 1}, {32, 1, 1}, b, 4, hist);
  EXPECT_NE(m.find("element 16 of a device array of 16 element(s)"), std::string::npos) << m;
  EXPECT_NE(m.find("check_kernel.cu:3"), std::string::npos) << m;
  checking().backend->free(b);
  checking().backend->free(hist);
}

}  // namespace
}  // namespace kiln::cpu_test
