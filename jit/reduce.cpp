#include "jit/reduce.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "runtime/error.h"

namespace kiln::jit {
namespace {

// A reduction kernel for one binary expression in a and b (Numba's @cuda.reduce): each thread
// folds its slice of the input, each block then its threads' values in shared memory, and a
// second launch of one block folds the blocks' results and init. Values are folded as A, the
// accumulator type (int64 for the narrower integers, so that their sums are exact; float for
// the 16-bit floats, whose headers KILN_REDUCE_NARROW includes). A thread's slice is
// grid-strided on a GPU (neighbouring threads read neighbouring elements: coalesced) and
// contiguous on the cpu backend, where a block's threads run one after another on one core and
// strided reads would touch a new cache line for every element.
constexpr const char* kReduceSource = R"(
#ifdef KILN_REDUCE_NARROW
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif
template <typename A>
__device__ __forceinline__ A kiln_reduce_op(A a, A b) { return (KILN_REDUCE_EXPR); }

template <typename T, typename A>
__global__ void kiln_reduce(const T* in, A* out, long long n, A init, int use_init) {
  __shared__ A value[256];
  __shared__ bool has[256];
  const unsigned t = threadIdx.x;
  long long i = (long long)blockIdx.x * blockDim.x + t;
  const long long stride = (long long)gridDim.x * blockDim.x;
  A acc = A();
#ifdef KILN_CPU
  const long long chunk = (n + stride - 1) / stride;
  i *= chunk;
  const long long end = i + chunk < n ? i + chunk : n;
#else
  const long long end = n;
#endif
  bool have = i < end;
  if (have) {
    acc = A(in[i]);
#ifdef KILN_CPU
    for (++i; i < end; ++i) acc = kiln_reduce_op<A>(acc, A(in[i]));
#else
    for (i += stride; i < n; i += stride) acc = kiln_reduce_op<A>(acc, A(in[i]));
#endif
  }
  value[t] = acc;
  has[t] = have;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (t < s && has[t + s]) {
      value[t] = has[t] ? kiln_reduce_op<A>(value[t], value[t + s]) : value[t + s];
      has[t] = true;
    }
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = use_init ? kiln_reduce_op<A>(init, value[0]) : value[0];
}
)";

// A 1-D device array argument of count elements at p.
ArgValue device_arg(void* p, DType dtype, std::int64_t count) {
  ArgValue a;
  a.kind = ArgValue::Kind::device_array, a.dtype = dtype, a.ndim = 1, a.data = p, a.shape = {count};
  return a;
}

// An integer argument.
ArgValue integer_arg(std::int64_t v) {
  ArgValue a;
  a.kind = ArgValue::Kind::integer;
  a.integer = v;
  return a;
}

// A zero for a parameter of dtype t (a bool parameter takes false, not the number 0).
ArgValue zero_arg(DType t) {
  ArgValue a = integer_arg(0);
  if (t == DType::boolean) a.kind = ArgValue::Kind::boolean, a.boolean = false;
  return a;
}

// The type values of dtype are folded in: 64-bit for every integer (exact sums), float32 for
// the 16-bit floats (as CuPy sums them), else dtype.
DType accumulator(DType dtype) {
  const DTypeInfo& info = dtype_info(dtype);
  if (info.size == 2 && !info.is_integer) return DType::float32;
  if (!info.is_integer || dtype == DType::boolean) return dtype;
  return info.is_signed ? DType::int64 : DType::uint64;
}

}  // namespace

Reduction::Reduction(std::shared_ptr<Jit> jit, std::string expr)
    : jit_(std::move(jit)), expr_(std::move(expr)) {
  if (expr_.find_first_of("\n\r") != std::string::npos)
    throw Error("reduce: the expression must be one line");
  source_ = std::make_shared<SourceText>(
      SourceText::from_string(kReduceSource, "cuda.reduce(\"" + expr_ + "\")"));
}

