// The cuda backend's host code against the driver test double (tests/driver/double/): memory,
// the pool, copies, argument packing, launch checks, streams, events, pinned memory, globals,
// error mapping and recovery after a sticky fault. The double checks every call against the
// Driver API's rules and these tests require that it saw no broken rule. This proves kiln's
// host side only; what a GPU does is for tests/gpu.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstring>

#include "jit/cuda/nvrtc.h"
#include "jit/headers.h"
#include "runtime/cuda/backend.h"
#include "runtime/error.h"

namespace kiln::cuda {
namespace {

// The double's control functions, reached through the handle kiln's own dlopen also returns.
struct Control {
  void (*reset)();
  void (*fail)(const char*, int, int);
  void (*set_memory)(std::size_t);
  void (*set_pools)(int);
  const char* (*log)();
  const char* (*violations)();
  std::size_t (*live_bytes)();
  int (*live_handles)();
  const unsigned char* (*last_params)(std::size_t*);
};

Control& control() {
  static Control c = [] {
    void* h = dlopen(KILN_DRIVER_DOUBLE, RTLD_NOW | RTLD_LOCAL);
    if (!h) throw Error(std::string("cannot load the driver double: ") + dlerror());
    auto get = [&](const char* name) {
      void* f = dlsym(h, name);
      if (!f) throw Error(std::string("the driver double lacks ") + name);
      return f;
    };
    return Control{reinterpret_cast<void (*)()>(get("kiln_double_reset")),
                    reinterpret_cast<void (*)(const char*, int, int)>(get("kiln_double_fail")),
                    reinterpret_cast<void (*)(std::size_t)>(get("kiln_double_set_memory")),
                    reinterpret_cast<void (*)(int)>(get("kiln_double_set_pools")),
                    reinterpret_cast<const char* (*)()>(get("kiln_double_log")),
                    reinterpret_cast<const char* (*)()>(get("kiln_double_violations")),
                    reinterpret_cast<std::size_t (*)()>(get("kiln_double_live_bytes")),
                    reinterpret_cast<int (*)()>(get("kiln_double_live_handles")),
                    reinterpret_cast<const unsigned char* (*)(std::size_t*)>(get("kiln_double_last_params"))};
  }();
  return c;
}

// A cubin for sm_80 (the double's device) from NVRTC; nullopt where NVRTC cannot load.
std::optional<CompileResult> cubin(const std::string& source, const std::vector<std::string>& names) {
  std::string why;
  static std::shared_ptr<jit::Nvrtc> nvrtc = jit::Nvrtc::load(&why);
  if (!nvrtc) return std::nullopt;
  jit::CompileRequest r;
  r.source = source;
  r.filename = "double_test.cu";
  r.name_expressions = names;
  r.arch = "sm_80";
  return nvrtc->compile(r, jit::builtin_headers(KILN_KERNELS_DIR));
}

class DriverDouble : public ::testing::Test {
 protected:
  void SetUp() override { control().reset(); }
  void TearDown() override {
    backend_.reset();
    // Whatever a test did, the backend gave everything back and broke no rule.
    EXPECT_STREQ(control().violations(), "") << control().log();
    EXPECT_EQ(control().live_bytes(), 0u);
    EXPECT_EQ(control().live_handles(), 0);
  }
  CudaBackend& open() {
    std::string why;
    std::shared_ptr<Driver> driver = Driver::load(&why, KILN_DRIVER_DOUBLE);
    if (!driver) throw Error("Driver::load(double): " + why);
    backend_ = std::make_shared<CudaBackend>(driver, 0);
    return *backend_;
  }
  static std::string log() { return control().log(); }
  static int count(const std::string& call) {
    std::string text = log();
    int n = 0;
    for (std::size_t at = text.find(call + " "); at != std::string::npos; at = text.find(call + " ", at + 1))
      if (at == 0 || text[at - 1] == '\n') ++n;
    return n;
  }
  std::shared_ptr<CudaBackend> backend_;
};

#define NEED_CUBIN(var, ...)                                  \
  std::optional<CompileResult> var = cubin(__VA_ARGS__);      \
  if (!var) GTEST_SKIP() << "NVRTC is not loadable here"

const char* kPack = R"(
extern "C" __global__ void pack(float* a, int n, double s, char c) { if (n) a[0] = s + c; }
extern "C" __global__ void sync_grid(int* x) { x[0] = 1; }
__device__ int table[4];
)";

TEST_F(DriverDouble, OpensTheDeviceAndGivesEverythingBack) {
  CudaBackend& b = open();
  EXPECT_EQ(b.device().name, "kiln driver double");
  EXPECT_EQ(b.device().cc_major, 8);
  EXPECT_EQ(b.device().multiprocessors, 108);
  EXPECT_EQ(b.driver_version(), 13000);
  EXPECT_FALSE(b.uses_memory_pool());
  backend_.reset();
  EXPECT_EQ(count("cuDevicePrimaryCtxRetain"), 1);
  EXPECT_NE(log().find("cuDevicePrimaryCtxRelease"), std::string::npos);
}

TEST_F(DriverDouble, CopiesRoundTripThroughDeviceMemory) {
  CudaBackend& b = open();
  std::vector<int> in(1000), out(1000, -1);
  for (int i = 0; i < 1000; ++i) in[i] = i * 7 - 3;
  void* d1 = b.alloc(4000);
  void* d2 = b.alloc(4000);
  b.copy_to_device(d1, in.data(), 4000, nullptr);
  b.copy_on_device(d2, d1, 4000, nullptr);
  b.memset(d2, 0, 40, nullptr);  // the first ten ints
  b.copy_to_host(out.data(), d2, 4000, nullptr);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(out[i], i < 10 ? 0 : in[i]) << i;
  EXPECT_EQ(control().live_bytes(), 8000u);
  b.free(d1);
  b.free(d2);
  b.free(d2);  // a second free is kiln's to ignore, never the driver's to see
  EXPECT_EQ(count("cuMemFree"), 2);
}

TEST_F(DriverDouble, UsesTheMemoryPoolWhereTheDeviceHasOne) {
  control().set_pools(1);
  CudaBackend& b = open();
  EXPECT_TRUE(b.uses_memory_pool());
  void* p = b.alloc(1 << 20);
  b.free(p);
  EXPECT_EQ(count("cuMemAllocAsync"), 1);
  EXPECT_EQ(count("cuMemFreeAsync"), 1);
  EXPECT_EQ(count("cuMemAlloc"), 0);
}

// memory_info (cuda.memory_info()): the device's free and total memory, and the pool's figures
// where there is one (0 without).
TEST_F(DriverDouble, MemoryInfoCountsWhatArraysHold) {
  for (int pools : {0, 1}) {
    backend_.reset();
    control().reset();
    control().set_pools(pools);
    control().set_memory(64 << 20);
    CudaBackend& b = open();
    const MemoryInfo before = b.memory_info();
    EXPECT_EQ(before.total, 64u << 20);
    void* p = b.alloc(3 << 20);
    const MemoryInfo during = b.memory_info();
    EXPECT_EQ(before.free - during.free, 3u << 20) << pools;
    EXPECT_EQ(during.pool_used - before.pool_used, pools ? 3u << 20 : 0u) << pools;
    EXPECT_EQ(during.pool_reserved, pools ? during.pool_used : 0u) << pools;
    b.free(p);
    EXPECT_EQ(b.memory_info().free, before.free) << pools;
    EXPECT_EQ(count("cuMemPoolGetAttribute"), pools ? 6 : 0) << pools;
  }
}

TEST_F(DriverDouble, OutOfMemoryTrimsThePoolRetriesThenNamesBytesAndFreeMemory) {
  control().set_pools(1);
  CudaBackend& b = open();
  control().fail("cuMemAllocAsync", CUDA_ERROR_OUT_OF_MEMORY, 0);
  void* p = b.alloc(4096);  // the retry after trimming succeeds
  EXPECT_EQ(count("cuMemPoolTrimTo"), 1);
  b.free(p);
  control().set_memory(1 << 20);
  try {
    b.alloc(3 << 20);
    FAIL() << "3 MiB fit in 1 MiB";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("out of device memory"), std::string::npos) << m;
    EXPECT_NE(m.find("3145728 bytes"), std::string::npos) << m;
    EXPECT_NE(m.find("kiln driver double"), std::string::npos) << m;
  }
}

