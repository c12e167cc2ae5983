// Kernels in Lua: cuda.jit, cuda.jit_file, cuda.module, cuda.reduce, and the launch syntax
// k[{grid, block [, stream [, shared_bytes]]}](args...) as Numba's kernel[grid, block](args).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>

#include "jit/backends.h"
#include "jit/headers.h"
#include "jit/kernel_decl.h"
#include "jit/reduce.h"
#include "jit/textures.h"
#include "repl/lua_array.h"
#include "repl/lua_cuda.h"
#include "repl/lua_host.h"
#include "repl/lua_util.h"
#include "runtime/error.h"
#include "runtime/interrupt.h"
#include "runtime/process.h"
#ifdef KILN_HAVE_CUDA
#include "runtime/cuda/backend.h"
#include "runtime/cuda/cubin.h"
#endif

namespace kiln::lua {
namespace {

constexpr const char* kKernelMeta = "kiln.kernel";
constexpr const char* kLauncherMeta = "kiln.launcher";
constexpr const char* kModuleMeta = "kiln.module";
constexpr const char* kReduceMeta = "kiln.reduce";

using KernelRef = std::shared_ptr<jit::Kernel>;

// A configured launch: k[{grid, block, stream, shared}] waiting for its arguments.
struct Launcher {
  KernelRef kernel;
  LaunchConfig config;
};

// A cuda.module: its source and globals, its kernels in the userdata's user value.
struct ModuleBox {
  std::shared_ptr<jit::SourceText> source;
  std::shared_ptr<jit::Globals> globals;
  std::vector<KernelRef> kernels;
  std::vector<KernelRef> instances;  // its template instances by name (`m["scale<float, 4>"]`)
  jit::KernelOptions opts;  // the module's (its template instances by name take them too)
  std::map<std::string, DeviceArray> textures;  // bound arrays, kept alive while bound
};

// ------------------------------------------------------------------------------ options

// "the cuda.jit string at script.lua:12": the source string of function (cuda.jit,
// cuda.module) where the Lua code that called us is.
std::string caller_position(lua_State* L, const char* function = "cuda.jit") {
  luaL_where(L, 1);
  std::string where = lua_tostring(L, -1);
  lua_pop(L, 1);
  while (!where.empty() && (where.back() == ':' || where.back() == ' ')) where.pop_back();
  return where.empty() ? std::string("a ") + function + " string"
                       : std::string("the ") + function + " string at " + where;
}

// The string form of a define's value (numbers as Lua prints them, booleans as 1/0). Throws
// kiln::Error (callers run inside protect: a longjmp would skip the destructors of C++ locals).
std::string define_value(lua_State* L, int idx, const char* name) {
  switch (lua_type(L, idx)) {
    case LUA_TBOOLEAN:
      return lua_toboolean(L, idx) ? "1" : "0";
    case LUA_TNUMBER:
    case LUA_TSTRING:
      return lua_tostring(L, idx);
    default:
      throw Error(std::string("defines: the value of ") + name +
                  " must be a number, string or boolean");
  }
}

// The string at idx for kernel option key; throws kiln::Error when it is not one.
std::string option_string(lua_State* L, int idx, const char* key) {
  if (!lua_isstring(L, idx))
    throw Error(std::string("kernel option '") + key + "' must be a string, got " +
                luaL_typename(L, idx));
  return lua_tostring(L, idx);
}

// Throws kiln::Error unless the value at idx, kernel option key, is a table.
void option_table(lua_State* L, int idx, const char* key) {
  if (lua_type(L, idx) != LUA_TTABLE)
    throw Error(std::string("kernel option '") + key + "' must be a table, got " +
                luaL_typename(L, idx));
}

// Raises the Lua argument error unless argument idx is nil, absent or a table (before any C++
// object exists: luaL_argerror does not return). [-0, +0]
void check_options_arg(lua_State* L, int idx) {
  if (!lua_isnoneornil(L, idx)) luaL_checktype(L, idx, LUA_TTABLE);
}

// opts = {name=, defines=, options=, arch=} at idx (nil or a table, see check_options_arg).
// Unknown keys are errors. Throws kiln::Error: call it inside protect.
jit::KernelOptions check_options(lua_State* L, int idx) {
  jit::KernelOptions o;
  if (lua_isnoneornil(L, idx)) return o;
  idx = lua_absindex(L, idx);
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    const char* key = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "?";
    if (std::strcmp(key, "name") == 0) {
      o.name = option_string(L, -1, key);
    } else if (std::strcmp(key, "arch") == 0) {
      o.arch = option_string(L, -1, key);
    } else if (std::strcmp(key, "defines") == 0) {
      option_table(L, -1, key);
      lua_pushnil(L);
      while (lua_next(L, -2)) {
        if (lua_type(L, -2) != LUA_TSTRING) throw Error("defines: keys must be macro names");
        const char* name = lua_tostring(L, -2);
        o.defines.emplace_back(name, define_value(L, -1, name));
        lua_pop(L, 1);
      }
    } else if (std::strcmp(key, "options") == 0) {
      option_table(L, -1, key);
      for (lua_Integer i = 1, n = static_cast<lua_Integer>(lua_rawlen(L, -1)); i <= n; ++i) {
        lua_rawgeti(L, -1, i);
        if (!lua_isstring(L, -1))
          throw Error("options[" + std::to_string(i) + "] must be a string");
        o.options.emplace_back(lua_tostring(L, -1));
        lua_pop(L, 1);
      }
    } else {
      throw Error(std::string("unknown kernel option '") + key +
                  "' (expected name, defines, options, arch)");
    }
    lua_pop(L, 1);
  }
  std::sort(o.defines.begin(), o.defines.end());  // a stable order for cache keys
  return o;
}

// A kernel file: the path as given, else a file of that name in kernels_src/.
// A name the file system refuses (too long, say) is no file: callers report it as missing.
std::filesystem::path resolve_kernel_file(lua_State* L, const std::string& path) {
  std::error_code ec;
  std::filesystem::path p(path);
  if (std::filesystem::exists(p, ec) || p.has_parent_path()) return p;
  for (const char* ext : {"", ".cu", ".cuh"}) {
    std::filesystem::path candidate = settings(L).platform.kernels_dir / (path + ext);
    if (std::filesystem::exists(candidate, ec)) return candidate;
  }
  return p;
}

// ------------------------------------------------------------------------------ arguments

// What the Lua value at idx is, for specialisation and marshalling. Throws kiln::Error (it runs
// inside protect, with C++ locals whose destructors a longjmp would skip).
jit::ArgValue arg_value(lua_State* L, int idx) {
  jit::ArgValue v;
  if (DeviceArray* d = test_device_array(L, idx)) {
    auto which = [&] { return "argument " + std::to_string(idx - 1); };  // only for an error
    if (d->buffer->freed()) throw Error(which() + ": the device array was freed");
    if (d->buffer->stale())
      throw Error(which() + ": the device array is invalid: it was made before cuda.reset()");
    v.kind = jit::ArgValue::Kind::device_array;
    v.dtype = d->dtype, v.ndim = static_cast<int>(d->shape.size()), v.shape = d->shape;
    v.data = d->data();
  } else if (HostArray* h = test_host_array(L, idx)) {
    v.kind = jit::ArgValue::Kind::host_array;
    v.dtype = h->dtype(), v.ndim = h->ndim(), v.shape = h->shape();
    v.data = h->data();
  } else if (lua_isinteger(L, idx)) {
    v.kind = jit::ArgValue::Kind::integer, v.integer = lua_tointeger(L, idx);
    v.number = static_cast<double>(v.integer);
  } else if (lua_type(L, idx) == LUA_TNUMBER) {
    v.kind = jit::ArgValue::Kind::number, v.number = lua_tonumber(L, idx);
  } else if (lua_type(L, idx) == LUA_TBOOLEAN) {
    v.kind = jit::ArgValue::Kind::boolean, v.boolean = lua_toboolean(L, idx);
  } else if (lua_type(L, idx) == LUA_TLIGHTUSERDATA && !lua_touserdata(L, idx)) {
    v.kind = jit::ArgValue::Kind::null_pointer;  // cuda.null
  } else if (lua_type(L, idx) == LUA_TTABLE) {   // a vector, array or struct by value
    v.kind = jit::ArgValue::Kind::table, v.lua_type = "table";
    idx = lua_absindex(L, idx);
    luaL_checkstack(L, 8, "kernel argument tables nested too deeply");
    // lanes: x, y, z, w when x is there (a vector), else [1] .. [n] (a vector or an array).
    const bool named = lua_getfield(L, idx, "x") != LUA_TNIL;
    lua_pop(L, 1);
    static const char* const names[] = {"x", "y", "z", "w"};
    for (lua_Integer k = 1;; ++k) {
      if (named ? (k > 4 || lua_getfield(L, idx, names[k - 1]) == LUA_TNIL)
                : lua_geti(L, idx, k) == LUA_TNIL) {
        if (!named || k <= 4) lua_pop(L, 1);
        break;
      }
      v.lanes.push_back(arg_value(L, lua_gettop(L)));
      lua_pop(L, 1);
    }
    // fields: every string key (a struct's members, by name).
    lua_pushnil(L);
    while (lua_next(L, idx)) {
      if (lua_type(L, -2) == LUA_TSTRING)
        v.fields.emplace_back(lua_tostring(L, -2), arg_value(L, lua_gettop(L)));
      lua_pop(L, 1);
    }
  } else {
    v.lua_type = luaL_typename(L, idx);
  }
  return v;
}

// Host arrays passed to a kernel go to the device before it and come back after it (Numba).
struct Staged {
  HostArray* host;
  std::shared_ptr<DeviceBuffer> device;
};

// Collects arguments first..top, staging host arrays.
std::vector<jit::ArgValue> collect_args(lua_State* L, int first, std::vector<Staged>* staged) {
  std::vector<jit::ArgValue> args;
  int top = lua_gettop(L);
  if (top >= first) args.reserve(static_cast<std::size_t>(top - first + 1));
  for (int i = first; i <= top; ++i) {
    args.push_back(arg_value(L, i));
    if (staged && args.back().kind == jit::ArgValue::Kind::host_array) {
      HostArray* h = test_host_array(L, i);
      auto buffer = allocate_device(L, h->nbytes());
      buffer->backend().copy_to_device(buffer->ptr(), h->data(), h->nbytes(), nullptr);
      args.back().data = buffer->ptr();
      staged->push_back({h, std::move(buffer)});
    }
  }
  return args;
}

// A launch dimension of kernel `kernel`: a positive integer or {x [, y [, z]]}.
Dim3 check_dim(lua_State* L, int idx, const char* what, const char* kernel) {
  auto component = [&](lua_Integer v) -> std::uint32_t {
    if (v < 0 || v > 0xffffffffLL)
      luaL_error(L, "kernel '%s': launch %s dimension %I is out of range", kernel, what,
                 static_cast<LUA_INTEGER>(v));
    return static_cast<std::uint32_t>(v);
  };
  auto integer = [&](int i) -> lua_Integer {
    int isnum = 0;
    lua_Integer v = lua_tointegerx(L, i, &isnum);
    if (!isnum && lua_type(L, i) == LUA_TNUMBER)  // 1000 / 256: Lua's / always gives a float
      luaL_error(L,
                 "kernel '%s': launch %s %s is not an integer (round up with math.ceil(n / "
                 "threads) or (n + threads - 1) // threads)",
                 kernel, what, lua_tostring(L, i));
    if (!isnum)
      luaL_error(L, "kernel '%s': launch %s: expected an integer or {x, y, z}, got %s", kernel,
                 what, luaL_typename(L, i));
    return v;
  };
  Dim3 d;
  if (lua_type(L, idx) == LUA_TTABLE) {
    lua_Integer n = luaL_len(L, idx);
    if (n < 1 || n > 3)
      luaL_error(L, "kernel '%s': launch %s: expected 1 to 3 dimensions, got %d", kernel, what,
                 int(n));
    std::uint32_t* parts[3] = {&d.x, &d.y, &d.z};
    for (lua_Integer i = 1; i <= n; ++i) {
      lua_geti(L, idx, i);
      *parts[i - 1] = component(integer(-1));
      lua_pop(L, 1);
    }
  } else {
    d.x = component(integer(idx));
  }
  return d;
}

// The table {grid, block [, stream [, shared_bytes]]} at idx, for kernel `kernel`.
LaunchConfig check_config(lua_State* L, int idx, const char* kernel) {
  LaunchConfig c;
  idx = lua_absindex(L, idx);
  lua_geti(L, idx, 1);
  lua_geti(L, idx, 2);
  if (lua_isnil(L, -2) || lua_isnil(L, -1))
    luaL_error(L, "kernel '%s': a launch needs {grid, block}: k[{blocks, threads}](args...)",
               kernel);
  c.grid = check_dim(L, -2, "grid", kernel);
  c.block = check_dim(L, -1, "block", kernel);
  lua_pop(L, 2);
  lua_geti(L, idx, 3);
  c.stream = opt_stream(L, -1);
  lua_pop(L, 1);
  lua_geti(L, idx, 4);
  if (!lua_isnil(L, -1)) {
    lua_Integer bytes = luaL_checkinteger(L, -1);
    if (bytes < 0) luaL_error(L, "launch: negative shared memory size %d", int(bytes));
    c.shared_bytes = static_cast<std::size_t>(bytes);
  }
  lua_pop(L, 1);
  return c;
}

// Runs one launch with the arguments from first to the top of the stack.
void launch(lua_State* L, jit::Kernel& k, const LaunchConfig& config, int first) {
  std::vector<Staged> staged;
  std::vector<jit::ArgValue> args;
  try {
    args = collect_args(L, first, &staged);
  } catch (const Interrupted&) {
    throw;
  } catch (const ArgError& e) {
    throw ArgError(e.arg, "kernel '" + k.decl().name + "': " + e.what());
  } catch (const Error& e) {  // (a freed array, say: name the kernel it was passed to)
    throw Error("kernel '" + k.decl().name + "': " + e.what());
  }
  args = k.with_defaults(std::move(args));
  jit::Kernel::Specialisation& spec = k.specialise(args);
  k.launch(spec, config, args);
  for (Staged& s : staged)
    s.device->backend().copy_to_host(s.host->data(), s.device->ptr(), s.host->nbytes(),
                                     config.stream);
}

// ------------------------------------------------------------------------------ kernels

KernelRef& check_kernel(lua_State* L, int idx) {
  return *static_cast<KernelRef*>(luaL_checkudata(L, idx, kKernelMeta));
}

void push_kernel(lua_State* L, KernelRef k) {
  new_object<KernelRef>(L, kKernelMeta, std::move(k));
}

// launcher(args...): the launch itself. [-n, +0]
int launcher_call(lua_State* L) {
  auto* l = static_cast<Launcher*>(luaL_checkudata(L, 1, kLauncherMeta));
  return protect(L, [&] { return launch(L, *l->kernel, l->config, 2), 0; });
}

// k[{grid, block, ...}] -> a launcher; k.method -> the method. [-0, +1]
int kernel_index(lua_State* L) {
  KernelRef& k = check_kernel(L, 1);
  if (lua_type(L, 2) == LUA_TTABLE) {
    LaunchConfig c = check_config(L, 2, k->name().c_str());
    Launcher* l = new_object<Launcher>(L, kLauncherMeta, Launcher{k, c});
    lua_pushvalue(L, 2), lua_setiuservalue(L, -2, 1);  // keeps the stream alive
    (void)l;
    return 1;
  }
  if (lua_type(L, 2) == LUA_TNUMBER)  // (Numba's k[blocks, threads] is one table in Lua)
    return luaL_error(L, "kernel '%s': a launch configuration is a table: k[{blocks, threads}]",
                      k->name().c_str());
  const char* key = luaL_checkstring(L, 2);
  if (std::strcmp(key, "name") == 0) return lua_pushstring(L, k->name().c_str()), 1;
  luaL_getmetafield(L, 1, "__methods");
  lua_getfield(L, -1, key);
  return 1;
}

// k(...) without a configuration: an error saying how to launch. [-0, +0]
int kernel_call(lua_State* L) {
  KernelRef& k = check_kernel(L, 1);
  return luaL_error(L, "kernel '%s' needs a launch configuration: k[{blocks, threads}](args...)",
                    k->name().c_str());
}

// k:forall(n) -> a launcher covering n threads with a block size chosen for you. [-0, +1]
int kernel_forall(lua_State* L) {
  KernelRef& k = check_kernel(L, 1);
  lua_Integer n = luaL_checkinteger(L, 2);
  if (n < 1) luaL_argerror(L, 2, "forall needs at least one thread");
  return protect(L, [&] {
    std::uint32_t block = 256;
#ifdef KILN_HAVE_CUDA
    // On a GPU the occupancy API picks the block size once the kernel is known (Numba's forall).
    if (auto* c = dynamic_cast<CudaBackend*>(&runtime(L).backend()); c && k->last())
      block = static_cast<std::uint32_t>(c->occupancy_block_size(*k->last()->program));
#endif
    lua_Integer blocks = (n + block - 1) / block;
    if (blocks > 0x7fffffff) throw Error("forall: too many threads for a 1-D grid");
    LaunchConfig c;
    c.grid.x = static_cast<std::uint32_t>(blocks);
    c.block.x = block;
    new_object<Launcher>(L, kLauncherMeta, Launcher{k, c});
    return 1;
  });
}

// k:ptx([args...]) -> PTX text for these argument types (or the last ones used). [-0, +1]
int kernel_ptx(lua_State* L) {
  KernelRef& k = check_kernel(L, 1);
  return protect(L, [&] {
    std::string text;
    if (lua_gettop(L) > 1) {
      std::vector<jit::ArgValue> args = collect_args(L, 2, nullptr);
      text = k->ptx(&args);
    } else {
      text = k->ptx(nullptr);
    }
    lua_pushlstring(L, text.data(), text.size());
    return 1;
  });
}

#ifdef KILN_HAVE_CUDA
// The GPU architecture at idx ("sm_90"), else the device's on the cuda backend, else sm_80.
// [-0, +0, v]
std::string check_arch(lua_State* L, int idx) {
  if (lua_isnoneornil(L, idx)) {
    if (auto* c = dynamic_cast<CudaBackend*>(&runtime(L).backend()))
      return "sm_" + std::to_string(c->device().cc_major * 10 + c->device().cc_minor);
    return "sm_80";
  }
  std::string arch = luaL_checkstring(L, idx);
  if (!arch.starts_with("sm_") || arch.size() < 5 ||
      arch.find_first_not_of("0123456789", 3) != std::string::npos)
    luaL_argerror(L, idx, lua_pushfstring(L, "'%s' is not a GPU architecture such as \"sm_90\"",
                                          arch.c_str()));
  return arch;
}

// The kernel of a GPU build (its lowered name) read from its cubin, with ptxas's figures.
cuda::CubinKernel read_kernel(const jit::Kernel& k, const CompileResult& build,
                              const std::string& arch) {
  if (build.image_kind != "cubin")
    throw Error("kernel '" + k.name() + "': NVRTC made no cubin for " + arch);
  std::string why;
  std::optional<cuda::Cubin> cubin = cuda::read_cubin(build.image.data(), build.image.size(), &why);
  if (!cubin) throw Error("kernel '" + k.name() + "': the cubin for " + arch + " is unreadable: " + why);
  cuda::add_ptxas_log(*cubin, build.log);
  auto it = cubin->kernels.find(build.lowered_names.at(0));
  if (it == cubin->kernels.end())
    throw Error("kernel '" + k.name() + "': no " + build.lowered_names[0] + " in its cubin");
  return it->second;
}
#endif

// k:resources([arch [, block_size [, dynamic_shared]]]) -> {registers=, spill_stores=,
// spill_loads=, shared_bytes=, local_bytes=, max_threads_per_block=, param_bytes=, arch=,
// and with block_size: blocks_per_sm=, occupancy=, occupancy_limit=; on the cuda backend for
// its own architecture: driver = the same figures from cuFuncGetAttribute}. Read from the cubin
// NVRTC builds for arch (default: the device's, else sm_80): no GPU needed. [-0, +1]
int kernel_resources(lua_State* L) {
  KernelRef& k = check_kernel(L, 1);
#ifdef KILN_HAVE_CUDA
  std::string arch = check_arch(L, 2);
  lua_Integer block = luaL_optinteger(L, 3, 0);
  lua_Integer dynamic = luaL_optinteger(L, 4, 0);
  if (block < 0 || dynamic < 0) luaL_argerror(L, block < 0 ? 3 : 4, "must not be negative");
  return protect(L, [&] {
    const cuda::CubinKernel r = read_kernel(*k, k->gpu_build(arch), arch);
    const int cc = std::stoi(arch.substr(3));
    lua_createtable(L, 0, 12);
    auto field = [&](const char* name, lua_Integer v) { lua_pushinteger(L, v), lua_setfield(L, -2, name); };
    lua_pushstring(L, arch.c_str()), lua_setfield(L, -2, "arch");
    field("registers", r.registers);
    if (r.spill_stores >= 0) field("spill_stores", r.spill_stores), field("spill_loads", r.spill_loads);
    field("shared_bytes", lua_Integer(r.shared_bytes));
    field("local_bytes", lua_Integer(r.local_bytes));
    std::optional<cuda::ArchLimits> limits = cuda::arch_limits(cc);
    const int max_threads = limits ? limits->max_threads_per_block : 1024;
    field("max_threads_per_block", r.max_threads_per_block > 0 ? std::min(r.max_threads_per_block, max_threads) : max_threads);
    field("param_bytes", r.param_bytes);
    if (block > 0) {
      if (!limits) throw Error("k:resources: no occupancy figures for " + arch);
      cuda::Occupancy o = cuda::occupancy(*limits, r, int(std::min<lua_Integer>(block, 1 << 20)),
                                          std::uint64_t(dynamic));
      field("blocks_per_sm", o.blocks_per_sm);
      lua_pushnumber(L, o.occupancy), lua_setfield(L, -2, "occupancy");
      lua_pushstring(L, o.limit.c_str()), lua_setfield(L, -2, "occupancy_limit");
    }
    // On a GPU of this architecture, what the driver says of the kernel it loaded.
    auto* c = dynamic_cast<CudaBackend*>(&runtime(L).backend());
    jit::Kernel::Specialisation* s = k->last();
    if (c && s && c->device().cc_major * 10 + c->device().cc_minor == cc) {
      KernelAttributes a = s->program->attributes();
      lua_createtable(L, 0, 4);
      field("registers", a.registers);
      field("shared_bytes", a.shared_bytes);
      field("local_bytes", a.local_bytes);
      field("max_threads_per_block", a.max_threads_per_block);
      lua_setfield(L, -2, "driver");
    }
    return 1;
  });
#else
  return luaL_error(L, "k:resources: kiln was built without the CUDA toolkit headers");
#endif
}

// k:sass([arch]) -> the kernel's machine code for arch as nvdisasm prints it (a clear error
// where nvdisasm is not installed). [-0, +1]
int kernel_sass(lua_State* L) {
  KernelRef& k = check_kernel(L, 1);
#ifdef KILN_HAVE_CUDA
  std::string arch = check_arch(L, 2);
  return protect(L, [&] {
    std::vector<std::string> dirs;
    for (const std::string& home : settings(L).platform.cuda_toolkits) dirs.push_back(home + "/bin");
    if (std::find(dirs.begin(), dirs.end(), "/usr/local/cuda/bin") == dirs.end())
      dirs.push_back("/usr/local/cuda/bin");
    const std::string nvdisasm = find_program("nvdisasm", dirs);
    if (nvdisasm.empty()) {
      std::string looked;
      for (const std::string& dir : dirs) looked += dir + ", ";
      throw Error("k:sass needs nvdisasm, which is not installed (it comes with the CUDA toolkit: "
                  "package cuda-nvdisasm); looked in " + looked + "and PATH");
    }
    const CompileResult build = k->gpu_build(arch);
    if (build.image_kind != "cubin") throw Error("kernel '" + k->name() + "': NVRTC made no cubin for " + arch);
    TempDir dir;
    const std::string file = dir.path() + "/kernel.cubin";
    write_file(file, std::string(build.image.begin(), build.image.end()));
    ProcessResult r = run_process({nvdisasm, "--print-code", "--function", build.lowered_names.at(0), file});
    if (r.exit_code != 0) throw Error("k:sass: nvdisasm failed: " + r.output);
    lua_pushlstring(L, r.output.data(), r.output.size());
    return 1;
  });
#else
  return luaL_error(L, "k:sass: kiln was built without the CUDA toolkit headers");
#endif
}

// k:info() -> {name=, registers=, ..., compile_ms=, cache=, backend=}. [-0, +1]
int kernel_info(lua_State* L) {
  KernelRef& k = check_kernel(L, 1);
  return protect(L, [&] {
    lua_createtable(L, 0, 12);
    lua_pushstring(L, k->name().c_str()), lua_setfield(L, -2, "name");
    lua_pushstring(L, runtime(L).backend().name().c_str()), lua_setfield(L, -2, "backend");
    lua_pushstring(L, k->source().origin().c_str()), lua_setfield(L, -2, "source");
    if (jit::Kernel::Specialisation* s = k->last()) {
      KernelAttributes a = s->program->attributes();
      auto field = [&](const char* name, long v) {
        if (v >= 0) lua_pushinteger(L, v), lua_setfield(L, -2, name);
      };
      field("registers", a.registers);
      field("shared_bytes", a.shared_bytes);
      field("local_bytes", a.local_bytes);
      field("max_threads_per_block", a.max_threads_per_block);
      if (!a.threads.empty()) lua_pushstring(L, a.threads.c_str()), lua_setfield(L, -2, "threads");
      if (!a.why.empty()) lua_pushstring(L, a.why.c_str()), lua_setfield(L, -2, "why");
      lua_pushnumber(L, s->build.ms), lua_setfield(L, -2, "compile_ms");
      lua_pushstring(L, jit::origin_name(s->build.origin)), lua_setfield(L, -2, "cache");
      lua_pushstring(L, s->name_expression.c_str()), lua_setfield(L, -2, "name_expression");
      lua_pushstring(L, s->lowered_name.c_str()), lua_setfield(L, -2, "lowered_name");
    }
    return 1;
  });
}

// tostring(k). [-0, +1]
int kernel_tostring(lua_State* L) {
  KernelRef& k = check_kernel(L, 1);
  lua_pushfstring(L, "<kernel %s from %s>", k->name().c_str(), k->source().origin().c_str());
  return 1;
}

// Kernels for source: the one named by opts.name (or the only one), or all for a module.
std::vector<KernelRef> make_kernels(lua_State* L, std::shared_ptr<jit::SourceText> source,
                                    const jit::KernelOptions& opts, bool all,
                                    std::shared_ptr<jit::Globals> globals) {
  jit::validate_defines(opts.defines);
  jit::validate_options(opts.options);
  std::shared_ptr<jit::Jit> j = runtime_ptr(L);
  // (one kernel per name: its overloads together)
  std::vector<std::vector<jit::KernelDecl>> names;
  for (jit::KernelDecl& d : jit::select_kernels(*source, opts.name, all)) {
    auto same = std::find_if(names.begin(), names.end(), [&](const auto& n) {
      return n.front().name == d.name && n.front().scope == d.scope;
    });
    if (same != names.end())
      same->push_back(std::move(d));
    else
      names.push_back({std::move(d)});
  }
  std::vector<KernelRef> kernels;
  for (std::vector<jit::KernelDecl>& decls : names) {
    jit::KernelOptions o = opts;
    if (all) o.name.clear(), o.module = true;
    kernels.push_back(
        std::make_shared<jit::Kernel>(j, source, std::move(decls), std::move(o), globals));
  }
  return kernels;
}

// cuda.jit(source [, opts]) -> kernel. [-0, +1]
int cuda_jit(lua_State* L) {
  luaL_checkstring(L, 1);
  check_options_arg(L, 2);
  return protect(L, [&] {
    std::size_t length = 0;
    const char* chars = lua_tolstring(L, 1, &length);
    std::string text(chars, length);  // all of it: a NUL byte inside is refused, not a cut
    jit::KernelOptions opts = check_options(L, 2);
    std::string origin = caller_position(L);
    auto source = std::make_shared<jit::SourceText>(jit::SourceText::from_string(text, origin));
    push_kernel(L, make_kernels(L, source, opts, false, std::make_shared<jit::Globals>()).front());
    return 1;
  });
}

// cuda.jit_file(path [, opts]) -> kernel, recompiled when the file changes. [-0, +1]
int cuda_jit_file(lua_State* L) {
  luaL_checkstring(L, 1);
  check_options_arg(L, 2);
  return protect(L, [&] {
    std::string path = lua_tostring(L, 1);
    jit::KernelOptions opts = check_options(L, 2);
    auto source =
        std::make_shared<jit::SourceText>(jit::SourceText::from_file(resolve_kernel_file(L, path)));
    push_kernel(L, make_kernels(L, source, opts, false, std::make_shared<jit::Globals>()).front());
    return 1;
  });
}

// cuda.kernel_path(name) -> the path of a kernel file in kernels_src/ (or nil). [-0, +1]
int cuda_kernel_path(lua_State* L) {
  const char* name = luaL_checkstring(L, 1);
  return protect(L, [&] {
    std::filesystem::path p = resolve_kernel_file(L, name);
    std::error_code ec;
    if (!std::filesystem::exists(p, ec)) return lua_pushnil(L), 1;
    return lua_pushstring(L, p.c_str()), 1;
  });
}

// ------------------------------------------------------------------------------ modules

// cuda.module(source | {file=path} [, opts]) -> module; m.name is each kernel. [-0, +1]
int cuda_module(lua_State* L) {
  check_options_arg(L, 2);
  lua_settop(L, 2);
  const bool from_file = lua_type(L, 1) == LUA_TTABLE;
  if (from_file) {
    lua_getfield(L, 1, "file");  // at 3, below whatever protect's work pushes
    if (!lua_isstring(L, 3)) luaL_argerror(L, 1, "expected a source string or {file = path}");
  } else {
    luaL_checkstring(L, 1);
  }
  return protect(L, [&] {
    std::size_t length = 0;
    const char* chars = from_file ? "" : lua_tolstring(L, 1, &length);
    std::string text(chars, length);
    std::string file = from_file ? lua_tostring(L, 3) : std::string();
    jit::KernelOptions opts = check_options(L, 2);
    std::string origin = caller_position(L, "cuda.module");
    auto source = std::make_shared<jit::SourceText>(
        file.empty() ? jit::SourceText::from_string(text, origin)
                     : jit::SourceText::from_file(resolve_kernel_file(L, file)));
    auto globals = std::make_shared<jit::Globals>();
    std::vector<KernelRef> kernels = make_kernels(L, source, opts, opts.name.empty(), globals);
    ModuleBox* m =
        new_object<ModuleBox>(L, kModuleMeta, ModuleBox{source, globals, kernels, {}, opts, {}});
    lua_createtable(L, 0, static_cast<int>(m->kernels.size()));
    for (const KernelRef& k : m->kernels) {
      push_kernel(L, k);
      lua_setfield(L, -2, k->name().c_str());
    }
    lua_setiuservalue(L, -2, 1);
    return 1;
  });
}

// The module's template kernel that name expression name instantiates (`m["scale<float, 4>"]`:
// one of its kernels' names, then template arguments), or nullptr.
const KernelRef* instantiated_kernel(const ModuleBox& m, const std::string& name) {
  const std::size_t angle = name.find('<');
  if (angle == std::string::npos || angle == 0 || name.back() != '>') return nullptr;
  std::string base = name.substr(0, angle);
  base.erase(base.find_last_not_of(" \t") + 1);
  for (const KernelRef& k : m.kernels)
    if ((k->name() == base || k->decl().scope + k->name() == base) &&
        !k->decl().template_params.empty())
      return &k;
  return nullptr;
}

// A name expression without the spaces that C++ reads alike (`fill<float,4>`, `fill<float, 4>`):
// one kernel, one build, whichever the script writes.
std::string plain_name_expression(const std::string& name) {
  std::string out;
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (name[i] != ' ' && name[i] != '\t') {
      out += name[i];
      continue;
    }
    const auto word = [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    };
    const std::size_t next = name.find_first_not_of(" \t", i);
    if (!out.empty() && next != std::string::npos && word(out.back()) && word(name[next]))
      out += ' ';  // (`unsigned int`)
    i = next == std::string::npos ? name.size() : next - 1;
  }
  return out;
}

