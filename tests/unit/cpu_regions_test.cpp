// Region mode (jit/cpu/regions.h): what the rewrite takes and declines, and kernels that
// exercise its corners (returned leaders, per-thread arrays, loops all threads leave), checked
// against host references.
#include <algorithm>
#include <numeric>
#include <set>

#include "cpu_test_util.h"
#include "jit/cpu/block_groups.h"
#include "jit/cpu/regions.h"
#include "jit/cpu/signed_indices.h"
#include "jit/cpu/wide_subscripts.h"
#include "runtime/error.h"

namespace kiln::cpu_test {
namespace {

// Why form_regions declines source ("" when it takes it).
std::string declined(const std::string& source) {
  std::string why;
  return cpu::form_regions(source, &why) ? "" : why;
}

TEST(CpuRegions, RewriteKeepsLinesAndLeavesOtherKernelsAlone) {
  const std::string src = R"(__global__ void plain(int* x) { x[threadIdx.x] = 1; }
__global__ void k(float* out) {
  __shared__ float s[32];
  const int t = threadIdx.x, u = 31 - t;
  float v[2];
  v[0] = t; v[1] = u;
  s[t] = v[0];
  __syncthreads();
  out[t] = s[u] + v[1];
})";
  auto r = cpu::form_regions(src);
  ASSERT_TRUE(r);
  EXPECT_EQ(std::count(r->begin(), r->end(), '\n'), std::count(src.begin(), src.end(), '\n'));
  EXPECT_NE(r->find("__global__ void plain(int* x) { x[threadIdx.x] = 1; }\n"), std::string::npos);
  EXPECT_NE(r->find("each_thread"), std::string::npos);
  EXPECT_EQ(r->find("__syncthreads"), std::string::npos);
}

TEST(CpuRegions, DeclinesWhatItCannotRewriteSafely) {
  auto kernel = [](const std::string& body) {
    return "#define TID threadIdx.x\n__global__ void k(int* x, int n) {\n" + body + "\n}";
  };
  // Each case: a body, and a word of the reason.
  const std::pair<std::string, std::string> cases[] = {
      {"x[0] = __syncthreads_count(x[0]);", "__syncthreads_count other than"},
      {"int c = __syncthreads_or(n); __syncthreads(); c = 2; x[0] = c;", "written"},
      {"if (__syncthreads(), n) x[0] = 1;", "header"},
      {"switch (n) { case 1: __syncthreads(); }", "switch"},
      {"do { __syncthreads(); } while (n-- > 0);", "writes 'n'"},
      {"int a = n; auto t = a + threadIdx.x; __syncthreads(); x[t] = 1;", "auto"},
      {"int a = n; auto f = [=] { return a; }; __syncthreads(); x[0] = f();", "by copy"},
      {"int a = n; auto f = [&a, b = n] { return a + b; }; __syncthreads(); x[0] = f();",
       "by copy"},
      {"int& r = x[0]; __syncthreads(); r = 1;", "reference"},
      {"int a[] = {1, 2}; __syncthreads(); x[0] = a[1];", "array"},
      {"for (int i = threadIdx.x; i < n; ++i) __syncthreads();", "threadIdx"},
      {"for (int i = TID; i < n; ++i) __syncthreads();", "threadIdx"},
      {"for (int i = 0; i < count(n, 4); ++i) __syncthreads();", "call"},
      {"for (int i = 0; i < n; i += x->max(1)) __syncthreads();", "call"},
      {"while (n-- > 0) __syncthreads();", "writes 'n'"},
      {"for (int i = 0; i < n; ++i) { ++i; __syncthreads(); }", "loop variable 'i'"},
      {"for (int i = 0; i < n; ++i) { int* p = &i; __syncthreads(); x[0] = *p; }",
       "loop variable 'i'"},
      {"#if 1\n__syncthreads();\n#endif", "preprocessor"},
      {"struct P { int a; } p; __syncthreads(); x[0] = p.a;", "with its type"},
  };
  for (const auto& [body, reason] : cases) {
    const std::string why = declined(kernel(body));
    EXPECT_NE(why.find(reason), std::string::npos) << body << " -> \"" << why << "\"";
  }
  // Taken: reads of loop variables, && (not an address), a loop's own step, #pragma lines.
  EXPECT_EQ(declined(kernel("#pragma unroll\nfor (int i = 0; i < 4; ++i) x[i] = i;\n"
                            "__syncthreads();\n  #pragma unroll 2\nfor (int i = 0; i < 4; ++i) {\n"
                            "#pragma unroll\nfor (int j = 0; j < 2; ++j) x[j] += i;\n"
                            "__syncthreads(); }")),
            "");
  EXPECT_EQ(declined(kernel("for (int i = 0; i < n; i += 2) { x[i] = i && n; __syncthreads(); }")),
            "");
  // A variable of each thread that a header writes: taken where its value is the same in every
  // thread (assigned a uniform value by the init, stepped by uniform values, not written in the
  // body), declined otherwise.
  EXPECT_EQ(declined(kernel("int s; for (s = n; s > 0; s >>= 1) __syncthreads();")), "");
  // (or declared just before with such a value, the init empty: EmptyInitLoopsOverUniformVariables)
  EXPECT_EQ(declined(kernel("int s = n; for (; s > 0; s >>= 1) __syncthreads();")), "");
  // A math function in a header (Rodinia's backprop: `i <= __log2f(HEIGHT)`).
  EXPECT_EQ(declined(kernel("for (int i = 1; i <= __log2f(n) && i < min(n, 8); i++) "
                            "__syncthreads();")),
            "");
  for (const char* body : {"int s = threadIdx.x; for (; s < n; s += 32) __syncthreads();",
                           "int s, t = x[threadIdx.x]; for (s = 0; s < n; s += t) __syncthreads();",
                           "int s; for (s = 0; s < n; s++) { s += x[0]; __syncthreads(); }",
                           "int t = x[threadIdx.x], s, u; for (s = 0, u = t; s < n; s++) "
                           "__syncthreads();",
                           "int s = n; while ((s >>= 1) > 0) __syncthreads();"})
    EXPECT_NE(declined(kernel(body)).find("writes 's'"), std::string::npos) << body;
}

// A variable no later region names stays a local of its region's loop: any number of them, and
// `auto`, after the last barrier (Rodinia's srad declares a dozen there). A local that would
// shadow a variable the regions bind is replicated instead, so the two never clash.
TEST(CpuRegions, VariablesOfOneRegionStayLocal) {
  const std::string src = R"(
__global__ void k(float* out) {
  __shared__ float s[64];
  const int t = threadIdx.x;
  float keep = 2;
  s[t] = out[t];
  __syncthreads();
  float a1 = s[63 - t], a2 = a1 + 1, a3 = a2 + 1, a4 = a3 + 1, a5 = a4 + 1, a6 = a5 + 1;
  float b1 = a6 + 1, b2 = b1 + 1, b3 = b2 + 1, b4 = b3 + 1, b5 = b4 + 1, b6 = b5 + 1;
  float c1 = b6 + 1, c2 = c1 + 1, c3 = c2 + 1, c4 = c3 + 1, c5 = c4 + 1, c6 = c5 + 1;
  auto doubled = c6 * keep;
  float scaled = doubled;
  for (int r = 0; r < 2; ++r) {
    float keep = r;  // shadows the outer keep inside the loop's regions
    s[t] += keep;
    __syncthreads();
  }
  out[t] = scaled + s[t];
})";
  ASSERT_EQ(declined(src), "");
  Built b = build(src, "k");
  ASSERT_EQ(b.kernel->attributes().threads, "regions");
  std::vector<float> in(64);
  for (int t = 0; t < 64; ++t) in[t] = float(t);
  Buffer<float> out(in);
  launch(*b.kernel, {1}, {64}, 0, out.p);
  auto o = out.host();
  for (int t = 0; t < 64; ++t) ASSERT_EQ(o[t], (float(63 - t) + 17) * 2 + float(t) + 1) << t;
}

// A variable never written after its declaration is recomputed in later regions, as a const
// one is, also through a macro that only computes a value (IN_RANGE), and when a call's
// argument only reads it (`pick(s[tx] + tx, tx - 1)`, as Rodinia's nw calls its maximum); one
// that is itself an argument (which a reference parameter may bind to, also in parentheses or
// a branch of ?:) or written later is not.
TEST(CpuRegions, UnwrittenVariablesAreRecomputed) {
  const std::string src = R"(
#define IN_RANGE(x, lo, hi) ((x) >= (lo) && (x) <= (hi))
__device__ void bump(int& v) { v += 1; }
__device__ int pick(int a, int b) { return a > b ? a : b; }
__global__ void k(int* out, int n) {
  __shared__ int s[32];
  int tx = threadIdx.x;
  bool inside = IN_RANGE(tx, 1, n);
  int v = tx;
  bump(v);
  int w = tx;
  int u = tx, q = tx;
  s[tx] = v;
  __syncthreads();
  w += 2;
  bump((u));
  bump(n > 0 ? q : w);
  __syncthreads();
  out[tx] = s[31 - tx] + v + w + (inside ? 100 : 0) + 1000 * pick(s[tx] + tx, tx - 1) + u + q;
})";
  auto r = cpu::form_regions(src);
  ASSERT_TRUE(r);
  EXPECT_NE(r->find("const std::remove_cv_t<int> tx = (threadIdx.x);"), std::string::npos) << *r;
  EXPECT_NE(r->find("const std::remove_cv_t<bool> inside = (IN_RANGE(tx, 1, n));"),
            std::string::npos)
      << *r;
  for (const char* loaded : {"v", "w", "u", "q"})
    EXPECT_EQ(r->find("std::remove_cv_t<int> " + std::string(loaded) + " = "), std::string::npos)
        << loaded << "\n"
        << *r;
  Built b = build(src, "k");
  ASSERT_EQ(b.kernel->attributes().threads, "regions");
  Buffer<int> out(32, -1);
  launch(*b.kernel, {1}, {32}, 0, out.p, 7);
  auto o = out.host();
  for (int t = 0; t < 32; ++t) {
    const int s_t = 31 - t + 1;  // s[31 - t] = v of thread 31 - t
    ASSERT_EQ(o[t], s_t + (t + 1) + (t + 2) + (t >= 1 && t <= 7 ? 100 : 0) +
                        1000 * std::max((t + 1) + t, t - 1) + (t + 1) + (t + 1))
        << t;
  }
}

// An index recomputed as a choice between two sums (`int west = col > 0 ? tx - 1 : tx;`, the
// edge handling of Rodinia's stencils) is read as a choice between two loads, whose indices
// step evenly with the thread: `row[west]` becomes `(c ? row[x] : row[y])`. Not where the
// element is written; and the results are the host's, at both edges of the grid.
TEST(CpuRegions, ChosenIndicesAreReadAsChosenLoads) {
  const std::string src = R"(
__global__ void k(const int* in, int* out, int cols) {
  __shared__ int row[2][64];
  int tx = threadIdx.x;
  int col = blockIdx.x * 64 + tx - 1;
  int west = col > 0 ? tx - 1 : tx;
  int east = (col < cols - 1 && tx < 63 ? tx + 1 : tx);
  row[0][tx] = col >= 0 && col < cols ? in[col] : 0;
  __syncthreads();
  int w = row[0][west], e = row[0][east];
  row[1][tx] = 10 * w + e;
  __syncthreads();
  if (tx > 0 && tx < 63 && col < cols) {
    row[1][east] += 0;
    out[col] = row[1][tx] + 1000 * row[0][west];
  }
})";
  auto r = cpu::form_regions(src);
  ASSERT_TRUE(r);
  std::size_t chosen = 0;
  for (auto at = r->find("? row[0][kiln_s"); at != std::string::npos;
       at = r->find("? row[0][kiln_s", at + 1))
    ++chosen;
  EXPECT_EQ(chosen, 3u) << *r;
  EXPECT_NE(r->find("row[1][east] += 0"), std::string::npos) << *r;  // written: left alone
  // (such a module compiles without jump threading: the compiler asks the rewrite)
  EXPECT_TRUE(cpu::form_regions_by_kernel(src).chosen_loads);
  EXPECT_FALSE(cpu::form_regions_by_kernel(R"(
__global__ void k(int* out) {
  __shared__ int s[64];
  int tx = threadIdx.x;
  s[tx] = tx;
  __syncthreads();
  out[tx] = s[63 - tx];
})")
                   .chosen_loads);
  Built b = build(src, "k");
  ASSERT_EQ(b.kernel->attributes().threads, "regions");
  const int cols = 150, blocks = 3;
  std::vector<int> in(cols);
  for (int c = 0; c < cols; ++c) in[c] = (c * 37) % 101;
  Buffer<int> din(in), out(cols, -1);
  launch(*b.kernel, {blocks}, {64}, 0, din.p, out.p, cols);
  auto o = out.host();
  auto at = [&](int c) { return c >= 0 && c < cols ? in[c] : 0; };
  for (int bx = 0; bx < blocks; ++bx)
    for (int tx = 1; tx < 63; ++tx) {
      const int col = bx * 64 + tx - 1;
      if (col >= cols) continue;
      const int west = col > 0 ? col - 1 : col, east = col < cols - 1 ? col + 1 : col;
      ASSERT_EQ(o[col], 10 * at(west) + at(east) + 1000 * at(west)) << col;
    }
}

// A region of a barrier loop prefetches the parameters' elements its threads will index two
// iterations on (pathfinder's rows): only subscripts naming the loop's variable that can be
// computed outside the thread loop (no region locals, no division by a variable, no memory),
// and only for loops whose step is known. The kernel, whose first and last threads return
// early and whose last iterations prefetch past the array, against the host.
TEST(CpuRegions, BarrierLoopsPrefetchTwoIterationsAhead) {
  const std::string src = R"(
__global__ void k(const int* in, int* out, int rows, int cols, int step) {
  __shared__ int acc[64];
  int tx = threadIdx.x;
  int col = blockIdx.x * 62 + tx - 1;
  if (tx == 0 || col >= cols) return;
  acc[tx] = 0;
  __syncthreads();
  for (int r = 0; r < rows; r += step) {
    int q = r * cols;
    acc[tx] += in[r * cols + col] + 2 * in[q + col] + 3 * in[r * cols / step] + in[col];
    __syncthreads();
  }
  for (int r = rows - 1; r >= 0; --r) {
    acc[tx] += acc[tx] % 7 + in[r >= 0 ? r * cols + col : 0];
    __syncthreads();
  }
  out[col] = acc[tx];
})";
  auto r = cpu::form_regions(src);
  ASSERT_TRUE(r);
  auto count = [&](const std::string& what) {
    std::size_t n = 0;
    for (auto at = r->find(what); at != std::string::npos; at = r->find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("::kiln_cpu::prefetch_ahead("), 2u) << *r;
  EXPECT_EQ(count("return ((r + 2 * (step)) * cols + col); }, 0);"), 1u) << *r;
  EXPECT_EQ(count("return ((r - 2) >= 0 ? (r - 2) * cols + col : 0); }, 0);"), 1u) << *r;
  EXPECT_EQ(declined(R"(
__global__ void k(const int* in, int* out, int n) {
  __shared__ int s[32];
  int i = 0;
  while (i < n) { s[threadIdx.x] = in[i * 32 + threadIdx.x]; __syncthreads(); i += 1; }
  for (int j = 0; j < n; j <<= 1) { s[threadIdx.x] += in[j]; __syncthreads(); }
  out[threadIdx.x] = s[31 - threadIdx.x];
})"),
            "");
  EXPECT_EQ(cpu::form_regions(R"(
__global__ void k(const int* in, int* out, int n) {
  __shared__ int s[32];
  for (int j = 0; j < n; j <<= 1) { s[threadIdx.x] += in[j]; __syncthreads(); }
  out[threadIdx.x] = s[31 - threadIdx.x];
})")->find("prefetch_ahead"),
            std::string::npos);

  Built b = build(src, "k");
  ASSERT_EQ(b.kernel->attributes().threads, "regions");
  const int rows = 9, cols = 150, step = 2, blocks = 3;
  std::vector<int> in(rows * cols);
  for (int i = 0; i < rows * cols; ++i) in[i] = (i * 37) % 101;
  Buffer<int> din(in), out(cols, -1);
  launch(*b.kernel, {blocks}, {64}, 0, din.p, out.p, rows, cols, step);
  auto o = out.host();
  for (int col = 0; col < cols; ++col) {
    int acc = 0;
    for (int r = 0; r < rows; r += step)
      acc += in[r * cols + col] + 2 * in[r * cols + col] + 3 * in[r * cols / step] + in[col];
    for (int r = rows - 1; r >= 0; --r) acc += acc % 7 + in[r * cols + col];
    ASSERT_EQ(o[col], acc) << col;  // (each block's tx 63 and the next one's tx 1 agree)
  }
}

// A variable computed from locals of its region (`int row = ...; int index = row * cols +
// col;`, only index used after the barrier) is recomputed from their initialisers, not loaded;
// a local written after its declaration keeps index loaded. Both against the host, on a 2-D grid
// of 2-D blocks.
TEST(CpuRegions, RegionLocalsFeedRecomputedVariables) {
  for (const bool written : {false, true}) {
    const std::string src = std::string(R"(
__global__ void k(const int* in, int* out, int cols) {
  __shared__ int tile[4][8];
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * 4 + ty;
  int col = blockIdx.x * 8 + tx;)") +
                            (written ? " col += 0;" : "") + R"(
  int index = row * cols + col;
  tile[ty][tx] = in[index];
  __syncthreads();
  out[index] = tile[3 - ty][7 - tx] * 10 + tile[ty][tx];
})";
    auto r = cpu::form_regions(src);
    ASSERT_TRUE(r);
    const bool recomputed =
        r->find(
            "index = (static_cast<std::remove_cv_t<int>>(blockIdx.y * 4 + ty) * cols + "
            "static_cast<std::remove_cv_t<int>>(blockIdx.x * 8 + tx));") != std::string::npos;
    EXPECT_EQ(recomputed, !written) << *r;
    Built b = build(src, "k");
    ASSERT_EQ(b.kernel->attributes().threads, "regions");
    const int rows = 8, cols = 16;
    std::vector<int> in(rows * cols);
    for (int i = 0; i < rows * cols; ++i) in[i] = (i * 5 + 1) % 9;
    Buffer<int> input(in), out(rows * cols, -1);
    launch(*b.kernel, {2, 2}, {8, 4}, 0, input.p, out.p, cols);
    auto o = out.host();
    for (int r0 = 0; r0 < rows; ++r0)
      for (int c0 = 0; c0 < cols; ++c0) {
        const int br = r0 / 4 * 4, bc = c0 / 8 * 8, ty = r0 % 4, tx = c0 % 8;
        const int mirror = in[(br + 3 - ty) * cols + bc + 7 - tx];
        ASSERT_EQ(o[r0 * cols + c0], mirror * 10 + in[r0 * cols + c0]) << r0 << "," << c0;
      }
  }
}