TEST_F(DriverDouble, LaunchPacksEachArgumentWhereTheCubinsTableSays) {
  NEED_CUBIN(image, kPack, {"pack"});
  CudaBackend& b = open();
  std::unique_ptr<Module> m = b.load(*image);
  std::unique_ptr<Program> k = m->kernel("pack");
  void* a = b.alloc(64);
  int n = 42;
  double s = -2.5;
  char c = 'x';
  void* args[] = {&a, &n, &s, &c};
  LaunchConfig config;
  config.grid = {3, 2, 1}, config.block = {128, 1, 1};
  k->launch(config, args);
  std::size_t size = 0;
  const unsigned char* p = control().last_params(&size);
  ASSERT_EQ(size, 25u);  // float* at 0, int at 8, double at 16, char at 24
  void* a_seen;
  int n_seen;
  double s_seen;
  std::memcpy(&a_seen, p, 8), std::memcpy(&n_seen, p + 8, 4), std::memcpy(&s_seen, p + 16, 8);
  EXPECT_EQ(a_seen, a);
  EXPECT_EQ(n_seen, 42);
  EXPECT_EQ(s_seen, -2.5);
  EXPECT_EQ(p[24], 'x');
  EXPECT_NE(log().find("cuLaunchKernel 3x2x1 128x1x1 0"), std::string::npos) << log();
  EXPECT_EQ(k->attributes().max_threads_per_block, 1024);
  b.free(a);
}

