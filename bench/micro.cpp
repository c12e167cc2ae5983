// kiln's C++ micro-benchmarks (Google Benchmark): the current backend's launcher called from C++
// with 0/1/4/16 arguments, the serial C++ references of the lab kernels and memcpy bandwidth
// (the cpu backend's yardsticks), a bare NVRTC compile of each lab kernel, and on a GPU
// cuLaunchKernel, device-to-device copy bandwidth and cuBLAS SGEMM. bench/run.sh runs it with
// repetitions and turns its CSV into bench/results/. Sizes come from the environment
// (KILN_BENCH_IMAGE, KILN_BENCH_MATMUL, KILN_BENCH_N) so that they match bench/kernels.lua.
// Facts that are not timings (GPU name, peak FLOP rate, why something was skipped) are written
// as "FACT,key,value" lines to the file named by KILN_BENCH_FACTS.
#include <benchmark/benchmark.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/serial_refs.h"
#include "jit/backends.h"
#include "jit/cache.h"
#include "jit/cuda/nvrtc.h"
#include "jit/headers.h"
#include "jit/jit.h"
#include "repl/settings.h"
#include "runtime/error.h"
#include "runtime/process.h"
#ifdef KILN_HAVE_CUDA
#include <nvrtc.h>

#include "runtime/cuda/driver.h"
#endif

namespace {

using kiln::bench::serial_abs_sum;
using kiln::bench::serial_blur_naive;
using kiln::bench::serial_blur_tiled;
using kiln::bench::serial_histogram;
using kiln::bench::serial_matmul_naive;
using kiln::bench::serial_matmul_tiled;
using kiln::bench::serial_sum;

// An integer from the environment, or fallback.
long env_long(const char* name, long fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtol(v, nullptr, 0) : fallback;
}

const long kImage = env_long("KILN_BENCH_IMAGE", 1024);   // blur: image side
const long kMatmul = env_long("KILN_BENCH_MATMUL", 512);  // matmul: square side
const long kN = env_long("KILN_BENCH_N", 1L << 24);       // copy, reduce, histogram: elements

// Appends "FACT,key,value" to $KILN_BENCH_FACTS (commas in value become semicolons).
void fact(const std::string& key, std::string value) {
  std::replace(value.begin(), value.end(), ',', ';');
  std::replace(value.begin(), value.end(), '\n', ' ');
  if (const char* path = std::getenv("KILN_BENCH_FACTS")) {
    std::ofstream(path, std::ios::app) << "FACT," << key << "," << value << "\n";
  }
}

// The text of a file; throws kiln::Error when it cannot be read.
std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw kiln::Error("cannot read " + path);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// Min and max across repetitions, beside Google Benchmark's mean/median/stddev.
benchmark::internal::Benchmark* with_range(benchmark::internal::Benchmark* b) {
  b->ComputeStatistics(
      "min", [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); });
  b->ComputeStatistics(
      "max", [](const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); });
  return b->UseRealTime();
}