// The __shared__ arrays of a region kernel's outermost block live on the block's stack (the
// block runs whole in one call); static ones and those of inner blocks stay thread-locals.
// Atomics through a pointer into the stack's arrays, and shared arrays that keep their values
// across a loop's iterations, against the host.
TEST(CpuRegions, OutermostSharedArraysAreAutomatic) {
  const std::string src = R"(
__device__ void bump(unsigned* p, unsigned v) { atomicAdd(p, v); }
__global__ void k(const unsigned* in, unsigned* out, int rounds) {
  __shared__ unsigned bins[8], total;
  static __shared__ unsigned seen;
  int t = threadIdx.x;
  if (t < 8) bins[t] = 0;
  if (t == 0) { total = 0; seen = 0; }
  __syncthreads();
  for (int r = 0; r < rounds; ++r) {
    __shared__ unsigned carry[1];
    if (t == 0) carry[0] = r == 0 ? 0 : carry[0] + 1;
    __syncthreads();
    bump(&bins[in[blockIdx.x * blockDim.x + t] % 8], 1u + carry[0]);
    atomicAdd(&total, 1u);
    __syncthreads();
  }
  if (t == 0) atomicAdd(&seen, 5u);
  __syncthreads();
  if (t < 8) out[blockIdx.x * 9 + t] = bins[t];
  if (t == 8) out[blockIdx.x * 9 + 8] = total + seen;
})";
  auto r = cpu::form_regions(src);
  ASSERT_TRUE(r);
  EXPECT_NE(r->find("unsigned bins[8], total; [[maybe_unused]] auto& kiln_s"), std::string::npos)
      << *r;
  EXPECT_NE(r->find("= bins;"), std::string::npos) << *r;
  EXPECT_NE(r->find("static __shared__ unsigned seen;"), std::string::npos) << *r;
  EXPECT_NE(r->find("__shared__ unsigned carry[1];"), std::string::npos) << *r;
  // A call of a function named like an atomic (a user's `atomicAddv`) is left alone (a fuzz
  // finding: it was looked up among the atomics kiln binds).
  EXPECT_TRUE(
      cpu::form_regions("__device__ void atomicAddv(unsigned*, unsigned);\n__global__ "
                        "void k() {\n  __shared__ unsigned s[4];\n  __syncthreads();\n "
                        " atomicAddv(&s[threadIdx.x % 4], 1u);\n}"));
  // One a lambda names stays a thread-local too (`[=]` would copy an automatic array).
  auto rl = cpu::form_regions(
      "__global__ void k(int* x) {\n  __shared__ int s[4], u[4];\n  auto at = [=](int i) { "
      "return s[i]; };\n  s[threadIdx.x % 4] = u[0] = 1;\n  __syncthreads();\n  x[0] = "
      "at(1);\n}");
  ASSERT_TRUE(rl);
  EXPECT_NE(rl->find("__shared__ int s[4], u[4];"), std::string::npos) << *rl;
  Built b = build(src, "k");
  ASSERT_EQ(b.kernel->attributes().threads, "regions");
  const int blocks = 3, threads = 32, rounds = 4;
  std::vector<unsigned> in(blocks * threads);
  for (int i = 0; i < blocks * threads; ++i) in[i] = unsigned(i * 7 + 3);
  Buffer<unsigned> input(in), out(blocks * 9, 0);
  launch(*b.kernel, {blocks}, {threads}, 0, input.p, out.p, rounds);
  auto o = out.host();
  for (int blk = 0; blk < blocks; ++blk) {
    std::vector<unsigned> bins(8, 0);
    for (int r0 = 0; r0 < rounds; ++r0)
      for (int t = 0; t < threads; ++t) bins[in[blk * threads + t] % 8] += 1u + unsigned(r0);
    for (int i = 0; i < 8; ++i) ASSERT_EQ(o[blk * 9 + i], bins[i]) << blk << "," << i;
    ASSERT_EQ(o[blk * 9 + 8], unsigned(threads * rounds + 5)) << blk;
  }
}

// A loop variable declared before its barrier loop (`int i; ... for (i = 32; i > 0; i /= 2)`,
// Rodinia's C89 style): the header writes the leader's copy and copies it to every thread's, so
// that the regions, and the code after the loop, read it per thread as before. Here i is also
// a per-thread loop counter in a region first (lud's shape). Against the host.
TEST(CpuRegions, HeadersWriteVariablesDeclaredBeforeTheLoop) {
  const std::string src = R"(
__global__ void k(const int* in, int* out) {
  __shared__ int s[64];
  int i, j;
  int t = threadIdx.x;
  for (i = 0, j = 0; i < t % 4; i++) j += in[i];
  s[t] = in[t] + j;
  for (i = 32; i > 0; i /= 2) {
    __syncthreads();
    if (t < i) s[t] += s[t + i];
  }
  __syncthreads();
  out[t] = s[0] * 100 + i * 10 + j;
})";
  auto r = cpu::form_regions(src);
  ASSERT_TRUE(r) << declined(src);
  EXPECT_NE(r->find("= 32, ::kiln_cpu::broadcast("), std::string::npos) << *r;
  EXPECT_NE(r->find("/= 2, ::kiln_cpu::broadcast("), std::string::npos) << *r;
  EXPECT_NE(declined("__global__ void k(int* x) {\n  int j = 0;\n  for (int i = (j = 1); i < 4; "
                     "++i) __syncthreads();\n  x[0] = j;\n}"),
            "");  // a declaring header that writes another
  Built b = build(src, "k");
  ASSERT_EQ(b.kernel->attributes().threads, "regions");
  std::vector<int> in(64);
  for (int x = 0; x < 64; ++x) in[x] = x * 5 % 13;
  Buffer<int> din(in), out(64, -1);
  launch(*b.kernel, {1}, {64}, 0, din.p, out.p);
  int sum = 0;
  for (int x = 0; x < 64; ++x) {
    int j = 0;
    for (int q = 0; q < x % 4; ++q) j += in[q];
    sum += in[x] + j;
  }
  for (int t = 0; t < 64; ++t) {
    int j = 0;
    for (int q = 0; q < t % 4; ++q) j += in[q];
    ASSERT_EQ(out.host()[t], sum * 100 + 0 * 10 + j) << t;
  }
}

// A do-while loop around a barrier (NVIDIA's `do { stride >>= 1; __syncthreads(); ... } while
// (stride > 1);`) is a while loop whose header comes last: the leader's copy decides, and a
// `continue` goes to the condition. Against the host.
TEST(CpuRegions, DoWhileLoopsAroundBarriers) {
  const std::string src = R"(
__global__ void k(const int* in, int* out, int rounds) {
  __shared__ int s[64];
  s[threadIdx.x] = in[threadIdx.x];
  unsigned int stride = 64;
  do {
    stride >>= 1;
    __syncthreads();
    if (threadIdx.x < stride) s[threadIdx.x] += s[threadIdx.x + stride];
  } while (stride > 1);
  __syncthreads();
  int total = s[0], r = 0, acc = 0;
  do {
    __syncthreads();
    s[threadIdx.x] = in[threadIdx.x] * (r + 1);
    __syncthreads();
    if (r++ % 2 == 1) continue;
    acc += s[(threadIdx.x + 1) % 64];
  } while (r < rounds && r < 5);
  out[threadIdx.x] = total * 1000 + acc;
})";
  ASSERT_TRUE(cpu::form_regions(src)) << declined(src);
  Built b = build(src, "k");
  ASSERT_EQ(b.kernel->attributes().threads, "regions") << b.kernel->attributes().why;
  std::vector<int> in(64);
  for (int x = 0; x < 64; ++x) in[x] = x * 3 % 17;
  Buffer<int> din(in), out(64, -1);
  launch(*b.kernel, {1}, {64}, 0, din.p, out.p, 9);
  int total = 0;
  for (int x = 0; x < 64; ++x) total += in[x];
  for (int t = 0; t < 64; ++t) {
    int acc = 0;
    for (int r = 0; r < 5; ++r)
      if (r % 2 == 0) acc += in[(t + 1) % 64] * (r + 1);
    ASSERT_EQ(out.host()[t], total * 1000 + acc) << t;
  }
}

// Several such variables in one header (GPU Gems 3's N-body: `for (i = 0, tile = 0; i < N;
// i += p, tile++)`): each is assigned a uniform value and stepped by uniform values, so each is
// copied from the leader's. Against the host.
TEST(CpuRegions, HeadersWriteSeveralVariablesDeclaredBeforeTheLoop) {
  const std::string src = R"(
__global__ void k(const float* x, float* out, int n) {
  __shared__ float sh[32];
  int i, tile;
  float acc = 0.f;
  for (i = 0, tile = 0; i < n; i += blockDim.x, tile++) {
    sh[threadIdx.x] = x[tile * blockDim.x + threadIdx.x] * (tile + 1);
    __syncthreads();
    for (int j = 0; j < blockDim.x; ++j) acc += sh[j];
    __syncthreads();
  }
  out[threadIdx.x] = acc + i * 1000 + tile * 100000;
})";
  auto r = cpu::form_regions(src);
  ASSERT_TRUE(r) << declined(src);
  Built b = build(src, "k");
  ASSERT_EQ(b.kernel->attributes().threads, "regions");
  std::vector<float> x(128);
  for (int q = 0; q < 128; ++q) x[q] = float(q % 7);
  Buffer<float> dx(x), out(32, -1);
  launch(*b.kernel, {1}, {32}, 0, dx.p, out.p, 128);
  float acc = 0;
  for (int tile = 0; tile < 4; ++tile)
    for (int j = 0; j < 32; ++j) acc += x[tile * 32 + j] * float(tile + 1);
  for (int t = 0; t < 32; ++t) ASSERT_EQ(out.host()[t], acc + 128 * 1000 + 4 * 100000) << t;
}

// A barrier loop with an empty init over a variable declared just before it with a value every
// thread shares (`unsigned n = THREADS / 2; for (; n > 1; n /= 2)`, Rodinia's kmeans): every
// copy already holds the same value, so only the step is copied. A value that differs per
// thread, or one named between the declaration and the loop, is declined. Against the host.
TEST(CpuRegions, EmptyInitLoopsOverUniformVariables) {
  const std::string src = R"(
#define THREADS 64
__global__ void k(const int* in, int* out) {
  __shared__ int s[THREADS];
  const int t = threadIdx.x;
  s[t] = in[t];
  __syncthreads();
  unsigned int n = THREADS / 2;
  for (; n > 0; n /= 2) {
    if (t < n) s[t] += s[t + n];
    __syncthreads();
  }
  out[t] = s[0] + n;
})";
  auto r = cpu::form_regions(src);
  ASSERT_TRUE(r) << declined(src);
  EXPECT_NE(r->find("/= 2, ::kiln_cpu::broadcast("), std::string::npos) << *r;
  const std::string per_thread = R"(
__global__ void k(int* x) {
  unsigned int n = threadIdx.x % 2 ? 16 : 32;
  for (; n > 0; n /= 2) __syncthreads();
  x[threadIdx.x] = n;
})";
  EXPECT_NE(declined(per_thread), "");
  const std::string named_between = R"(
__global__ void k(int* x) {
  unsigned int n = 32;
  n -= threadIdx.x % 2;
  for (; n > 0; n /= 2) __syncthreads();
  x[threadIdx.x] = n;
})";
  EXPECT_NE(declined(named_between), "");
  const std::string in_branch = R"(
__global__ void k(int* x) {
  unsigned int n = 32;
  if (x[0] > 0) n >>= 1;
  for (; n > 0; n /= 2) __syncthreads();
  x[threadIdx.x] = n;
})";
  EXPECT_NE(declined(in_branch), "");
  Built b = build(src, "k");
  ASSERT_EQ(b.kernel->attributes().threads, "regions");
  std::vector<int> in(64);
  for (int x = 0; x < 64; ++x) in[x] = x * 7 % 11;
  Buffer<int> din(in), out(64, -1);
  launch(*b.kernel, {1}, {64}, 0, din.p, out.p);
  int sum = 0;
  for (int x : in) sum += x;
  for (int t = 0; t < 64; ++t) ASSERT_EQ(out.host()[t], sum) << t;
}

// Updated with uniform values between its declaration and the loop, by statements every thread
// runs (NVIDIA's odd-even merge sort: `uint stride = size / 2; { ...; stride >>= 1; } for (;
// stride > 0; stride >>= 1)`, size an outer barrier loop's variable), the variable still holds
// the same value in every thread. Against the host: a bitonic-style exchange of pairs.
TEST(CpuRegions, EmptyInitLoopsAfterUniformUpdates) {
  const std::string src = R"(
__global__ void k(const int* in, int* out) {
  __shared__ int s[64];
  s[threadIdx.x] = in[threadIdx.x];
  for (unsigned size = 2; size <= 64; size <<= 1) {
    unsigned stride = size / 2;
    {
      __syncthreads();
      const unsigned lo = 2 * threadIdx.x - (threadIdx.x & (stride - 1));
      if (threadIdx.x < 32 && s[lo] > s[lo + stride]) {
        const int t = s[lo]; s[lo] = s[lo + stride]; s[lo + stride] = t;
      }
      stride >>= 1;
    }
    stride += 0;
    for (; stride > 0; stride >>= 1) {
      __syncthreads();
      const unsigned lo = 2 * threadIdx.x - (threadIdx.x & (stride - 1));
      if (threadIdx.x < 32 && s[lo] > s[lo + stride]) {
        const int t = s[lo]; s[lo] = s[lo + stride]; s[lo + stride] = t;
      }
    }
  }
  __syncthreads();
  out[threadIdx.x] = s[threadIdx.x];
})";
  auto r = cpu::form_regions(src);
  ASSERT_TRUE(r) << declined(src);
  std::vector<int> in(64);
  for (int x = 0; x < 64; ++x) in[x] = x * 37 % 64;
  // The same network on the host.
  std::vector<int> s = in;
  for (unsigned size = 2; size <= 64; size <<= 1)
    for (unsigned stride = size / 2; stride > 0; stride >>= 1)
      for (unsigned t = 0; t < 32; ++t) {
        const unsigned lo = 2 * t - (t & (stride - 1));
        if (s[lo] > s[lo + stride]) std::swap(s[lo], s[lo + stride]);
      }
  Built b = build(src, "k");
  ASSERT_EQ(b.kernel->attributes().threads, "regions") << b.kernel->attributes().why;
  Buffer<int> din(in), out(64, -1);
  launch(*b.kernel, {1}, {64}, 0, din.p, out.p);
  EXPECT_EQ(out.host(), s);
}

// A parameter the kernel writes (`src += blockIdx.x * 64 + threadIdx.x;`, as CUDA's samples
// advance their pointers to the block's tile) gets a copy per thread, each starting as the
// argument, like a variable declared at the top. Against the host, on two blocks.
TEST(CpuRegions, WrittenParametersAreCopiedPerThread) {
  const std::string src = R"(
__global__ void k(const int* src, int* dst, int n) {
  __shared__ int s[64];
  src += blockIdx.x * 64 + threadIdx.x;
  dst += blockIdx.x * 64;
  n -= int(threadIdx.x);
  s[threadIdx.x] = src[0];
  __syncthreads();
  dst[threadIdx.x] = s[63 - threadIdx.x] * 1000 + n + src[0];
})";
  auto r = cpu::form_regions(src);
  ASSERT_TRUE(r) << declined(src);
  EXPECT_NE(r->find("[kiln_t_] = src;"), std::string::npos) << *r;
  Built b = build(src, "k");
  ASSERT_EQ(b.kernel->attributes().threads, "regions");
  std::vector<int> in(128);
  for (int x = 0; x < 128; ++x) in[x] = x * 3 % 17;
  Buffer<int> din(in), out(128, -1);
  launch(*b.kernel, {2}, {64}, 0, din.p, out.p, 500);
  for (int x = 0; x < 128; ++x) {
    const int blk = x / 64, t = x % 64;
    ASSERT_EQ(out.host()[x], in[blk * 64 + 63 - t] * 1000 + 500 - t + in[x]) << x;
  }
}