// m.kernel_name, or a method; a name that is neither is an error naming the module's kernels
// (not a nil that `m.typo[...]` would index). A template kernel's instance by name
// (`m["scale<float, 4>"]`, as opts.name gives it) is made once.
// [-0, +1]
int module_index(lua_State* L) {
  ModuleBox* m = static_cast<ModuleBox*>(luaL_checkudata(L, 1, kModuleMeta));
  lua_getiuservalue(L, 1, 1);
  lua_pushvalue(L, 2);
  if (lua_rawget(L, -2) != LUA_TNIL) return 1;
  luaL_getmetafield(L, 1, "__methods");
  lua_pushvalue(L, 2);
  if (lua_rawget(L, -2) != LUA_TNIL || lua_type(L, 2) != LUA_TSTRING) return 1;
  if (instantiated_kernel(*m, lua_tostring(L, 2))) {
    lua_settop(L, 3);  // the kernels' table at 3
    const std::string plain = plain_name_expression(lua_tostring(L, 2));
    if (lua_getfield(L, 3, plain.c_str()) != LUA_TNIL) return 1;  // (written another way)
    lua_pop(L, 1);
    return protect(L, [&] {
      jit::KernelOptions o = m->opts;
      o.name = plain;
      m->instances.push_back(make_kernels(L, m->source, o, false, m->globals).front());
      push_kernel(L, m->instances.back());
      lua_pushvalue(L, -1);
      lua_setfield(L, 3, plain.c_str());
      lua_pushvalue(L, 2);
      lua_pushvalue(L, -2);
      lua_rawset(L, 3);  // (the same kernel, and its builds, at the next m["..."])
      return 1;
    });
  }
  // (made on the Lua stack alone: a memory error there longjmps past no C++ object)
  luaL_where(L, 1);
  lua_pushfstring(L, "module has no kernel '%s' (its kernels: ", lua_tostring(L, 2));
  int parts = 2;
  for (const KernelRef& k : m->kernels) {
    if (parts > 2) lua_pushliteral(L, ", "), ++parts;
    lua_pushstring(L, k->name().c_str()), ++parts;
  }
  lua_pushliteral(L, ")");
  lua_concat(L, parts + 1);
  return lua_error(L);
}