// Uniform floats in [-1, 1), the same every run.
std::vector<float> random_floats(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

// ------------------------------------------------------------------ the cpu backend's launcher

// Pointers to each argument of an empty kernel with nargs parameters (as cuLaunchKernel takes
// them).
struct LaunchArgs {
  explicit LaunchArgs(void* buffer) {
    for (float*& p : ptrs) p = static_cast<float*>(buffer);
    for (int i = 0; i < 4; ++i) ints[i] = i, floats[i] = float(i);
    for (int i = 0; i < 8; ++i) slots16[i] = &ptrs[i];
    for (int i = 0; i < 4; ++i) slots16[8 + i] = &ints[i], slots16[12 + i] = &floats[i];
    slots4[0] = &ptrs[0], slots4[1] = &ptrs[1], slots4[2] = &ints[0], slots4[3] = &floats[0];
    slots1[0] = &ptrs[0];
  }
  void** get(int nargs) {
    return nargs == 16 ? slots16 : nargs == 4 ? slots4 : nargs == 1 ? slots1 : nullptr;
  }
  float* ptrs[8];
  int ints[4];
  float floats[4];
  void* slots16[16];
  void* slots4[4];
  void* slots1[1];
};

// The platform options kiln itself would use (its settings: KILN_CXX, KILN_CPU_THREADS,
// KILN_REGIONS, CUDA_HOME, ... read as kiln reads them), so that the benchmarks measure the
// configuration bench/run.sh reports.
kiln::jit::PlatformOptions platform_options() {
  static const kiln::Settings settings = kiln::Settings::from_environment();
  return settings.platform;
}

// The platform of that name ("cpu", "cuda") with kiln's settings otherwise.
kiln::jit::Platform open_platform(const std::string& name) {
  kiln::jit::PlatformOptions options = platform_options();
  options.backend = name;
  return kiln::jit::open_platform(options);
}

// bench/launch_args.cu compiled by the platform's compiler: empty kernels of 0/1/4/16 arguments.
kiln::CompileResult compile_launch_args(kiln::jit::Compiler& compiler) {
  kiln::jit::CompileRequest req;
  req.source = read_file(std::string(KILN_BENCH_DIR) + "/launch_args.cu");
  req.filename = "launch_args.cu";
  req.name_expressions = {"args0", "args1", "args4", "args16"};
  return compiler.compile(req);
}

// The backend's launcher from C++: an empty <<<grid, 32>>> kernel with nargs arguments.
void register_backend_launch(const kiln::jit::Platform& platform, const std::string& prefix) {
  std::shared_ptr<kiln::Backend> backend = platform.backend;
  auto result = std::make_shared<kiln::CompileResult>(compile_launch_args(*platform.compiler));
  std::shared_ptr<kiln::Module> module = backend->load(*result);
  void* buffer = backend->alloc(1024);
  const int counts[] = {0, 1, 4, 16};
  for (int i = 0; i < 4; ++i) {
    std::shared_ptr<kiln::Program> program = module->kernel(result->lowered_names[i]);
    for (unsigned grid : {1u, 64u}) {
      if (grid != 1 && counts[i] != 0) continue;
      std::string name =
          prefix + "_launch/" + std::to_string(counts[i]) + (grid == 1 ? "" : "/grid64x256");
      with_range(benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& state) {
        LaunchArgs args(buffer);
        kiln::LaunchConfig c;
        c.grid = {grid, 1, 1};
        c.block = {grid == 1 ? 32u : 256u, 1, 1};
        for (auto _ : state) program->launch(c, args.get(counts[i]));
        backend->synchronize();
      }))->Unit(benchmark::kMicrosecond);
    }
  }
}

// ----------------------------------------------------------------------- serial references

void BM_serial_blur(benchmark::State& state) {
  std::vector<float> in = random_floats(kImage * kImage, 1), out(in.size());
  for (auto _ : state) {
    serial_blur_naive(in.data(), out.data(), kImage, kImage, 4);
    benchmark::DoNotOptimize(out.data());
  }
}

void BM_serial_blur_tiled(benchmark::State& state) {
  std::vector<float> in = random_floats(kImage * kImage, 1), out(in.size());
  for (auto _ : state) {
    serial_blur_tiled(in.data(), out.data(), kImage, kImage);
    benchmark::DoNotOptimize(out.data());
  }
}

void BM_serial_matmul(benchmark::State& state) {
  std::vector<float> a = random_floats(kMatmul * kMatmul, 2),
                     b = random_floats(kMatmul * kMatmul, 3);
  std::vector<float> c(a.size());
  for (auto _ : state) {
    serial_matmul_naive(a.data(), b.data(), c.data(), kMatmul, kMatmul, kMatmul);
    benchmark::DoNotOptimize(c.data());
  }
}