// A kernel may keep up to 48 variables across barriers (sample stencils keep 20 or more; at
// most 48 x 64 bytes x 1024 threads of the block's 8 MiB stack); one more is declined.
// A bool across barriers keeps its copies as ints (kiln_cpu::Flag), so that thread loops
// reading it vectorise; every use keeps a bool's meaning: written in one region and read in
// others, through a `bool&` parameter, by |= and ^=, and in a barrier loop's header. One whose
// address is taken, or whose type is asked, stays a bool. (A variable whose address is taken is
// kept per thread even where no later statement names it: `*where` read a region's dead local.)
TEST(CpuRegions, BoolsAcrossBarriersAreKeptAsInts) {
  const std::string src = R"(
__device__ void mark(bool& b, int v) { if (v % 3 == 0) b = true; }
__global__ void k(const int* in, int* out, int rounds) {
  __shared__ int s[64];
  int t = threadIdx.x;
  bool hit = false, odd;
  bool keep = in[t] > 50;
  bool* where = &keep;
  decltype(keep) other = false;
  bool more = rounds > 0;
  s[t] = in[t];
  __syncthreads();
  odd = s[63 - t] % 2 == 1;
  mark(hit, s[(t + 1) % 64]);
  hit |= t == 0;
  other ^= odd;
  __syncthreads();
  while (more) {
    s[t] += hit ? 1 : 0;
    __syncthreads();
    more = s[0] < rounds + in[0];
    __syncthreads();
  }
  out[t] = s[t] + (odd ? 1000 : 0) + (*where ? 10000 : 0) + (other ? 100000 : 0);
})";
  auto r = cpu::form_regions(src);
  ASSERT_TRUE(r);
  // The type of name's copies: "<type> kiln_r<N>_<name>[kiln_n_]".
  auto copies = [&](const std::string& name) {
    const std::size_t at = r->find("_" + name + "[kiln_n_]");
    if (at == std::string::npos) return std::string("none");
    const std::size_t store = r->rfind(" kiln_r", at), type = r->rfind("; ", store);
    return r->substr(type + 2, store - type - 2);
  };
  for (const char* flag : {"hit", "odd", "more"}) EXPECT_EQ(copies(flag), "::kiln_cpu::Flag") << *r;
  EXPECT_EQ(copies("keep"), "std::remove_cv_t<bool>") << *r;
  // (a type the rewrite cannot size: named once, its copies on the stack or the heap)
  EXPECT_NE(r->find("_other_t = std::remove_cv_t<std::remove_reference_t<decltype((kiln_r5_keep[0]"
                    "))>>;"),
            std::string::npos)
      << *r;
  EXPECT_NE(r->find("const bool odd = "), std::string::npos) << *r;  // only read there
  EXPECT_NE(r->find("bool& hit = "), std::string::npos) << *r;
  Built b = build(src, "k");
  ASSERT_EQ(b.kernel->attributes().threads, "regions");
  std::vector<int> in(64);
  for (int i = 0; i < 64; ++i) in[i] = (i * 37 + 11) % 101;
  Buffer<int> din(in), out(64, -1);
  launch(*b.kernel, {1}, {64}, 0, din.p, out.p, 3);
  // The loop runs until s[0] reaches in[0] + 3: three rounds, thread 0 adding 1 each.
  for (int t = 0; t < 64; ++t) {
    const bool hit = in[(t + 1) % 64] % 3 == 0 || t == 0, odd = in[63 - t] % 2 == 1;
    const int want =
        in[t] + (hit ? 3 : 0) + (odd ? 1000 : 0) + (in[t] > 50 ? 10000 : 0) + (odd ? 100000 : 0);
    ASSERT_EQ(out.host()[t], want) << t;
  }
}

TEST(CpuRegions, ManyVariablesAcrossBarriers) {
  auto kernel = [](int count) {
    std::string src = "__global__ void k(const float* in, float* out) {\n  __shared__ float s[64];\n"
                      "  int t = threadIdx.x;\n";
    for (int v = 0; v < count; ++v)
      src += "  float a" + std::to_string(v) + " = in[(t + " + std::to_string(v) + ") % 64];\n";
    src += "  s[t] = a0;\n  __syncthreads();\n  out[t] = s[63 - t]";
    for (int v = 0; v < count; ++v) src += " + a" + std::to_string(v);
    return src + ";\n}";
  };
  EXPECT_NE(declined(kernel(48)), "");  // (t is one too)
  EXPECT_EQ(declined(kernel(47)), "");
  Built b = build(kernel(24), "k");
  ASSERT_EQ(b.kernel->attributes().threads, "regions");
  std::vector<float> in(64);
  for (int x = 0; x < 64; ++x) in[x] = float(x % 7);
  Buffer<float> din(in), out(64, -1);
  launch(*b.kernel, {1}, {64}, 0, din.p, out.p);
  for (int t = 0; t < 64; ++t) {
    float want = in[63 - t];
    for (int v = 0; v < 24; ++v) want += in[(t + v) % 64];
    ASSERT_EQ(out.host()[t], want) << t;
  }
}

// A per-thread array across a barrier (`float keep[20]`) is kept per thread when the rewrite
// can read its size, up to 4 KB per thread in all (4 MB of the block's stack at 1024 threads);
// beyond that the kernel is declined (it ran as fibers after a failed compile, over 64 bytes).
TEST(CpuRegions, PerThreadArraysAcrossBarriers) {
  const std::string src = R"(
__global__ void k(const float* in, float* out) {
  __shared__ float s[1024];
  float keep[20];
  unsigned int marks[2][8];
  for (int i = 0; i < 20; ++i) keep[i] = in[threadIdx.x] * i;
  for (int i = 0; i < 16; ++i) marks[i / 8][i % 8] = threadIdx.x + i;
  s[threadIdx.x] = in[threadIdx.x];
  __syncthreads();
  float acc = s[blockDim.x - 1 - threadIdx.x];
  for (int i = 0; i < 20; ++i) acc += keep[i];
  out[threadIdx.x] = acc + marks[1][7];
})";
  Built b = build(src, "k");
  ASSERT_EQ(b.kernel->attributes().threads, "regions") << b.kernel->attributes().why;
  const int n = 1024;
  std::vector<float> in(n);
  for (int i = 0; i < n; ++i) in[i] = float(i % 13);
  Buffer<float> din(in), out(n, -1);
  launch(*b.kernel, {1}, {n}, 0, din.p, out.p);
  for (int t = 0; t < n; ++t) ASSERT_EQ(out.host()[t], in[n - 1 - t] + in[t] * 190 + t + 15) << t;
  EXPECT_EQ(declined("__global__ void k(float* o) { double a[300], b[300]; a[0] = b[0] = 1;\n"
                     "  __syncthreads(); o[0] = a[0] + b[0]; }"),
            "more than 4096 bytes per thread kept across barriers");
}

// A pointer declared const itself (`float* const v`, as fp16ScalarProduct's reduction helpers
// take their shared array) is a declaration like any other: it ran as fibers ("'kiln_i1_v' was
// not declared") once the helper was inlined.
TEST(CpuRegions, ConstPointersAcrossBarriers) {
  Built b = build(R"(
__device__ __forceinline__ void tree(float* const v) {
  for (int s = 32; s > 0; s >>= 1) {
    if (threadIdx.x < s) v[threadIdx.x] += v[threadIdx.x + s];
    __syncthreads();
  }
}
__global__ void k(const float* in, float* out) {
  __shared__ float sh[64];
  float* __restrict__ const mine = out + blockIdx.x;
  sh[threadIdx.x] = in[threadIdx.x];
  __syncthreads();
  tree(sh);
  if (threadIdx.x == 0) *mine = sh[0];
})",
                  "k");
  ASSERT_EQ(b.kernel->attributes().threads, "regions") << b.kernel->attributes().why;
  std::vector<float> in(64);
  for (int i = 0; i < 64; ++i) in[i] = float(i % 9);
  Buffer<float> din(in), out(2, -1);
  launch(*b.kernel, {2}, {64}, 0, din.p, out.p);
  float want = 0;
  for (float v : in) want += v;
  EXPECT_EQ(out.host()[0], want);
  EXPECT_EQ(out.host()[1], want);
}

// A pointer to rows (`float (*rows)[W] = (float (*)[W])smem;`, the usual view of dynamic shared
// memory as a 2-D array) is replicated like any pointer, its extents part of its type: it ran
// as fibers ("'rows' was not declared").
TEST(CpuRegions, PointersToRowsAcrossBarriers) {
  Built b = build(R"(
#define W (4 * 2)
__global__ void k(const float* in, float* out, int rounds) {
  extern __shared__ float raw[];
  float (*rows)[W] = reinterpret_cast<float (*)[W]>(raw), (*const again)[2][4] = nullptr;
  float acc = 0;
  for (int r = 0; r < rounds; ++r) {
    rows[threadIdx.x / W][threadIdx.x % W] = in[threadIdx.x] * (r + 1);
    __syncthreads();
    acc += rows[threadIdx.x % W][threadIdx.x / W] + (again ? 1.0f : 0.0f);
    __syncthreads();
  }
  out[threadIdx.x] = acc;
})",
                  "k");
  ASSERT_EQ(b.kernel->attributes().threads, "regions") << b.kernel->attributes().why;
  std::vector<float> in(64);
  for (int i = 0; i < 64; ++i) in[i] = float(i);
  Buffer<float> din(in), out(64, -1);
  launch(*b.kernel, {1}, {64}, 64 * sizeof(float), din.p, out.p, 3);
  for (int t = 0; t < 64; ++t) ASSERT_EQ(out.host()[t], in[(t % 8) * 8 + t / 8] * 6) << t;
}

// A local constant sizing a __shared__ array (`const int SW = TILE + 2 * R;`, R from the
// compile's -D) stays one value for the block, before the array: the rewrite failed to compile
// ("'SW' was not declared") and every kernel of the source ran as fibers.
TEST(CpuRegions, LocalConstantsSizeSharedArrays) {
  Built b = build(R"(
#define TILE 16
__global__ void k(const float* in, float* out) {
  const int SW = TILE + 2 * R;
  __shared__ float s[SW][2];
  for (int i = threadIdx.x; i < SW; i += blockDim.x) s[i][0] = in[i], s[i][1] = 2 * in[i];
  __syncthreads();
  out[threadIdx.x] = s[threadIdx.x + R][0] + s[SW - 1 - threadIdx.x][1];
})",
                  "k", {"-DR=3"});
  ASSERT_EQ(b.kernel->attributes().threads, "regions") << b.kernel->attributes().why;
  std::vector<float> in(22);
  for (int i = 0; i < 22; ++i) in[i] = float(i * i);
  Buffer<float> din(in), out(16, -1);
  launch(*b.kernel, {1}, {16}, 0, din.p, out.p);
  for (int t = 0; t < 16; ++t) ASSERT_EQ(out.host()[t], in[t + 3] + 2 * in[21 - t]) << t;
}

// A block's index, its thread's and its shape through the group (`block.group_index().x *
// block.size() + block.thread_rank()`, as cooperative-groups samples index): lowered like its
// other members, so the kernel runs as regions (it ran as fibers).
TEST(CpuRegions, BlockIndicesThroughTheGroup) {
  Built b = build(R"(
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void k(const int* in, int* out) {
  cg::thread_block block = cg::this_thread_block();
  __shared__ int s[64];
  const int gid = block.group_index().x * block.size() + block.thread_rank();
  s[block.thread_index().x] = in[gid];
  block.sync();
  out[gid] = s[block.dim_threads().x - 1 - block.thread_index().x] + (int)block.group_dim().y;
})",
                  "k");
  ASSERT_EQ(b.kernel->attributes().threads, "regions") << b.kernel->attributes().why;
  std::vector<int> in(128);
  for (int i = 0; i < 128; ++i) in[i] = i * 3;
  Buffer<int> din(in), out(128, -1);
  launch(*b.kernel, {2}, {64}, 0, din.p, out.p);
  for (int g = 0; g < 128; ++g) ASSERT_EQ(out.host()[g], in[(g / 64) * 64 + 63 - g % 64] + 1) << g;
}

// A variable whose size the rewrite cannot read (a struct, a wmma fragment) keeps its copies on
// the heap when the compiler finds it over 64 bytes: both kinds run as regions, each thread's
// copy its own (it ran as fibers after a static_assert failed).
TEST(CpuRegions, LargeVariablesOfUnreadSizeAcrossBarriers) {
  const std::string src = R"(
struct Big { float v[40]; };
struct Small { float v[4]; };
template <typename T> __device__ void fill(T& x, float f) { for (float& e : x.v) e = f; }
__global__ void k(const float* in, float* out) {
  __shared__ float s[256];
  Big big;
  Small small;
  fill(big, in[threadIdx.x]);
  fill(small, 2 * in[threadIdx.x]);
  s[threadIdx.x] = in[threadIdx.x];
  __syncthreads();
  float acc = s[blockDim.x - 1 - threadIdx.x];
  for (float e : big.v) acc += e;
  out[threadIdx.x] = acc + small.v[3];
})";
  Built b = build(src, "k");
  ASSERT_EQ(b.kernel->attributes().threads, "regions") << b.kernel->attributes().why;
  const int n = 256;
  std::vector<float> in(n);
  for (int i = 0; i < n; ++i) in[i] = float(i % 11);
  Buffer<float> din(in), out(n, -1);
  launch(*b.kernel, {3}, {n}, 0, din.p, out.p);
  for (int t = 0; t < n; ++t) ASSERT_EQ(out.host()[t], in[n - 1 - t] + in[t] * 42) << t;
}

// `volatile __shared__` (the qualifier first, as in CUDA's samples) is a shared declaration
// too: it ran as fibers after the rewritten source failed to compile ("'s' was not declared").
TEST(CpuRegions, VolatileSharedArrays) {
  Built b = build(R"(
__global__ void k(const int* in, int* out) {
  volatile __shared__ int s[64];
  __shared__ volatile int u[64];
  s[threadIdx.x] = in[threadIdx.x];
  u[threadIdx.x] = 2 * in[threadIdx.x];
  __syncthreads();
  out[threadIdx.x] = s[63 - threadIdx.x] + u[(threadIdx.x + 1) % 64];
})",
                  "k");
  ASSERT_EQ(b.kernel->attributes().threads, "regions");
  std::vector<int> in(64);
  for (int i = 0; i < 64; ++i) in[i] = i * i % 97;
  Buffer<int> din(in), out(64, -1);
  launch(*b.kernel, {1}, {64}, 0, din.p, out.p);
  for (int t = 0; t < 64; ++t) ASSERT_EQ(out.host()[t], in[63 - t] + 2 * in[(t + 1) % 64]) << t;
}

// Block-level cooperative groups (jit/cpu/block_groups.h): a kernel that names its block only
// to synchronise it and number its threads runs as regions, against the host; any other use
// of cooperative groups leaves the source alone.
TEST(CpuRegions, BlockLevelCooperativeGroupsRunAsRegions) {
  const std::string src = R"(#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void block_sums(const int* in, int* out, int n) {
  cg::thread_block cta = cg::this_thread_block();
  __shared__ int s[64];
  unsigned tid = cta.thread_rank();
  int i = blockIdx.x * blockDim.x + tid;
  s[tid] = i < n ? in[i] : 0;
  cg::sync(cta);
  for (unsigned half = cta.size() / 2; half > 0; half /= 2) {
    if (tid < half) s[tid] += s[tid + half];
    cta.sync();
  }
  if (tid == 0) out[blockIdx.x] = s[0];
  cg::this_thread_block().sync();
})";
  const std::string lowered = cpu::lower_block_groups(src);
  EXPECT_EQ(std::count(lowered.begin(), lowered.end(), '\n'),
            std::count(src.begin(), src.end(), '\n'));
  EXPECT_EQ(lowered.find("cg"), std::string::npos) << lowered;
  EXPECT_EQ(lowered.find("cooperative_groups"), std::string::npos) << lowered;
  Built b = build(src, "block_sums");
  ASSERT_EQ(b.kernel->attributes().threads, "regions");
  const int n = 300, blocks = 5;
  std::vector<int> in(n);
  for (int i = 0; i < n; ++i) in[i] = (i * 13) % 29 - 7;
  Buffer<int> input(in), out(blocks, -1);
  launch(*b.kernel, {blocks}, {64}, 0, input.p, out.p, n);
  auto o = out.host();
  for (int blk = 0; blk < blocks; ++blk) {
    int sum = 0;
    for (int i = blk * 64; i < std::min(n, blk * 64 + 64); ++i) sum += in[i];
    ASSERT_EQ(o[blk], sum) << blk;
  }
  // One-warp tiles: their shuffles and votes are the warp's, run as warp steps.
  const std::string tiles = R"(#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void tile_sums(const int* in, int* out, unsigned* positive) {
  cg::thread_block cta = cg::this_thread_block();
  cg::thread_block_tile<32> tile = cg::tiled_partition<32>(cta);
  __shared__ int warp_sums[32];
  int v = in[blockIdx.x * blockDim.x + cta.thread_rank()];
  unsigned votes = tile.ballot(v > 0);
  if (tile.thread_rank() == 0) positive[blockIdx.x * 8 + tile.meta_group_rank()] = votes;
  for (int o = 16; o > 0; o /= 2) v += tile.shfl_down(v, o);
  if (tile.thread_rank() == 0) warp_sums[tile.meta_group_rank()] = v;
  cg::sync(cta);
  if (tile.meta_group_rank() == 0) {
    v = tile.thread_rank() < tile.meta_group_size() ? warp_sums[tile.thread_rank()] : 0;
    for (int o = 16; o > 0; o /= 2) v += tile.shfl_xor(v, o);
    if (tile.thread_rank() == 0) out[blockIdx.x] = v;
  }
})";
  Built bt = build(tiles, "tile_sums");
  ASSERT_EQ(bt.kernel->attributes().threads, "regions") << cpu::lower_block_groups(tiles);
  const int threads = 128, tblocks = 3;
  std::vector<int> tin(threads * tblocks);
  for (int i = 0; i < threads * tblocks; ++i) tin[i] = (i * 7) % 11 - 4;
  Buffer<int> tinput(tin), tout(tblocks, -1);
  Buffer<unsigned> positive(tblocks * 8, 0);
  launch(*bt.kernel, {tblocks}, {threads}, 0, tinput.p, tout.p, positive.p);
  auto to = tout.host();
  auto po = positive.host();
  for (int blk = 0; blk < tblocks; ++blk) {
    int sum = 0;
    for (int t = 0; t < threads; ++t) sum += tin[blk * threads + t];
    ASSERT_EQ(to[blk], sum) << blk;
    for (int w = 0; w < threads / 32; ++w) {
      unsigned mask = 0;
      for (int l = 0; l < 32; ++l) mask |= unsigned(tin[blk * threads + w * 32 + l] > 0) << l;
      ASSERT_EQ(po[blk * 8 + w], mask) << blk << "," << w;
    }
  }
  // Left alone: members not lowered, a width that is no power of two, a block passed on,
  // grids, other members. Names made unqualified by `using namespace` are lowered.
  for (const char* other : {
           "auto t = cg::tiled_partition<16>(cta); unsigned a = t.match_any(1);",
           "auto t = cg::tiled_partition<12>(cta);",
           "cg::thread_block_tile<16> t = cg::tiled_partition<8>(cta);",
           "helper(cta);",
           "unsigned g = cg::this_grid().thread_rank();",
           "unsigned long z = sizeof(cta);",
       }) {
    const std::string s2 = std::string(
                               "#include <cooperative_groups.h>\nnamespace cg = "
                               "cooperative_groups;\n__global__ void k() {\n  "
                               "cg::thread_block cta = cg::this_thread_block();\n  ") +
                           other + "\n  cta.sync();\n}";
    EXPECT_EQ(cpu::lower_block_groups(s2), s2) << other;
  }
  // A block's asynchronous copy into shared memory and its wait (cg::memcpy_async in both forms,
  // cg::wait, cg::wait_prior): each thread's share of the copy, then a barrier.
  const std::string staged = R"(#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>
