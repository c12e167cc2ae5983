#include "jit/kernel_decl.h"

#include <gtest/gtest.h>
#include <map>

namespace kiln::jit {
namespace {

// The one kernel in source (fails the test when there is not exactly one).
KernelDecl only(std::string_view source) {
  std::vector<KernelDecl> ks = find_kernels(source);
  EXPECT_EQ(ks.size(), 1u) << source;
  return ks.empty() ? KernelDecl{} : ks[0];
}

TEST(JitKernelDecl, PlainKernel) {
  KernelDecl k =
      only("__global__ void vec_add(const float* a, const float *b, float* c, int n) {}");
  EXPECT_EQ(k.name, "vec_add");
  EXPECT_FALSE(k.extern_c);
  EXPECT_TRUE(k.template_params.empty());
  ASSERT_EQ(k.params.size(), 4u);
  EXPECT_EQ(k.params[0].type, "const float*");
  EXPECT_EQ(k.params[0].name, "a");
  EXPECT_EQ(k.params[1].type, "const float *");
  EXPECT_EQ(k.params[1].name, "b");
  EXPECT_EQ(k.params[2].type, "float*");
  EXPECT_EQ(k.params[3].type, "int");
  EXPECT_EQ(k.params[3].name, "n");
  EXPECT_EQ(k.line, 1);
}

// Default arguments are kept as written, apart from the type and name.
TEST(JitKernelDecl, DefaultArguments) {
  KernelDecl k = only(
      "__global__ void scan(int* d, int n, int* partial = NULL, float s = (1.5f), int w[4] = "
      "nullptr) {}");
  ASSERT_EQ(k.params.size(), 5u);
  EXPECT_EQ(k.params[1].default_value, "");
  EXPECT_EQ(k.params[2].type, "int*");
  EXPECT_EQ(k.params[2].name, "partial");
  EXPECT_EQ(k.params[2].default_value, "NULL");
  EXPECT_EQ(k.params[3].name, "s");
  EXPECT_EQ(k.params[3].default_value, "(1.5f)");
  EXPECT_EQ(k.params[4].type, "int[4]");
  EXPECT_EQ(k.params[4].default_value, "nullptr");
}

TEST(JitKernelDecl, TypeAliases) {
  const char* src =
      "#define fp double\n#define SQUARE(x) ((x) * (x))\ntypedef unsigned int uint;\n"
      "using real = float;\ntypedef struct { int a; } Pod;\n";
  EXPECT_EQ(find_type_alias(src, "fp"), "double");
  EXPECT_EQ(find_type_alias(src, "uint"), "unsigned int");
  EXPECT_EQ(find_type_alias(src, "real"), "float");
  EXPECT_EQ(find_type_alias(src, "SQUARE"), std::nullopt);  // function-like
  EXPECT_EQ(find_type_alias(src, "Pod"), std::nullopt);     // a struct, not an alias
  EXPECT_EQ(find_type_alias(src, "missing"), std::nullopt);
}

TEST(JitKernelDecl, WhitespaceCollapsedAndLineCounted) {
  KernelDecl k = only(
      "// header\n"
      "#include <kiln.cuh>\n"
      "\n"
      "__global__ void\n"
      "scale(float   * __restrict__  x,  /* the data */ unsigned\n long   n, float const* const "
      "y)\n"
      "{ x[0] = 1; }\n");
  EXPECT_EQ(k.line, 4);
  ASSERT_EQ(k.params.size(), 3u);
  EXPECT_EQ(k.params[0].type, "float * __restrict__");
  EXPECT_EQ(k.params[0].name, "x");
  EXPECT_EQ(k.params[1].type, "unsigned long");
  EXPECT_EQ(k.params[1].name, "n");
  EXPECT_EQ(k.params[2].type, "float const* const");
  EXPECT_EQ(k.params[2].name, "y");
}

TEST(JitKernelDecl, ExternCForms) {
  std::vector<KernelDecl> ks = find_kernels(R"(
extern "C" __global__ void a(float* x) {}
extern "C" {
  __global__ void b(int* y) {}
  static __device__ int helper(int v) { return v; }
  __global__ void c() {}
}
__global__ void d(void) {}
extern "C++" { __global__ void e(int) {} }
)");
  ASSERT_EQ(ks.size(), 5u);
  EXPECT_EQ(ks[0].name, "a");
  EXPECT_TRUE(ks[0].extern_c);
  EXPECT_EQ(ks[1].name, "b");
  EXPECT_TRUE(ks[1].extern_c);
  EXPECT_EQ(ks[2].name, "c");
  EXPECT_TRUE(ks[2].extern_c);
  EXPECT_TRUE(ks[2].params.empty());
  EXPECT_EQ(ks[3].name, "d");
  EXPECT_FALSE(ks[3].extern_c);
  EXPECT_TRUE(ks[3].params.empty());
  EXPECT_EQ(ks[4].name, "e");
  EXPECT_FALSE(ks[4].extern_c);
  ASSERT_EQ(ks[4].params.size(), 1u);
  EXPECT_EQ(ks[4].params[0].type, "int");
  EXPECT_EQ(ks[4].params[0].name, "");
}

TEST(JitKernelDecl, Templates) {
  std::vector<KernelDecl> ks = find_kernels(R"(
template <typename T>
__global__ void scale(T* x, T factor, int n) {}

template <class T, int TPB = 256, typename U = kiln::Array<T, 2>>
__global__ void __launch_bounds__(TPB) reduce(const T* __restrict__ in, T* out, size_t n) {}

template <typename T, int N>
__global__ void fill(kiln::Array<T, N> a, T v) {}
)");
  ASSERT_EQ(ks.size(), 3u);
  EXPECT_EQ(ks[0].name, "scale");
  ASSERT_EQ(ks[0].template_params.size(), 1u);
  EXPECT_EQ(ks[0].template_params[0].kind, "typename");
  EXPECT_EQ(ks[0].template_params[0].name, "T");
  EXPECT_EQ(ks[0].template_params[0].default_value, "");
  EXPECT_EQ(ks[0].line, 3);

  const KernelDecl& r = ks[1];
  EXPECT_EQ(r.name, "reduce");
  ASSERT_EQ(r.template_params.size(), 3u);
  EXPECT_EQ(r.template_params[0].kind, "typename");
  EXPECT_EQ(r.template_params[1].kind, "int");
  EXPECT_EQ(r.template_params[1].name, "TPB");
  EXPECT_EQ(r.template_params[1].default_value, "256");
  EXPECT_EQ(r.template_params[2].name, "U");
  EXPECT_EQ(r.template_params[2].default_value, "kiln::Array<T, 2>");
  ASSERT_EQ(r.params.size(), 3u);
  EXPECT_EQ(r.params[0].type, "const T* __restrict__");
  EXPECT_EQ(r.params[0].name, "in");
  EXPECT_EQ(r.params[2].type, "size_t");

  ASSERT_EQ(ks[2].params.size(), 2u);
  EXPECT_EQ(ks[2].params[0].type, "kiln::Array<T, N>");
  EXPECT_EQ(ks[2].params[0].name, "a");
  EXPECT_EQ(ks[2].template_params[1].kind, "int");
  EXPECT_EQ(ks[2].template_params[1].name, "N");
}

TEST(JitKernelDecl, IgnoresCommentsStringsAndDirectives) {
  std::vector<KernelDecl> ks = find_kernels(R"src(
// __global__ void commented(int x) {}
/* __global__ void block_commented(int x) {}
   still a comment */
#define KERNEL(name) __global__ void name(int x) { \
   }
#if 0
#endif
const char* text = "__global__ void in_a_string(int)";
const char c = '"';
const char* raw = R"x(__global__ void in_raw(int) ")x";
__global__ void real(int x) { const char* s = "}"; char b = '{'; }
__global__ void after(float* y) {}
)src");
  ASSERT_EQ(ks.size(), 2u);
  EXPECT_EQ(ks[0].name, "real");
  EXPECT_EQ(ks[0].line, 12);
  EXPECT_EQ(ks[1].name, "after");
  EXPECT_EQ(ks[1].line, 13);
}