// The number an extent names: a plain number, or a macro of one, given by the module's defines
// (`defines = {NTAPS = 15}`) or an object-like #define of the source (`#define NTAPS 31`, the
// last one); nullopt otherwise.
std::optional<long> extent_number(std::string e, const std::string& text,
                                  const std::vector<std::pair<std::string, std::string>>& defines) {
  auto number = [](std::string s) -> std::optional<long> {
    s.erase(0, s.find_first_not_of(" \t\n"));
    s.erase(s.find_last_not_of(" \t\n") + 1);
    if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos)
      return std::nullopt;
    return std::stol(s);
  };
  if (auto n = number(e)) return n;
  e.erase(0, e.find_first_not_of(" \t\n"));
  e.erase(e.find_last_not_of(" \t\n") + 1);
  for (const auto& [macro, value] : defines)
    if (macro == e) return number(value);
  std::optional<long> found;
  const std::vector<jit::Token> t = jit::lex(text);
  for (std::size_t k = 0; k + 2 < t.size(); ++k)
    if (t[k].directive && jit::is_ident(t[k], "define") && jit::is_ident(t[k + 1], e.c_str()) &&
        t[k + 2].directive && t[k + 2].line == t[k].line && t[k + 1].end != t[k + 2].begin &&
        (k + 3 == t.size() || !t[k + 3].directive || t[k + 3].line != t[k].line))
      found = number(t[k + 2].text);
  return found;
}

