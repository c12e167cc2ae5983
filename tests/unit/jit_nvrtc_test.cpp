// NVRTC tests: they compile real kernels (no GPU needed) and are skipped, saying why, where
// libnvrtc cannot be loaded.
#include <gtest/gtest.h>

#include "jit/headers.h"
#include "jit/jit.h"
#include "jit/kernel_decl.h"
#include "jit/signature.h"
#include "runtime/error.h"

#ifdef KILN_HAVE_CUDA
#include "jit/cuda/nvrtc.h"
#endif

namespace kiln::jit {
namespace {

TEST(JitHeaders, BuiltinHeadersHoldKilnCuh) {
  auto headers = builtin_headers(KILN_KERNELS_DIR);
  ASSERT_TRUE(headers.count("kiln.cuh"));
  EXPECT_NE(headers["kiln.cuh"].find("struct Array"), std::string::npos);
  EXPECT_THROW(builtin_headers("/nonexistent/kernels_src"), Error);
}

#ifndef KILN_HAVE_CUDA
TEST(JitNvrtc, Unavailable) {
  GTEST_SKIP() << "built without the CUDA headers";
}
#else

// The NVRTC library, loaded once for the suite; nullptr (tests skipped) when absent.
std::shared_ptr<Nvrtc> nvrtc(std::string* why) {
  static std::string reason;
  static std::shared_ptr<Nvrtc> lib = Nvrtc::load(&reason);
  *why = reason;
  return lib;
}

#define NEED_NVRTC(var)                            \
  std::string nvrtc_why_;                          \
  std::shared_ptr<Nvrtc> var = nvrtc(&nvrtc_why_); \
  if (!var) GTEST_SKIP() << "NVRTC not loadable: " << nvrtc_why_

CompileResult compile(const Nvrtc& n, const std::string& source, std::vector<std::string> names,
                      std::string arch = "compute_75", std::vector<std::string> options = {}) {
  CompileRequest req;
  req.source = source;
  req.filename = "kernel.cu";
  req.name_expressions = std::move(names);
  req.arch = std::move(arch);
  req.options = std::move(options);
  return n.compile(req, builtin_headers(KILN_KERNELS_DIR));
}

TEST(JitNvrtc, LoadsAndReportsVersionAndArchs) {
  NEED_NVRTC(n);
  EXPECT_GE(n->major(), 11);
  EXPECT_EQ(n->version(), std::to_string(n->major()) + "." + std::to_string(n->minor()));
  EXPECT_NE(n->library().find("libnvrtc"), std::string::npos);
  std::vector<int> archs = n->supported_archs();
  ASSERT_FALSE(archs.empty());
  int newest = archs.back();
  EXPECT_EQ(n->cap_arch("sm_" + std::to_string(archs.front())),
            "sm_" + std::to_string(archs.front()));
  EXPECT_EQ(n->cap_arch("sm_999"), "compute_" + std::to_string(newest));
  EXPECT_EQ(n->cap_arch("compute_999"), "compute_" + std::to_string(newest));
  EXPECT_FALSE(n->include_dirs().empty());
}

TEST(JitNvrtc, CompilesCppKernelToPtxAndCubin) {
  NEED_NVRTC(n);
  const char* src =
      "__global__ void vec_add(const float* a, const float* b, float* c, int n) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) c[i] = a[i] + b[i];\n"
      "}\n";
  CompileResult r = compile(*n, src, {"vec_add"});
  EXPECT_EQ(r.image_kind, "ptx");
  EXPECT_NE(r.ptx.find(".entry _Z7vec_addPKfS0_Pfi"), std::string::npos) << r.ptx.substr(0, 400);
  ASSERT_FALSE(r.image.empty());
  EXPECT_EQ(r.image.back(), '\0');
  EXPECT_EQ(std::string(r.image.data()), r.ptx);
  ASSERT_EQ(r.lowered_names.size(), 1u);
  EXPECT_EQ(r.lowered_names[0], "_Z7vec_addPKfS0_Pfi");
  EXPECT_EQ(r.signatures[0], "void (float const*, float const*, float*, int)");
  std::vector<std::string> types = parameter_types(r.signatures[0]);
  ASSERT_EQ(types.size(), 4u);
  EXPECT_EQ(classify_param(types[0]).kind, ParamKind::pointer);
  EXPECT_TRUE(classify_param(types[0]).is_const);
  EXPECT_EQ(classify_param(types[3]).dtype, DType::int32);

  std::string sm = "sm_" + std::to_string(n->supported_archs().front());
  CompileResult cubin = compile(*n, src, {"vec_add"}, sm);
  EXPECT_EQ(cubin.image_kind, "cubin");
  ASSERT_GE(cubin.image.size(), 4u);
  EXPECT_EQ(std::string(cubin.image.data(), 4),
            "\x7f"
            "ELF");
  EXPECT_FALSE(cubin.ptx.empty());  // PTX comes along for k:ptx()
}

TEST(JitNvrtc, CompilesExternCKernels) {
  NEED_NVRTC(n);
  const char* src =
      "extern \"C\" __global__ void fill(float* x, float v, unsigned long n) {\n"
      "  unsigned long i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) x[i] = v;\n"
      "}\n";
  CompileResult r = compile(*n, src, {"fill"});
  EXPECT_NE(r.ptx.find(".entry fill("), std::string::npos);
  ASSERT_EQ(r.lowered_names.size(), 1u);
  EXPECT_EQ(r.lowered_names[0], "fill");
  EXPECT_EQ(r.signatures[0], "");  // the orchestrator takes the types from the declaration
  KernelDecl d = find_kernels(src).at(0);
  EXPECT_TRUE(d.extern_c);
  EXPECT_EQ(classify_param(d.params[2].type).dtype, DType::uint64);
}

// __launch_bounds__ as NVRTC evaluates it (a macro, a template argument) reaches the PTX as
// .maxntid, which the cpu backend enforces at launch: ptx_max_threads reads it per entry.
TEST(JitNvrtc, LaunchBoundsReadFromPtx) {
  NEED_NVRTC(n);
  const char* src =
      "#define TILE 16\n"
      "template <int N> __global__ void __launch_bounds__(N, 2) t(int* x) { x[0] = N; }\n"
      "__global__ void __launch_bounds__(TILE * TILE) square(int* x) { x[0] = 1; }\n"
      "__global__ void free_size(int* x) { x[0] = 2; }\n"
      "extern \"C\" __global__ void __launch_bounds__(64) c64(int* x) { x[0] = 3; }\n";
  CompileResult r = compile(*n, src, {"t<96>", "square", "free_size", "c64"});
  ASSERT_EQ(r.lowered_names.size(), 4u);
  EXPECT_EQ(ptx_max_threads(r.ptx, r.lowered_names[0]), 96);
  EXPECT_EQ(ptx_max_threads(r.ptx, r.lowered_names[1]), 256);
  EXPECT_EQ(ptx_max_threads(r.ptx, r.lowered_names[2]), 0);
  EXPECT_EQ(ptx_max_threads(r.ptx, r.lowered_names[3]), 64);
  EXPECT_EQ(ptx_max_threads(r.ptx, "c6"), 0);  // a prefix of an entry's name is not it
  EXPECT_EQ(ptx_max_threads(".entry k(\n.param .u64 p)\n.maxntid 8, 4, 2\n{\n}", "k"), 64);
  EXPECT_EQ(ptx_max_threads(".entry k()\n.maxntid 99999999, 99999999, 1\n{}", "k"), 1 << 20);
}

// A source that names __int128 compiles as nvcc compiles it, with no flag: kiln passes NVRTC
// --device-int128 (the 64x64 -> 128 products of bignum and hashing code).
TEST(JitNvrtc, Int128CompilesWithoutAFlag) {
  NEED_NVRTC(n);
  if (n->major() < 12 && !(n->major() == 11 && n->minor() >= 5)) GTEST_SKIP() << "NVRTC < 11.5";
  const char* src =
      "__global__ void mulhi(const unsigned long long* a, unsigned long long* hi) {\n"
      "  unsigned __int128 p = (unsigned __int128)a[0] * a[1];\n"
      "  hi[0] = (unsigned long long)(p >> 64);\n"
      "}\n";
  CompileResult r = compile(*n, src, {"mulhi"});
  EXPECT_NE(r.ptx.find("mul.hi.u64"), std::string::npos) << r.ptx;
}

// nvcc's extended lambdas (`[=] __device__ (float v) {...}`, Kokkos and Thrust style) compile
// without an option, and nvcc's --extended-lambda and --expt-relaxed-constexpr are taken: a
// constexpr function without __device__ is device code then.
TEST(JitNvrtc, NvccLambdaAndConstexprOptions) {
  NEED_NVRTC(n);
  const char* lambda =
      "template <class F> __device__ float apply(F f, float v) { return f(v); }\n"
      "__global__ void k(float* x, float a) {\n"
      "  auto f = [=] __host__ __device__ (float v) { return a * v; };\n"
      "  x[threadIdx.x] = apply(f, x[threadIdx.x]) + [] __device__ { return 1.0f; }();\n"
      "}\n";
  for (const std::vector<std::string>& options :
       {std::vector<std::string>{}, std::vector<std::string>{"--extended-lambda"},
        std::vector<std::string>{"--expt-extended-lambda"}})
    EXPECT_NE(compile(*n, lambda, {"k"}, "compute_75", options).ptx.find(".entry"),
              std::string::npos);
  const char* constexpr_fn =
      "constexpr float sq(float v) { return v * v; }\n"
      "__global__ void k(float* x) { x[0] = sq(x[0]); }\n";
  EXPECT_THROW(compile(*n, constexpr_fn, {"k"}), CompileError);
  EXPECT_NE(compile(*n, constexpr_fn, {"k"}, "compute_75", {"--expt-relaxed-constexpr"})
                .ptx.find(".entry"),
            std::string::npos);
}

TEST(JitNvrtc, InstantiatesTemplatesWithDeducedNames) {
  NEED_NVRTC(n);
  const char* src = R"(#include <kiln.cuh>
template <typename T, int C>
__global__ void pix(T* img, kiln::Array<const T, 2> src, unsigned char* mask, T gain) {}
template <typename T>
__global__ void scale(T* x, T f, unsigned long n) {}
)";
  std::vector<KernelDecl> decls = find_kernels(src);
  ASSERT_EQ(decls.size(), 2u);
  int dummy;
  ArgValue arr;
  arr.kind = ArgValue::Kind::device_array;
  arr.dtype = DType::float64;
  arr.data = &dummy;
  std::string why;
  std::optional<std::string> scale_name = deduce_name_expression(decls[1], {arr}, &why);
  ASSERT_TRUE(scale_name) << why;
  EXPECT_EQ(*scale_name, "scale<double>");