TEST(JitKernelDecl, QualifiersAttributesAndUnnamedParameters) {
  std::vector<KernelDecl> ks = find_kernels(R"(
static __global__ void a(float*, int) {}
__global__ static inline void b(const float* const, unsigned int) {}
__global__ void __launch_bounds__(128, 4) c(kiln::Array<float, 2> img, kiln::Array<const unsigned char, 3>) {}
__global__ void d(float x = 1.0f, int flags = (1 << 3), float v[4]) {}
)");
  ASSERT_EQ(ks.size(), 4u);
  ASSERT_EQ(ks[0].params.size(), 2u);
  EXPECT_EQ(ks[0].params[0].type, "float*");
  EXPECT_EQ(ks[0].params[0].name, "");
  EXPECT_EQ(ks[0].params[1].type, "int");
  EXPECT_EQ(ks[0].params[1].name, "");
  EXPECT_EQ(ks[1].name, "b");
  EXPECT_EQ(ks[1].params[0].type, "const float* const");
  EXPECT_EQ(ks[1].params[0].name, "");
  EXPECT_EQ(ks[1].params[1].type, "unsigned int");
  EXPECT_EQ(ks[1].params[1].name, "");
  EXPECT_EQ(ks[2].name, "c");
  ASSERT_EQ(ks[2].params.size(), 2u);
  EXPECT_EQ(ks[2].params[0].type, "kiln::Array<float, 2>");
  EXPECT_EQ(ks[2].params[0].name, "img");
  EXPECT_EQ(ks[2].params[1].type, "kiln::Array<const unsigned char, 3>");
  EXPECT_EQ(ks[2].params[1].name, "");
  ASSERT_EQ(ks[3].params.size(), 3u);
  EXPECT_EQ(ks[3].params[0].type, "float");
  EXPECT_EQ(ks[3].params[0].name, "x");
  EXPECT_EQ(ks[3].params[1].name, "flags");
  EXPECT_EQ(ks[3].params[2].type, "float[4]");
  EXPECT_EQ(ks[3].params[2].name, "v");
}

TEST(JitKernelDecl, DeclarationThenDefinitionListedOnce) {
  std::vector<KernelDecl> ks = find_kernels(R"(
template <typename T, int TPB = 256> __global__ void reduce(const T*, T*, int);
__global__ void other(int);

template <typename T, int TPB>
__global__ void reduce(const T* in, T* out, int n) {
  __shared__ T tile[TPB];
}
__global__ void other(int k) {}
)");
  ASSERT_EQ(ks.size(), 2u);
  EXPECT_EQ(ks[0].name, "reduce");
  EXPECT_EQ(ks[0].line, 6);  // the definition
  ASSERT_EQ(ks[0].params.size(), 3u);
  EXPECT_EQ(ks[0].params[0].name, "in");
  EXPECT_EQ(ks[0].params[2].name, "n");
  ASSERT_EQ(ks[0].template_params.size(), 2u);
  EXPECT_EQ(ks[0].template_params[1].default_value, "256");  // from the declaration
  EXPECT_EQ(ks[1].name, "other");
  EXPECT_EQ(ks[1].params[0].name, "k");
}

// A lambda's execution space is blanked, columns kept; nothing else is.
TEST(JitKernelDecl, PlainLambdas) {
  const std::string src =
      "__global__ void k(float* x) {\n"
      "  auto f = [=] __device__ (float v) { return v; };\n"
      "  auto g = [&] __host__ __device__ mutable { return x[0]; };\n"
      "  auto h = [x] __device__ -> float { return x[1]; };\n"
      "  x[0] = f(x[1]) + g() + h(); // [] __device__ (in a comment)\n"
      "}\n__device__ float y[2];\n";
  const std::string plain = plain_lambdas(src);
  EXPECT_EQ(plain.size(), src.size());
  EXPECT_NE(plain.find("[=]            (float v)"), std::string::npos) << plain;
  EXPECT_NE(plain.find("[&]                     mutable"), std::string::npos) << plain;
  EXPECT_NE(plain.find("[x]            -> float"), std::string::npos) << plain;
  EXPECT_NE(plain.find("// [] __device__ (in a comment)"), std::string::npos) << plain;
  EXPECT_NE(plain.find("__device__ float y[2];"), std::string::npos) << plain;
  EXPECT_EQ(plain_lambdas("__global__ void k(int* a) { a[0] = 1; }"),
            "__global__ void k(int* a) { a[0] = 1; }");
}

// Overloads (other parameter types) are listed each, marked overloaded; a declaration and its
// definition are one kernel even where they differ in restrict or a parameter's own const.
TEST(JitKernelDecl, OverloadsListedEach) {
  std::vector<KernelDecl> ks = find_kernels(R"(
__global__ void scale(float*, const int);
__global__ void scale(float* __restrict__ x, int n) {}
__global__ void scale(double* const x, int n) {}
__global__ void scale(const double* x, int n) {}
__global__ void other(int k) {}
namespace b { __global__ void other(float k) {} }
)");
  ASSERT_EQ(ks.size(), 5u);
  EXPECT_EQ(ks[0].params[0].name, "x");  // (the definition's names)
  EXPECT_EQ(ks[0].line, 3);
  EXPECT_EQ(ks[1].params[0].type, "double* const");
  EXPECT_EQ(ks[2].params[0].type, "const double*");
  for (int i : {0, 1, 2}) EXPECT_TRUE(ks[i].overloaded) << i;
  EXPECT_FALSE(ks[3].overloaded);  // (another namespace's kernel of that name)
  EXPECT_FALSE(ks[4].overloaded);
}