void BM_serial_matmul_tiled(benchmark::State& state) {
  std::vector<float> a = random_floats(kMatmul * kMatmul, 2),
                     b = random_floats(kMatmul * kMatmul, 3);
  std::vector<float> c(a.size());
  for (auto _ : state) {
    serial_matmul_tiled(a.data(), b.data(), c.data(), kMatmul, kMatmul, kMatmul);
    benchmark::DoNotOptimize(c.data());
  }
}

void BM_serial_histogram(benchmark::State& state) {
  std::vector<std::uint8_t> v(kN);
  std::mt19937 gen(4);
  for (auto& x : v) x = std::uint8_t(gen());
  unsigned bins[256];
  for (auto _ : state) {
    serial_histogram(v.data(), v.size(), bins);
    benchmark::DoNotOptimize(bins);
  }
}

void BM_serial_reduce(benchmark::State& state) {
  std::vector<float> v = random_floats(kN, 5);
  for (auto _ : state) benchmark::DoNotOptimize(serial_sum(v.data(), v.size()));
}

void BM_serial_abs_sum(benchmark::State& state) {
  std::vector<float> v = random_floats(kN, 6);
  for (auto _ : state) benchmark::DoNotOptimize(serial_abs_sum(v.data(), v.size()));
}

// memcpy of kN floats (the cpu backend's bandwidth limit: bytes read + written per second).
void BM_memcpy(benchmark::State& state) {
  std::vector<float> a = random_floats(kN, 7), b(a.size());
  for (auto _ : state) {
    std::memcpy(b.data(), a.data(), a.size() * sizeof(float));
    benchmark::ClobberMemory();
  }
}

// The cpu backend's worker count as kiln would choose it (KILN_CPU_THREADS, else one per core).
unsigned cpu_workers() {
  int w = platform_options().cpu.workers;
  return w > 0 ? unsigned(w) : std::max(1u, std::thread::hardware_concurrency());
}

// memcpy of kN floats split over as many threads as the cpu backend's workers: the bandwidth
// limit a kernel running on all of them is held to (one core's memcpy understates it).
void BM_memcpy_parallel(benchmark::State& state) {
  const unsigned threads = cpu_workers();
  fact("memcpy_parallel.threads", std::to_string(threads));
  std::vector<float> a = random_floats(kN, 7), b(a.size());
  const std::size_t per = (a.size() + threads - 1) / threads;
  auto copy_slice = [&](unsigned t) {
    const std::size_t begin = std::min(a.size(), t * per), end = std::min(a.size(), begin + per);
    std::memcpy(b.data() + begin, a.data() + begin, (end - begin) * sizeof(float));
  };
  for (auto _ : state) {
    std::vector<std::thread> helpers;
    for (unsigned t = 1; t < threads; ++t) helpers.emplace_back(copy_slice, t);
    copy_slice(0);
    for (std::thread& h : helpers) h.join();
    benchmark::ClobberMemory();
  }
}

// ----------------------------------------------------------------------------- bare NVRTC

// One lab kernel as kiln compiles it: file, name expression, defines.
struct LabKernel {
  const char* lab;
  const char* file;
  const char* name_expression;
  std::vector<std::string> defines;
};

const std::vector<LabKernel>& lab_kernels() {
  static const std::vector<LabKernel> labs = {
      {"copy", "copy.cu", "vector_copy<float>", {}},
      {"julia", "julia.cu", "julia<double>", {}},
      {"blur", "blur.cu", "blur_naive<float>", {"-DRADIUS=4"}},
      {"blur_shared", "blur_shared.cu", "blur_shared<float>", {"-DRADIUS=4", "-DTILE=16"}},
      {"histogram", "histogram.cu", "histogram<unsigned char>", {"-DBINS=256"}},
      {"reduce", "reduce.cu", "reduce_sum<float>", {"-DTPB=256"}},
      {"abs_sum", "abs_sum.cu", "abs_sum<float>", {"-DTPB=256"}},
      {"matmul", "matmul.cu", "matmul_naive<float>", {}},
      {"matmul_tiled", "matmul_tiled.cu", "matmul_tiled<float>", {"-DTPB=16"}},
      {"normalize", "normalize.cu", "normalize<double>", {"-DTPB=256"}},
  };
  return labs;
}