namespace cg = cooperative_groups;
__global__ void staged(const float* in, float* out) {
  __shared__ float a[96], b[96];
  auto block = cg::this_thread_block();
  cg::memcpy_async(block, a, in + blockIdx.x * 96, sizeof(float) * 96);
  cg::memcpy_async(block, b, 96, in + (blockIdx.x ^ 1) * 96, 96);
  cg::wait(block);
  out[blockIdx.x * 96 + block.thread_rank()] = a[95 - block.thread_rank()] + b[block.thread_rank()];
  cg::wait_prior<0>(block);
})";
  Built bs = build(staged, "staged");
  ASSERT_EQ(bs.kernel->attributes().threads, "regions") << cpu::lower_block_groups(staged);
  std::vector<float> sin(192);
  for (int i = 0; i < 192; ++i) sin[i] = float(i * 3 % 17);
  Buffer<float> sinput(sin), sout(192, -1.0f);
  launch(*bs.kernel, {2}, {96}, 0, sinput.p, sout.p);
  auto so = sout.host();
  for (int blk = 0; blk < 2; ++blk)
    for (int t = 0; t < 96; ++t)
      ASSERT_EQ(so[blk * 96 + t], sin[blk * 96 + 95 - t] + sin[(blk ^ 1) * 96 + t])
          << blk << "," << t;
  const std::string unqualified =
      "#include <cooperative_groups.h>\nusing namespace cooperative_groups;\n__global__ void k() "
      "{ thread_block b = this_thread_block(); b.sync(); }";
  // (written out in full first: UsingTheGroupsNamespaceIsLowered)
  EXPECT_EQ(cpu::lower_block_groups(unqualified), "\n\n__global__ void k() {  __syncthreads(); }");
}

// Scans on tiles and coalesced groups are lowered (their results: tests/lua/group_collectives.lua)
// where the scan's type is known: the op's, or the value's as declared; a coalesced group passed
// on, or a member the lowering does not take, leaves its kernel as written.
TEST(CpuRegions, GroupScansAndCoalescedGroupsAreLowered) {
  auto lowered = [](const std::string& body) {
    const std::string src =
        "#include <cooperative_groups.h>\n#include <cooperative_groups/scan.h>\n"
        "namespace cg = cooperative_groups;\n__global__ void k(int* a, float f) "
        "{\n  auto t = cg::tiled_partition<16>(cg::this_thread_block());\n  " +
        body + "\n}";
    const std::string out = cpu::lower_block_groups(src);
    EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), std::count(src.begin(), src.end(), '\n'));
    return out == src ? std::string() : out;
  };
  for (const char* taken : {
           "int v = a[0]; int s = cg::inclusive_scan(t, v); a[1] = s;",
           "a[1] = 0; int s; s = cg::exclusive_scan(t, 1);",
           "float s = cg::inclusive_scan(t, f); a[1] = int(s);",
           "unsigned int s = cg::exclusive_scan(t, a[0], cg::bit_xor<unsigned int>()); a[1] = s;",
           "auto g = cg::coalesced_threads(); a[g.thread_rank()] = g.shfl_up(g.size(), 1);",
           "cg::coalesced_group g = cg::coalesced_threads(); int s = cg::reduce(g, f, "
           "cg::plus<float>()); a[0] = s + int(g.ballot(s > 0)) + g.meta_group_rank();",
       }) {
    const std::string out = lowered(taken);
    EXPECT_NE(out, "") << taken;
    EXPECT_EQ(out.find("cg::"), std::string::npos) << out;
  }
  for (const char* kept : {
           "int s = cg::inclusive_scan(t, a[0] * 2); a[1] = s;",  // (the value's type unknown)
           "auto v = a[0]; int s = cg::inclusive_scan(t, v); a[1] = s;",
           // (a declaration in scope that the lowering cannot read hides the outer one: review 8)
           "int v = 1; { float w = 0, v = f; float s = cg::inclusive_scan(t, v); a[1] = int(s + "
           "w); }",
           "a[1] = cg::inclusive_scan(t, a[0], cg::plus<int>()) + 1;",  // (inside an expression)
           "auto g = cg::coalesced_threads(); pass(g);",
           "auto g = cg::coalesced_threads(); a[0] = g.match_any(a[1]);",
           "auto g = cg::coalesced_threads(); auto h = cg::tiled_partition(g, 4);",
       })
    EXPECT_EQ(lowered(kept), "") << kept;
  // The value's type is its declaration's in scope there (not one in a block already closed).
  for (const char* shadowed : {
           "int v = 1; { float v = f; } int s = cg::inclusive_scan(t, v); a[1] = s + int(f);",
           "int v = 1; for (float v = f; v < 2; ++v) {} int s = cg::inclusive_scan(t, v); a[1] = "
           "s;",
       })
    EXPECT_NE(lowered(shadowed).find("int kiln_g1 = ( v);"), std::string::npos) << shadowed;
  for (const char* inner : {
           "__shared__ float v; float s = cg::inclusive_scan(t, v); a[1] = int(s);",  // (review 8)
           "int v = 1; { const float* p = &f; float v{*p}; float s = cg::inclusive_scan(t, v); "
           "a[1] = int(s); }",
           "int v = 1; { const float& v = f; float s = cg::inclusive_scan(t, v); a[1] = int(s); }",
       })
    EXPECT_NE(lowered(inner).find("float kiln_g1 = ( v);"), std::string::npos) << inner;
}

// Cooperative groups are lowered kernel by kernel: one that passes its tile to a device
// function which uses it in a way the lowering does not take keeps them (and runs as fibers),
// while the kernel beside it, which uses its block only to synchronise, runs as regions. (The
// whole source stayed as written, and the plan sent every kernel of it to fibers, as
// cuda-samples' reduction with reduce0-3.)
TEST(CpuRegions, CooperativeGroupsAreLoweredPerKernel) {
  const std::string src = R"(#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
__device__ int lane_sum(cg::thread_block_tile<32> t, int v) { return cg::reduce(t, v, [](int a, int b) { return a + b; }); }
__global__ void plain_block(const int* in, int* out) {
  cg::thread_block cta = cg::this_thread_block();
  __shared__ int s[64];
  s[cta.thread_rank()] = in[blockIdx.x * 64 + cta.thread_rank()];
  cg::sync(cta);
  out[blockIdx.x * 64 + cta.thread_rank()] = s[63 - cta.thread_rank()];
}
__global__ void passes_tile(const int* in, int* out) {
  cg::thread_block cta = cg::this_thread_block();
  auto tile = cg::tiled_partition<32>(cta);
  int v = lane_sum(tile, in[blockIdx.x * 64 + cta.thread_rank()]);
  if (tile.thread_rank() == 0) out[blockIdx.x * 2 + tile.meta_group_rank()] = v;
}
)";
  const std::string lowered = cpu::lower_block_groups(src);
  const std::size_t second = lowered.find("__global__ void passes_tile");
  ASSERT_NE(second, std::string::npos) << lowered;
  const std::size_t first = lowered.find("plain_block");
  const std::string first_body = lowered.substr(first, second - first);
  EXPECT_EQ(first_body.find("cg::"), std::string::npos) << lowered;
  EXPECT_EQ(lowered.substr(second), src.substr(src.find("__global__ void passes_tile")));
  EXPECT_NE(lowered.find("#include <cooperative_groups.h>"), std::string::npos) << lowered;
  EXPECT_EQ(std::count(lowered.begin(), lowered.end(), '\n'),
            std::count(src.begin(), src.end(), '\n'));
  Built plain = build(src, "plain_block"), tiles = build(src, "passes_tile");
  ASSERT_EQ(plain.kernel->attributes().threads, "regions") << plain.kernel->attributes().why;
  EXPECT_EQ(tiles.kernel->attributes().threads, "fibers");
  EXPECT_NE(tiles.kernel->attributes().why.find("cg::"), std::string::npos)
      << tiles.kernel->attributes().why;
  const int blocks = 3;
  std::vector<int> in(64 * blocks);
  for (int i = 0; i < 64 * blocks; ++i) in[i] = (i * 29) % 53 - 20;
  Buffer<int> din(in), reversed(64 * blocks, -1), sums(2 * blocks, -1);
  launch(*plain.kernel, {blocks}, {64}, 0, din.p, reversed.p);
  launch(*tiles.kernel, {blocks}, {64}, 0, din.p, sums.p);
  for (int blk = 0; blk < blocks; ++blk)
    for (int t = 0; t < 64; ++t)
      ASSERT_EQ(reversed.host()[blk * 64 + t], in[blk * 64 + 63 - t]) << blk << "," << t;
  for (int w = 0; w < 2 * blocks; ++w) {
    int sum = 0;
    for (int l = 0; l < 32; ++l) sum += in[w * 32 + l];
    ASSERT_EQ(sums.host()[w], sum) << w;
  }
}

// A kernel kept as written keeps its tiles' shuffles and votes whole too: they were half
// rewritten (`tile.shfl(v, 31, 32)`), the edit at their ')' counted in the first kernel's body,
// and the source failed to compile, sending the kernel beside it to fibers.
TEST(CpuRegions, KeptKernelsKeepTheirTileCalls) {
  const std::string src = R"(#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
__global__ void lowered(const int* in, int* out) {
  auto tile = cg::tiled_partition<32>(cg::this_thread_block());
  out[threadIdx.x] = tile.shfl(in[threadIdx.x], 0);
}
__global__ void kept(const int* in, int* out) {
  auto tile = cg::tiled_partition<32>(cg::this_thread_block());
  auto eight = cg::tiled_partition<8>(cg::this_thread_block());
  int v = cg::reduce(tile, in[threadIdx.x], [](int a, int b) { return a + b; });
  int first = tile.shfl(in[threadIdx.x], 31);
  out[threadIdx.x] = v + first + (eight.any(in[threadIdx.x] < 0) ? 1000 : 0);
}
)";
  const std::string lowered = cpu::lower_block_groups(src);
  const std::size_t second = lowered.find("__global__ void kept");
  ASSERT_NE(second, std::string::npos) << lowered;
  EXPECT_EQ(lowered.substr(second), src.substr(src.find("__global__ void kept"))) << lowered;
  Built a = build(src, "lowered"), b = build(src, "kept");
  EXPECT_EQ(a.kernel->attributes().threads, "regions") << a.kernel->attributes().why;
  std::vector<int> in(32);
  for (int i = 0; i < 32; ++i) in[i] = i == 12 ? -5 : i;
  Buffer<int> din(in), out(32, -1);
  launch(*b.kernel, {1}, {32}, 0, din.p, out.p);
  const int sum = 31 * 32 / 2 - 12 - 5;
  for (int t = 0; t < 32; ++t) ASSERT_EQ(out.host()[t], sum + 31 + (t / 8 == 1 ? 1000 : 0)) << t;
}

// A tile passed to device functions (NVIDIA's reduction sample: `threadVal = cg_reduce_n(
// threadVal, tile);` with `template <typename T, typename Group> T cg_reduce_n(T in, Group
// &threads) { return cg::reduce(threads, in, cg::plus<T>()); }`) is lowered with them: the
// parameter becomes a tile of the body, passed by value, its reduce a butterfly whose result
// is returned; the functions are then inlined and the kernel runs as regions. Calls passing
// tiles of two widths, or a parameter of another type, leave the source as it is.
TEST(CpuRegions, TilesPassedToDeviceFunctionsAreLowered) {
  const std::string helpers = R"(#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
template <typename T, typename Group>
__device__ T group_sum(T in, Group &threads) {
  return cg::reduce(threads, in, cg::plus<T>());
}
__device__ int lane_max(int v, const cg::thread_block_tile<8>& t) {
  int m = cg::reduce(t, v, cg::greater<int>());
  return m + t.thread_rank() - t.thread_rank();
}
)";
  const std::string kernel = R"(
__global__ void k(const int* in, int* sums, int* maxes) {
  cg::thread_block cta = cg::this_thread_block();
  cg::thread_block_tile<32> tile = cg::tiled_partition<32>(cta);
  auto eight = cg::tiled_partition<8>(cta);
  int v = in[blockIdx.x * 64 + cta.thread_rank()];
  int m = lane_max(v, eight);
  cg::sync(cta);
  if (tile.meta_group_rank() == 0 || v > -100) {
    v = group_sum(v, tile);
  }
  if (tile.thread_rank() == 0) sums[blockIdx.x * 2 + tile.meta_group_rank()] = v;
  if (eight.thread_rank() == 0) maxes[blockIdx.x * 8 + eight.meta_group_rank()] = m;
})";
  const std::string lowered = cpu::lower_block_groups(helpers + kernel);
  EXPECT_EQ(lowered.find("cg::"), std::string::npos) << lowered;
  EXPECT_NE(lowered.find("T group_sum(T in, Group threads)"), std::string::npos) << lowered;
  EXPECT_NE(lowered.find("int lane_max(int v, kiln_cpu::block_group t)"), std::string::npos)
      << lowered;
  EXPECT_NE(lowered.find("return kiln_g"), std::string::npos) << lowered;
  EXPECT_NE(lowered.find("kiln_cpu::block_group tile;"), std::string::npos) << lowered;
  EXPECT_EQ(std::count(lowered.begin(), lowered.end(), '\n'),
            std::count(helpers.begin(), helpers.end(), '\n') +
                std::count(kernel.begin(), kernel.end(), '\n'));
  Built b = build(helpers + kernel, "k");
  EXPECT_EQ(b.kernel->attributes().threads, "regions") << b.kernel->attributes().why;
  const int blocks = 3;
  std::vector<int> in(64 * blocks);
  for (int i = 0; i < 64 * blocks; ++i) in[i] = (i * 37) % 41 - 20;
  Buffer<int> din(in), sums(2 * blocks, -1), maxes(8 * blocks, -1);
  launch(*b.kernel, {blocks}, {64}, 0, din.p, sums.p, maxes.p);
  for (int w = 0; w < 2 * blocks; ++w) {
    int sum = 0;
    for (int l = 0; l < 32; ++l) sum += in[w * 32 + l];
    ASSERT_EQ(sums.host()[w], sum) << w;
  }
  for (int t = 0; t < 8 * blocks; ++t)
    ASSERT_EQ(maxes.host()[t], *std::max_element(in.begin() + t * 8, in.begin() + t * 8 + 8)) << t;
  // A function given tiles by one kernel and something else by another (NVIDIA's cg_reduce_n,
  // given a warp's tile by cg_reduce and a 128-thread group by multi_warp_cg_reduce): the first
  // kernel calls a lowered copy and runs as regions, the second the original, as fibers.
  const std::string mixed = R"(#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
template <typename T, typename Group>
__device__ T group_sum(T in, const Group &threads) {
  return cg::reduce(threads, in, cg::plus<T>());  // a comment
}
__global__ void by_tile(const int* in, int* sums) {
  cg::thread_block cta = cg::this_thread_block();
  auto tile = cg::tiled_partition<32>(cta);
  int v = group_sum(in[blockIdx.x * 64 + cta.thread_rank()], tile);
  if (tile.thread_rank() == 0) sums[blockIdx.x * 2 + tile.meta_group_rank()] = v;
}
__global__ void by_value(const int* in, int* sums) {
  cg::thread_block cta = cg::this_thread_block();
  int v = group_sum(in[blockIdx.x * 64 + cta.thread_rank()], cg::tiled_partition<32>(cta));
  if (threadIdx.x % 32 == 0) sums[blockIdx.x * 2 + threadIdx.x / 32] = v;
}
)";
  const std::string cloned = cpu::lower_block_groups(mixed);
  EXPECT_NE(cloned.find("int v = group_sum_kiln_tile32("), std::string::npos) << cloned;
  EXPECT_NE(cloned.find("int v = group_sum(in["), std::string::npos) << cloned;
  EXPECT_EQ(std::count(cloned.begin(), cloned.end(), '\n'),
            std::count(mixed.begin(), mixed.end(), '\n'));
  for (const char* name : {"by_tile", "by_value"}) {
    Built m = build(mixed, name);
    EXPECT_EQ(m.kernel->attributes().threads, std::string(name) == "by_tile" ? "regions" : "fibers")
        << name << ": " << m.kernel->attributes().why;
    Buffer<int> din(in), warp_sums(2 * blocks, -1);
    launch(*m.kernel, {blocks}, {64}, 0, din.p, warp_sums.p);
    for (int w = 0; w < 2 * blocks; ++w) {
      int sum = 0;
      for (int l = 0; l < 32; ++l) sum += in[w * 32 + l];
      ASSERT_EQ(warp_sums.host()[w], sum) << name << " " << w;
    }
  }
  // Left alone: one function passed tiles of two widths, or a tile and something else in one
  // kernel (which keeps its groups). (A thread_group parameter given tiles is a tile's:
  // ThreadGroupParametersAreLowered.)
  for (const char* other : {
           "__device__ int f(cg::thread_block_tile<32> t) { return t.size(); }\n"
           "__global__ void k(int* x) { auto cta = cg::this_thread_block();\n"
           "  auto a = cg::tiled_partition<32>(cta);\n"
           "  x[0] = f(a) + f(cg::tiled_partition<32>(cta)); }",
           "__device__ int f(cg::thread_block_tile<32> t) { return t.size(); }\n"
           "__global__ void k(int* x) { auto cta = cg::this_thread_block();\n"
           "  auto a = cg::tiled_partition<32>(cta); auto b = cg::tiled_partition<16>(cta);\n"
           "  x[0] = f(a) + f(b); }",
       }) {
    const std::string s2 = "#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n" +
                           std::string(other);
    EXPECT_EQ(cpu::lower_block_groups(s2), s2) << other;
  }
}