TEST(JitKernelDecl, KernelsInsideNamespacesAndAfterDeviceCode) {
  std::vector<KernelDecl> ks = find_kernels(R"(
namespace lab {
struct Pair { int a; int b; };
__device__ int twice(int v) { if (v < 3 && v > 1) return 2 * v; return v; }
__global__ void k1(int* out) { for (int i = 0; i < 4; ++i) out[i] = twice(i); }
}
__global__ void k2(float* out, int n) {}
)");
  ASSERT_EQ(ks.size(), 2u);
  EXPECT_EQ(ks[0].name, "k1");
  EXPECT_EQ(ks[1].name, "k2");
  ASSERT_EQ(ks[1].params.size(), 2u);
}

TEST(JitKernelDecl, NoKernels) {
  EXPECT_TRUE(find_kernels("").empty());
  EXPECT_TRUE(find_kernels("__device__ float f(float x) { return x; }").empty());
  EXPECT_TRUE(find_kernels("/* unterminated comment __global__ void k()").empty());
}

TEST(JitKernelDecl, SurvivesEveryTruncation) {
  // Unbalanced brackets, unterminated strings and comments: never a crash, and a kernel whose
  // parameter list is complete is found.
  const std::string src = R"src(#include <kiln.cuh>
template <typename T, int N = (3 > 2)>
__global__ void __launch_bounds__(256) k(kiln::Array<T, 2> a, const char* s = "(\"", T v) {
  /* { */ const char* t = R"x(})x"; if (a.size() < N) { a(0, 0) = v; }
}
)src";
  std::size_t complete = src.find(") {");
  for (std::size_t n = 0; n <= src.size(); ++n) {
    std::vector<KernelDecl> ks = find_kernels(std::string_view(src).substr(0, n));
    if (n > complete) {
      ASSERT_EQ(ks.size(), 1u) << n;
      EXPECT_EQ(ks[0].name, "k");
      ASSERT_EQ(ks[0].params.size(), 3u) << n;
      EXPECT_EQ(ks[0].params[1].name, "s");
      EXPECT_EQ(ks[0].template_params[1].default_value, "(3 > 2)");
    }
    uses_barriers(std::string_view(src).substr(0, n));
  }
}

TEST(JitUsesBarriers, FindsEachKind) {
  const char* uses[] = {
      "__global__ void k() { __syncthreads(); }",
      "__global__ void k() { int c = __syncthreads_count(1); }",
      "__global__ void k() { __syncwarp(); }",
      "__global__ void k(int v) { v = __shfl_down_sync(0xffffffff, v, 1); }",
      "__global__ void k(int v) { v = __shfl_xor_sync(~0u, v, 1); }",
      "__global__ void k(int v) { v = __ballot_sync(~0u, v); }",
      "__global__ void k(int v) { v = __any_sync(~0u, v); }",
      "__global__ void k(int v) { v = __all_sync(~0u, v); }",
      "__global__ void k(int v) { v = __activemask(); }",
      "__global__ void k(int v) { v = __match_any_sync(~0u, v); }",
      "__global__ void k(int v) { v = __reduce_add_sync(~0u, v); }",
      "#include <cooperative_groups.h>\n__global__ void k() {}",
      "namespace cg = cooperative_groups;\n__global__ void k() {}",
      "__global__ void k() { auto g = this_grid(); g.sync(); }",
      "__global__ void k() { auto t = tiled_partition<32>(b); }",
      "#define SYNC __syncthreads()\n__global__ void k() { SYNC; }",
      "__global__ void k(int v) { v = __uni_sync(~0u, v); }",
      "__global__ void k() { auto g = coalesced_threads(); }",
      "__global__ void k() { __barrier_sync(0); }",
  };
  for (const char* s : uses) EXPECT_TRUE(uses_barriers(s)) << s;
}

TEST(JitUsesBarriers, IgnoresCommentsStringsAndLookalikes) {
  const char* clean[] = {
      "__global__ void k(float* x) { x[0] = 1; }",
      "// __syncthreads();\n__global__ void k() {}",
      "/* __shfl_sync */ __global__ void k() {}",
      "__global__ void k() { const char* s = \"__syncthreads()\"; }",
      "__global__ void k() { int my__syncthreads = 0; int sync = 1; sync = sync + 1; }",
      "__global__ void k(int* a) { atomicAdd(a, 1); __shared__ int t[4]; }",
  };
  for (const char* s : clean) EXPECT_FALSE(uses_barriers(s)) << s;
}

TEST(JitScanSync, TellsBlockBarriersFromOtherSynchronisation) {
  for (const char* s : {"__syncthreads();", "int c = __syncthreads_count(p);",
                        "__syncthreads_and(p);", "if (__syncthreads_or(p)) x = 1;"}) {
    SyncUse u = scan_sync(s);
    EXPECT_TRUE(u.block_barriers) << s;
    EXPECT_FALSE(u.other_sync) << s;
    EXPECT_TRUE(u.any()) << s;
  }
  for (const char* s : {"__syncwarp();", "g.sync();", "auto t = coalesced_threads();",
                        "v = __uni_sync(~0u, v);", "v = __reduce_max_sync(~0u, v);",
                        "__barrier_sync(1);", "__syncthreads(); v = __shfl_sync(~0u, v, 0);"}) {
    SyncUse u = scan_sync(s);
    EXPECT_TRUE(u.other_sync) << s;
    EXPECT_TRUE(u.any()) << s;
  }
  // In a comment or a string literal (raw ones too) nothing counts.
  for (const char* s : {"// g.sync(); __syncwarp();\nx = 1;", "/* __shfl_sync */ x = 1;",
                        "p = \"__syncthreads() coalesced_threads\";", "p = R\"(__syncwarp())\";",
                        "g.sync = 1;", "sync(); g . size();"}) {
    SyncUse u = scan_sync(s);
    EXPECT_FALSE(u.any()) << s;
    EXPECT_FALSE(u.block_barriers || u.other_sync) << s;
  }
  // The construct named is the first use, not the library's #include or namespace alias
  // (which count alone too: the library may be used through a macro).
  const SyncUse cg = scan_sync(
      "#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\nusing namespace "
      "cooperative_groups;\n__device__ float f(float v) {\n  return __shfl_down_sync(~0u, v, "
      "1);\n}\nauto t = tiled_partition<32>(b);");
  EXPECT_EQ(cg.first_other, "__shfl_down_sync");
  EXPECT_EQ(cg.first_other_line, 5);
  const SyncUse include_only = scan_sync("#include <cub/cub.cuh>\nint x;");
  EXPECT_TRUE(include_only.other_sync);
  EXPECT_EQ(include_only.first_other, "cub");
  EXPECT_EQ(include_only.first_other_line, 1);
  EXPECT_TRUE(scan_sync("auto f = [&](int i) { return i; };").lambda);
  EXPECT_TRUE(scan_sync("auto f = [n] mutable { return ++n; };").lambda);
  EXPECT_TRUE(scan_sync("auto f = [] -> int { return 1; };").lambda);
  EXPECT_FALSE(scan_sync("a[i] = b[j] + 1; // [](){}").lambda);
}