TEST_F(DriverDouble, ImpossibleLaunchesAreRefusedBeforeTheDriver) {
  NEED_CUBIN(image, kPack, {"pack"});
  CudaBackend& b = open();
  std::unique_ptr<Program> k = b.load(*image)->kernel("pack");
  void* a = nullptr;
  int n = 0;
  double s = 0;
  char c = 0;
  void* args[] = {&a, &n, &s, &c};
  LaunchConfig too_big;
  too_big.block = {2048, 1, 1};
  EXPECT_THROW(k->launch(too_big, args), Error);
  LaunchConfig too_much_shared;
  too_much_shared.shared_bytes = 200 * 1024;
  EXPECT_THROW(k->launch(too_much_shared, args), Error);
  EXPECT_EQ(count("cuLaunchKernel"), 0);
  // 64 KiB of dynamic shared memory needs the opt-in first, which kiln asks for once.
  LaunchConfig opt_in;
  opt_in.shared_bytes = 64 * 1024;
  k->launch(opt_in, args);
  k->launch(opt_in, args);
  EXPECT_EQ(count("cuFuncSetAttribute"), 1);
  EXPECT_LT(log().find("cuFuncSetAttribute"), log().find("cuLaunchKernel"));
}

TEST_F(DriverDouble, AStickyFaultBreaksTheContextUntilReset) {
  NEED_CUBIN(image, kPack, {"pack"});
  CudaBackend& b = open();
  std::unique_ptr<Program> k = b.load(*image)->kernel("pack");
  void* old = b.alloc(256);
  int n = 1;
  double s = 1;
  char c = 1;
  void* args[] = {&old, &n, &s, &c};
  control().fail("cuLaunchKernel", CUDA_ERROR_ILLEGAL_ADDRESS, 0);
  LaunchConfig config;
  try {
    k->launch(config, args);
    FAIL() << "the fault was not reported";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("CUDA_ERROR_ILLEGAL_ADDRESS"), std::string::npos) << m;
    EXPECT_NE(m.find("pack"), std::string::npos) << m;
    EXPECT_NE(m.find("cuda.reset()"), std::string::npos) << m;
  }
  EXPECT_TRUE(b.broken());
  EXPECT_THROW(b.alloc(16), Error);  // refused by kiln before the driver
  const std::uint64_t generation = b.generation();
  b.reset();
  EXPECT_FALSE(b.broken());
  EXPECT_EQ(b.generation(), generation + 1);
  b.free(old);  // from before the reset: kiln must not hand it to the new context
  void* fresh = b.alloc(256);
  void* args2[] = {&fresh, &n, &s, &c};
  k->launch(config, args2);  // the module is loaded again into the new context
  EXPECT_EQ(count("cuModuleLoadDataEx"), 2);
  b.free(fresh);
}