// What source declares of a global: its element type (none for a struct), its element count,
// its type's spelling, symbol and namespaces, and whether it has no extents.
struct DeclaredGlobal {
  std::optional<DType> dtype;
  long count = 0;
  std::string type, symbol, scope;
  bool scalar = false;
};

// The global named in source: "__constant__ float w[9];" -> float32, 9 (`w[NTAPS]` too, where
// a define or #define gives NTAPS a number). The count is 0 when an extent is no such number:
// the compiled module then says how big the global is (the backends check every write against
// the symbol's size), whatever expression gives it. Errors begin with what ("set_constant").
DeclaredGlobal declared_global(const char* what, const jit::SourceText& source,
                               const std::string& name,
                               const std::vector<std::pair<std::string, std::string>>& defines) {
  // The source's own declaration, else the first of its quoted headers' (`#include "taps.cuh"`),
  // whose #defines join the source's for the extents.
  std::string text = source.text();
  std::optional<jit::GlobalDecl> decl = jit::find_global(text, name);
  if (!decl)
    for (const jit::IncludedFile& header : source.headers())
      if ((decl = jit::find_global(header.text, name))) {
        text += "\n" + header.text;
        break;
      }
  if (!decl)
    throw Error(std::string(what) + ": no __constant__ or __device__ variable '" + name +
                "' in the module");
  if (!decl->also.empty()) {
    std::string where = decl->scope + name;
    for (const std::string& scope : decl->also) where += ", " + scope + name;
    throw Error(std::string(what) + ": '" + name + "' is declared in several namespaces (" + where +
                "): name the one meant");
  }
  DeclaredGlobal g;
  g.scalar = decl->extents.empty();
  g.type = decl->type.size() > 60 ? decl->type.substr(0, 60) + "..." : decl->type;
  g.symbol = jit::global_symbol(*decl, name);
  g.scope = decl->scope;
  g.dtype = dtype_of_cpp(decl->type);
  if (!g.dtype) return g;
  long count = 1;
  for (const std::string& e : decl->extents) {
    const std::optional<long> n = extent_number(e, text, defines);
    if (!n) return g;
    count *= *n;
  }
  g.count = decl->extents.empty() ? 0 : count;
  return g;
}