// Legacy warp-synchronous code: a volatile pointer stored through and then read or stored again
// with no barrier between (scan_sync counts it as other synchronisation, the cpu backend keeps
// the warp's lanes in step at its stores).
TEST(JitScanSync, FindsWarpSynchronousVolatilePointers) {
  auto lines = [](const std::string& s) {
    std::vector<int> out;
    for (const LockstepPointer& p : lockstep_pointers(lex(s))) out.push_back(p.line);
    return out;
  };
  using L = std::vector<int>;
  // A parameter, its function's body the scope: the read after the first store.
  EXPECT_EQ(lines("__device__ void w(volatile float* s, int t) {\n  s[t] += s[t + 32];\n  s[t] "
                  "+= s[t + 16];\n}\n__global__ void k(float* s) { s[0] = s[1]; s[2] = s[0]; }"),
            L{2});
  // A local; `*p =` stores; a store then a read on later lines.
  EXPECT_EQ(lines("__global__ void k(int* x) {\n  const volatile int* c = x;\n  volatile int* p = "
                  "x + threadIdx.x;\n  *p = 1;\n  int v = x[0];\n  x[1] = p[1];\n}"),
            L{6});
  // A shared array (one extent), volatile in any word order.
  const auto shared =
      lockstep_pointers(lex("{\n  static __shared__ volatile float s[2 * N];\n  s[t] = "
                            "1;\n  s[t] += s[t + 16];\n}"));
  ASSERT_EQ(shared.size(), 1u);
  EXPECT_TRUE(shared[0].array);
  EXPECT_EQ(shared[0].line, 4);
  EXPECT_EQ(lines("{ volatile __shared__ int s[64]; s[t] = 1; y = s[t ^ 1]; }"), L{1});
  // A shared array of more extents, its subscripts all of the element (CUSP's SpMV: `if (lane <
  // 2) b[w][lane] = ...; lo = b[w][0];`); its inner extents after its first.
  const auto two_d =
      lockstep_pointers(lex("{\n  __shared__ volatile int b[W][2];\n  if (l < 2) b[w][l] = p[r + "
                            "l];\n  y = b[w][0];\n}"));
  ASSERT_EQ(two_d.size(), 1u);
  EXPECT_TRUE(two_d[0].array);
  EXPECT_EQ(two_d[0].line, 4);
  EXPECT_EQ(two_d[0].inner, two_d[0].name + 4);  // (b [ W ] [ 2 ])
  EXPECT_EQ(two_d[0].last, two_d[0].name + 6);
  EXPECT_EQ(two_d[0].body, 0u);
  // A parameter: its function body's '{'.
  const std::vector<Token> param =
      lex("__global__ void k(volatile int* f, int* o) { f[threadIdx.x] = 1; "
          "o[b] = f[threadIdx.x - 1]; }");
  const auto in_param = lockstep_pointers(param);
  ASSERT_EQ(in_param.size(), 1u);
  EXPECT_TRUE(is_punct(param[in_param[0].body], "{"));
  // In a kernel, a pointer the same in every thread whose stores and reads name elements the
  // same in every thread (a decoupled look-back's flags) goes between blocks: not lockstep. A
  // subscript or pointer computed from threadIdx, a call or a name passed to a call, a name
  // declared without a value (a lambda's parameter), or a device function's parameter is
  // one of each thread.
  const std::string look_back = R"(__global__ void k(int* flags_p, int* agg_p, unsigned* c) {
  volatile int* flags = flags_p;
  volatile int* agg = agg_p;
  __shared__ int tile_s;
  if (threadIdx.x == 0) tile_s = atomicAdd(c, 1u);
  __syncthreads();
  const int tile = tile_s, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    agg[tile] = 5;
    flags[tile] = 1;
    int look = tile - 1, sum = 0;
    while (look >= 0 && flags[look] != 0) { sum += agg[look]; --look; }
    agg[tile] = sum;
  }
  WHERE
})";
  auto with = [&](const std::string& where) {
    std::string s = look_back;
    return lines(s.replace(s.find("WHERE"), 5, where));
  };
  EXPECT_EQ(with(""), L{});
  EXPECT_EQ(with("int m = min(tile - 1, 3); flags[tile] = 1; agg[0] = flags[m];"), L{});
  EXPECT_EQ(with("flags[lane] = 1; agg[0] = flags[lane + 1];"), L{15});
  EXPECT_EQ(with("flags[lane] = 1; agg[0] = flags[0];"), L{15});  // (read after a varying store)
  EXPECT_EQ(with("int m = lane / 2; flags[tile] = 1; agg[0] = flags[m];"), L{15});
  EXPECT_EQ(with("int m = pick(3); flags[tile] = 1; agg[0] = flags[m];"), L{15});
  EXPECT_EQ(with("int m = tile; bump(m); flags[tile] = 1; agg[0] = flags[m];"), L{15});
  EXPECT_EQ(with("int m = tile; bump(&m); flags[tile] = 1; agg[0] = flags[m];"), L{15});
  EXPECT_EQ(with("auto f = [&](int m) { flags[tile] = 1; return flags[m]; };"), L{15});
  EXPECT_EQ(with("volatile int* p = flags + lane; p[0] = 1; agg[0] = p[1];"), L{15});
  // (a value negated; one set in a branch that only some threads take; one through a
  // reference; threadIdx through a macro)
  EXPECT_EQ(with("int m = 0; m = -lane; flags[tile] = 1; agg[0] = flags[m + 40];"), L{15});
  EXPECT_EQ(with("int m = tile; if (lane == 1) m = 0; flags[tile] = 1; agg[0] = flags[m];"), L{15});
  EXPECT_EQ(with("int m = tile; if (lane == 1) { m++; } flags[tile] = 1; agg[0] = flags[m];"),
            L{15});
  EXPECT_EQ(with("int m = tile; int& r = m; r = lane; flags[tile] = 1; agg[0] = flags[m];"), L{15});
  // A pointer only the block's leader names (under `if (threadIdx.x == 0)`, or a variable only
  // ever set to threadIdx.x), even through a call, carries nothing between lanes: not lockstep.
  // Lanes that store and a leader that reads them, or a leader test of another value, are.
  const std::string leader = R"(__device__ int ld(volatile int* f, int i) { return f[i]; }
