// Finding __global__ kernels in CUDA C++ source text (names, linkage, template and function
// parameters, the line they start on, where their bodies are) and the synchronisation it names.
// A light lexer (comments, strings, preprocessor lines skipped; balanced brackets), not a C++
// parser: enough for kernel declarations.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "jit/lexer.h"

namespace kiln::jit {

struct TemplateParam {
  std::string kind;           // "typename" (also for "class"), or the type of a non-type one: "int"
  std::string name;           // "T", "TPB"
  std::string default_value;  // "" when none
};

struct ParamDecl {
  std::string type;  // as written, whitespace collapsed: "const float *", "kiln::Array<float, 2>"
  std::string name;  // "" when unnamed
  std::string default_value;  // the default argument as written ("NULL", "4"), or ""
};

struct KernelDecl {
  std::string name;
  std::string scope;  // its namespaces, as a name expression needs them: "clover::" ("" when none)
  bool extern_c = false;
  bool overloaded = false;  // the source declares other kernels of this name (other parameters)
  std::vector<TemplateParam> template_params;  // empty for a plain kernel
  std::vector<ParamDecl> params;
  int line = 0;  // 1-based line of the __global__ keyword in the source
};

// source with the execution space of its lambdas blanked (`[=] __device__ (float v) {...}`, `[&]
// __host__ __device__ {...}`), columns kept. nvcc takes them with --extended-lambda; NVRTC has no
// such option and refuses them, though a lambda in device code is device code without them.
std::string plain_lambdas(std::string_view source);

// The headers that declare the narrow float types kiln may deduce as template arguments from an
// array's dtype (`scale<__half>`: <cuda_fp16.h>; __nv_bfloat16: <cuda_bf16.h>; __nv_fp8_*:
// <cuda_fp8.h>) named by name_expressions: a source written for any T need not include them.
std::vector<std::string> deduced_type_headers(const std::vector<std::string>& name_expressions);

// type with each whole word params[i] read as args[i]: `T*` of `TensorInfo<float, int>` is
// `float*`.
std::string substitute_words(std::string type, const std::vector<std::string>& params,
                             const std::vector<std::string>& args);

// "(float* x, int n)": the parameters as declared, for messages.
std::string parameter_list(const KernelDecl& decl);

// Every __global__ function defined or declared in source, in order of appearance (a kernel
// declared and later defined is listed once; overloads each).
std::vector<KernelDecl> find_kernels(std::string_view source);

// For each 1-based line of source (index 0 unused), whether it lies in a preprocessor
// conditional group (`#if`/`#ifdef`/`#ifndef` to its `#endif`), the include guard around a
// whole file (`#ifndef X` then `#define X`, outermost) excepted: a kernel there may not exist
// once the preprocessor has run.
std::vector<bool> conditional_lines(std::string_view source);

// Where a __global__ function's body is in the source text.
struct KernelBody {
  std::string name;
  std::vector<std::string> params;  // the parameters' names ("" for an unnamed one)
  std::size_t open = 0;   // offset of the body's '{'
  std::size_t close = 0;  // offset of its '}' (the source's size when it is never closed)
  std::vector<std::string> param_types;  // each parameter's type, as ParamDecl::type
};

// The body of every __global__ function defined in source, in order (overloads each listed).
std::vector<KernelBody> find_kernel_bodies(std::string_view source);

// The synchronisation a piece of source names. Comments and string literals do not count;
// preprocessor lines do (macros, #include <cooperative_groups.h>).
struct SyncUse {
  bool block_barriers = false;  // __syncthreads, __syncthreads_count / _and / _or
  bool other_sync = false;      // __syncwarp, __shfl*, __ballot/any/all/uni_sync, __activemask,
                                // __match_*, __reduce_*, __barrier_sync, cooperative groups
                                // (cooperative_groups, tiled_partition, this_thread_block,
                                // coalesced_threads, g.sync()), CUB (`cub`), libcu++
                                // barriers (cuda::barrier, arrive_and_wait, arrive_and_drop,
                                // a block's cuda::pipeline_shared_state)
  bool lambda = false;          // a lambda expression (a `return` there is the lambda's own)
  // other_sync by a use, not only by an #include of the library or a namespace declaration
  // (`namespace cg = cooperative_groups;`, `using namespace cooperative_groups;`)
  bool other_used = false;
  // The first of each, for the cpu backend's k:info().why: the construct as written
  // ("__shfl_down_sync", "g.sync()") and its 1-based line in the scanned text.
  std::string first_other;
  int first_other_line = 0, first_barrier_line = 0, first_lambda_line = 0;
  // Whether any barrier, warp operation or cooperative-groups construct appears.
  bool any() const { return block_barriers || other_sync; }
};
// (lockstep: whether lockstep_pointers and spin-waits on global memory count; the cpu plan
// finds a kernel body's in the whole source, where its parameters are, and scans the body
// alone, or with its warp operations blanked, without them)
SyncUse scan_sync(std::string_view source, bool lockstep = true);

// Whether the source needs block barriers or warp operations: scan_sync(source).any(). The cpu
// backend runs such kernels' threads as fibers or coroutines.
bool uses_barriers(std::string_view source);

// A pointer declared `[const] volatile T* name` (a parameter or a local), or a shared array
// `__shared__ volatile T name[N]...;` (any number of extents), through which its scope stores
// and then reads another element with no barrier between (`s[t] += s[t + 16];`, `b[w][0] = x;
// y = b[w][1];`): legacy warp-synchronous code, which relies on a warp's lanes running each
// statement together, every lane reading before any lane writes (the cpu backend's lockstep
// pointers, scan_sync's other_sync). Not in a __global__ function whose head toks hold, through
// a pointer the same in every thread, accesses whose subscripts are all the same in every thread
// of a block (flags between blocks: `flags[tile] = 1; f = flags[look];`). Indices into toks: the
// declaration's first token (a pointer's `const` or `volatile`, an array's first word), its last
// token before the name (a pointer's '*') or an array's last ']', its name; the line of the access
// found after a store. An array's inner: its first token after the first extent's ']' (last + 1
// with one extent). A parameter's body: its function body's '{' (0 for a local). Its scope
// ends before end (a local's block's '}', a parameter's body's one past it).
struct LockstepPointer {
  std::size_t first, last, name;
  int line;
  bool array = false;
  std::size_t inner = 0, body = 0, end = 0;
};
std::vector<LockstepPointer> lockstep_pointers(const std::vector<Token>& toks);
// The tokens of the assignment operator (`=`, `+=`, `<<=`) or `++`/`--` at toks[k], or 0.
std::size_t assignment_width(const std::vector<Token>& toks, std::size_t k);
// The first of them as synchronisation (other_sync; "warp-synchronous code through volatile
// 's'" and its line), or nothing.
SyncUse lockstep_sync(const std::vector<Token>& toks);

// Loops that wait for another thread: `while (flag == 0) {}`, `do { __nanosleep(32); } while
// (!ready);`, `for (; s_done < n;) ;`, whose condition reads a volatile variable and whose body
// assigns nothing and does not synchronise. The variable: a `volatile __shared__` one the text
// declares, or a volatile pointer the body sets to its shared memory (`volatile int* f =
// &flag;`), set by another thread of the block; or a flag in global memory, which another block
// may set too: a function's volatile pointer parameter or local (`volatile int* ready`), or a
// read through a volatile cast (`((volatile int*)count)[0]`). A GPU's warps run at once, so the
// thread that sets the flag runs while the waiter spins; the cpu backend runs such a kernel as
// fibers and yields in each test of the condition (scan_sync's other_sync, "a spin-wait on
// __shared__ 'flag'"), but for a flag between blocks alone, and runs the blocks of one that
// spins on global memory at once (LaunchConfig::resident). Each as the index of its
// condition's first token in toks, and that variable's name.
struct SpinWait {
  std::size_t condition;
  std::string name;
  bool shared = true;  // a flag in the block's shared memory (else global memory)
  // A global flag that only another block sets: in a kernel, read and stored through subscripts
  // the same in every thread (`while (flags[tile - 1] == 0) {}` ... `flags[tile] = 1;`, a
  // chained scan's look-back). Its kernel's threads need not yield: it keeps its plan.
  bool between_blocks = false;
  // A look-back: between blocks, at a lower subscript (`flags[tile - 1]`) of flags its function
  // stores (`flags[tile] = 1;`). Its blocks wait for earlier blocks, which run first; one that
  // waits for a count others add to (a hand-made grid barrier), or for anything else, needs
  // them all running at once (LaunchConfig::resident).
  bool look_back = false;
};
std::vector<SpinWait> spin_waits(const std::vector<Token>& toks);

// A __constant__ or __device__ variable at namespace scope: `__constant__ float w[9][K];`.
struct GlobalDecl {
  std::string type;                  // its element type's words, qualifiers dropped: "float"
  std::vector<std::string> extents;  // each [...]'s text, as written: {"9", "K"}
  std::string scope;                 // its namespaces, "cfg::inner::" ("": the global one)
  std::vector<std::string> also;     // an unqualified name's other namespaces declaring it
};
// The declaration of the global named name in source (comments, strings and preprocessor lines
// skipped), or nullopt when there is none. A qualified name (`cfg::weights`) is looked for in
// those namespaces; an unqualified one at namespace scope, the global one first.
std::optional<GlobalDecl> find_global(std::string_view source, std::string_view name);

// The symbol of global name declared as decl: its name at the global namespace, else its
// mangled name (`cfg::weights`: `_ZN3cfg7weightsE`), as NVRTC and the host compiler give it.
std::string global_symbol(const GlobalDecl& decl, std::string_view name);

// The names of the __device__ variables a source declares outside function bodies that its
// kernels may store to: not const, constexpr or __constant__ (`__device__ int g_count;`,
// `__device__ float* g_world = nullptr;`), in order.
std::vector<std::string> device_variables(std::string_view source);

// source with `static` blanked (columns and lines kept) from each __constant__ or __device__
// variable declared at namespace scope, so that m:set_constant reaches it by name, as
// cudaMemcpyToSymbol does in the file that declares it (cuda-samples' quasirandomGenerator:
// `static __constant__ unsigned int c_Table[...]`): a module is one translation unit, where the
// linkage changes nothing else. Functions and a function's own statics are left as written.
std::string settable_statics(std::string_view source);

// A struct as source declares it, for passing one by value from a Lua table: its data members'
// names and element types, in order (the compiler gives their offsets and sizes: jit.cpp).
struct StructDecl {
  struct Member {
    std::string name;
    std::string type;  // the element type's words: "float", "float4", "unsigned int"
  };
  std::string name;
  std::vector<Member> members;
  std::vector<std::string> template_params;  // `template <class T, int N> struct`: T, N
};
// The definition of `struct name { ... };` / `class name { ... };` / `typedef struct { ... }
// name;` in source, with its template's parameters; member functions, static members, types
// and access labels are skipped.
std::optional<StructDecl> find_struct(std::string_view source, std::string_view name);

// Whether source declares an enumeration called name: `enum name {`, `enum class name : int`,
// `enum struct name;`, `typedef enum { ... } name;`.
bool declares_enum(std::string_view source, std::string_view name);

// What the type alias name stands for in source, as words: `#define fp double`, `typedef
// double fp;`, `using fp = double;` (Rodinia's lavaMD declares its fields so); nullopt when
// source defines no such alias.
std::optional<std::string> find_type_alias(std::string_view source, std::string_view name);

// The offset of each occurrence of the identifier word in source outside comments and literals
// (preprocessor lines included).
std::vector<std::size_t> find_identifier(std::string_view source, std::string_view word);

}  // namespace kiln::jit
