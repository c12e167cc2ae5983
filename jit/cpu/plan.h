// The cpu compiler's source plan: how each kernel's threads run (from a token scan of the source
// and the headers it includes), and the line-preserving rewrites each mode needs.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "kiln/cpu_abi.h"

namespace kiln::cpu {

// How one kernel's threads run, and why (k:info().threads and k:info().why).
struct ThreadPlan {
  kiln_cpu::ThreadMode mode = kiln_cpu::mode_loop;
  std::string why;  // "warp operation __shfl_down_sync at reduce.cu:10", ...
  // A coroutine candidate whose source also holds a body that coroutines cannot build (a warp
  // operation, a lambda beside barriers: the coroutine macros apply to the whole unit): why. It
  // runs as regions, or as fibers when the region rewrite declines it.
  std::string no_coroutines;
  // A kernel without barriers run as regions for its grid-stride loop (regions.h), which is a
  // thread loop again where the rewrite fails to compile.
  bool strided = false;
  bool operator==(const ThreadPlan&) const = default;
};

// The kernel's own name in a name expression: "k" for "ns::k<float>" or "(void(*)(int*))k".
std::string kernel_name(const std::string& name_expression);

// For each name expression, how that kernel's threads run, from a token scan (comments ignored):
// - mode_loop: nothing it can reach names a barrier or a warp operation;
// - mode_coroutines: a candidate for regions (the compiler makes it regions where
//   jit/cpu/regions.h can): its body synchronises only by __syncthreads* and the warp operations
//   regions take (region_warp_operation), and nothing outside the kernel bodies synchronises.
//   With a warp operation or a lambda beside barriers, no_coroutines says why it cannot be
//   coroutines (it runs as fibers when regions decline it);
// - mode_fibers: otherwise (cooperative groups, CUB, other warp operations, barriers in device
//   functions or in the headers the source includes with quotes or as <kiln...> from
//   include_dirs); why names the construct and where it is.
std::vector<ThreadPlan> thread_plans(std::string_view source, const std::string& filename,
                                     const std::vector<std::string>& include_dirs,
                                     const std::vector<std::string>& name_expressions);

// Whether source, or a header of its own it includes (found beside filename or in
// include_dirs), casts to a pointer type: `reinterpret_cast`, `static_cast<T*>`, or a C-style
// `(T*)`. Such code may read memory through another type than it stored (an int4 load read as
// half2s), which the host compiler's strict aliasing would drop: the module is built with
// -fno-strict-aliasing (which costs others their hoisted loads: a plain kernel keeps it on).
bool casts_pointers(std::string_view source, const std::string& filename,
                    const std::vector<std::string>& include_dirs);

// Coroutine mode: each `return` in a __global__ body that names a barrier becomes `co_return`
// (columns shift; lines stay), and a kernel's `extern "C"` goes (GCC names a C coroutine's
// clones as the function itself, which the assembler refuses; kiln calls kernels by their C++
// names, not their symbols).
std::string rewrite_coroutine_returns(std::string_view source);

// Rewrites each `extern __shared__ T name[];` (its words in any legal order, __align__ and
// alignas included; `name[][E]...`: rows of extents E) into a pointer to the block's dynamic
// shared memory, keeping the line count unchanged; checked (check mode): into a
// kiln_cpu::dyn_shared<T> (or <T[E]>), whose accesses are checked against the bytes the launch
// gave, unless the source reinterprets it (`reinterpret_cast<float4*>(smem)`), which a class
// cannot take: that one stays a plain pointer.
std::string rewrite_extern_shared(std::string_view source, bool checked = false);

// Check mode: rewrites each static `__shared__ T name[E]...;` (with `static`, `__align__(N)`,
// several declarators) into a `kiln_cpu::shared_array<T, (E)...>`, whose subscripts are checked
// against its extents and which decays to the array's pointer; lines stay. An array the source
// reinterprets stays as it is (no reinterpret_cast takes a class).
std::string rewrite_shared_arrays(std::string_view source);

// Gives each plain kernel and device function definition of source internal linkage (`static`
// before its `__global__` or `__device__`; columns shift, lines stay): the compiler then builds
// it only where it is used, inlined into the entry points' thread loops, not also as a function
// other modules could call (a third of the Rodinia-style hotspot's compile, 760 -> 510 ms).
// Plain: declared at namespace scope, not a template, `extern`, `static`, `friend` or an
// operator, its name unqualified and named nowhere before (an earlier declaration without
// `static` would clash). Variables keep their names (kiln sets and reads them by name).
std::string internal_kernels(std::string_view source);

// Each spin-wait (jit::spin_waits: `while (flag == 0) {}`) yields to the block's other threads
// in each test of its condition: `while (::kiln_cpu::spin_yield(), flag == 0)`, `spin_yield(1)`
// where the flag is in global memory. Its kernel runs as fibers (scan_sync), where the thread
// that sets the flag then runs; lines stay.
std::string yield_in_spin_waits(std::string_view source);

// Each pointer of legacy warp-synchronous code (jit::lockstep_pointers: `volatile float* s`
// stored through and read again with no barrier between) becomes a
// `::kiln_cpu::lockstep_ptr<float> s`, whose stores and reads keep the warp's lanes in step
// (fibers; lines stay); a shared array `__shared__ volatile float s[64]` becomes `__shared__
// float kiln_lockstep_s[64]; ::kiln_cpu::lockstep_ptr<float> s = kiln_lockstep_s` (`s[4][2]`:
// `lockstep_ptr<float[2]>`); a parameter keeps its type (a kernel's signature is what launches
// fill): `volatile float* kiln_lockstep_s`, and its body starts `::kiln_cpu::lockstep_ptr<float>
// s(kiln_lockstep_s);`.
std::string rewrite_lockstep_pointers(std::string_view source);

// Check mode: rewrites each address of an element, `&name[i]` (`&name[j][i]`: of the last
// subscript), into `::kiln_cpu::element_address(name, (i))` (`(name[j], (i))`), which lets the
// index of a checked array reach one past its end (`&s[N]`, an end pointer, which a subscript
// may not: no access may reach it) and is `&name[i]` for anything else; lines stay. Not an
// address accessed at once (read through, or an argument of a named cast, an atomic, a load or
// store hint or a memcpy: `atomicAdd(&h[b], 1)` accesses h[b]), an element's member
// (`&s[i].x`), nor a `&` that may be a bitwise and (`a & b[i]`, and after a `)`, `>` or `}`:
// `(char*)&s[N]` keeps its subscript's check).
std::string rewrite_element_addresses(std::string_view source);

// Check mode: rewrites each plain `T* name` / `const T* __restrict__ name` parameter of a
// __global__ function into `::kiln_cpu::checked_ptr<T> name` (same line count).
std::string rewrite_pointer_params(std::string_view source);

}  // namespace kiln::cpu