__global__ void k(volatile int* flag, volatile int* agg, int tile) {
  const int tid = threadIdx.x;
  if (TEST) {
    agg[tile] = 5; flag[tile] = 1;
    for (int look = tile - 1; look >= 0; --look) { while (ld(flag, look) == 0) {} agg[tile] += agg[look]; }
  }
  OUTSIDE
})";
  auto leader_with = [&](const std::string& test, const std::string& outside) {
    std::string s = leader;
    s.replace(s.find("TEST"), 4, test);
    return lines(s.replace(s.find("OUTSIDE"), 7, outside));
  };
  EXPECT_EQ(leader_with("tid == 0", ""), L{});
  EXPECT_EQ(leader_with("0 == threadIdx.x", ""), L{});
  EXPECT_EQ(leader_with("!threadIdx.x", ""), L{});
  EXPECT_EQ(leader_with("tid == 0", "agg[tid] = 1; flag[0] = agg[1];"), L{6});
  EXPECT_EQ(leader_with("tid < 2", ""), L{6});
  EXPECT_EQ(leader_with("threadIdx.y == 0", ""), L{6});
  EXPECT_EQ(lines("__global__ void k(volatile int* s) {\n  s[threadIdx.x] = threadIdx.x;\n  if "
                  "(threadIdx.x == 0) s[32] = s[1] + s[2];\n}"),
            L{3});
  EXPECT_EQ(lines("__global__ void k(volatile int* s, int t) {\n  int tid = threadIdx.x;\n  tid "
                  "+= 1;\n  if (tid == 0) { s[tid] = 1; s[0] = s[tid + 1]; }\n}"),
            L{4});
  EXPECT_EQ(lines("#define TID threadIdx.x\n#define HALF 16\n__global__ void k(int* o) {\n  "
                  "__shared__ volatile int s[64];\n  s[TID] += s[TID + HALF];\n}"),
            L{5});
  EXPECT_EQ(lines("#define NEXT 1\n__global__ void k(volatile int* f) {\n  __shared__ int t_s;\n  "
                  "const int t = t_s;\n  f[t] = 1; f[0] = f[t + NEXT];\n}"),
            L{});  // (a macro of a constant is the same in every thread)
  EXPECT_EQ(lines("__device__ void d(volatile int* f, int t) { f[t] = 1; f[0] = f[t + 1]; }"),
            L{1});
  // Read in the statement of the store, and no barrier before the end (or the next access).
  EXPECT_EQ(lines("{\n  volatile int* s = x;\n  for (int d = 1; d < 32; d *= 2)\n    if (l >= d) "
                  "s[l] += s[l - d];\n}"),
            L{4});
  const SyncUse u = scan_sync("{\n  volatile int* vs = s;\n  vs[t] = 1;\n  vs[t] += vs[t + 1];\n}");
  EXPECT_TRUE(u.other_sync);
  EXPECT_EQ(u.first_other, "warp-synchronous code through volatile 'vs'");
  EXPECT_EQ(u.first_other_line, 4);
  // Not: barriers between the accesses (cooperative groups' too), stores only, reads of the
  // elements stored (cuda-samples' scan1Inclusive), reads only, a member access (`s[i].x`), a
  // name declared again, two stars, a volatile array.
  for (const char* s : {
           "{ volatile int* s = x; s[t] = 1; __syncthreads(); y = s[t + 1]; __syncwarp(); s[t] "
           "= 2; }",
           "{ volatile int* s = x; s[t] = 1; cg::sync(b); y = s[t + 1]; s[t] = 2; g.sync(); y = "
           "s[0]; }",
           "{ volatile int* s = x; for (h = 32; h > 0; h /= 2) { if (t < h) s[t] += s[t + h]; "
           "__syncthreads(); } y = s[0]; }",
           "{ volatile int* s = x; s[p] = 0; p += n; s[p] = v; for (;;) { cg::sync(b); int u = "
           "s[p] + s[p - 1]; cg::sync(b); s[p] = u; } return s[p]; }",
           "{ volatile int* flag = x; while (flag[0] == 0) {} y = flag[1] + *flag; }",
           "{ volatile int* p = x; y = p[0]; p[1] = y; }",
           "{ volatile float4* s = x; s[t].x = 1; s[t].y = s[t + 1].y; }",
           "{ volatile int* s = x; s[0] = 1; { int* s = z; s[1] = s[2]; } }",
           "{ volatile int** s = x; s[0][0] = 1; y = s[1][0]; }",
           "{ volatile int s[64]; s[t] = 1; s[t] += s[t + 1]; }",
           "{ __shared__ volatile int s[8][8]; s[t][0] = 1; y = s[t][0]; }",
       })
    EXPECT_TRUE(lines(s).empty()) << s;
}

TEST(JitKernelBodies, OffsetsOfEachDefinition) {
  const std::string src = R"(__global__ void decl(int* x);
__device__ int f() { return 1; }
// __global__ void c() { }
__global__ void __launch_bounds__(128) a(int* x) { x[0] = "}"[0]; }
template <typename T> __global__ void b(T* x) { if (x) { x[0] = 1; } }
__global__ void open(int* x) { x[0] = 1;)";
  std::vector<KernelBody> bodies = find_kernel_bodies(src);
  ASSERT_EQ(bodies.size(), 3u);
  EXPECT_EQ(bodies[0].name, "a");
  EXPECT_EQ(bodies[0].params, std::vector<std::string>{"x"});
  EXPECT_EQ(src.substr(bodies[0].open, bodies[0].close + 1 - bodies[0].open),
            "{ x[0] = \"}\"[0]; }");
  EXPECT_EQ(bodies[1].name, "b");
  EXPECT_EQ(src.substr(bodies[1].open, bodies[1].close + 1 - bodies[1].open),
            "{ if (x) { x[0] = 1; } }");
  EXPECT_EQ(bodies[2].name, "open");
  EXPECT_EQ(bodies[2].close, src.size());
  EXPECT_EQ(src.substr(bodies[2].open), "{ x[0] = 1;");
}

TEST(JitFindIdentifier, SkipsCommentsLiteralsAndLongerNames) {
  const std::string src =
      "return 1; // return\n\"return\"; return_value; co_return; R\"(return)\";"
      "\n#define R return";
  std::vector<std::size_t> at = find_identifier(src, "return");
  ASSERT_EQ(at.size(), 2u);
  EXPECT_EQ(at[0], 0u);
  EXPECT_EQ(at[1], src.rfind("return"));
}

}  // namespace
}  // namespace kiln::jit