// `using namespace cooperative_groups;`: the unqualified names the lowering knows are written
// out in full first, so the kernel runs as regions as it does with `cg::`; the directive goes
// with the #include. A name the source declares itself is its own; a use the lowering does not
// take (a thread_group variable) keeps its unit, and the directive stays. Against the host.
TEST(CpuRegions, UsingTheGroupsNamespaceIsLowered) {
  const std::string src = R"(#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
using namespace cooperative_groups;
__device__ int block_sum(int* s, int v, thread_block& b) {
  s[b.thread_rank()] = v;
  b.sync();
  for (unsigned h = b.size() / 2; h > 0; h /= 2) {
    if (b.thread_rank() < h) s[b.thread_rank()] += s[b.thread_rank() + h];
    sync(b);
  }
  return s[0];
}
__global__ void k(const int* in, int* out) {
  __shared__ int s[128];
  thread_block b = this_thread_block();
  thread_block_tile<32> w = tiled_partition<32>(b);
  const int v = in[blockIdx.x * 128 + b.thread_rank()];
  const int warp_total = reduce(w, v, plus<int>());
  out[blockIdx.x * 128 + b.thread_rank()] = block_sum(s, v, b) * 1000 + warp_total;
})";
  const std::string lowered = cpu::lower_block_groups(src);
  EXPECT_EQ(lowered.find("cooperative_groups"), std::string::npos) << lowered;
  EXPECT_EQ(std::count(lowered.begin(), lowered.end(), '\n'),
            std::count(src.begin(), src.end(), '\n'));
  // The source's own `reduce`, and a thread_group the lowering does not take.
  const std::string own =
      "#include <cooperative_groups.h>\nusing namespace cooperative_groups;\n__device__ int "
      "reduce(int v) { return v; }\n__global__ void k(int* x) { thread_block b = "
      "this_thread_block(); b.sync(); x[0] = reduce(1); }";
  const std::string own_lowered = cpu::lower_block_groups(own);
  EXPECT_NE(own_lowered.find("x[0] = reduce(1);"), std::string::npos) << own_lowered;
  EXPECT_EQ(own_lowered.find("cooperative_groups"), std::string::npos) << own_lowered;
  const std::string kept =
      "#include <cooperative_groups.h>\nusing namespace cooperative_groups;\n__global__ void "
      "k(int* x) { thread_group g = this_thread_block(); g.sync(); x[0] = 1; }";
  EXPECT_EQ(cpu::lower_block_groups(kept), kept);
  Built b = build(src, "k");
  EXPECT_EQ(b.kernel->attributes().threads, "regions") << b.kernel->attributes().why;
  std::vector<int> in(256);
  for (int i = 0; i < 256; ++i) in[i] = (i * 11) % 13 - 3;
  Buffer<int> din(in), out(256, -1);
  launch(*b.kernel, {2}, {128}, 0, din.p, out.p);
  const auto o = out.host();
  for (int i = 0; i < 256; ++i) {
    int total = 0, warp = 0;
    for (int j = i / 128 * 128; j < i / 128 * 128 + 128; ++j) total += in[j];
    for (int j = i / 32 * 32; j < i / 32 * 32 + 32; ++j) warp += in[j];
    ASSERT_EQ(o[i], total * 1000 + warp) << i;
  }
}

// A `thread_group` parameter (cuda-samples' simpleCooperativeGroups): where every call passes a
// block it is lowered as a block parameter; where some calls pass a tile, those call a copy
// lowered for the tile. The kernel runs as regions (it ran as fibers). Against the host.
TEST(CpuRegions, ThreadGroupParametersAreLowered) {
  const std::string src = R"(#include <cooperative_groups.h>
using namespace cooperative_groups;
__device__ int group_sum(thread_group g, int* x, int v) {
  const int lane = g.thread_rank();
  for (int i = g.size() / 2; i > 0; i /= 2) {
    x[lane] = v;
    g.sync();
    if (lane < i) v += x[lane + i];
    g.sync();
  }
  return v;
}
__global__ void k(int* out) {
  __shared__ int ws[64];
  thread_block b = this_thread_block();
  const int all = group_sum(b, ws, b.thread_rank());
  b.sync();
  thread_block_tile<16> t = tiled_partition<16>(b);
  const int part = group_sum(t, ws + (b.thread_rank() - t.thread_rank()), t.thread_rank());
  out[b.thread_rank()] = all * 1000 + part;
})";
  const std::string lowered = cpu::lower_block_groups(src);
  EXPECT_EQ(lowered.find("cooperative_groups"), std::string::npos) << lowered;
  EXPECT_NE(lowered.find("group_sum_kiln_tile16(t,"), std::string::npos) << lowered;
  Built b = build(src, "k");
  EXPECT_EQ(b.kernel->attributes().threads, "regions") << b.kernel->attributes().why;
  Buffer<int> out(64, -1);
  launch(*b.kernel, {1}, {64}, 0, out.p);
  // The same steps on the host: each lane's value after the loop, for a group of n lanes.
  auto after = [](int n) {
    std::vector<int> v(n), x(n);
    for (int l = 0; l < n; ++l) v[l] = l;
    for (int i = n / 2; i > 0; i /= 2) {
      x = v;
      for (int l = 0; l < i; ++l) v[l] += x[l + i];
    }
    return v;
  };
  const std::vector<int> all = after(64), part = after(16);
  const auto o = out.host();
  for (int t = 0; t < 64; ++t) ASSERT_EQ(o[t], all[t] * 1000 + part[t % 16]) << t;
  // A thread_group some calls give something else than a block or a tile stays as written.
  const std::string other = R"(#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__device__ int rank_of(cg::thread_group g) { return g.thread_rank(); }
__global__ void k(int* x) { cg::thread_group g = cg::this_thread_block(); x[0] = rank_of(g); })";
  EXPECT_EQ(cpu::lower_block_groups(other), other);
}

// A block passed to device functions (NVIDIA's samples: scan, threadFenceReduction) is lowered
// with them: the parameter becomes an empty kiln_cpu::block_group, its uses plain CUDA, and
// the functions are inlined; the kernel runs as regions. Where a function keeps a use the
// lowering does not take, the kernels passing it their block keep theirs too (fibers), and
// only those.
TEST(CpuRegions, BlocksPassedToDeviceFunctionsAreLowered) {
  const std::string helpers = R"(#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__device__ int block_sum(volatile int* s, int v, const cg::thread_block& cta) {
  cg::thread_block_tile<32> tile = cg::tiled_partition<32>(cta);
  const unsigned t = cta.thread_rank();
  s[t] = v;
  cg::sync(tile);
  cg::sync(cta);
  for (unsigned half = cta.size() / 2; half > 0; half /= 2) {
    if (t < half) s[t] += s[t + half];
    cg::sync(cta);
  }
  return s[0];
}
__device__ void store(int* out, int v, cg::thread_block &cta) { out[blockIdx.x * 64 + cta.thread_rank()] = v; }
)";
  const std::string kernel = R"(
__global__ void k(const int* in, int* out) {
  cg::thread_block cta = cg::this_thread_block();
  __shared__ int s[64];
  int v = in[blockIdx.x * 64 + cta.thread_rank()];
  int total = block_sum(s, v, cta);
  store(out, total - v, cta);
})";
  const std::string lowered = cpu::lower_block_groups(helpers + kernel);
  EXPECT_EQ(lowered.find("cg::"), std::string::npos) << lowered;
  EXPECT_NE(lowered.find("int v, kiln_cpu::block_group "), std::string::npos) << lowered;
  EXPECT_NE(lowered.find("int v, kiln_cpu::block_group cta)"), std::string::npos) << lowered;
  EXPECT_NE(lowered.find("kiln_cpu::block_group cta;"), std::string::npos) << lowered;
  const int blocks = 3;
  std::vector<int> in(64 * blocks);
  for (int i = 0; i < 64 * blocks; ++i) in[i] = (i * 31) % 23 - 9;
  // A function keeping a use the lowering does not take keeps only itself as written, and the
  // kernels passing it their block (each function outside the bodies is a unit of its own).
  const std::string odd = "__device__ int rank_of(cg::thread_block b) { return int(sizeof(b)); }\n";
  std::string calls_odd = kernel;
  calls_odd.replace(calls_odd.find("total - v, cta"), 14, "total - v + 0 * rank_of(cta), cta");
  for (const std::string& src :
       {helpers + kernel, helpers + odd + kernel, helpers + odd + calls_odd}) {
    Built b = build(src, "k");
    EXPECT_EQ(b.kernel->attributes().threads,
              src.find("rank_of(cta)") == std::string::npos ? "regions" : "fibers")
        << b.kernel->attributes().why;
    Buffer<int> din(in), out(64 * blocks, -1);
    launch(*b.kernel, {blocks}, {64}, 0, din.p, out.p);
    for (int blk = 0; blk < blocks; ++blk) {
      int sum = 0;
      for (int t = 0; t < 64; ++t) sum += in[blk * 64 + t];
      for (int t = 0; t < 64; ++t)
        ASSERT_EQ(out.host()[blk * 64 + t], sum - in[blk * 64 + t]) << blk << "," << t;
    }
  }
}

// cg::reduce over a tile (of a warp, or of 8 lanes), as a whole statement, is lowered to a
// butterfly of xor shuffles, which leaves every lane the tile's result as cg::reduce does: the
// kernel runs as regions, and each op's results are the host's; so are a narrow tile's
// shuffles, ranks and votes (masked to its own lanes). Other forms (a lambda op, a reduce inside an
// expression, a narrower tile) leave the source as it is.
TEST(CpuRegions, GroupReduceAndNarrowTilesRunAsRegions) {
  const std::string src = R"(
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
__global__ void k(const int* in, int* sums, int* lows, int* highs, unsigned* ors) {
  cg::thread_block cta = cg::this_thread_block();
  auto tile = cg::tiled_partition<32>(cta);
  const int v = in[blockIdx.x * blockDim.x + threadIdx.x];
  int s = cg::reduce(tile, v * 2 - 1, cg::plus<int>());
  const int lo = cg::reduce(tile, v, cg::less<int>());
  int hi;
  hi = cg::reduce(tile, v, cg::greater<int>());
  unsigned bits = cg::reduce(tile, 1u << (v % 32), cg::bit_or<unsigned int>());
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  sums[t] = s;
  lows[t] = lo;
  highs[t] = hi;
  ors[t] = bits;
})";
  const std::string lowered = cpu::lower_block_groups(src);
  EXPECT_EQ(lowered.find("cg::"), std::string::npos) << lowered;
  EXPECT_EQ(std::count(lowered.begin(), lowered.end(), '\n'),
            std::count(src.begin(), src.end(), '\n'));
  Built b = build(src, "k");
  ASSERT_EQ(b.kernel->attributes().threads, "regions") << b.kernel->attributes().why;
  const int blocks = 2, threads = 64;
  std::vector<int> in(blocks * threads);
  for (int i = 0; i < blocks * threads; ++i) in[i] = (i * 37 + 11) % 101 - 50;
  Buffer<int> din(in), sums(in.size(), 0), lows(in.size(), 0), highs(in.size(), 0);
  Buffer<unsigned> ors(in.size(), 0);
  launch(*b.kernel, {blocks}, {threads}, 0, din.p, sums.p, lows.p, highs.p, ors.p);
  auto so = sums.host(), lo = lows.host(), hi = highs.host();
  auto oo = ors.host();
  for (int w = 0; w < blocks * threads / 32; ++w) {
    int sum = 0, low = in[w * 32], high = in[w * 32];
    unsigned bits = 0;
    for (int l = 0; l < 32; ++l) {
      const int v = in[w * 32 + l];
      sum += v * 2 - 1, low = std::min(low, v), high = std::max(high, v);
      const int count = v % 32;  // (negative for a negative v: a GPU's shl then shifts all out)
      bits |= count < 0 ? 0u : 1u << count;
    }
    for (int l = 0; l < 32; ++l) {  // every lane has the warp's result
      ASSERT_EQ(so[w * 32 + l], sum) << w << "," << l;
      ASSERT_EQ(lo[w * 32 + l], low) << w << "," << l;
      ASSERT_EQ(hi[w * 32 + l], high) << w << "," << l;
      ASSERT_EQ(oo[w * 32 + l], bits) << w << "," << l;
    }
  }
  // A tile of 8 lanes: shuffles within its segment, its ranks, and its reduction.
  const std::string narrow = R"(
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
__global__ void k(const int* in, int* sums, int* nexts, int* ranks, unsigned* votes) {
  cg::thread_block_tile<8> tile = cg::tiled_partition<8>(cg::this_thread_block());
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  const int v = in[t];
  int s = cg::reduce(tile, v, cg::plus<int>());
  int next = tile.shfl_down(v, 1);
  const unsigned bal = tile.ballot(v > 0);
  const bool some = tile.any(v > 40), every = tile.all(v > -45);
  votes[t] = bal + (some ? 1u << 16 : 0u) + (every ? 1u << 17 : 0u);
  sums[t] = s;
  nexts[t] = next;
  ranks[t] = tile.thread_rank() + 100 * tile.meta_group_rank() + 10000 * tile.meta_group_size() +
             1000000 * tile.size();
})";
  Built nb = build(narrow, "k");
  ASSERT_EQ(nb.kernel->attributes().threads, "regions") << nb.kernel->attributes().why;
  Buffer<int> nsums(in.size(), 0), nexts(in.size(), 0), ranks(in.size(), 0);
  Buffer<unsigned> votes(in.size(), 0);
  launch(*nb.kernel, {blocks}, {threads}, 0, din.p, nsums.p, nexts.p, ranks.p, votes.p);
  auto ns = nsums.host(), nn = nexts.host(), nr = ranks.host();
  auto nv = votes.host();
  for (int i = 0; i < blocks * threads; ++i) {
    const int first = i / 8 * 8, lane = i % 8, tid = i % threads;
    int sum = 0;
    for (int l = 0; l < 8; ++l) sum += in[first + l];
    ASSERT_EQ(ns[i], sum) << i;
    ASSERT_EQ(nn[i], lane + 1 < 8 ? in[i + 1] : in[i]) << i;  // past the tile: its own value
    ASSERT_EQ(nr[i], lane + 100 * (tid / 8) + 10000 * (threads / 8) + 1000000 * 8) << i;
    unsigned bal = 0;
    bool some = false, every = true;
    for (int l = 0; l < 8; ++l) {
      bal |= unsigned(in[first + l] > 0) << l;
      some = some || in[first + l] > 40, every = every && in[first + l] > -45;
    }
    ASSERT_EQ(nv[i], bal + (some ? 1u << 16 : 0u) + (every ? 1u << 17 : 0u)) << i;
  }
  for (const char* other : {
           "int r = cg::reduce(tile, v, [](int a, int b) { return a + b; });",
           "int r = 1 + cg::reduce(tile, v, cg::plus<int>());",
           "if (v) r = cg::reduce(tile, v, cg::plus<int>());",
       }) {
    const std::string s2 =
        std::string(
            "#include <cooperative_groups.h>\nnamespace cg = "
            "cooperative_groups;\n__global__ void k(int v) {\n  int r = 0;\n  "
            "auto tile = cg::tiled_partition<32>(cg::this_thread_block());\n  ") +
        other + "\n}";
    EXPECT_EQ(cpu::lower_block_groups(s2), s2) << other;
  }
}

// A subscript that sums, subtracts or multiplies names and integer literals is computed in
// 64 bits where its type is int (jit/cpu/wide_subscripts.h), so that it still steps evenly with
// the thread once GCC has made conditional arithmetic unsigned: the Rodinia-style pathfinder's
// `wall[(first_row + i) * cols + col]` under `if (in_grid && ...)` was a gather. What is no such
// sum (a call, a lone name, ++, a capture list, a structured binding) is left alone, and so is
// the value of an unsigned or long subscript; results are the host's.
TEST(CpuRegions, SubscriptsAreComputedWide) {
  const std::string text = R"(void f(int* a, int i, int n, unsigned u, long l, int* p) {
  a[(i + 1) * n + 2] = a[i] + a[g(i) + 1] + a[i++ + 1] + a[u + 1] + a[l * 2] + a[int(u) * 2 + i];
  a[(int)u + 1] = a[(n)(i) + 1] + a[i / 2 % n];
  auto h = [&] { return p[i]; };
  int arr[4 * 2];
  a[i][n - 1] = 0;
})";
  const std::string wide = cpu::wide_subscripts(text);
  EXPECT_EQ(std::count(wide.begin(), wide.end(), '\n'), std::count(text.begin(), text.end(), '\n'));
  EXPECT_NE(wide.find("a[::kiln_cpu::wide_index<decltype(((i + 1) * n + 2) + 0)>((::kiln_cpu::wide("
                      "i) + 1) * ::kiln_cpu::wide(n) + 2, (i + 1) * n + 2)]"),
            std::string::npos)
      << wide;
  EXPECT_NE(wide.find("(::kiln_cpu::wide(i) / 2 % ::kiln_cpu::wide(n), i / 2 % n)"),
            std::string::npos)
      << wide;
  for (const char* kept : {"a[i] +", "a[g(i) + 1]", "a[i++ + 1]", "[&]", "int arr[4 * 2]",
                           "a[(int)u + 1]", "a[(n)(i) + 1]"})
    EXPECT_NE(wide.find(kept), std::string::npos) << kept << "\n" << wide;
  // (unsigned and long sums are rewritten too, but decltype keeps their own value)
  EXPECT_NE(wide.find("wide_index<decltype((u + 1) + 0)>"), std::string::npos) << wide;
  EXPECT_NE(wide.find("::kiln_cpu::wide(int(u)) * 2"), std::string::npos) << wide;
  EXPECT_NE(wide.find("a[i][::kiln_cpu::wide_index<decltype((n - 1) + 0)>"), std::string::npos)
      << wide;  // a[i]'s own subscript
  EXPECT_EQ(cpu::wide_subscripts("auto [x, y] = pair; q[x] = 1;"), "auto [x, y] = pair; q[x] = 1;");
  // A macro that acts when evaluated (a call, an increment, an assignment) would run twice: such a
  // subscript is left alone (survey 14: a work queue's push took two slots); a plain one is not.
  const std::string macros =
      "#define NEXT_SLOT atomicAdd(counter, 1)\n#define POP (--top)\n#define SET \\\n (x = 2)\n"
      "#define OFF (2 * W)\nvoid f(int* a, int i) { a[0 + NEXT_SLOT] = a[1 + POP] + a[SET * i] + "
      "a[OFF + i]; }";
  const std::string wide_macros = cpu::wide_subscripts(macros);
  for (const char* kept : {"a[0 + NEXT_SLOT]", "a[1 + POP]", "a[SET * i]"})
    EXPECT_NE(wide_macros.find(kept), std::string::npos) << kept << "\n" << wide_macros;
  EXPECT_NE(wide_macros.find("::kiln_cpu::wide(OFF) + ::kiln_cpu::wide(i)"), std::string::npos)
      << wide_macros;

  const std::string src = R"(