  CompileResult r =
      compile(*n, src, {"pix<float, 4>", "pix<unsigned char, 3>", *scale_name, "scale<int>"});
  ASSERT_EQ(r.lowered_names.size(), 4u);
  using V = std::vector<std::string>;
  EXPECT_EQ(demangle(r.lowered_names[0]),
            "void pix<float, 4>(float*, kiln::Array<float const, 2>, unsigned char*, float)");
  EXPECT_EQ(parameter_types(r.signatures[0]),
            (V{"float*", "kiln::Array<float const, 2>", "unsigned char*", "float"}));
  EXPECT_EQ(parameter_types(r.signatures[1]),
            (V{"unsigned char*", "kiln::Array<unsigned char const, 2>", "unsigned char*",
               "unsigned char"}));
  EXPECT_EQ(parameter_types(r.signatures[2]), (V{"double*", "double", "unsigned long"}));
  EXPECT_EQ(parameter_types(r.signatures[3]), (V{"int*", "int", "unsigned long"}));

  // Every demangled type classifies to what the instantiation asked for.
  ParamType a = classify_param(parameter_types(r.signatures[1])[1]);
  EXPECT_EQ(a.kind, ParamKind::array);
  EXPECT_EQ(a.dtype, DType::uint8);
  EXPECT_EQ(a.ndim, 2);
  EXPECT_TRUE(a.is_const);
  EXPECT_EQ(classify_param(parameter_types(r.signatures[2])[1]).dtype, DType::float64);
  EXPECT_EQ(classify_param(parameter_types(r.signatures[2])[2]).dtype, DType::uint64);
  for (const std::string& lowered : r.lowered_names)
    EXPECT_NE(r.ptx.find(".entry " + lowered + "("), std::string::npos) << lowered;
}

// A template's mangled name keeps a dependent parameter type as declared (cuda-samples' nbody:
// `typename vec4<T>::Type*`); the signature says what it stands for, so arguments match it.
TEST(JitNvrtc, ResolvesDependentParameterTypes) {
  NEED_NVRTC(n);
  const char* src = R"(
template <typename T> struct vec4 { typedef float Type; };
template <> struct vec4<float> { typedef float4 Type; };
template <> struct vec4<int> { typedef int4 Type; };
template <typename T> using Vec = typename vec4<T>::Type;
template <typename T>
__global__ void step(typename vec4<T>::Type* __restrict__ pos, const Vec<T>* vel, T dt, int n) {}
template <typename T> __global__ void plain(T* x, int n) {}
)";
  CompileResult r = compile(*n, src, {"step<float>", "step<int>", "plain<double>"});
  ASSERT_EQ(r.signatures.size(), 3u);
  EXPECT_NE(demangle(r.lowered_names[0]).find("vec4<float>::Type*"), std::string::npos)
      << demangle(r.lowered_names[0]);  // what the mangled name alone says
  using V = std::vector<std::string>;
  EXPECT_EQ(parameter_types(r.signatures[0]), (V{"float4*", "float4 const*", "float", "int"}));
  EXPECT_EQ(parameter_types(r.signatures[1]), (V{"int4*", "int4 const*", "int", "int"}));
  EXPECT_EQ(r.signatures[2], "void (double*, int)");
  for (const std::string& lowered : r.lowered_names)
    EXPECT_NE(r.ptx.find(".entry " + lowered + "("), std::string::npos) << lowered;