#ifdef KILN_HAVE_CUDA
// libnvrtc's C API, dlopen'd from where kiln's loader found it: nothing of kiln in between.
struct BareNvrtc {
  void* handle = nullptr;
  decltype(&nvrtcCreateProgram) create = nullptr;
  decltype(&nvrtcAddNameExpression) add_name = nullptr;
  decltype(&nvrtcCompileProgram) compile = nullptr;
  decltype(&nvrtcGetPTXSize) ptx_size = nullptr;
  decltype(&nvrtcGetPTX) ptx = nullptr;
  decltype(&nvrtcGetCUBINSize) cubin_size = nullptr;
  decltype(&nvrtcGetCUBIN) cubin = nullptr;
  decltype(&nvrtcGetLoweredName) lowered = nullptr;
  decltype(&nvrtcDestroyProgram) destroy = nullptr;
  ~BareNvrtc() {
    if (handle) dlclose(handle);
  }
};

// Compiles one lab kernel with NVRTC's C API and the options kiln's k:ptx() uses (-std=c++20,
// --gpu-architecture=sm_80, the toolkit include folders, the lab's defines, -I kernels_src,
// kiln.cuh as an in-memory header): PTX, cubin and lowered name, as kiln asks for them.
void bare_compile(const BareNvrtc& api, const std::string& source, const LabKernel& lab,
                  const std::vector<std::string>& include_dirs,
                  const std::map<std::string, std::string>& headers, int nonce) {
  std::vector<const char*> header_texts, header_names;
  for (const auto& [name, text] : headers)
    header_names.push_back(name.c_str()), header_texts.push_back(text.c_str());
  nvrtcProgram prog;
  if (api.create(&prog, source.c_str(), lab.file, int(headers.size()), header_texts.data(),
                 header_names.data()) != NVRTC_SUCCESS)
    throw kiln::Error("nvrtcCreateProgram failed");
  api.add_name(prog, lab.name_expression);
  std::vector<std::string> opts = {"-std=c++20", "--gpu-architecture=sm_80"};
  for (const auto& d : include_dirs) opts.push_back("-I" + d);
  opts.insert(opts.end(), lab.defines.begin(), lab.defines.end());
  opts.push_back("-DKILN_BENCH_NONCE=" + std::to_string(nonce));
  opts.push_back("-I" + std::string(KILN_KERNELS_DIR));
  std::vector<const char*> argv;
  for (const auto& o : opts) argv.push_back(o.c_str());
  nvrtcResult r = api.compile(prog, int(argv.size()), argv.data());
  if (r != NVRTC_SUCCESS) {
    api.destroy(&prog);
    throw kiln::Error(std::string("NVRTC failed on ") + lab.file);
  }
  std::size_t n = 0;
  api.ptx_size(prog, &n);
  std::string ptx(n, '\0');
  api.ptx(prog, ptx.data());
  api.cubin_size(prog, &n);
  std::vector<char> cubin(n);
  api.cubin(prog, cubin.data());
  const char* lowered = nullptr;
  api.lowered(prog, lab.name_expression, &lowered);
  benchmark::DoNotOptimize(lowered);
  api.destroy(&prog);
}