__global__ void k(const int* in, int* out, unsigned* wrapped, int rows, int cols, int steps) {
  __shared__ int tile[2][32];
  int tx = threadIdx.x;
  int row = blockIdx.x;
  bool inside = tx < cols && row < rows;
  tile[0][tx] = inside ? in[row * cols + tx] : 0;
  __syncthreads();
  for (int i = 0; i < steps; i++) {
    if (inside && tx >= i)
      out[(i * rows + row) * cols + tx] = tile[0][(i - tx) / -1 + (i - tx) % 3 * 0] + in[(row - 0) * cols + tx - i];
    __syncthreads();
  }
  if (tx == 0) wrapped[row] = blockDim.x - 1u + 2u;  // 33: unsigned, as written
}
)";
  auto r = cpu::form_regions(src);
  ASSERT_TRUE(r);
  Built b = build(src, "k");
  ASSERT_EQ(b.kernel->attributes().threads, "regions");
  const int rows = 3, cols = 20, steps = 4;
  std::vector<int> in(rows * cols);
  for (int c = 0; c < rows * cols; ++c) in[c] = c * 7 % 23;
  Buffer<int> din(in), out(steps * rows * cols, -1);
  Buffer<unsigned> wrapped(rows, 0);
  launch(*b.kernel, {rows}, {32}, 0, din.p, out.p, wrapped.p, rows, cols, steps);
  auto o = out.host();
  for (int i = 0; i < steps; ++i)
    for (int row = 0; row < rows; ++row)
      for (int tx = 0; tx < cols; ++tx) {
        const int want = tx >= i ? in[row * cols + tx - i] * 2 : -1;
        ASSERT_EQ(o[(i * rows + row) * cols + tx], want) << i << " " << row << " " << tx;
      }
  for (unsigned w : wrapped.host()) EXPECT_EQ(w, 33u);
}

// Index arithmetic read as int (jit/cpu/signed_indices.h): only in int initialisers of + - *
// on identifiers, members and integer literals; the results equal CUDA's unsigned ones, wrapped
// intermediates included.
TEST(CpuRegions, IndexArithmeticIsReadAsInt) {
  const std::pair<std::string, std::string> cases[] = {
      {"int col = blockIdx.x * TILE + tx;", "int col = int(blockIdx.x) * TILE + tx;"},
      {"const int t = threadIdx.x, u = 31 - t;", "const int t = int(threadIdx.x), u = 31 - t;"},
      {"int a = 1, b = (threadIdx.y - 1) * s.w;", "int a = 1, b = (int(threadIdx.y) - 1) * s.w;"},
      {"for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x) {}",
       "for (int i = int(blockIdx.x) * int(blockDim.x) + int(threadIdx.x); i < n; i += "
       "gridDim.x) {}"},
      // Left alone: other types, other operators, floats, calls, casts, subscripts.
      {"unsigned u = blockIdx.x * 2;", ""},
      {"auto a = threadIdx.x + 1;", ""},
      {"int h = threadIdx.x / 2;", ""},
      {"int m = threadIdx.x % 32;", ""},
      {"int f = threadIdx.x * 0.5f;", ""},
      {"int e = threadIdx.x * 1e1;", ""},
      {"int c = min(threadIdx.x, 3);", ""},
      {"int s = v[threadIdx.x] + 1;", ""},
      {"int q = n > 0 ? threadIdx.x : 0;", ""},
      {"x = (int)threadIdx.x;", ""},
      {"#define I int k = threadIdx.x;", ""},
      // Hashes and random generators, whose arithmetic wraps on purpose (survey 14: GCC folded
      // `h > 12345` to `threadIdx.x > 0`): a literal beyond 2^20, or a name defined as one.
      {"int h = threadIdx.x * 1103515245 + 12345;", ""},
      {"int h = threadIdx.x * 0x9E3779B9u;", ""},
      {"#define PRIME 16777619u\nint h = (blockIdx.x + 7) * PRIME;", ""},
      {"constexpr unsigned kMul = (2654435761u); int h = threadIdx.x * kMul;", ""},
      {"int k = threadIdx.x * 1048576;", "int k = int(threadIdx.x) * 1048576;"},
  };
  for (const auto& [code, expected] : cases)
    EXPECT_EQ(cpu::signed_index_arithmetic(code), expected.empty() ? code : expected) << code;

  // Grid-stride loops read as int still run their rounds as plain loops.
  const std::string strided = cpu::signed_index_arithmetic(
      "__global__ void k(int* x, int n) {\n  const int t = threadIdx.x;\n  __syncthreads();\n"
      "  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x) x[i] = i;\n"
      "  for (int i = t; i < n; i += blockDim.x) x[i] += t;\n}");
  auto r = cpu::form_regions(strided);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->find("kiln_cpu::in_lockstep"), std::string::npos) << *r;
  EXPECT_NE(r->find("kiln_k"), std::string::npos) << *r;

  // Wrapped intermediates (thread 0's threadIdx.x - 1) give what CUDA's unsigned ones give.
  Built b = build(R"(
__global__ void k(int* out, int n) {
  int i = (threadIdx.x - 1) * 3 + blockIdx.x * blockDim.x - n;
  long long w = (threadIdx.x - 1) + 0LL;
  out[blockIdx.x * blockDim.x + threadIdx.x] = i + int(w >> 32);
})",
                  "k");
  Buffer<int> out(64, 0);
  launch(*b.kernel, {2}, {32}, 0, out.p, 5);
  auto o = out.host();
  for (unsigned blk = 0; blk < 2; ++blk)
    for (unsigned t = 0; t < 32; ++t) {
      const int i = int((t - 1u) * 3u + blk * 32u - 5u);
      const long long w = (long long)(t - 1u);
      ASSERT_EQ(o[blk * 32 + t], i + int(w >> 32)) << blk << "," << t;
    }
}

// Atomics in loops run as regions: on shared memory they are plain updates of the block's
// memory, elsewhere real atomics; in a template kernel (whose T the bindings must not hide),
// through the _block names, and for a kiln::Array parameter's elements.
TEST(CpuRegions, AtomicsInLoops) {
  const std::string src = R"(#include <kiln.cuh>
template <typename T>
__global__ void k(const T* v, int n, kiln::Array<unsigned, 1> out, int* global_min) {
  __shared__ unsigned bins[8];
  __shared__ int low, high, wraps, swapped;
  if (threadIdx.x < 8) bins[threadIdx.x] = 0;
  if (threadIdx.x == 0) low = 1 << 30, high = -1, wraps = 0, swapped = 0;
  __syncthreads();
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    atomicAdd(&bins[int(v[i]) % 8], 1u);
    atomicMin(&low, int(v[i]));
    atomicMax_block(&high, int(v[i]));
    atomicInc((unsigned*)&wraps, 4u);
    atomicCAS(&swapped, 0, int(v[i]) + 1);
    atomicMin(global_min, int(v[i]));
  }
  __syncthreads();
  if (threadIdx.x < 8) atomicAdd(&out[threadIdx.x], bins[threadIdx.x]);
  if (threadIdx.x == 0) out[8] = low, out[9] = high, out[10] = wraps, out[11] = swapped;
})";
  ASSERT_EQ(declined(src), "");
  Built b = build(src, "k<float>");
  ASSERT_EQ(b.kernel->attributes().threads, "regions") << b.kernel->attributes().why;
  const int n = 1000;
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i) v[i] = float((i * 37 + 11) % 500 + 3);
  Buffer<float> values(v);
  Buffer<unsigned> out(12, 0);
  Buffer<int> global_min(std::vector<int>{1 << 30});
  struct {
    unsigned* data;
    long long shape[1];
  } arr{out.p, {12}};
  launch(*b.kernel, {1}, {64}, 0, values.p, n, arr, global_min.p);
  std::vector<unsigned> bins(8, 0);
  int lo = 1 << 30, hi = -1;
  for (float x : v) ++bins[int(x) % 8], lo = std::min(lo, int(x)), hi = std::max(hi, int(x));
  auto o = out.host();
  for (int i = 0; i < 8; ++i) EXPECT_EQ(o[i], bins[i]) << i;
  EXPECT_EQ(int(o[8]), lo);
  EXPECT_EQ(int(o[9]), hi);
  EXPECT_EQ(o[10], unsigned(n % 5));     // atomicInc wraps after 4: 0 1 2 3 4 0 ...
  EXPECT_EQ(int(o[11]), int(v[0]) + 1);  // thread 0 swaps first (threadIdx order)
  EXPECT_EQ(global_min.host()[0], lo);
}

// A grid-stride loop runs in lockstep (the block's threads take each step together): threads
// with different trip counts, one that returns inside the loop, an accumulator read after it;
// a loop with its own break stays a plain loop in its region.
TEST(CpuRegions, StridedLoopsRunInLockstep) {
  const std::string src = R"(
__global__ void k(const int* in, int n, int* out) {
  __shared__ int s[64];
  int acc = 0;
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    if (in[i] < 0) return;
    acc += in[i] * (i % 3);
  }
  s[threadIdx.x] = acc;
  __syncthreads();
  int first = -1;
  for (int j = threadIdx.x; j < n; j += blockDim.x)
    if (in[j] == 7) { first = j; break; }
  out[threadIdx.x] = s[63 - threadIdx.x] * 1000 + first;
})";
  auto r = cpu::form_regions(src);
  ASSERT_TRUE(r);
  EXPECT_EQ(std::count(r->begin(), r->end(), '\n'), std::count(src.begin(), src.end(), '\n'));
  // The first loop's threads start at consecutive indices (threadIdx.x) and share the bound and
  // the stride: its rounds are a plain loop over the block's index, `kiln_k<N>_`; the second
  // has a break, so it runs thread after thread.
  EXPECT_NE(r->find("kiln_k"), std::string::npos) << *r;
  EXPECT_EQ(r->find("in_lockstep"), std::string::npos) << *r;
  // So does one that starts at a variable holding threadIdx.x (`const int t = threadIdx.x;`),
  // but not at one of a narrower type.
  for (const char* type : {"const int", "unsigned char"}) {
    const std::string kernel = std::string("__global__ void k(int* x, int n) {\n  ") + type +
                               " t = threadIdx.x;\n  __syncthreads();\n  for (int i = t; i < n; "
                               "i += blockDim.x) x[i] = i;\n}";
    auto rt = cpu::form_regions(kernel);
    ASSERT_TRUE(rt);
    EXPECT_EQ(rt->find("kiln_k") != std::string::npos, std::string(type) == "const int") << *rt;
  }
  Built b = build(src, "k");
  ASSERT_EQ(b.kernel->attributes().threads, "regions");
  const int n = 1000;
  std::vector<int> in(n);
  for (int i = 0; i < n; ++i) in[i] = (i * 7 + 3) % 11;
  in[5] = -1;  // thread 5 returns at its first step
  Buffer<int> input(in), out(64, -9);
  launch(*b.kernel, {1}, {64}, 0, input.p, n, out.p);
  std::vector<int> acc(64, 0), first(64, -1);
  for (int t = 0; t < 64; ++t) {
    for (int i = t; i < n; i += 64) acc[t] += in[i] * (i % 3);
    for (int j = t; j < n; j += 64)
      if (in[j] == 7) {
        first[t] = j;
        break;
      }
  }
  auto o = out.host();
  for (int t = 0; t < 64; ++t) {
    if (t == 5) {
      ASSERT_EQ(o[t], -9);
      continue;
    }
    // s[58] was never written by thread 5 (it returned): thread 58's output reads garbage there.
    if (63 - t == 5) continue;
    ASSERT_EQ(o[t], acc[63 - t] * 1000 + first[t]) << t;
  }
}

// A kernel without barriers whose body has a grid-stride loop at its top level runs it in
// lockstep too (as regions), when the plan runs it as a thread loop (named in loops): thread
// after thread, each thread's pass read a new cache line per element (16M floats, 128 blocks:
// 170 ms as a loop, 7 ms so). A start read from a local that holds the thread's index (`int
// tid = ...; for (int i = tid; ...)`) is consecutive too. Others are left as written.
TEST(CpuRegions, GridStrideLoopsOfBarrierFreeKernelsRunInLockstep) {
  const std::string src = cpu::signed_index_arithmetic(R"(
__global__ void saxpy(float a, const float* x, float* y, int n) {
  int tid = blockIdx.x * blockDim.x + threadIdx.x;
  int stride = blockDim.x * gridDim.x;
  for (int i = tid; i < n; i += stride) y[i] = a * x[i] + y[i];
}
__global__ void once(float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 0;
}
__global__ void other(float* y, int n) {
  for (int i = threadIdx.x; i < n; i += blockDim.x) y[i] = 1;
})");
  const cpu::RegionRewrite r = cpu::form_regions_by_kernel(src, {"saxpy", "once"});
  EXPECT_EQ(r.lockstep, (std::set<std::string>{"saxpy"}));
  EXPECT_TRUE(r.declined.empty());
  EXPECT_EQ(std::count(r.source.begin(), r.source.end(), '\n'),
            std::count(src.begin(), src.end(), '\n'));
  const std::size_t saxpy = r.source.find("saxpy"), once = r.source.find("once");
  const std::size_t rounds = r.source.find("kiln_k");  // the consecutive form: rounds of a loop
  EXPECT_TRUE(rounds > saxpy && rounds < once) << r.source;
  EXPECT_EQ(r.source.find("in_lockstep"), std::string::npos) << r.source;
  EXPECT_NE(r.source.find("if (i < n) y[i] = 0;"), std::string::npos) << r.source;  // as written
  EXPECT_NE(r.source.find("i < n; i += blockDim.x) y[i] = 1"), std::string::npos) << r.source;
  EXPECT_TRUE(cpu::form_regions_by_kernel(src).lockstep.empty());  // (no loops named)
}

// Such kernels against the host over several block and grid sizes (more threads than elements,
// a bound that is no multiple of the block): the consecutive form, with an unsigned index and a
// float atomic in the loop too, runs as regions and says why (with regions off, as loops); so
// does one whose threads start apart along x and return inside the loop (rounds with a flag and
// an index per thread); a loop along y stays a thread loop (such rounds cost the blur lab's
// 2-D loops 10% and gained nothing).
TEST(CpuRegions, BarrierFreeGridStrideKernelsMatchTheHost) {
  const std::string src = R"(
__global__ void scale(const float* x, float* y, int n, float a) {
  int tid = blockIdx.x * blockDim.x + threadIdx.x;
  if (n < 0) return;
  for (int i = tid; i < n; i += blockDim.x * gridDim.x) y[i] = a * x[i] + (float)i;
}
__global__ void pairs(const int* in, int* out, unsigned n) {
  for (unsigned i = 2 * (blockIdx.x * blockDim.x + threadIdx.x); i < n; i += 2 * blockDim.x * gridDim.x) {
    if (in[i] < 0) return;
    out[i / 2] = in[i] + (i + 1 < n ? in[i + 1] : 0);
  }
}
__global__ void total(const float* x, float* sum, unsigned n) {
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    atomicAdd(sum, x[i]);
}
__global__ void rows(int* out, int h, int w) {
  for (int y = blockIdx.y * blockDim.y + threadIdx.y; y < h; y += blockDim.y * gridDim.y)
    for (int x = threadIdx.x; x < w; x += blockDim.x) out[y * w + x] = 3 * y - x;
}
)";
  const int n = 1000;
  std::vector<float> xs(n);
  std::vector<int> in(n);
  for (int i = 0; i < n; ++i) {
    xs[i] = float(i % 13) * 0.5f;
    in[i] = (i * 7 + 3) % 11;
  }
  in[600] = -5;  // the thread at pair 300 returns there
  for (const bool off : {false, true}) {
    const Cpu& on = off ? without_regions() : cpu();
    Built s = build(src, "scale", {}, on), p = build(src, "pairs", {}, on),
          t = build(src, "total", {}, on), r = build(src, "rows", {}, on);
    EXPECT_EQ(r.kernel->attributes().threads, "loop") << r.kernel->attributes().why;
    Buffer<int> image(30 * 50, -1);
    launch(*r.kernel, {1, 2}, {16, 4}, 0, image.p, 30, 50);
    const std::vector<int> im = image.host();
    for (int i = 0; i < 30 * 50; ++i) ASSERT_EQ(im[i], 3 * (i / 50) - i % 50) << i;
    for (Built* b : {&s, &p, &t}) {
      EXPECT_EQ(b->kernel->attributes().threads, off ? "loop" : "regions")
          << b->kernel->attributes().why;
      if (!off) {
        EXPECT_NE(b->kernel->attributes().why.find("grid-stride loop runs in lockstep"),
                  std::string::npos)
            << b->kernel->attributes().why;
      }
    }
    Buffer<float> x(xs);
    for (auto [grid, block] : {std::pair{1u, 64u}, {3u, 32u}, {7u, 96u}, {40u, 32u}}) {
      Buffer<float> y(n, -1.0f);
      launch(*s.kernel, {grid}, {block}, 0, x.p, y.p, n, 3.0f);
      const std::vector<float> ys = y.host();
      for (int i = 0; i < n; ++i) ASSERT_EQ(ys[i], 3.0f * xs[i] + float(i)) << i << " " << grid;
      Buffer<int> input(in), out(n / 2, -9);
      launch(*p.kernel, {grid}, {block}, 0, input.p, out.p, unsigned(n));
      const std::vector<int> o = out.host();
      const unsigned threads = grid * block;
      for (unsigned q = 0; q < unsigned(n / 2); ++q) {
        // pair q is thread q % threads's; that thread returned at pair 300 if it reached it
        const bool stopped = q % threads == 300 % threads && q >= 300;
        ASSERT_EQ(o[q], stopped ? -9 : in[2 * q] + in[2 * q + 1]) << q << " " << grid;
      }
      Buffer<float> sum(1, 0.0f);
      launch(*t.kernel, {grid}, {block}, 0, x.p, sum.p, unsigned(n));
      float expect = 0;
      for (float v : xs) expect += v;
      ASSERT_EQ(sum.host()[0], expect);  // (halves of small integers: every order is exact)
      // Rows of threads along y take the same indices: each element is added once per row
      // (a round that is not one row runs each_index's thread loop, not its index loop).
      Buffer<float> rows_sum(1, 0.0f);
      launch(*t.kernel, {grid}, {block / 32, 32}, 0, x.p, rows_sum.p, unsigned(n));
      ASSERT_EQ(rows_sum.host()[0], 32 * expect) << grid << " " << block;
    }
  }
}