// Sets global name of every build of m, present and future, to bytes. A value the compiled
// global cannot hold is refused, and the previous value stays (later builds get it), so nothing
// is half set.
void set_module_global(ModuleBox& m, const std::string& name, std::vector<char> bytes) {
  std::optional<std::vector<char>> previous;
  if (auto it = m.globals->find(name); it != m.globals->end()) previous = it->second;
  (*m.globals)[name] = std::move(bytes);
  auto apply = [&] {
    for (const auto* list : {&m.kernels, &m.instances})
      for (const KernelRef& k : *list) k->apply_globals_to_builds();
  };
  try {
    apply();
  } catch (...) {
    if (previous)
      (*m.globals)[name] = std::move(*previous);
    else
      m.globals->erase(name);
    apply();
    throw;
  }
}

// m:set_constant(name, number_or_array): sets a __constant__ / __device__ global. [-0, +0]
int module_set_constant(lua_State* L) {
  auto* m = static_cast<ModuleBox*>(luaL_checkudata(L, 1, kModuleMeta));
  luaL_checkstring(L, 2);
  HostArray* values = test_host_array(L, 3);
  if (!values && lua_type(L, 3) != LUA_TNUMBER && lua_type(L, 3) != LUA_TBOOLEAN &&
      lua_type(L, 3) != LUA_TTABLE)
    luaL_argerror(L, 3, "expected a number, boolean, table of a struct's fields or host array");
  return protect(L, [&] {
    std::string name = lua_tostring(L, 2);
    jit::ArgValue scalar = arg_value(L, 3);
    // (a namespace's global by its mangled name: `cfg::w`)
    const DeclaredGlobal g =
        declared_global("set_constant", *m->source, name, m->kernels.front()->options().defines);
    const std::optional<DType>& declared = g.dtype;
    const long extent = g.count;
    const std::string &type = g.type, &symbol = g.symbol;
    if (!declared && lua_type(L, 3) == LUA_TTABLE && g.scalar) {
      // A struct global from a table of its fields (`cudaMemcpyToSymbol(c_params, &p, ...)`),
      // laid out as the compiler lays the struct out in the global's namespaces.
      jit::ParamType p;
      p.kind = jit::ParamKind::structure;
      p.spelling = type;
      p.layout = m->kernels.front()->global_layout(type, g.scope);
      if (!p.layout)
        throw Error("set_constant: '" + name + "' has type '" + type +
                    "', which is no struct of the source: give a host array of its bytes");
      jit::ArgPack pack;
      pack.add("set_constant", 2, name, p, scalar);
      const char* at = static_cast<const char*>(pack.pointers()[0]);
      set_module_global(*m, symbol, std::vector<char>(at, at + p.layout->size));
      return 0;
    }
    if (!declared) {
      // A struct global (`__constant__ Sphere s[SPHERES];`, CUDA by Example's ray tracer) takes
      // the bytes of whole structs, as a struct parameter takes an array: a float32 array of
      // their fields in order, say. (The backends refuse more bytes than the global holds.)
      if (!values)
        throw Error("set_constant: '" + name + "' has type '" + type + "': give " +
                    (g.scalar ? "a table of its fields, or " : "") +
                    "a host array of its bytes (whole structs, their fields in order)");
      set_module_global(*m, symbol,
                        std::vector<char>(static_cast<char*>(values->data()),
                                          static_cast<char*>(values->data()) + values->nbytes()));
      return 0;
    }
    const DType dtype = *declared;
    std::vector<char> bytes;
    const DTypeInfo& info = dtype_info(dtype);
    if (values) {
      // A vector global (`__constant__ float3 c[2];`) takes an array of its type, or of its
      // lanes (a float32 array of 6), which lie the same in memory.
      const bool lanes = is_vector(dtype) && values->dtype() == info.base;
      if (values->dtype() != dtype && !lanes)
        throw Error("set_constant: '" + name + "' holds " + std::string(info.cpp) +
                    ", the array is " + std::string(dtype_info(values->dtype()).name));
      const long per = lanes ? info.lanes : 1;
      if (lanes && values->size() % per != 0)
        throw Error("set_constant: '" + name + "' holds " + std::string(info.cpp) + ", " +
                    std::to_string(per) + " " + std::string(dtype_info(info.base).name) +
                    " lanes each; the array has " + std::to_string(values->size()) + " values");
      if (extent && values->size() > extent * per)
        throw Error("set_constant: '" + name + "' holds " + std::to_string(extent) +
                    " elements, the array has " + std::to_string(values->size() / per));
      bytes.assign(static_cast<char*>(values->data()),
                   static_cast<char*>(values->data()) + values->nbytes());
    } else {
      if (is_vector(dtype))
        throw Error("set_constant: '" + name + "' holds " + std::string(info.cpp) +
                    ": give a host array of " + std::string(info.name) + " or of its " +
                    std::string(dtype_info(info.base).name) + " lanes, not a number");
      jit::ArgPack pack;
      jit::ParamType p = jit::classify_param(dtype_info(dtype).cpp);
      pack.add("set_constant", 2, name, p, scalar);
      const char* at = static_cast<const char*>(pack.pointers()[0]);
      bytes.assign(at, at + dtype_info(dtype).size);
    }
    set_module_global(*m, symbol, std::move(bytes));
    return 0;
  });
}