TEST_F(DriverDouble, StreamsAndEventsLiveAsLongAsTheirObjects) {
  CudaBackend& b = open();
  {
    std::unique_ptr<Stream> stream = b.create_stream();
    std::unique_ptr<Event> start = b.create_event(), stop = b.create_event();
    std::vector<char> host(512, 'k'), back(512);
    void* d = b.alloc(512);
    start->record(stream.get());
    b.copy_to_device(d, host.data(), 512, stream.get());
    b.copy_to_host(back.data(), d, 512, stream.get());
    stop->record(stream.get());
    stream->synchronize();
    stop->synchronize();
    EXPECT_EQ(back, host);
    EXPECT_DOUBLE_EQ(stop->elapsed_ms_since(*start), 0.25);  // the double's clock
    EXPECT_TRUE(stop->query());
    stop->wait(nullptr);  // (Numba's event.wait(stream): the default stream waits for it)
    stop->wait(stream.get());
    EXPECT_EQ(count("cuEventQuery"), 1);
    EXPECT_EQ(count("cuStreamWaitEvent"), 2);
    EXPECT_EQ(control().live_handles(), 3);
    b.free(d);
  }
  EXPECT_EQ(count("cuStreamDestroy"), 1);
  EXPECT_EQ(count("cuEventDestroy"), 2);
}

TEST_F(DriverDouble, PinnedMemoryIsRegisteredAndUnregistered) {
  CudaBackend& b = open();
  void* p = b.pinned_alloc(10000);
  std::memset(p, 1, 10000);  // the memory is the host's own
  EXPECT_EQ(control().live_handles(), 1);
  b.pinned_free(p);
  EXPECT_EQ(count("cuMemHostRegister"), 1);
  EXPECT_EQ(count("cuMemHostUnregister"), 1);
}

TEST_F(DriverDouble, GlobalsAreSetAndReadBackAndCheckedForSize) {
  NEED_CUBIN(image, kPack, {"pack"});
  CudaBackend& b = open();
  std::unique_ptr<Module> m = b.load(*image);
  const int values[4] = {3, 1, 4, 1};
  m->set_global("table", values, sizeof values);
  int back[4] = {};
  m->get_global("table", back, sizeof back);
  EXPECT_EQ(std::memcmp(values, back, sizeof values), 0);
  try {
    m->set_global("nothing", values, 4);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no __constant__ or __device__ variable 'nothing'"), std::string::npos);
  }
  const int five[5] = {};
  EXPECT_THROW(m->set_global("table", five, sizeof five), Error);
}

TEST_F(DriverDouble, DriverErrorsAreNamedWithTheCall) {
  CudaBackend& b = open();
  void* d = b.alloc(64);
  char host[64] = {};
  control().fail("cuMemcpyHtoDAsync", CUDA_ERROR_INVALID_VALUE, 0);
  try {
    b.copy_to_device(d, host, 64, nullptr);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cuMemcpyHtoDAsync failed: CUDA_ERROR_INVALID_VALUE"), std::string::npos) << e.what();
  }
  b.copy_to_device(d, host, 64, nullptr);  // not sticky: the next call works
  EXPECT_FALSE(b.broken());
  b.free(d);
}

TEST_F(DriverDouble, CooperativeLaunchesMustFitOnTheDeviceAtOnce) {
  NEED_CUBIN(image, kPack, {"sync_grid"});
  CudaBackend& b = open();
  std::unique_ptr<Program> k = b.load(*image)->kernel("sync_grid");
  void* x = b.alloc(4);
  void* args[] = {&x};
  LaunchConfig config;
  config.cooperative = true, config.block = {1024, 1, 1};
  config.grid = {108 * 2, 1, 1};  // two blocks of 1024 per SM: the most that fit
  k->launch(config, args);
  EXPECT_EQ(count("cuLaunchCooperativeKernel"), 1);
  config.grid = {108 * 2 + 1, 1, 1};
  try {
    k->launch(config, args);
    FAIL() << "a grid larger than the device was launched cooperatively";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("must be resident at once"), std::string::npos) << e.what();
  }
  EXPECT_EQ(count("cuLaunchCooperativeKernel"), 1);
  b.free(x);
}

}  // namespace
}  // namespace kiln::cuda