// One benchmark per lab kernel: a bare NVRTC compile (one iteration per repetition).
void register_nvrtc() {
  std::string why;
  std::shared_ptr<kiln::jit::Nvrtc> kiln_nvrtc = kiln::jit::Nvrtc::load(&why);
  if (!kiln_nvrtc) return fact("skip.nvrtc", "no NVRTC: " + why);
  auto api = std::make_shared<BareNvrtc>();
  api->handle = dlopen(kiln_nvrtc->library().c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!api->handle) return fact("skip.nvrtc", std::string("dlopen failed: ") + dlerror());
#define KILN_BENCH_SYM(field, name) \
  api->field = reinterpret_cast<decltype(api->field)>(dlsym(api->handle, #name))
  KILN_BENCH_SYM(create, nvrtcCreateProgram);
  KILN_BENCH_SYM(add_name, nvrtcAddNameExpression);
  KILN_BENCH_SYM(compile, nvrtcCompileProgram);
  KILN_BENCH_SYM(ptx_size, nvrtcGetPTXSize);
  KILN_BENCH_SYM(ptx, nvrtcGetPTX);
  KILN_BENCH_SYM(cubin_size, nvrtcGetCUBINSize);
  KILN_BENCH_SYM(cubin, nvrtcGetCUBIN);
  KILN_BENCH_SYM(lowered, nvrtcGetLoweredName);
  KILN_BENCH_SYM(destroy, nvrtcDestroyProgram);
#undef KILN_BENCH_SYM
  fact("nvrtc", kiln_nvrtc->version() + " (" + kiln_nvrtc->library() + ")");
  auto headers = std::make_shared<std::map<std::string, std::string>>(
      kiln::jit::builtin_headers(KILN_KERNELS_DIR));
  std::vector<std::string> include_dirs = kiln_nvrtc->include_dirs();
  for (const LabKernel& lab : lab_kernels()) {
    std::string source = read_file(std::string(KILN_KERNELS_DIR) + "/" + lab.file);
    std::string name = std::string("nvrtc_bare/") + lab.lab;
    with_range(benchmark::RegisterBenchmark(name.c_str(),
                                            [=](benchmark::State& state) {
                                              static int nonce = 0;
                                              for (auto _ : state)
                                                bare_compile(*api, source, lab, include_dirs,
                                                             *headers, ++nonce);
                                            })
                   ->Iterations(1)
                   ->Repetitions(3)
                   ->Unit(benchmark::kMillisecond));
    // kiln's own NVRTC path (Jit::ptx: headers, cache key, compile, disk-cache store), in this
    // same process: on this kind of machine a process's speed varies by 20-40% from one process
    // to the next, so only a same-process pair measures kiln's overhead.
    std::string kiln_name = std::string("nvrtc_kiln/") + lab.lab;
    with_range(benchmark::RegisterBenchmark(
                   kiln_name.c_str(),
                   [=](benchmark::State& state) {
                     static int nonce = 0;
                     // The cache folder outlives the Jit (statics die in reverse order).
                     static kiln::TempDir cache_dir;
                     static kiln::jit::Jit jit = [] {
                       kiln::jit::Platform cpu = open_platform("cpu");
                       return kiln::jit::Jit(cpu.backend, cpu.compiler,
                                             kiln::jit::DiskCache(cache_dir.path(), 1ull << 30,
                                                                  true, [](const std::string&) {}),
                                             KILN_KERNELS_DIR);
                     }();
                     kiln::jit::CompileRequest request;
                     request.source = source;
                     request.filename = lab.file;
                     request.name_expressions = {lab.name_expression};
                     request.arch = "sm_80";
                     for (auto _ : state) {
                       request.options = lab.defines;
                       request.options.push_back("-DKILN_BENCH_NONCE=" + std::to_string(++nonce));
                       benchmark::DoNotOptimize(jit.ptx(request, {}));
                     }
                   })
                   ->Iterations(1)
                   ->Repetitions(3)
                   ->Unit(benchmark::kMillisecond));
  }
}

// ------------------------------------------------------------------------------ on a GPU

// FP32 lanes per multiprocessor by compute capability (CUDA C Programming Guide's table).
int fp32_lanes(int major, int minor) {
  if (major == 6) return minor == 0 ? 64 : 128;
  if (major == 7) return 64;
  if (major == 8) return minor == 0 ? 64 : 128;
  return 128;  // 9.x, 10.x, 12.x
}

// Throws kiln::Error naming the call when a driver call fails.
void check(CUresult r, const char* what) {
  if (r != CUDA_SUCCESS)
    throw kiln::Error(std::string(what) + " failed: error " + std::to_string(int(r)));
}

// cuLaunchKernel directly (0/1/4/16 arguments), device-to-device copy bandwidth, the peak FP32
// rate, and cuBLAS SGEMM when libcublas can be dlopen'd. Skipped, with the reason, without a GPU.
void register_cuda() {
  std::string why;
  if (!kiln::jit::cuda_available(platform_options(), &why)) return fact("skip.cuda", why);
  kiln::jit::Platform platform = open_platform("cuda");
  std::shared_ptr<kiln::Backend> backend = platform.backend;
  std::shared_ptr<kiln::cuda::Driver> driver = kiln::cuda::Driver::load(&why);
  if (!driver) return fact("skip.cuda", why);
  CUdevice dev;
  check(driver->cuDeviceGet(&dev, 0), "cuDeviceGet");
  auto ctx = std::make_shared<kiln::cuda::PrimaryContext>(driver, dev);
  ctx->make_current();
  const kiln::DeviceInfo& info = backend->device();
  int clock_khz = 0;
  driver->cuDeviceGetAttribute(&clock_khz, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, dev);
  const double peak =
      2.0 * info.multiprocessors * fp32_lanes(info.cc_major, info.cc_minor) * clock_khz * 1e3;
  fact("gpu", info.name + " (cc " + std::to_string(info.cc_major) + "." +
                  std::to_string(info.cc_minor) + ")");
  fact("gpu.peak_fp32_flops", std::to_string(peak));
  fact("gpu.driver", kiln::cuda::version_string(driver->version()));

  // cuLaunchKernel on the kernels the backend compiled, loaded into our own module handle.
  register_backend_launch(platform, "backend");
  kiln::CompileResult result = compile_launch_args(*platform.compiler);
  CUmodule module;
  check(driver->cuModuleLoadDataEx(&module, result.image.data(), 0, nullptr, nullptr),
        "cuModuleLoadDataEx");
  CUdeviceptr buffer;
  check(driver->cuMemAlloc(&buffer, 1024), "cuMemAlloc");
  const int counts[] = {0, 1, 4, 16};
  for (int i = 0; i < 4; ++i) {
    CUfunction f;
    check(driver->cuModuleGetFunction(&f, module, result.lowered_names[i].c_str()),
          "cuModuleGetFunction");
    std::string name = "cuda_launch/" + std::to_string(counts[i]);
    with_range(benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& state) {
      LaunchArgs args(reinterpret_cast<void*>(buffer));
      for (auto _ : state)
        driver->cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, nullptr, args.get(counts[i]), nullptr);
      driver->cuCtxSynchronize();
    }))->Unit(benchmark::kMicrosecond);
  }

  // Device-to-device copy of 256 MiB: the bandwidth the memory-bound kernels are held to.
  const std::size_t bytes = 256u << 20;
  CUdeviceptr src, dst;
  check(driver->cuMemAlloc(&src, bytes), "cuMemAlloc");
  check(driver->cuMemAlloc(&dst, bytes), "cuMemAlloc");
  with_range(benchmark::RegisterBenchmark("cuda_d2d_copy", [=](benchmark::State& state) {
    for (auto _ : state) {
      driver->cuMemcpyDtoDAsync(dst, src, bytes, nullptr);
      driver->cuCtxSynchronize();
    }
  }))->Unit(benchmark::kMillisecond);
  fact("cuda_d2d_copy.bytes", std::to_string(2 * bytes));

  // cuBLAS SGEMM on kMatmul-square matrices, the reference for the tiled matmul.
  void* cublas = nullptr;
  for (const char* lib : {"libcublas.so.13", "libcublas.so.12", "libcublas.so"})
    if ((cublas = dlopen(lib, RTLD_NOW | RTLD_LOCAL))) break;
  if (!cublas) return fact("skip.cublas", "libcublas not found by dlopen");
  using Create = int (*)(void**);
  using Sgemm = int (*)(void*, int, int, int, int, int, const float*, const float*, int,
                        const float*, int, const float*, float*, int);
  auto create = reinterpret_cast<Create>(dlsym(cublas, "cublasCreate_v2"));
  auto sgemm = reinterpret_cast<Sgemm>(dlsym(cublas, "cublasSgemm_v2"));
  void* handle = nullptr;
  if (!create || !sgemm || create(&handle) != 0) return fact("skip.cublas", "cublasCreate failed");
  const std::size_t mbytes = std::size_t(kMatmul) * kMatmul * sizeof(float);
  CUdeviceptr a, b, c;
  check(driver->cuMemAlloc(&a, mbytes), "cuMemAlloc");
  check(driver->cuMemAlloc(&b, mbytes), "cuMemAlloc");
  check(driver->cuMemAlloc(&c, mbytes), "cuMemAlloc");
  driver->cuMemsetD8Async(a, 0, mbytes, nullptr);
  driver->cuMemsetD8Async(b, 0, mbytes, nullptr);
  with_range(benchmark::RegisterBenchmark("cublas_sgemm", [=](benchmark::State& state) {
    const float one = 1, zero = 0;
    const int n = int(kMatmul);
    for (auto _ : state) {
      sgemm(handle, 0, 0, n, n, n, &one, reinterpret_cast<const float*>(a), n,
            reinterpret_cast<const float*>(b), n, &zero, reinterpret_cast<float*>(c), n);
      driver->cuCtxSynchronize();
    }
  }))->Unit(benchmark::kMillisecond);
  // The driver objects live until the process ends: the benchmarks above hold raw handles.
  static auto keep = std::make_pair(ctx, driver);
  (void)keep;
}
#else
void register_nvrtc() {
  fact("skip.nvrtc", "built without CUDA headers");
}
void register_cuda() {
  fact("skip.cuda", "built without CUDA headers");
}
#endif

}  // namespace