  // An overloaded template, named by a cast to the overload's pointer type.
  const char* overloaded = R"(
template <typename T> struct box { typedef T type; };
template <typename T> __global__ void k(typename box<T>::type* x) {}
template <typename T> __global__ void k(typename box<T>::type* x, int n) {}
)";
  CompileResult o = compile(*n, overloaded, {"(void (*)(float*, int))k<float>"});
  ASSERT_EQ(o.signatures.size(), 1u);
  EXPECT_EQ(parameter_types(o.signatures[0]), (V{"float*", "int"})) << o.signatures[0];
}

TEST(JitNvrtc, KilnCuhHelpersCompile) {
  NEED_NVRTC(n);
  const char* src = R"(#include <kiln.cuh>
__global__ void blur(kiln::Array<const float, 2> in, kiln::Array<float, 2> out) {
  auto [x, y] = kiln::grid<2>();
  auto [sx, sy] = kiln::gridsize<2>();
  for (long long r = y; r < out.shape[0]; r += sy)
    for (long long c = x; c < out.shape[1]; c += sx)
      out(r, c) = in(r, c) * 0.5f + (out.size() > 0 ? 1.0f : 0.0f);
}
__global__ void saxpy(kiln::Array<float, 1> y, const float* x, float a) {
  for (long long i = kiln::grid<1>(); i < y.size(); i += kiln::gridsize<1>()) y[i] += a * x[i];
}
__global__ void vol(kiln::Array<int, 3> v) {
  auto p = kiln::grid<3>();
  if (p.z < v.shape[0] && p.y < v.shape[1] && p.x < v.shape[2]) v(p.z, p.y, p.x) = 1;
}
__global__ void four(kiln::Array<double, 4> t) { t(0, 1, 2, 3) = t.offset(1, 1, 1, 1); }
)";
  CompileResult r = compile(*n, src, {"blur", "saxpy", "vol", "four"});
  EXPECT_EQ(r.lowered_names.size(), 4u);
  EXPECT_EQ(parameter_types(r.signatures[0]),
            (std::vector<std::string>{"kiln::Array<float const, 2>", "kiln::Array<float, 2>"}));
  // The struct reaches the kernel as 8 + 8N bytes: the PTX parameter says so.
  EXPECT_NE(r.ptx.find(".param .align 8 .b8 _Z4blurN4kiln5ArrayIKfLi2EEENS0_IfLi2EEE_param_0[24]"),
            std::string::npos)
      << r.ptx;
  EXPECT_NE(r.ptx.find("_param_0[40]"), std::string::npos);  // Array<double, 4>
}