namespace kiln::jit {

TEST(JitFindGlobal, TypesAndExtentsWhateverTheirExpressions) {
  const char* src = R"(#define KERNEL_LENGTH 9
// __constant__ float c_K[1];  (a comment: not the declaration)
__constant__ float c_K[KERNEL_LENGTH];
static __device__ const unsigned int table[4][2 * 3] = {};
__device__ std::int64_t counter;
__global__ void k(float* x) { float c_K = 1; x[0] = c_K; })";
  std::optional<GlobalDecl> k = find_global(src, "c_K");
  ASSERT_TRUE(k);
  EXPECT_EQ(k->type, "float");
  EXPECT_EQ(k->extents, std::vector<std::string>{"KERNEL_LENGTH"});
  std::optional<GlobalDecl> t = find_global(src, "table");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->type, "unsigned int");
  EXPECT_EQ(t->extents, (std::vector<std::string>{"4", "2 * 3"}));
  std::optional<GlobalDecl> c = find_global(src, "counter");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->type, "std::int64_t");
  EXPECT_TRUE(c->extents.empty());
  EXPECT_FALSE(find_global(src, "x"));
  EXPECT_FALSE(find_global(src, "nothing"));
  // A long run of words before the name is read without recursion (no stack to overflow).
  std::string huge = "__device__ ";
  for (int i = 0; i < 50000; ++i) huge += "a_b ";
  EXPECT_TRUE(find_global(huge + "zz;", "zz"));
}

// A global in a namespace by its qualified name, or unqualified where the global namespace has
// none of that name; its symbol is the mangled one NVRTC and the host compiler give it (survey
// 14: `cfg::weights` could not be set, `weights` failed at the launch).
TEST(JitFindGlobal, NamespacesAndTheirSymbols) {
  const char* src = R"(namespace cfg { __constant__ float weights[4]; }
namespace a { namespace b { __constant__ int table[2]; } struct S { int table; }; }
namespace x::y { __device__ double table; }
namespace { __constant__ int hidden[2]; }
extern "C" { __device__ int plain_c; }
__constant__ int table[3];)";
  std::optional<GlobalDecl> w = find_global(src, "cfg::weights");
  ASSERT_TRUE(w);
  EXPECT_EQ(w->scope, "cfg::");
  EXPECT_EQ(global_symbol(*w, "cfg::weights"), "_ZN3cfg7weightsE");
  std::optional<GlobalDecl> unqualified = find_global(src, "weights");
  ASSERT_TRUE(unqualified);
  EXPECT_EQ(global_symbol(*unqualified, "weights"), "_ZN3cfg7weightsE");
  std::optional<GlobalDecl> ab = find_global(src, "a::b::table");
  ASSERT_TRUE(ab);
  EXPECT_EQ(ab->extents, std::vector<std::string>{"2"});
  EXPECT_EQ(global_symbol(*ab, "a::b::table"), "_ZN1a1b5tableE");
  std::optional<GlobalDecl> xy = find_global(src, "x::y::table");
  ASSERT_TRUE(xy);
  EXPECT_EQ(xy->type, "double");
  EXPECT_EQ(global_symbol(*xy, "x::y::table"), "_ZN1x1y5tableE");
  std::optional<GlobalDecl> outer = find_global(src, "table");  // (the global namespace's first)
  ASSERT_TRUE(outer);
  EXPECT_EQ(outer->extents, std::vector<std::string>{"3"});
  EXPECT_EQ(global_symbol(*outer, "table"), "table");
  std::optional<GlobalDecl> c = find_global(src, "plain_c");
  ASSERT_TRUE(c);
  EXPECT_EQ(global_symbol(*c, "plain_c"), "plain_c");
  EXPECT_FALSE(find_global(src, "a::table"));
  EXPECT_FALSE(find_global(src, "hidden"));  // (an anonymous namespace's: no symbol)
}

TEST(JitFindGlobal, LaterDeclaratorsHaveTheFirstOnesType) {
  // PMPP's MRI-Q: `__constant__ float kx_c[CHUNK], ky_c[CHUNK], kz_c[CHUNK];`
  const char* src = R"(__constant__ float kx_c[CHUNK], ky_c[CHUNK], kz_c[2 * CHUNK];
__constant__ unsigned int a_c = SCALE, b_c{2}, w_c[3] = {1, 2, 3}, z_c;
__constant__ float2 p_c = make_float2(1, 2), q_c[4];
__device__ void f(int p, float q) { int r, s; }
float host_x, host_y;)";
  std::optional<GlobalDecl> ky = find_global(src, "ky_c");
  ASSERT_TRUE(ky);
  EXPECT_EQ(ky->type, "float");
  EXPECT_EQ(ky->extents, std::vector<std::string>{"CHUNK"});
  std::optional<GlobalDecl> kz = find_global(src, "kz_c");
  ASSERT_TRUE(kz);
  EXPECT_EQ(kz->extents, std::vector<std::string>{"2 * CHUNK"});
  for (const char* name : {"b_c", "w_c", "z_c"}) {
    std::optional<GlobalDecl> g = find_global(src, name);
    ASSERT_TRUE(g) << name;
    EXPECT_EQ(g->type, "unsigned int") << name;
  }
  EXPECT_EQ(find_global(src, "w_c")->extents, std::vector<std::string>{"3"});
  ASSERT_TRUE(find_global(src, "q_c"));
  EXPECT_EQ(find_global(src, "q_c")->type, "float2");
  // Parameters, locals and host variables are no globals of a module.
  for (const char* name : {"q", "s", "host_y"}) EXPECT_FALSE(find_global(src, name)) << name;
}

// `static` goes from namespace-scope __constant__ and __device__ variables (columns kept), so
// that m:set_constant finds them by name; functions, a function's statics, and statics that are
// no GPU globals stay.
TEST(JitSettableStatics, NamespaceScopeGlobalsOnly) {
  const std::string src = R"(static __constant__ unsigned int c_Table[3][31];
__constant__ static float w = 1.0f;
namespace ns { static __device__ int counter; }
extern "C" { static __device__ int n, m; }
static int host_only;
static __device__ int twice(int v) { static __device__ int inner; return 2 * v; }
static __device__ __forceinline__ float pick(float a) { return a; }
struct S { static __device__ int member; };
__global__ void k(float* x) { static __shared__ float s[4]; x[0] = s[0]; })";
  const std::string out = settable_statics(src);
  ASSERT_EQ(out.size(), src.size());
  EXPECT_EQ(out.substr(0, 49), "       __constant__ unsigned int c_Table[3][31];\n");
  EXPECT_NE(out.find("__constant__        float w"), std::string::npos) << out;
  EXPECT_NE(out.find("namespace ns {        __device__ int counter; }"), std::string::npos) << out;
  EXPECT_NE(out.find("extern \"C\" {        __device__ int n, m; }"), std::string::npos) << out;
  for (const char* kept :
       {"static int host_only;", "static __device__ int twice(", "static __device__ int inner;",
        "static __device__ __forceinline__", "struct S { static __device__ int member; }",
        "static __shared__ float s[4];"})
    EXPECT_NE(out.find(kept), std::string::npos) << kept << "\n" << out;
}