// A variable written through a call is as written as one assigned in the body (survey 14): a
// parameter advanced by a helper taking it by reference, by a macro or by a member function is
// each thread's own (one copy for the block made every thread advance it: an invalid access, or
// a count of every thread's increments), and a grid-stride loop whose index a helper or a macro
// moves is not run in rounds (each round recomputed the index: the skip was lost). Against the
// host.
TEST(CpuRegions, WritesThroughCallsAndMacros) {
  const std::string src = R"(
#define ADV(p, k) ((p) += (k))
#define SKIP(i) ((i) += 1)
#define STEP more += threadIdx.x
#define BUMP() (++n)
__device__ void adv(const float*& p, int k) { p += k; }
__device__ void bump(int& n) { n += 1; }
__device__ void skip_one(int& i) { i += 1; }
__device__ int twice(int i) { return 2 * i; }
struct Iter {
  const float* p;
  __device__ void advance(int k) { p += k; }
};
__global__ void by_ref(const float* src, const float* more, Iter it, int n, float* out) {
  __shared__ float s[64];
  adv(src, blockIdx.x * 64 + threadIdx.x);
  STEP;  // (a macro that writes a parameter it does not name: review 8)
  it.advance(threadIdx.x);
  bump(n);
  BUMP();
  ADV(n, -1);
  s[threadIdx.x] = *src;
  __syncthreads();
  out[blockIdx.x * 64 + threadIdx.x] = s[63 - threadIdx.x] + *more + *it.p + n;
}
__global__ void skips(const int* x, int* y, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    if (x[i]) skip_one(i);
    y[i] = 1;
  }
}
__global__ void macro_skips(const int* x, int* y, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    if (x[i]) SKIP(i);
    y[i] = 1;
  }
}
__global__ void by_value(int* y, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    y[i] = twice(i);
}
)";
  // (rounds, kiln_k, in by_value alone, whose helper takes its index by value: the skipping
  // ones run in lockstep thread by thread)
  const cpu::RegionRewrite r = cpu::form_regions_by_kernel(cpu::signed_index_arithmetic(src),
                                                           {"skips", "macro_skips", "by_value"});
  EXPECT_EQ(r.lockstep, (std::set<std::string>{"skips", "macro_skips", "by_value"}));
  EXPECT_GT(r.source.find("kiln_k"), r.source.find("void by_value")) << r.source;
  EXPECT_NE(r.source.find("kiln_k"), std::string::npos) << r.source;
  Built b = build(src, "by_ref");
  ASSERT_EQ(b.kernel->attributes().threads, "regions") << b.kernel->attributes().why;
  std::vector<float> xs(128);
  for (int i = 0; i < 128; ++i) xs[i] = float(i % 17);
  Buffer<float> x(xs), out(128, -1.0f);
  launch(*b.kernel, {2}, {64}, 0, x.p, x.p, x.p, 10, out.p);
  for (int blk = 0; blk < 2; ++blk)
    for (int t = 0; t < 64; ++t)
      ASSERT_EQ(out.host()[blk * 64 + t], xs[blk * 64 + 63 - t] + 2 * xs[t] + 11.0f)
          << blk << " " << t;
  for (const char* name : {"skips", "macro_skips"}) {
    Built k = build(src, name);
    const int n = 8;
    Buffer<int> flags(std::vector<int>{0, 1, 0, 0, 0, 0, 0, 0}), y(n, 0);
    launch(*k.kernel, {1}, {4}, 0, flags.p, y.p, n);  // thread 1 goes on at 2, then 6: not 1, 5
    EXPECT_EQ(y.host(), (std::vector<int>{1, 0, 1, 1, 1, 0, 1, 1})) << name;
  }
  Built v = build(src, "by_value");
  Buffer<int> y(300, -1);
  launch(*v.kernel, {2}, {64}, 0, y.p, 300);
  for (int i = 0; i < 300; ++i) ASSERT_EQ(y.host()[i], 2 * i) << i;
}

// `if constexpr (C)` around barriers or warp operations (a template's algorithm chosen at
// compile time, as CUB's and CUTLASS's code chooses): read as `if (C)`, C the same in every
// thread, where the rewrite declined the kernel ("a statement without ';'": fibers, 4-11x
// slower, survey 14). A discarded branch stays discarded where the if holds a barrier. Against
// the host, both instances.
TEST(CpuRegions, IfConstexprAroundBarriers) {
  const std::string src = R"(
template <int BLOCK, bool SHARED>
__global__ void block_sum(const int* in, int* out) {
  int v = in[blockIdx.x * BLOCK + threadIdx.x];
  if constexpr (SHARED) {
    __shared__ int s[BLOCK];
    s[threadIdx.x] = v;
    __syncthreads();
    for (int stride = BLOCK / 2; stride > 0; stride >>= 1) {
      if (threadIdx.x < stride) s[threadIdx.x] += s[threadIdx.x + stride];
      __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = s[0];
  } else {
    if constexpr (BLOCK == 32) v += __shfl_xor_sync(0xffffffffu, v, 16);
    atomicAdd(&out[blockIdx.x], BLOCK == 32 && threadIdx.x >= 16 ? 0 : v);
  }
}
)";
  std::vector<int> in(128);
  for (int i = 0; i < 128; ++i) in[i] = (i * 37) % 23 - 9;
  for (const char* instance : {"block_sum<64, true>", "block_sum<32, false>"}) {
    const int block = std::string(instance).find("64") != std::string::npos ? 64 : 32;
    Built b = build(src, instance);
    EXPECT_EQ(b.kernel->attributes().threads, "regions") << b.kernel->attributes().why;
    Buffer<int> din(in), out(128 / block, 0);
    launch(*b.kernel, {unsigned(128 / block)}, {unsigned(block)}, 0, din.p, out.p);
    for (int blk = 0; blk < 128 / block; ++blk)
      ASSERT_EQ(out.host()[blk],
                std::accumulate(in.begin() + blk * block, in.begin() + (blk + 1) * block, 0))
          << instance << " " << blk;
  }
}

// The while form of a grid-stride loop, as cuda-samples' reduce6 writes it (`unsigned int i =
// blockIdx.x * blockSize * 2 + threadIdx.x; ... while (i < n) { ...; i += gridSize; }`, the
// block size a template parameter), runs in rounds too (16M floats, 64 blocks: 31 ms thread
// after thread, 5 ms so), against the host over sizes that leave the last pair half full. Not
// when the index is named after the loop, moved elsewhere in it, or the loop breaks.
TEST(CpuRegions, WhileGridStrideLoopsRunInRounds) {
  const std::string src = R"(
template <unsigned int blockSize, bool nIsPow2>
__global__ void reduce6(const int* g_idata, int* g_odata, unsigned int n) {
  __shared__ int sdata[blockSize];
  unsigned int tid = threadIdx.x;
  unsigned int i = blockIdx.x * blockSize * 2 + threadIdx.x;
  unsigned int gridSize = blockSize * 2 * gridDim.x;
  int mySum = 0;
  while (i < n) {
    mySum += g_idata[i];
    if (nIsPow2 || i + blockSize < n) mySum += g_idata[i + blockSize];
    i += gridSize;
  }
  sdata[tid] = mySum;
  __syncthreads();
  for (unsigned int s = blockSize / 2; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] = mySum = mySum + sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0) g_odata[blockIdx.x] = mySum;
})";
  auto r = cpu::form_regions(src);
  ASSERT_TRUE(r);
  EXPECT_NE(r->find("kiln_k"), std::string::npos) << *r;
  EXPECT_EQ(r->find("in_lockstep"), std::string::npos) << *r;
  EXPECT_EQ(std::count(r->begin(), r->end(), '\n'), std::count(src.begin(), src.end(), '\n'));
  for (const char* body : {"while (i < n) { s[tid] += i; i += 64; } s[0] = i;",
                           "while (i < n) { s[tid] += i; i += 1; i += 64; }",
                           "while (i < n) { if (i == 9) break; s[tid] += i; i += 64; }"}) {
    const std::string other = std::string(
                                  "__global__ void k(int n) {\n  __shared__ int s[64];\n"
                                  "  int tid = threadIdx.x;\n  int i = tid;\n  ") +
                              body + "\n  __syncthreads();\n}";
    auto ro = cpu::form_regions(other);
    ASSERT_TRUE(ro) << other;
    EXPECT_EQ(ro->find("kiln_k"), std::string::npos) << *ro;
  }
  for (const char* name : {"reduce6<64, false>", "reduce6<64, true>"}) {
    Built b = build(src, name);
    ASSERT_EQ(b.kernel->attributes().threads, "regions") << b.kernel->attributes().why;
    const bool pow2 = std::string(name).find("true") != std::string::npos;
    for (unsigned n : {1000u, 4096u, 77u}) {
      if (pow2 && n != 4096u) continue;  // (nIsPow2: n a power of two, as the sample launches it)
      std::vector<int> in(n);
      for (unsigned k = 0; k < n; ++k) in[k] = int((k * 37 + 11) % 101) - 50;
      const unsigned blocks = 5;
      Buffer<int> input(in), out(blocks, -1);
      launch(*b.kernel, {blocks}, {64}, 0, input.p, out.p, n);
      const std::vector<int> o = out.host();
      for (unsigned blk = 0; blk < blocks; ++blk) {
        int expect = 0;
        for (unsigned t = 0; t < 64; ++t)
          for (unsigned i = blk * 128 + t; i < n; i += 128 * blocks)
            expect += in[i] + (i + 64 < n ? in[i + 64] : 0);
        ASSERT_EQ(o[blk], expect) << name << " n=" << n << " block " << blk;
      }
    }
  }
}

// A strided loop whose threads do not start at consecutive indices runs in lockstep with a
// flag per thread; one whose bound differs between threads too. Both against the host.
TEST(CpuRegions, StridedLoopsOfOtherShapesRunInLockstep) {
  const std::string src = R"(
__global__ void k(const int* in, int n, int* out) {
  __shared__ int s[64];
  int acc = 0;
  for (int i = 2 * threadIdx.x; i < n; i += 2 * blockDim.x) acc += in[i];
  const int mine = n - 7 * (int)threadIdx.x;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < mine; i += blockDim.x) acc += 3 * in[i];
  s[threadIdx.x] = acc;
  __syncthreads();
  out[threadIdx.x] = s[63 - threadIdx.x];
})";
  auto r = cpu::form_regions(src);
  ASSERT_TRUE(r);
  const std::size_t lockstep = r->find("in_lockstep");
  ASSERT_NE(lockstep, std::string::npos) << *r;
  EXPECT_NE(r->find("in_lockstep", lockstep + 1), std::string::npos) << *r;
  EXPECT_EQ(r->find("kiln_k"), std::string::npos) << *r;
  Built b = build(src, "k");
  ASSERT_EQ(b.kernel->attributes().threads, "regions");
  const int n = 1000;
  std::vector<int> in(n);
  for (int i = 0; i < n; ++i) in[i] = (i * 13 + 5) % 17;
  Buffer<int> input(in), out(64, -9);
  launch(*b.kernel, {1}, {64}, 0, input.p, n, out.p);
  auto o = out.host();
  for (int t = 0; t < 64; ++t) {
    int acc = 0;
    for (int i = 2 * t; i < n; i += 128) acc += in[i];
    for (int i = t; i < n - 7 * t; i += 64) acc += 3 * in[i];
    ASSERT_EQ(o[63 - t], acc) << t;
  }
}

// A loop without barriers whose bounds every thread shares, and whose body subscripts memory by
// its variable and by values each region recomputes, runs iteration by iteration, each by all
// the threads (as a barrier loop, loop_state at its top): (a) and (d). Left thread by thread:
// (b) carries a sum, (c) reads each thread's own run (`... + r` last), (e) reads through a
// pointer of each thread, (f) breaks out. Against the host.
TEST(CpuRegions, UniformLoopsRunIterationByIteration) {
  const std::string src = R"(
#define T 16
__global__ void k(const int* in, int cols, int* out, int* out2) {
  __shared__ int tile[T][T + 1];
  int tx = threadIdx.x;
  int base = blockIdx.x * T;
  for (int r = 0; r < T; r++) tile[r][tx] = in[(r + 1) * cols + base + tx];  // (a)
  __syncthreads();
  int sum = 0;
  for (int r = 0; r < T; r += 2) sum += tile[tx][r];  // (b)
  for (int r = 0; r < T; r++) out[(base + tx) * T + r] = tile[tx][r] + sum;  // (c)
  for (int r = T - 1; r >= 0; r--) out2[r * cols + base + tx] = tile[r][tx] - sum;  // (d)
})";
  auto r = cpu::form_regions(src);
  ASSERT_TRUE(r);
  EXPECT_EQ(std::count(r->begin(), r->end(), '\n'), std::count(src.begin(), src.end(), '\n'));
  auto count = [](const std::string& text, const std::string& what) {
    int n = 0;
    for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
      ++n;
    return n;
  };
  EXPECT_EQ(count(*r, "loop_state("), 2) << *r;
  for (const char* body : {"const int* row = in + base + tx; for (int r = 0; r < T; r++) "
                           "tile[r][tx] = row[r * cols];",  // (e)
                           "for (int r = 0; r < T; r++) { if (in[r * cols + tx] < 0) break; "
                           "tile[r][tx] = in[r * cols + tx]; }"}) {  // (f)
    const std::string other = std::string(
                                  "#define T 16\n__global__ void k(const int* in, int "
                                  "cols, int* out) {\n  __shared__ int tile[T][T];\n  "
                                  "int tx = threadIdx.x;\n  int base = 0;\n  ") +
                              body + "\n  __syncthreads();\n  out[tx] = tile[tx][0];\n}";
    auto ro = cpu::form_regions(other);
    ASSERT_TRUE(ro) << other;
    EXPECT_EQ(count(*ro, "loop_state("), 0) << *ro;
  }
  Built b = build(src, "k");
  ASSERT_EQ(b.kernel->attributes().threads, "regions");
  const int t = 16, blocks = 3, cols = t * blocks;
  std::vector<int> in((t + 1) * cols);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = int(i * 37 % 101) - 50;
  Buffer<int> input(in), out(cols * t, 0), out2(t * cols, 0);
  launch(*b.kernel, {blocks}, {t}, 0, input.p, cols, out.p, out2.p);
  std::vector<int> want(cols * t), want2(t * cols);
  for (int block = 0; block < blocks; ++block)
    for (int x = 0; x < t; ++x) {
      const int base = block * t;
      auto tile = [&](int row, int col) { return in[(row + 1) * cols + base + col]; };
      int sum = 0;
      for (int r = 0; r < t; r += 2) sum += tile(x, r);
      for (int r = 0; r < t; ++r) {
        want[(base + x) * t + r] = tile(x, r) + sum;
        want2[r * cols + base + x] = tile(r, x) - sum;
      }
    }
  EXPECT_EQ(out.host(), want);
  EXPECT_EQ(out2.host(), want2);
}

// Arrays and values declared with braced initialisers at barrier level, kept per thread (a
// GEMM's `float acc[4] = {0};` accumulators around its tile loop): each thread's copy starts
// from its initialiser, element by element. `auto` variables too, of the type `auto` deduces.
// Against the host.
TEST(CpuRegions, BracedInitialisersAcrossBarriers) {
  const std::string src = R"(
__global__ void k(const float* in, float* out) {
  __shared__ float tile[64];
  int t = threadIdx.x;
  float acc[4] = {0};
  int weight[2][2] = {{1, 2}, {3, t}}, bias[3]{5, 6, 7};
  float2 scale = {0.5f, 2.0f};
  const auto lane = threadIdx.x % 32;  // auto: an unsigned int, as deduced
  auto half = scale.x * (lane < 32);
  for (int step = 0; step < 4; ++step) {
    tile[t] = in[step * 64 + t];
    __syncthreads();
    for (int j = 0; j < 4; ++j) acc[j] += tile[(t + j) % 64] * weight[j / 2][j % 2];
    __syncthreads();
  }
  out[t] = (acc[0] + acc[1] + acc[2] + acc[3]) * half * scale.y + bias[t % 3] + lane - t % 32;
})";
  ASSERT_EQ(declined(src), "");
  Built b = build(src, "k");
  ASSERT_EQ(b.kernel->attributes().threads, "regions");
  std::vector<float> in(4 * 64);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = float(i % 7) - 3.0f;
  Buffer<float> input(in), out(64, -1.0f);
  launch(*b.kernel, {1}, {64}, 0, input.p, out.p);
  std::vector<float> want(64);
  for (int t = 0; t < 64; ++t) {
    const int weight[4] = {1, 2, 3, t}, bias[3] = {5, 6, 7};
    float acc = 0;
    for (int step = 0; step < 4; ++step)
      for (int j = 0; j < 4; ++j) acc += in[step * 64 + (t + j) % 64] * float(weight[j]);
    want[t] = acc + float(bias[t % 3]);
  }
  EXPECT_EQ(out.host(), want);
}