Kernel& Reduction::kernel_for(DType dtype, DType acc) {
  std::unique_ptr<Kernel>& k = kernels_[{dtype, acc}];
  if (!k) {
    KernelOptions o;
    o.name = "kiln_reduce<" + std::string(dtype_info(dtype).cpp) + ", " +
             std::string(dtype_info(acc).cpp) + ">";
    o.defines = {{"KILN_REDUCE_EXPR", expr_}};
    if (dtype == DType::float16 || dtype == DType::bfloat16)
      o.defines.push_back({"KILN_REDUCE_NARROW", "1"});
    k = std::make_unique<Kernel>(jit_, source_, select_kernels(*source_, o.name, false), o,
                                 std::make_shared<Globals>());
  }
  return *k;
}

HostArray Reduction::reduce(void* in, std::int64_t n, DType dtype,
                            const std::optional<ArgValue>& init, const Allocate& allocate) {
  const DType acc = accumulator(dtype);
  if (n == 0) {
    if (!init) throw Error("reduce of an empty array needs an initial value");
    HostArray result({1}, acc);
    if (init->kind == ArgValue::Kind::integer)
      result.set_integer(0, init->integer);
    else if (init->kind == ArgValue::Kind::boolean)
      result.set_integer(0, init->boolean);
    else
      result.set_number(0, init->number);
    return result;
  }
  HostArray exact = fold(in, n, dtype, acc, init, allocate);
  if (acc != DType::int64 && acc != DType::uint64) return exact;
  // 64-bit integers have no wider type: the same fold in float64 tells an overflow (a wrapped
  // result) from an exact one. Expressions that do not compile for doubles (a | b, a % b)
  // cannot overflow.
  std::optional<HostArray> approx;
  if (shadow_compiles_) {
    try {
      approx = fold(in, n, dtype, DType::float64, init, allocate);
    } catch (const CompileError&) {
      shadow_compiles_ = false;
    }
  }
  if (!approx) return exact;
  const double wide = approx->get_number(0);
  const double got =
      acc == DType::int64 ? double(exact.get_integer(0)) : double(exact.as<std::uint64_t>()[0]);
  if (std::fabs(got - wide) > 1e-6 * std::max(1.0, std::fabs(wide)))
  {
    char about[32];
    std::snprintf(about, sizeof about, "%.6g", wide);
    throw Error("reduce(\"" + expr_ + "\") of " + std::string(dtype_info(dtype).name) +
                ": the result overflows " + std::string(dtype_info(acc).name) + " (it is about " +
                about + "); reduce a float64 copy for an approximate value");
  }
  return exact;
}

HostArray Reduction::fold(void* in, std::int64_t n, DType dtype, DType acc,
                          const std::optional<ArgValue>& init, const Allocate& allocate) {
  Kernel& k = kernel_for(dtype, acc);
  const std::int64_t threads = 256;
  // Enough blocks to fill the device (8 per multiprocessor, or per worker on the cpu backend,
  // where each block's threads cost fiber switches), each folding a grid-stride slice.
  std::int64_t fill = std::max(1, jit_->backend().device().multiprocessors) * 8;
  std::int64_t blocks = std::min<std::int64_t>({(n + threads - 1) / threads, fill, 1024});
  std::size_t esize = dtype_info(acc).size;
  // The blocks' results, then the total after them: one scratch buffer, kept for the next call.
  const std::size_t need = static_cast<std::size_t>(blocks + 1) * esize;
  if (!scratch_ || scratch_->bytes() < need || scratch_->stale()) scratch_ = allocate(std::max<std::size_t>(need, 8 * 1025));
  void* partial = scratch_->ptr();
  void* total = static_cast<char*>(partial) + static_cast<std::size_t>(blocks) * esize;
  LaunchConfig c;
  c.grid.x = static_cast<std::uint32_t>(blocks), c.block.x = threads;
  std::vector<ArgValue> args = {device_arg(in, dtype, n), device_arg(partial, acc, blocks),
                                integer_arg(n), zero_arg(acc), integer_arg(0)};
  k.launch(k.specialise(args), c, args);
  Kernel& second = kernel_for(acc, acc);
  c.grid.x = 1;
  args = {device_arg(partial, acc, blocks), device_arg(total, acc, 1),
          integer_arg(blocks), init ? *init : zero_arg(acc), integer_arg(init.has_value())};
  second.launch(second.specialise(args), c, args);
  HostArray result({1}, acc);
  scratch_->backend().copy_to_host(result.data(), total, esize, nullptr);
  return result;
}

}  // namespace kiln::jit