// Lines in preprocessor conditional groups, where a kernel may be gone after the preprocessor
// (a module builds its plain kernels together, so one such kernel failed the others): nested
// groups, #else branches, an unclosed group; the include guard around a whole file is not one.
TEST(JitKernelDecl, ConditionalLines) {
  const char* src = R"(#ifndef KERNELS_H
#define KERNELS_H
__global__ void a(int* p) {}
#ifdef WITH_B
__global__ void b(int* p) {}
  #  if N > 2
__global__ void c(int* p) {}
  #  endif
#else
__global__ void d(int* p) {}
#endif
#define X \
  if
__global__ void e(int* p) {}
#if 0
__global__ void f(int* p) {}
#endif
#endif
#if UNCLOSED
__global__ void g(int* p) {}
)";
  const std::vector<bool> in = conditional_lines(src);
  std::map<std::string, bool> by_kernel;
  for (const KernelDecl& d : find_kernels(src)) by_kernel[d.name] = in.at(d.line);
  EXPECT_EQ(by_kernel, (std::map<std::string, bool>{{"a", false},
                                                    {"b", true},
                                                    {"c", true},
                                                    {"d", true},
                                                    {"e", false},
                                                    {"f", true},
                                                    {"g", true}}));
  // Without the guard's #define, the outer #ifndef is a group like any other.
  EXPECT_TRUE(conditional_lines("#ifndef A\n__global__ void a() {}\n#endif\n").at(2));
}

}  // namespace kiln::jit

namespace kiln::jit {

TEST(JitFindStruct, DataMembersInOrder) {
  const char* src = R"(#define N 3
struct Other { int q; };
struct Params {
  float scale;            // a comment
  unsigned int n, m;
  float4 box;
  double w[N];
  static const int kMax = 4;
  __device__ float area() const { return box.z * box.w; }
 public:
  const long long id;
};
typedef struct { short a; char b[2]; } Packed;
__global__ void k(Params p, Packed q) {})";
  std::optional<StructDecl> p = find_struct(src, "Params");
  ASSERT_TRUE(p);
  std::vector<std::pair<std::string, std::string>> got;
  for (const auto& m : p->members) got.emplace_back(m.name, m.type);
  EXPECT_EQ(got, (std::vector<std::pair<std::string, std::string>>{
                     {"scale", "float"}, {"n", "unsigned int"}, {"m", "unsigned int"},
                     {"box", "float4"}, {"w", "double"}, {"id", "long long"}}));
  std::optional<StructDecl> q = find_struct(src, "Packed");
  ASSERT_TRUE(q);
  ASSERT_EQ(q->members.size(), 2u);
  EXPECT_EQ(q->members[1].name, "b");
  EXPECT_EQ(q->members[1].type, "char");
  EXPECT_TRUE(q->template_params.empty());
  EXPECT_FALSE(find_struct(src, "Missing"));
  // A class template's parameters, defaults and nested template arguments aside.
  std::optional<StructDecl> t = find_struct(
      "template <typename T, int N = 4, class Less = less<T, 2>> struct Info { T* d; int s[N]; };",
      "Info");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->template_params, (std::vector<std::string>{"T", "N", "Less"}));
  EXPECT_EQ(t->members[0].type, "T *");
}

// Attributes between `struct` and its name are read past; an `enum class` is no class.
TEST(JitFindStruct, AttributesAndScopedEnumerations) {
  const char* src = R"(enum class Mode : int { Fast, Exact };
enum struct Kind { A, B };
struct alignas(16) Particle { float4 p; int id; };
struct __align__(8) __attribute__((packed)) Pair { int a, b; };
struct [[nodiscard]] Tagged { short t; };)";
  EXPECT_FALSE(find_struct(src, "Mode"));
  EXPECT_FALSE(find_struct(src, "Kind"));
  for (const char* name : {"Particle", "Pair", "Tagged"})
    EXPECT_TRUE(find_struct(src, name)) << name;
  EXPECT_EQ(find_struct(src, "Particle")->members.size(), 2u);
  EXPECT_EQ(find_struct(src, "Pair")->members[1].name, "b");
}

TEST(JitFindEnum, EachDeclarationForm) {
  const char* src = R"(#define E Hidden
enum Op { ADD, MUL };
enum class Mode : unsigned char { Fast, Exact };
enum struct Kind;
typedef enum { RED, GREEN } Colour;
typedef enum tag_t { X } Tag;
namespace geo { enum Axis : short { U, V }; }
enum { ANON = 3 };
struct Op2 { int v; };
void f(enum Op o);)";
  for (const char* name : {"Op", "Mode", "Kind", "Colour", "Tag", "tag_t", "Axis"})
    EXPECT_TRUE(declares_enum(src, name)) << name;
  for (const char* name : {"Op2", "ADD", "Fast", "E", "Hidden", "f", "o", "ANON"})
    EXPECT_FALSE(declares_enum(src, name)) << name;
}