// m:get_constant(name [, count]) -> the values of a __constant__ or __device__ global, as the
// module's build holds them now (cudaMemcpyFromSymbol): a number for a scalar, else a host
// array of its dtype (count elements where the source's extent is no number; a struct's bytes
// as uint8). [-0, +1]
int module_get_constant(lua_State* L) {
  auto* m = static_cast<ModuleBox*>(luaL_checkudata(L, 1, kModuleMeta));
  luaL_checkstring(L, 2);
  const lua_Integer count = luaL_optinteger(L, 3, 0);
  if (count < 0 || count > (lua_Integer(1) << 40)) luaL_argerror(L, 3, "expected an element count");
  return protect(L, [&] {
    const std::string name = lua_tostring(L, 2);
    const DeclaredGlobal g =
        declared_global("get_constant", *m->source, name, m->kernels.front()->options().defines);
    const bool scalar = g.dtype && g.scalar && count == 0;
    const long elements = count > 0 ? long(count) : scalar ? 1 : g.count;
    if (elements == 0)
      throw Error("get_constant: '" + name + "' has type '" + g.type + "'" +
                  (g.dtype ? ", whose extent kiln cannot read from the source"
                           : ", a struct: give the number of its bytes") +
                  ": m:get_constant(\"" + name + "\", count)");
    // The build of the kernel launched last (one built on its own, a template's instance, has
    // its own copy: note_own_globals).
    const jit::Kernel::Specialisation* last = nullptr;
    for (const auto* list : {&m->kernels, &m->instances})
      for (const KernelRef& k : *list)
        if (const jit::Kernel::Specialisation* s = k->last();
            s && (!last || s->launched > last->launched))
          last = s;
    if (!last)
      throw Error(
          "get_constant: no kernel of the module has run yet, so '" + name +
          "' holds what its initialiser gives, which kiln reads from a build: launch one first");
    HostArray values({elements}, g.dtype.value_or(DType::uint8));
    last->build.build->module->get_global(g.symbol, values.data(), values.nbytes());
    if (scalar)
      push_element(L, values, 0);
    else
      push_host_array(L, std::move(values));
    return 1;
  });
}