BENCHMARK(BM_serial_blur)->Apply([](auto* b) { with_range(b)->Unit(benchmark::kMillisecond); });
BENCHMARK(BM_serial_blur_tiled)->Apply([](auto* b) {
  with_range(b)->Unit(benchmark::kMillisecond);
});
BENCHMARK(BM_serial_matmul)->Apply([](auto* b) { with_range(b)->Unit(benchmark::kMillisecond); });
BENCHMARK(BM_serial_matmul_tiled)->Apply([](auto* b) {
  with_range(b)->Unit(benchmark::kMillisecond);
});
BENCHMARK(BM_serial_histogram)->Apply([](auto* b) {
  with_range(b)->Unit(benchmark::kMillisecond);
});
BENCHMARK(BM_serial_reduce)->Apply([](auto* b) { with_range(b)->Unit(benchmark::kMillisecond); });
BENCHMARK(BM_serial_abs_sum)->Apply([](auto* b) { with_range(b)->Unit(benchmark::kMillisecond); });
BENCHMARK(BM_memcpy)->Apply([](auto* b) { with_range(b)->Unit(benchmark::kMillisecond); });
BENCHMARK(BM_memcpy_parallel)->Apply([](auto* b) { with_range(b)->Unit(benchmark::kMillisecond); });

// Registers what depends on the backend (KILN_BACKEND=cpu|cuda|auto, as kiln chooses), then runs.
int main(int argc, char** argv) {
  try {
    const std::string backend = platform_options().backend;
    if (backend != "cpu") register_cuda();
    if (backend != "cuda") register_backend_launch(open_platform("cpu"), "cpu");
    register_nvrtc();
  } catch (const kiln::Error& e) {
    std::fprintf(stderr, "kiln_bench_micro: %s\n", e.what());
    return 1;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