// Spin-waits on a volatile __shared__ variable: loops whose condition reads it and whose body
// assigns nothing and does not synchronise, in each loop form; nothing else.
TEST(JitSpinWaits, LoopsWaitingOnSharedFlags) {
  auto waits = [](const std::string& body) {
    const std::string src =
        "__global__ void k(int* o) {\n  __shared__ volatile int flag, s[4];\n"
        "  __shared__ int plain;\n  volatile int* g = o;\n" +
        body + "\n}";
    const std::vector<Token> t = lex(src);
    std::vector<std::string> found;
    for (const SpinWait& w : spin_waits(t))
      found.push_back(w.name + "@" + t[w.condition].text + (w.shared ? "" : " global"));
    return found;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(waits("while (flag == 0) { }"), V{"flag@flag"});
  EXPECT_EQ(waits("while (!s[1]);"), V{"s@!"});
  EXPECT_EQ(waits("do { __nanosleep(32); __threadfence_block(); } while (flag != 2);"),
            V{"flag@flag"});
  EXPECT_EQ(waits("for (int i = 0; flag < 3;) ;"), V{"flag@flag"});
  EXPECT_EQ(waits("if (o[0]) { while (flag <= 0) {} }"), V{"flag@flag"});
  // Not: a body that assigns or synchronises, a flag that is not volatile or not shared, a
  // condition without the flag, a for loop without a condition.
  for (const char* body :
       {"while (flag == 0) { o[0]++; }", "while (flag == 0) { o[1] = 2; }",
        "do { __syncthreads(); } while (flag == 0);", "while (plain == 0) {}",
        "while (o[0] == 0) {}", "for (;;) { if (flag) break; }", "while (flag == 0) { o[0] += 1; }",
        "while (__shfl_sync(~0u, flag, 0) == 0) {}", "for (int i = 0; i < flag; i++) put(o, i);",
        "while (flag == 0) { step(o); }"})
    EXPECT_EQ(waits(body), V{}) << body;
  // In global memory, which another block may set: a volatile pointer the body sets to other
  // than its shared memory, a read through a volatile cast.
  EXPECT_EQ(waits("while (g[0] == 0) {}"), V{"g@g global"});
  EXPECT_EQ(waits("while (((volatile int*)o)[0] < 4) { }"), V{"o@( global"});
  EXPECT_EQ(waits("while (*(volatile unsigned*)&o[2] == 0u) __threadfence();"), V{"o@* global"});
  EXPECT_EQ(waits("asm volatile(\"membar.gl;\"); while (o[0] == 0) {}"), V{});
  // Still one with kiln's yield in its condition (the plan reads the source after the rewrite).
  EXPECT_EQ(waits("while (::kiln_cpu::spin_yield(), flag == 0) { }"), V{"flag@::"});
  // A flag is the function body's that declares it: another kernel's loop over a parameter of
  // the same name waits for nothing; one declared at file scope is not followed.
  const std::string two =
      "__global__ void a(int* o) { __shared__ volatile int n; n = 1; o[0] = n; }\n"
      "__global__ void b(int* o, int n) { while (n > o[0]) {} }\n"
      "__shared__ volatile int g;\n__global__ void c() { while (g == 0) {} }";
  EXPECT_TRUE(spin_waits(lex(two)).empty());
  // A function's volatile pointer parameter is a flag in global memory (sync-free triangular
  // solves: `while (ready[col] == 0) {}`), a declaration's is not followed.
  const std::string params =
      "__device__ void wait_for(volatile int* const ready, int i) { while (!ready[i]) {} }\n"
      "__global__ void k(int n, volatile int* done) {\n  while (done[n] == 0) {}\n}\n"
      "__global__ void d(volatile int* x);\n__global__ void e(int* x) { while (x[0]) {} }";
  const std::vector<Token> pt = lex(params);
  std::vector<std::string> found;
  for (const SpinWait& w : spin_waits(pt))
    found.push_back(w.name + (w.shared ? "" : " global") + "@" +
                    std::to_string(pt[w.condition].line));
  EXPECT_EQ(found, (std::vector<std::string>{"ready global@1", "done global@3"}));
  EXPECT_EQ(scan_sync("__global__ void k(volatile int* f) {\n  while (!f[threadIdx.x + 1]) {}\n}")
                .first_other,
            "a spin-wait on volatile 'f' (another thread sets it)");
  // Between blocks alone: read and stored at subscripts the same in every thread (a look-back's
  // flags, a grid barrier's counter); not where a thread stores its own element.
  auto between = [](const std::string& body) {
    const std::vector<Token> t =
        lex("__global__ void k(volatile int* f, int* c, int n) {\n  const int tile = "
            "blockIdx.x, w = threadIdx.x / 32;\n" +
            body + "\n}");
    const std::vector<SpinWait> w = spin_waits(t);
    return w.size() == 1 ? std::optional<bool>(w[0].between_blocks) : std::nullopt;
  };
  EXPECT_EQ(between("if (threadIdx.x == 0) { while (f[tile - 1] == 0) {} f[tile] = 1; }"), true);
  EXPECT_EQ(between("volatile int* g = f;\n"
                    "if (threadIdx.x == 0 && tile > 0) { while (g[tile - 1] == 0) {} }\n"
                    "if (threadIdx.x == 0) g[tile] = 1;"),
            true);  // (a declaration is no store; the leader's test may be a conjunct)
  EXPECT_EQ(
      between("if (threadIdx.x == 0) { atomicAdd(c, 1); while (((volatile int*)c)[0] < n) {} }"),
      true);
  EXPECT_EQ(between("atomicAdd(c, 1); while (((volatile int*)c)[0] < n) {}"), false);
  EXPECT_EQ(between("while (f[w - 1] == 0) {} f[w] = 1;"), false);
  EXPECT_EQ(between("if (w == 1) { while (f[0] == 0) {} } if (w == 0) f[w] = 1;"), false);
  EXPECT_EQ(between("if (threadIdx.x == 0) { while (f[0] == 0) {} *f = 1; }"), true);
  EXPECT_EQ(
      between("if (threadIdx.x == 0) { while (f[0] == 0) {} } if (threadIdx.x == 32) f[0] = 1;"),
      false);  // (another thread of the block sets it)
  EXPECT_EQ(between("if (threadIdx.x == 0 && threadIdx.y == 0) { while (f[0] == 0) {} }\n"
                    "if (threadIdx.x == 0 && threadIdx.y == 1) f[0] = 1;"),
            false);  // (another row's leader)
  EXPECT_EQ(between("if (threadIdx.x == 0) { while (f[0] == 0) {} } if (threadIdx.x == 32) g(f);"),
            false);  // (a call may store it)
  // scan_sync counts one as synchronisation, naming the flag and the condition's line.
  const SyncUse u = scan_sync("{\n  __shared__ volatile int ready;\n  while (!ready) {}\n}");
  EXPECT_TRUE(u.other_sync);
  EXPECT_EQ(u.first_other, "a spin-wait on __shared__ 'ready' (another thread sets it)");
  EXPECT_EQ(u.first_other_line, 3);
}

// A kernel's namespaces, as its name expression needs them (an anonymous one adds nothing).
TEST(JitKernelDecl, NamespacesGiveTheScope) {
  const auto decls = find_kernels(R"(
namespace clover { __global__ void a(int* p) {} namespace inner { __global__ void b() {} } }
namespace x::y { template <int N> __global__ void c(int* p) {} }
namespace { __global__ void d() {} }
extern "C" { __global__ void e() {} }
__global__ void f() {}
)");
  std::vector<std::string> scoped;
  for (const KernelDecl& d : decls) scoped.push_back(d.scope + d.name);
  EXPECT_EQ(scoped,
            (std::vector<std::string>{"clover::a", "clover::inner::b", "x::y::c", "d", "e", "f"}));
}

// The __device__ variables kernels may store to: every declarator, not const tables, constants,
// functions or a function's own variables.
TEST(JitKernelDecl, DeviceVariables) {
  EXPECT_EQ(device_variables(R"(
__device__ int g_hits, *g_next = nullptr, g_bins[4][2];
__device__ const int table[2] = {1, 2};
__constant__ float c_w[9];
static __device__ constexpr int kN = 4;
__device__ float3 g_origin = {0, 0, 0};
namespace world { __device__ hitable* d_world; }
__device__ int f(int x) { __shared__ int s; return x; }
__device__ __forceinline__ int g(int* p);
__global__ void k() { __device__ int never; }
struct View { float* p; __device__ float& operator[](int i) { return p[i]; } };
)"),
            (std::vector<std::string>{"g_hits", "g_next", "g_bins", "g_origin", "d_world"}));
  EXPECT_TRUE(device_variables("__global__ void k(int* p) { p[0] = 1; }").empty());
}

}  // namespace kiln::jit