TEST(JitNvrtc, KilnCuhRejectsWrongIndexCounts) {
  NEED_NVRTC(n);
  const char* src =
      "#include <kiln.cuh>\n"
      "__global__ void k(kiln::Array<float, 2> a) { a(1) = 0; }\n";
  try {
    compile(*n, src, {"k"});
    FAIL() << "a 2-d array indexed with one index compiled";
  } catch (const CompileError& e) {
    EXPECT_NE(e.log().find("give one index per dimension"), std::string::npos) << e.log();
  }
}

TEST(JitNvrtc, CooperativeGroupsAndFp16Resolve) {
  NEED_NVRTC(n);
  const char* src = R"(#include <cooperative_groups.h>
#include <cuda_fp16.h>
namespace cg = cooperative_groups;
__global__ void reduce(const float* in, float* out) {
  cg::thread_block block = cg::this_thread_block();
  auto warp = cg::tiled_partition<32>(block);
  float v = in[threadIdx.x];
  for (int o = 16; o > 0; o /= 2) v += warp.shfl_down(v, o);
  block.sync();
  __half h = __float2half(v);
  if (warp.thread_rank() == 0) out[threadIdx.x / 32] = __half2float(h);
}
)";
  CompileResult r = compile(*n, src, {"reduce"});
  EXPECT_NE(r.ptx.find("shfl.sync.down"), std::string::npos);
  EXPECT_TRUE(uses_barriers(src));
}