// The same with extents of template parameters, which the rewrite cannot count (a register-tiled
// SGEMM's `float acc[TM][TN] = {0.0f};`): the compiler counts the copies. They ran as coroutines,
// 3x slower. A partial list fills the rest with zeros, as in C++. Against the host.
TEST(CpuRegions, BracedInitialisersOfTemplateExtents) {
  const std::string src = R"(
template <int TM, int TN>
__global__ void k(const float* in, float* out) {
  __shared__ float tile[64];
  const int t = threadIdx.x;
  float acc[TM][TN] = {0.0f};
  int weight[TM * TN] = {1, 2, t};
  for (int step = 0; step < 3; ++step) {
    tile[t] = in[step * 64 + t];
    __syncthreads();
    for (int i = 0; i < TM; ++i)
      for (int j = 0; j < TN; ++j) acc[i][j] += tile[(t + i * TN + j) % 64] * weight[i * TN + j];
    __syncthreads();
  }
  float sum = 0;
  for (int i = 0; i < TM; ++i)
    for (int j = 0; j < TN; ++j) sum += acc[i][j] * (i + 1);
  out[t] = sum;
})";
  ASSERT_EQ(declined(src), "");
  Built b = build(src, "k<2, 3>");
  ASSERT_EQ(b.kernel->attributes().threads, "regions") << b.kernel->attributes().why;
  std::vector<float> in(3 * 64);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = float(i % 5) - 2.0f;
  Buffer<float> input(in), out(64, -1.0f);
  launch(*b.kernel, {1}, {64}, 0, input.p, out.p);
  std::vector<float> want(64);
  for (int t = 0; t < 64; ++t) {
    const int weight[6] = {1, 2, t, 0, 0, 0};
    float sum = 0;
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j) {
        float acc = 0;
        for (int step = 0; step < 3; ++step)
          acc += in[step * 64 + (t + i * 3 + j) % 64] * float(weight[i * 3 + j]);
        sum += acc * float(i + 1);
      }
    want[t] = sum;
  }
  EXPECT_EQ(out.host(), want);
}

// `T v = __syncthreads_count(p);` (and _and, _or) in region mode: a region of votes, then the
// same value for every thread; the threads that returned do not vote, as on a GPU.
TEST(CpuRegions, VotesAtBarrierLevel) {
  const std::string src = R"(
__global__ void k(const int* in, int* out) {
  const int t = threadIdx.x;
  if (t >= 60) return;
  int mine = in[t];
  int many = __syncthreads_count(mine > 10);
  bool all = __syncthreads_and(mine >= 0);
  const bool any = __syncthreads_or(mine == 42 && t > 0);
  out[t] = many * 100 + (all ? 10 : 0) + (any ? 1 : 0);
})";
  ASSERT_EQ(declined(src), "");
  Built b = build(src, "k");
  ASSERT_EQ(b.kernel->attributes().threads, "regions") << b.kernel->attributes().why;
  std::vector<int> in(64);
  for (int t = 0; t < 64; ++t) in[t] = t % 20;  // values > 10: 9 per 20 threads
  in[0] = 42;                                   // thread 0's 42 does not count for `any`
  in[62] = -5;                                  // a returned thread's vote does not count
  Buffer<int> input(in), out(64, -1);
  launch(*b.kernel, {1}, {64}, 0, input.p, out.p);
  int many = 0;
  for (int t = 0; t < 60; ++t) many += in[t] > 10;
  auto o = out.host();
  for (int t = 0; t < 60; ++t) ASSERT_EQ(o[t], many * 100 + 10) << t;
  for (int t = 60; t < 64; ++t) ASSERT_EQ(o[t], -1) << t;
}

// One kernel the rewrite declines leaves the others of its source as regions.
TEST(CpuRegions, DeclinedKernelLeavesOthersAsRegions) {
  const std::string src = R"(__global__ void voting(int* x) {
  x[threadIdx.x] = __syncthreads_count(x[threadIdx.x]);
  x[threadIdx.x] += 0;
}
__global__ void tiled(int* x) {
  __shared__ int s[32];
  s[threadIdx.x] = x[threadIdx.x];
  __syncthreads();
  x[threadIdx.x] = s[31 - threadIdx.x];
})";
  cpu::RegionRewrite r = cpu::form_regions_by_kernel(src);
  ASSERT_EQ(r.declined.size(), 1u);
  EXPECT_NE(r.declined["voting"].find("__syncthreads_count"), std::string::npos);
  EXPECT_NE(r.source.find("x[threadIdx.x] = __syncthreads_count(x[threadIdx.x]);"),
            std::string::npos);
  EXPECT_EQ(r.source.find("__syncthreads()"), std::string::npos) << r.source;  // tiled's is gone
  EXPECT_EQ(std::count(r.source.begin(), r.source.end(), '\n'),
            std::count(src.begin(), src.end(), '\n'));
  Built t = build(src, "tiled"), v = build(src, "voting");
  EXPECT_EQ(t.kernel->attributes().threads, "regions");
  EXPECT_EQ(v.kernel->attributes().threads, "coroutines");
  Buffer<int> x(std::vector<int>(32, 0));
  launch(*v.kernel, {1}, {32}, 0, x.p);  // no thread votes: every c is 0
  for (int i = 0; i < 32; ++i) x.p[i] = i;
  launch(*t.kernel, {1}, {32}, 0, x.p);
  auto h = x.host();
  for (int i = 0; i < 32; ++i) ASSERT_EQ(h[i], 31 - i) << i;
}

// The first threads return before the variable the loop header reads is set: the header must
// read the first thread still running, not thread 0.
TEST(CpuRegions, HeaderReadsTheFirstThreadStillRunning) {
  Built b = build(R"(
__global__ void k(int* out, const int* reps_of) {
  __shared__ int s[64];
  const int t = threadIdx.x;
  if (t < 5) return;
  const int reps = reps_of[0];
  int acc = 0;
  for (int r = 0; r < reps; ++r) {
    s[t] = t * (r + 1);
    __syncthreads();
    acc += s[t == 63 ? 5 : t + 1];
    __syncthreads();
  }
  out[t] = acc;
})",
                  "k");
  ASSERT_EQ(b.kernel->attributes().threads, "regions");
  Buffer<int> out(64, -1), reps(std::vector<int>{3});
  launch(*b.kernel, {1}, {64}, 0, out.p, reps.p);
  auto o = out.host();
  for (int t = 0; t < 64; ++t) {
    int acc = 0;
    for (int r = 0; r < 3; ++r) acc += (t == 63 ? 5 : t + 1) * (r + 1);
    ASSERT_EQ(o[t], t < 5 ? -1 : acc) << t;
  }
}

// A loop that never ends by its header ends when every thread has returned, as on a GPU.
TEST(CpuRegions, EndlessLoopEndsWhenAllThreadsReturn) {
  Built b = build(R"(
__global__ void k(int* out) {
  __shared__ int s[32];
  int steps = 0;
  while (true) {
    s[threadIdx.x] = steps;
    __syncthreads();
    if (steps == (int)threadIdx.x) { out[threadIdx.x] = s[31 - threadIdx.x] + 100; return; }
    ++steps;
    __syncthreads();
  }
})",
                  "k");
  ASSERT_EQ(b.kernel->attributes().threads, "regions");
  Buffer<int> out(32, -1);
  launch(*b.kernel, {2}, {32}, 0, out.p);
  auto o = out.host();
  // Thread t returns at step t; thread 31 - t wrote step t there, or its final step if earlier.
  for (int t = 0; t < 32; ++t) ASSERT_EQ(o[t], std::min(t, 31 - t) + 100) << t;
}

// Per-thread arrays, pointers and direct initialisation survive barriers; a 3-D block's
// threads keep their own copies.
TEST(CpuRegions, PerThreadValuesAcrossBarriersIn3DBlocks) {
  Built b = build(R"(
struct P { int a, b; };
__global__ void k(int* out, const int* in) {
  __shared__ int s[4][4][4];
  const int x = threadIdx.x, y = threadIdx.y, z = threadIdx.z;
  int v[3];
  const int* p = in + x, *q(in + y);
  P pair{z, x};
  v[0] = *p; v[1] = *q; v[2] = z;
  s[z][y][x] = v[0] + 10 * v[1];
  __syncthreads();
  out[(z * 4 + y) * 4 + x] = s[x][z][y] * 1000 + v[2] * 100 + pair.a * 10 + pair.b;
})",
                  "k");
  ASSERT_EQ(b.kernel->attributes().threads, "regions");
  Buffer<int> out(64, -1), in(std::vector<int>{7, 8, 9, 6});
  launch(*b.kernel, {1}, {4, 4, 4}, 0, out.p, in.p);
  auto o = out.host();
  const int values[4] = {7, 8, 9, 6};
  for (int z = 0; z < 4; ++z)
    for (int y = 0; y < 4; ++y)
      for (int x = 0; x < 4; ++x) {
        // s[x][z][y] was written by thread (y, z, x): values[y] + 10 * values[z].
        const int shared = values[y] + 10 * values[z];
        ASSERT_EQ(o[(z * 4 + y) * 4 + x], shared * 1000 + z * 100 + z * 10 + x) << x << y << z;
      }
}

// Constants computed from indices and parameters are recomputed in later regions; one that
// reads memory keeps the value it had when declared. A kernel that writes a parameter (each
// thread's own copy on a GPU) runs as coroutines, with the same answer.
TEST(CpuRegions, ConstantsKeepTheirValuesAcrossBarriers) {
  for (const bool writes_parameter : {false, true}) {
    const std::string src = std::string(R"(
#define SCALE (2 + 1)
struct View { int* data; };
__global__ void k(int* out, int* buf, int n, View v) {
  const int t = threadIdx.x, scaled = t * SCALE;
  const int before = buf[t], first = v.data[0];
  const int m = n * 2;)") + (writes_parameter ? "\n  n += 5;" : "\n") +
                            R"(
  __syncthreads();
  buf[31 - t] = -1;
  __syncthreads();
  out[t] = scaled * 10000 + before * 100 + m + n + first;
})";
    // Recomputed in the last region: t, scaled, m; loaded: before (memory), and m where the
    // kernel writes n (then each thread's copy of n starts as the argument).
    auto r = cpu::form_regions(src);
    ASSERT_TRUE(r);
    EXPECT_NE(r->find("const std::remove_cv_t<const int> scaled = (t * SCALE);"),
              std::string::npos)
        << *r;
    EXPECT_EQ(r->find("m = (n * 2);") != std::string::npos, !writes_parameter) << *r;
    EXPECT_EQ(r->find("before = (buf[t])"), std::string::npos) << *r;
    EXPECT_EQ(r->find("(v.data[0])"), std::string::npos) << *r;  // memory behind a member
    Built b = build(src, "k");
    ASSERT_EQ(b.kernel->attributes().threads, "regions");
    std::vector<int> init(32);
    for (int t = 0; t < 32; ++t) init[t] = t + 7;
    Buffer<int> out(32, 0), buf(init);
    struct View {
      int* data;
    } view{buf.p + 31};  // v.data[0] (buf[31], 38) becomes -1 between the barriers
    launch(*b.kernel, {1}, {32}, 0, out.p, buf.p, 4, view);
    auto o = out.host();
    const int n = writes_parameter ? 9 : 4;
    for (int t = 0; t < 32; ++t) ASSERT_EQ(o[t], 3 * t * 10000 + (t + 7) * 100 + 8 + n + 38) << t;
  }
}

// #pragma lines inside a kernel stay where they are (CUDA kernels unroll loops with them).
TEST(CpuRegions, PragmaLinesStayInPlace) {
  Built b = build(R"(
__global__ void k(int* out) {
  __shared__ int s[32];
  int acc = 0;
#pragma unroll
  for (int r = 0; r < 4; ++r) acc += r * (int)threadIdx.x;
  s[threadIdx.x] = acc;
  __syncthreads();
  #pragma unroll 2
  for (int r = 0; r < 3; ++r) {
    acc += s[31 - threadIdx.x];
    __syncthreads();
  }
  out[threadIdx.x] = acc;
})",
                  "k");
  ASSERT_EQ(b.kernel->attributes().threads, "regions");
  Buffer<int> out(32, -1);
  launch(*b.kernel, {1}, {32}, 0, out.p);
  auto o = out.host();
  for (int t = 0; t < 32; ++t) ASSERT_EQ(o[t], 6 * t + 3 * 6 * (31 - t)) << t;
}

// A kernel's own #define and #undef lines stay in place too (mini-apps define an indexing macro
// where the kernel uses it): the kernel runs as regions, and the #undef still ends the macro
// before the next kernel, which names a variable so.
TEST(CpuRegions, KernelMacroLinesStayInPlace) {
  Built b = build(R"(
__global__ void k(const int* in, int* out, int n) {
  __shared__ int s[34];
#define IN(i) in[(i) < 0 ? 0 : ((i) >= n ? n - 1 : (i))]
  const int g = blockIdx.x * 32 + threadIdx.x;
  s[threadIdx.x + 1] = IN(g);
  if (threadIdx.x == 0) s[0] = IN(g - 1);
  if (threadIdx.x == 31) s[33] = IN(g + 1);
  __syncthreads();
#define AT(d) s[threadIdx.x + 1 + (d)]
  out[g] = AT(-1) + 10 * AT(0) + 100 * AT(1);
#undef AT
#undef IN
}
__global__ void after(int* out) { int IN = 5, AT = 2; out[threadIdx.x] = IN * AT; })",
                  "k");
  ASSERT_EQ(b.kernel->attributes().threads, "regions") << b.kernel->attributes().why;
  std::vector<int> host(64);
  for (int i = 0; i < 64; ++i) host[i] = i * i % 17;
  Buffer<int> in(host), out(64, -1);
  launch(*b.kernel, {2}, {32}, 0, in.p, out.p, 64);
  auto o = out.host();
  for (int i = 0; i < 64; ++i)
    ASSERT_EQ(o[i], host[std::max(i - 1, 0)] + 10 * host[i] + 100 * host[std::min(i + 1, 63)]) << i;
}

// A macro of the kernel's that names one of its variables is declined: the rewrite does not
// rewrite a macro's text, and v would be a variable of the first region only.
TEST(CpuRegions, KernelMacroOfItsVariableIsDeclined) {
  Built b = build(R"(
__global__ void k(int* out) {
  __shared__ int s[32];
  int v = threadIdx.x * 3;
#define MINE v
  s[threadIdx.x] = MINE;
  __syncthreads();
  out[threadIdx.x] = s[31 - threadIdx.x] + MINE;
#undef MINE
})",
                  "k");
  EXPECT_NE(b.kernel->attributes().threads, "regions");
  EXPECT_NE(b.kernel->attributes().why.find("names its variable 'v'"), std::string::npos)
      << b.kernel->attributes().why;
  Buffer<int> out(32, -1);
  launch(*b.kernel, {1}, {32}, 0, out.p);
  auto o = out.host();
  for (int t = 0; t < 32; ++t) ASSERT_EQ(o[t], 3 * (31 - t) + 3 * t) << t;
}

// A macro defined twice, undefined where the file defined it, or undefined before a barrier, is
// declined: a variable the rewrite recomputes in a later region would expand the later
// definition, or what the name means after the #undef (a was 4, or 100, not 1).
TEST(CpuRegions, KernelMacroRedefinitionsAreDeclined) {
  const std::pair<const char*, const char*> cases[] = {
      {R"(
__global__ void k(int* out) {
  __shared__ int s[32];
#define W 1
  int a = W;
#undef W
#define W 4
  s[threadIdx.x] = W;
  __syncthreads();
  out[threadIdx.x] = a + s[31 - threadIdx.x];
#undef W
})",
       "a #define of 'W' again"},
      {R"(
#define HALF 1
__global__ void k(int* out) {
  __shared__ int s[32];
  int a = HALF;
#undef HALF
  s[threadIdx.x] = 4;
  __syncthreads();
  out[threadIdx.x] = a + s[31 - threadIdx.x];
})",
       "an #undef of 'HALF', defined outside the kernel"},
      {R"(
constexpr int SCALE = 100;
__global__ void k(int* out) {
  __shared__ int s[32];
#define SCALE 1
  int a = SCALE;
#undef SCALE
  s[threadIdx.x] = 4;
  __syncthreads();
  out[threadIdx.x] = a + s[31 - threadIdx.x];
})",
       "an #undef of 'SCALE' before a barrier"},
  };
  for (const auto& [src, why] : cases) {
    Built b = build(src, "k");
    EXPECT_NE(b.kernel->attributes().threads, "regions");
    EXPECT_NE(b.kernel->attributes().why.find(why), std::string::npos)
        << b.kernel->attributes().why;
    Buffer<int> out(32, -1);
    launch(*b.kernel, {1}, {32}, 0, out.p);
    for (int v : out.host()) ASSERT_EQ(v, 5);
  }
}

// What the rewrite takes but the compiler refuses (a parameter named as one of the rewrite's
// own variables) builds from the source as written, as fibers, with the same answer and the
// reason.
TEST(CpuRegions, CompileFailureFallsBackToFibers) {
  Built b = build(R"(
__global__ void k(int* out, int kiln_b_) {
  __shared__ int s[32];
  for (int r = 0; r < 4; ++r) {
    s[threadIdx.x] = r + kiln_b_;
    __syncthreads();
    if (r == 2) break;
    __syncthreads();
  }
  out[threadIdx.x] = s[31 - threadIdx.x];
})",
                  "k");
  EXPECT_EQ(b.kernel->attributes().threads, "fibers");
  EXPECT_EQ(b.kernel->attributes().why.find("the regions rewrite did not compile: "), 0u)
      << b.kernel->attributes().why;
  Buffer<int> out(32, -1);
  launch(*b.kernel, {1}, {32}, 0, out.p, 10);
  for (int v : out.host()) ASSERT_EQ(v, 12);
}

// Traps name the thread and block in region mode too.
TEST(CpuRegions, TrapNamesThreadAndBlock) {
  Built b = build(R"(
__global__ void k(int bad) {
  __shared__ int s[8];
  s[threadIdx.x] = 1;
  __syncthreads();
  if ((int)threadIdx.x == bad && blockIdx.x == 1) __trap();
})",
                  "k");
  ASSERT_EQ(b.kernel->attributes().threads, "regions");
  try {
    launch(*b.kernel, {2}, {8}, 0, 3);
    FAIL() << "no trap";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("thread (3,0,0) of block (1,0,0)"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace kiln::cpu_test