// m:bind_texture(name, device_array): the module's texture reference name reads the array from
// now on, as cudaBindTexture binds it (jit/textures.h). [-0, +0]
int module_bind_texture(lua_State* L) {
  auto* m = static_cast<ModuleBox*>(luaL_checkudata(L, 1, kModuleMeta));
  luaL_checkstring(L, 2);
  if (!test_device_array(L, 3)) luaL_argerror(L, 3, "expected a device array");
  DeviceArray& array = check_device_array(L, 3);
  return protect(L, [&] {
    const std::string name = lua_tostring(L, 2);
    std::string known;
    for (const jit::TextureRef& t : jit::find_texture_references(m->source->text())) {
      known += (known.empty() ? "" : ", ") + t.name;
      if (t.name != name) continue;
      std::optional<DType> type = dtype_of_cpp(t.type);
      if (type != array.dtype)
        throw Error("bind_texture: texture '" + name + "' reads " + t.type +
                    (type ? " (" + std::string(dtype_info(*type).name) + ")" : "") +
                    ", the array is " + std::string(dtype_info(array.dtype).name));
      // kiln_texture<T>: the data, then the element count (jit/textures.cpp).
      const void* address = array.data();
      const auto count = static_cast<unsigned long long>(array.size());
      std::vector<char> bytes(sizeof address + sizeof count);
      std::memcpy(bytes.data(), &address, sizeof address);
      std::memcpy(bytes.data() + sizeof address, &count, sizeof count);
      set_module_global(*m, name, std::move(bytes));
      m->textures.insert_or_assign(name, array);
      return 0;
    }
    throw Error("bind_texture: no 1-D texture reference '" + name + "' in the module" +
                (known.empty() ? "" : " (its textures: " + known + ")"));
  });
}