TEST(JitNvrtc, CompileErrorsCarryFileAndLine) {
  NEED_NVRTC(n);
  const char* src =
      "#include <kiln.cuh>\n"
      "__global__ void broken(float* x) {\n"
      "  int i = threadIdx.x;\n"
      "  x[i] = undefined_name;\n"
      "}\n";
  CompileRequest req;
  req.source = src;
  req.filename = "lab/blur.cu";
  req.name_expressions = {"broken"};
  req.arch = "compute_75";
  req.options = {"-DRADIUS=4"};
  try {
    n->compile(req, builtin_headers(KILN_KERNELS_DIR));
    FAIL() << "compiled";
  } catch (const CompileError& e) {
    std::string what = e.what();
    EXPECT_EQ(what.find("kernel source lab/blur.cu (kernels: broken) did not compile (NVRTC " +
                        n->version() + ", options: "),
              0u)
        << what;
    EXPECT_NE(what.find("-DRADIUS=4"), std::string::npos);
    EXPECT_NE(what.find("--gpu-architecture=compute_75"), std::string::npos);
    EXPECT_NE(e.log().find("lab/blur.cu(4): error"), std::string::npos) << e.log();
    EXPECT_NE(e.log().find("undefined_name"), std::string::npos);
  }
  // A bad option is a CompileError too, naming the problem.
  req.source = "__global__ void k() {}";
  req.name_expressions = {"k"};
  req.options = {"--no-such-option"};
  EXPECT_THROW(n->compile(req, {}), CompileError);
  // So is a name expression that names no kernel.
  req.options = {};
  req.name_expressions = {"missing<float>"};
  EXPECT_THROW(n->compile(req, {}), CompileError);
}

// Device code written for nvcc includes the C++ library's headers (CUB- and CUTLASS-style code:
// <type_traits>, <limits>, <utility>, ...) and <cub/cub.cuh>: NVRTC has neither, and refused
// them (survey 14). kiln's are libcu++'s, their names in std too, and CUB's block, warp and
// thread levels.
TEST(JitNvrtc, StandardHeadersAndCubResolve) {
  NEED_NVRTC(n);
  const char* src = R"(#include <array>
#include <cub/cub.cuh>
#include <functional>
#include <initializer_list>
#include <limits>
#include <tuple>
#include <type_traits>
#include <utility>
template <typename T, int B>
__global__ void block_max(const T* in, T* out) {
  using R = cub::BlockReduce<T, B>;
  __shared__ typename R::TempStorage tmp;
  static_assert(std::is_arithmetic_v<T> && !std::is_same<T, bool>::value, "numbers");
  std::tuple<T, int> p{in[blockIdx.x * B + threadIdx.x], 1};
  auto [a, b] = p;
  std::array<T, 2> pair{a, T(b)};
  const T m = R(tmp).Reduce(pair[0] * pair[1], cuda::maximum<>{});
  if (threadIdx.x == 0) out[blockIdx.x] = std::max(m, std::numeric_limits<T>::lowest());
}
)";
  CompileResult r = compile(*n, src, {"block_max<float, 128>"});
  EXPECT_NE(r.ptx.find(".entry"), std::string::npos) << r.ptx.substr(0, 400);
}

// A template instance kiln deduced from a float16 or bfloat16 array (`scale<__half>`) compiles
// though the source, written for any T, includes no <cuda_fp16.h>: NVRTC failed in its own
// name map ("__nv_name_map(2): identifier "__half" is undefined", survey 14).
TEST(JitNvrtc, DeducedNarrowFloatTypesBringTheirHeaders) {
  NEED_NVRTC(n);
  const char* src =
      "template <typename T>\n__global__ void scale(T* x, T a) { x[0] = x[0] * a; }\n";
  CompileResult r = compile(*n, src, {"scale<__half>", "scale<__nv_bfloat16>"});
  EXPECT_EQ(r.lowered_names.size(), 2u);
}

TEST(JitNvrtc, DefinesApplyAndUserStdWins) {
  NEED_NVRTC(n);
  const char* src =
      "#if __cplusplus < 201703L\n#error too old\n#endif\n"
      "__global__ void k(float* x) { x[0] = TILE; }\n";
  CompileResult r = compile(*n, src, {"k"}, "compute_75", {"-DTILE=16", "-std=c++17"});
  EXPECT_NE(r.ptx.find("1098907648"), std::string::npos)  // 16.0f as bits: 0x41800000
      << r.ptx;
}

#endif  // KILN_HAVE_CUDA

}  // namespace
}  // namespace kiln::jit