// ------------------------------------------------------------------------------ reductions

// r(array [, init]) -> a Lua number (an integer for integer dtypes, a boolean for bool). [-0, +1]
int reduce_call(lua_State* L) {
  auto* r = static_cast<std::unique_ptr<jit::Reduction>*>(luaL_checkudata(L, 1, kReduceMeta));
  DeviceArray* d = test_device_array(L, 2);
  HostArray* h = d ? nullptr : &check_host_array(L, 2);
  if (d && d->buffer->freed()) luaL_argerror(L, 2, "the device array was freed");
  bool has_init = !lua_isnoneornil(L, 3);
  return protect(L, [&] {
    std::optional<jit::ArgValue> init;
    if (has_init) init = arg_value(L, 3);
    DType dtype = d ? d->dtype : h->dtype();
    std::int64_t n = d ? d->size() : h->size();
    if (n == 0 && has_init) {
      lua_pushvalue(L, 3);  // an empty array's reduction is init itself, as given
      return 1;
    }
    std::shared_ptr<DeviceBuffer> staged;
    void* in = d ? d->data() : nullptr;
    if (!d && n > 0) {
      staged = allocate_device(L, h->nbytes());
      staged->backend().copy_to_device(staged->ptr(), h->data(), h->nbytes(), nullptr);
      in = staged->ptr();
    }
    HostArray result = (*r)->reduce(in, n, dtype, init,
                                    [L](std::size_t bytes) { return allocate_device(L, bytes); });
    if (dtype == DType::boolean)
      lua_pushboolean(L, result.get_integer(0) != 0);
    else if (dtype == DType::uint64)  // (past 2^63 - 1: the integer of its bits, as elements)
      lua_pushinteger(L, static_cast<lua_Integer>(result.as<std::uint64_t>()[0]));
    else if (dtype_info(dtype).is_integer)
      lua_pushinteger(L, result.get_integer(0));
    else
      lua_pushnumber(L, result.get_number(0));
    return 1;
  });
}

// cuda.reduce("a + b" [, opts]) -> a reduction callable. [-0, +1]
int cuda_reduce(lua_State* L) {
  const char* line = luaL_checkstring(L, 1);
  if (std::strpbrk(line, "\n\r") != nullptr) luaL_argerror(L, 1, "the expression must be one line");
  return protect(L, [&] {
    new_object<std::unique_ptr<jit::Reduction>>(
        L, kReduceMeta, std::make_unique<jit::Reduction>(runtime_ptr(L), line));
    return 1;
  });
}

}  // namespace

void register_kernel_functions(lua_State* L) {
  static const luaL_Reg kernel_methods[] = {
      {"forall", kernel_forall}, {"ptx", kernel_ptx}, {"info", kernel_info},
      {"resources", kernel_resources}, {"sass", kernel_sass}, {nullptr, nullptr}};
  new_metatable<KernelRef>(L, kKernelMeta, kernel_methods, kernel_index);
  lua_pushcfunction(L, kernel_call), lua_setfield(L, -2, "__call");
  lua_pushcfunction(L, kernel_tostring), lua_setfield(L, -2, "__tostring");
  lua_pop(L, 1);
  new_metatable<Launcher>(L, kLauncherMeta, nullptr, nullptr);
  lua_pushcfunction(L, launcher_call), lua_setfield(L, -2, "__call");
  lua_pop(L, 1);
  static const luaL_Reg module_methods[] = {{"set_constant", module_set_constant},
                                            {"get_constant", module_get_constant},
                                            {"bind_texture", module_bind_texture},
                                            {nullptr, nullptr}};
  new_metatable<ModuleBox>(L, kModuleMeta, module_methods, module_index);
  lua_pop(L, 1);
  new_metatable<std::unique_ptr<jit::Reduction>>(L, kReduceMeta, nullptr, nullptr);
  lua_pushcfunction(L, reduce_call), lua_setfield(L, -2, "__call");
  lua_pop(L, 1);

  static const luaL_Reg functions[] = {
      {"jit", cuda_jit},       {"jit_file", cuda_jit_file},       {"module", cuda_module},
      {"reduce", cuda_reduce}, {"kernel_path", cuda_kernel_path}, {nullptr, nullptr}};
  luaL_setfuncs(L, functions, 0);
}

}  // namespace kiln::lua
