// The cuda module: backend choice, devices, device arrays, streams, events, the cache.
// Kernels live in lua_kernel.cpp.
#include "repl/lua_cuda.h"

#include <cstdio>
#include <cstring>
#include <limits>

#include "jit/backends.h"
#include "jit/cache.h"
#include "jit/cuda/nvrtc.h"
#include "repl/lua_array.h"
#include "repl/lua_host.h"
#include "repl/lua_util.h"
#include "runtime/array_format.h"
#include "repl/modules.h"
#include "runtime/error.h"
#ifdef KILN_HAVE_CUDA
#include "runtime/cuda/backend.h"
#endif

namespace kiln::lua {
namespace {

constexpr const char* kRuntimeKey = "kiln.runtime";

// The registry's holder of the Lua state's Jit.
struct RuntimeBox {
  std::shared_ptr<jit::Jit> jit;
  std::string note;  // how the backend was chosen
};

// Prints a warning of the cache (corrupt entries, unwritable folder) to stderr; the cache's
// messages already start with "kiln: ".
void warn(const std::string& message) {
  std::fprintf(stderr, "%s%s\n", message.starts_with("kiln: ") ? "" : "kiln: ", message.c_str());
}

// The disk cache the settings name (its warnings go to stderr).
jit::DiskCache disk_cache(lua_State* L) {
  const CacheSettings& c = settings(L).cache;
  return jit::DiskCache(c.dir, c.max_bytes, c.enabled, warn);
}

// The runtime box, created (without opening a backend) on first use. [-0, +0]
RuntimeBox& box(lua_State* L) {
  if (lua_getfield(L, LUA_REGISTRYINDEX, kRuntimeKey) == LUA_TUSERDATA) {
    auto* b = static_cast<RuntimeBox*>(lua_touserdata(L, -1));
    lua_pop(L, 1);
    return *b;
  }
  lua_pop(L, 1);
  RuntimeBox* b = new_object<RuntimeBox>(L, kRuntimeKey);
  lua_setfield(L, LUA_REGISTRYINDEX, kRuntimeKey);
  return *b;
}

// A device table as Numba's device objects read: name, compute_capability, ... [-0, +1]
void push_device(lua_State* L, const DeviceInfo& d) {
  lua_createtable(L, 0, 12);
  lua_pushinteger(L, d.id), lua_setfield(L, -2, "id");
  lua_pushstring(L, d.name.c_str()), lua_setfield(L, -2, "name");
  lua_createtable(L, 2, 0);
  lua_pushinteger(L, d.cc_major), lua_rawseti(L, -2, 1);
  lua_pushinteger(L, d.cc_minor), lua_rawseti(L, -2, 2);
  lua_setfield(L, -2, "compute_capability");
  lua_pushinteger(L, static_cast<lua_Integer>(d.total_memory)), lua_setfield(L, -2, "total_memory");
  lua_pushinteger(L, d.multiprocessors), lua_setfield(L, -2, "multiprocessors");
  lua_pushinteger(L, d.max_threads_per_block), lua_setfield(L, -2, "max_threads_per_block");
  lua_createtable(L, 3, 0);
  for (int i = 0; i < 3; ++i) lua_pushinteger(L, d.max_block_dim[i]), lua_rawseti(L, -2, i + 1);
  lua_setfield(L, -2, "max_block_dim");
  lua_createtable(L, 3, 0);
  for (int i = 0; i < 3; ++i) lua_pushinteger(L, d.max_grid_dim[i]), lua_rawseti(L, -2, i + 1);
  lua_setfield(L, -2, "max_grid_dim");
  lua_pushinteger(L, static_cast<lua_Integer>(d.max_shared_per_block)),
      lua_setfield(L, -2, "max_shared_memory_per_block");
  lua_pushinteger(L, static_cast<lua_Integer>(d.max_shared_per_block_optin)),
      lua_setfield(L, -2, "max_shared_memory_per_block_optin");
  lua_pushinteger(L, d.warp_size), lua_setfield(L, -2, "warp_size");
}

// ------------------------------------------------------------------------- device arrays

// d.shape, d.dtype, d.size, d.ndim and methods. [-0, +1]
int device_array_index(lua_State* L) {
  DeviceArray& a = *static_cast<DeviceArray*>(luaL_checkudata(L, 1, kDeviceArrayMeta));
  if (lua_type(L, 2) == LUA_TNUMBER)
    return luaL_error(L,
                      "a device array's elements are on the device: copy it to the host first "
                      "(d:copy_to_host()[%s])",
                      lua_tostring(L, 2));
  const char* key = luaL_checkstring(L, 2);
  if (std::strcmp(key, "shape") == 0) return push_shape(L, a.shape), 1;
  if (std::strcmp(key, "dtype") == 0) return lua_pushstring(L, dtype_info(a.dtype).name.data()), 1;
  if (std::strcmp(key, "size") == 0) return lua_pushinteger(L, a.size()), 1;
  if (std::strcmp(key, "ndim") == 0)
    return lua_pushinteger(L, static_cast<lua_Integer>(a.shape.size())), 1;
  luaL_getmetafield(L, 1, "__methods");
  lua_getfield(L, -1, key);
  return 1;
}

// #d: the number of elements, as #a for a host array. [-0, +1]
int device_array_len(lua_State* L) {
  lua_pushinteger(L, check_device_array(L, 1).size());
  return 1;
}

// d:copy_to_host([host_out [, stream]]) -> host array. [-0, +1]
int device_array_copy_to_host(lua_State* L) {
  DeviceArray& d = check_device_array(L, 1);
  HostArray* out = lua_isnoneornil(L, 2) ? nullptr : &check_host_array(L, 2);
  Stream* s = opt_stream(L, 3);
  return protect(L, [&] {
    if (out) {
      if (out->shape() != d.shape || out->dtype() != d.dtype)
        throw Error("copy_to_host: the host array is " + shape_string(out->shape()) + " " +
                    std::string(dtype_info(out->dtype()).name) + ", the device array " +
                    shape_string(d.shape) + " " + std::string(dtype_info(d.dtype).name));
      d.buffer->backend().copy_to_host(out->data(), d.data(), d.nbytes(), s);
      lua_pushvalue(L, 2);
      return 1;
    }
    HostArray h(d.shape, d.dtype);
    d.buffer->backend().copy_to_host(h.data(), d.data(), d.nbytes(), s);
    push_host_array(L, std::move(h));
    return 1;
  });
}

// d:copy_to_device(host [, stream]): overwrites d with a host array of its shape. [-0, +0]
int device_array_copy_to_device(lua_State* L) {
  DeviceArray& d = check_device_array(L, 1);
  HostArray& h = check_host_array(L, 2);
  Stream* s = opt_stream(L, 3);
  return protect(L, [&] {
    if (h.size() != d.size() || h.dtype() != d.dtype)
      throw Error("copy_to_device: the host array is " + shape_string(h.shape()) + " " +
                  std::string(dtype_info(h.dtype()).name) + ", the device array " +
                  shape_string(d.shape) + " " + std::string(dtype_info(d.dtype).name));
    d.buffer->backend().copy_to_device(d.data(), h.data(), d.nbytes(), s);
    return 0;
  });
}

// d:view(dtype): the same device memory read as another dtype, as a:view does. [-0, +1]
int device_array_view(lua_State* L) {
  DeviceArray& d = check_device_array(L, 1);
  luaL_checkstring(L, 2);
  DType t = opt_dtype(L, 2, d.dtype);
  return protect(L, [&] {
    push_device_array(L, DeviceArray{d.buffer, t, viewed_shape(d.shape, d.dtype, t), d.offset, true});
    return 1;
  });
}

// d:sub(first, last) or d:sub({r1, r2}, {c1, c2}, ...): a contiguous sub-array sharing d's
// memory, as a:sub does; kernels get a pointer at its start, copies move just its part. [-0, +1]
int device_array_sub(lua_State* L) {
  DeviceArray& d = check_device_array(L, 1);
  auto ranges = check_sub_ranges(L, 2, static_cast<int>(d.shape.size()));
  return protect(L, [&] {
    SubRange r = sub_range(d.shape, ranges);
    push_device_array(L, DeviceArray{d.buffer, d.dtype, r.shape,
                                     d.offset + std::size_t(r.first) * dtype_info(d.dtype).size,
                                     true});
    return 1;
  });
}

// d:free(): releases the memory now; later use is an error. [-0, +0]
int device_array_free(lua_State* L) {
  auto* d = static_cast<DeviceArray*>(luaL_checkudata(L, 1, kDeviceArrayMeta));
  if (d->view)
    return luaL_error(L, "free: a sub-array or view does not own its memory; free the array it "
                         "came from");
  if (d->buffer) d->buffer->release();
  return 0;
}

// tostring(d): the values, as a host array prints, marked as on the device. [-0, +1]
int device_array_tostring(lua_State* L) {
  auto* d = static_cast<DeviceArray*>(luaL_checkudata(L, 1, kDeviceArrayMeta));
  return protect(L, [&] {
    if (d->buffer->freed()) {
      lua_pushfstring(L, "<freed device array %s %s>", dtype_info(d->dtype).name.data(),
                      shape_string(d->shape).c_str());
      return 1;
    }
    // Only the elements shown are copied: a 9 GB array's text is not a 9 GB copy.
    const std::size_t bytes = dtype_info(d->dtype).size;
    HostArray shown =
        printed_elements(d->shape, d->dtype, [&](std::int64_t first, std::int64_t count, void* to) {
          d->buffer->backend().copy_to_host(
              to, static_cast<const std::byte*>(d->data()) + first * bytes, count * bytes, nullptr);
        });
    std::string text = format_printed(shown, d->shape);
    if (!text.empty() && text.back() == ')')
      text.insert(text.size() - 1, ", device=" + d->buffer->backend().name());
    lua_pushstring(L, ("device_" + text).c_str());
    return 1;
  });
}

// ----------------------------------------------------------------------- streams and events

// cuda.stream() -> a new stream. [-0, +1]
int cuda_stream(lua_State* L) {
  return protect(L, [&] {
    auto s = runtime(L).backend().create_stream();
    new_object<std::unique_ptr<Stream>>(L, kStreamMeta, std::move(s));
    return 1;
  });
}

// s:synchronize() (the default stream's: the device's). [-0, +0]
int stream_synchronize(lua_State* L) {
  auto& s = *static_cast<std::unique_ptr<Stream>*>(luaL_checkudata(L, 1, kStreamMeta));
  return protect(L, [&] { return s ? s->synchronize() : runtime(L).backend().synchronize(), 0; });
}

// cuda.event() -> a new event. [-0, +1]
int cuda_event(lua_State* L) {
  return protect(L, [&] {
    auto e = runtime(L).backend().create_event();
    new_object<std::unique_ptr<Event>>(L, kEventMeta, std::move(e));
    return 1;
  });
}

// e:record([stream]). [-0, +0]
int event_record(lua_State* L) {
  auto& e = *static_cast<std::unique_ptr<Event>*>(luaL_checkudata(L, 1, kEventMeta));
  Stream* s = opt_stream(L, 2);
  return protect(L, [&] { return e->record(s), 0; });
}

// e:synchronize(). [-0, +0]
int event_synchronize(lua_State* L) {
  auto& e = *static_cast<std::unique_ptr<Event>*>(luaL_checkudata(L, 1, kEventMeta));
  return protect(L, [&] { return e->synchronize(), 0; });
}

// e:query() -> whether the work the event records is done (Numba's event.query()). [-0, +1]
int event_query(lua_State* L) {
  auto& e = *static_cast<std::unique_ptr<Event>*>(luaL_checkudata(L, 1, kEventMeta));
  return protect(L, [&] { return lua_pushboolean(L, e->query()), 1; });
}

// e:wait([stream]): later work on stream (default: the default stream) waits for the event's
// (Numba's event.wait(stream)). [-0, +0]
int event_wait(lua_State* L) {
  auto& e = *static_cast<std::unique_ptr<Event>*>(luaL_checkudata(L, 1, kEventMeta));
  Stream* s = opt_stream(L, 2);
  return protect(L, [&] { return e->wait(s), 0; });
}

// start:elapsed_time(stop) -> milliseconds (Numba's event.elapsed_time). [-0, +1]
int event_elapsed_time(lua_State* L) {
  auto& a = *static_cast<std::unique_ptr<Event>*>(luaL_checkudata(L, 1, kEventMeta));
  auto& b = *static_cast<std::unique_ptr<Event>*>(luaL_checkudata(L, 2, kEventMeta));
  return protect(L, [&] { return lua_pushnumber(L, b->elapsed_ms_since(*a)), 1; });
}

// cuda.default_stream() -> the default stream, as a stream (Numba's cuda.default_stream()):
// where a stream is taken it is 0's; its synchronize() waits for the device. [-0, +1]
int cuda_default_stream(lua_State* L) {
  new_object<std::unique_ptr<Stream>>(L, kStreamMeta, nullptr);
  return 1;
}

// cuda.event_elapsed_time(start, stop) -> milliseconds. [-0, +1]
int cuda_event_elapsed_time(lua_State* L) {
  auto& a = *static_cast<std::unique_ptr<Event>*>(luaL_checkudata(L, 1, kEventMeta));
  auto& b = *static_cast<std::unique_ptr<Event>*>(luaL_checkudata(L, 2, kEventMeta));
  return protect(L, [&] { return lua_pushnumber(L, b->elapsed_ms_since(*a)), 1; });
}

// ------------------------------------------------------------------------- module functions

// cuda.backend() -> "cuda" | "cpu". [-0, +1]
int cuda_backend(lua_State* L) {
  return protect(L, [&] { return lua_pushstring(L, runtime(L).backend().name().c_str()), 1; });
}

// cuda.is_available() -> whether the cuda backend can run (a driver and a device). [-0, +1]
int cuda_is_available(lua_State* L) {
  RuntimeBox& b = box(L);
  if (b.jit) return lua_pushboolean(L, b.jit->backend().name() == "cuda"), 1;
  return protect(
      L, [&] { return lua_pushboolean(L, jit::cuda_available(settings(L).platform, nullptr)), 1; });
}

// cuda.synchronize(): waits for all queued work. [-0, +0]
int cuda_synchronize(lua_State* L) {
  return protect(L, [&] { return runtime(L).backend().synchronize(), 0; });
}

// cuda.list_devices() -> { device, ... }. [-0, +1]
int cuda_list_devices(lua_State* L) {
  return protect(L, [&] {
    std::vector<DeviceInfo> devices = {runtime(L).backend().device()};
#ifdef KILN_HAVE_CUDA
    if (auto* c = dynamic_cast<CudaBackend*>(&runtime(L).backend())) devices = c->list_devices();
#endif
    lua_createtable(L, static_cast<int>(devices.size()), 0);
    for (std::size_t i = 0; i < devices.size(); ++i) {
      push_device(L, devices[i]);
      lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
    }
    return 1;
  });
}

// cuda.get_current_device() -> device. [-0, +1]
int cuda_get_current_device(lua_State* L) {
  return protect(L, [&] { return push_device(L, runtime(L).backend().device()), 1; });
}

// cuda.memory_info() -> free, total, pool_reserved, pool_used: bytes, as Numba's
// get_memory_info() (free, total) with the memory pool's figures after them. [-0, +4]
int cuda_memory_info(lua_State* L) {
  return protect(L, [&] {
    const MemoryInfo m = runtime(L).backend().memory_info();
    for (std::uint64_t bytes : {m.free, m.total, m.pool_reserved, m.pool_used})
      lua_pushinteger(L, static_cast<lua_Integer>(bytes));
    return 4;
  });
}

// cuda.select_device(id): only the current device exists on this backend. [-0, +0]
int cuda_select_device(lua_State* L) {
  lua_Integer id = luaL_checkinteger(L, 1);
  return protect(L, [&] {
    int current = runtime(L).backend().device().id;
    if (id != current)
      throw Error("select_device: no device " + std::to_string(id) + " (this backend has device " +
                  std::to_string(current) + ")");
    return 0;
  });
}

// cuda.to_device(host [, stream]) -> a device array holding a copy. [-0, +1]
int cuda_to_device(lua_State* L) {
  if (DeviceArray* d = test_device_array(L, 1)) return push_device_array(L, *d), 1;
  HostArray& h = check_host_array(L, 1);
  Stream* s = opt_stream(L, 2);
  return protect(L, [&] {
    DeviceArray d{allocate_device(L, h.nbytes()), h.dtype(), h.shape()};
    d.buffer->backend().copy_to_device(d.data(), h.data(), h.nbytes(), s);
    push_device_array(L, std::move(d));
    return 1;
  });
}

// The bytes of a device array of this shape and dtype; an Error when that overflows size_t
// (2^62 float64 elements would otherwise wrap to a 0-byte buffer).
std::size_t device_bytes(const Shape& shape, DType dtype) {
  std::int64_t n = shape_size(shape);
  std::size_t elem = dtype_info(dtype).size;
  if (static_cast<std::uint64_t>(n) > std::numeric_limits<std::size_t>::max() / elem / 2)
    throw Error("device array: cannot allocate " + std::to_string(n) + " elements (shape " +
                shape_string(shape) + ", " + std::string(dtype_info(dtype).name) + "): too large");
  return static_cast<std::size_t>(n) * elem;
}

// cuda.device_array(shape [, dtype]) -> an uninitialised device array. [-0, +1]
int cuda_device_array(lua_State* L) {
  DType dtype = opt_dtype(L, 2, DType::float64);
  return protect(L, [&] {
    Shape shape = check_shape(L, 1);  // its Lua error comes before any C++ object exists
    DeviceArray d{allocate_device(L, device_bytes(shape, dtype)), dtype, shape};
    push_device_array(L, std::move(d));
    return 1;
  });
}

// cuda.device_array_like(a) -> a device array of a's shape and dtype. [-0, +1]
int cuda_device_array_like(lua_State* L) {
  DeviceArray* like = test_device_array(L, 1);
  HostArray* host = like ? nullptr : &check_host_array(L, 1);
  return protect(L, [&] {
    const Shape& shape = like ? like->shape : host->shape();
    DType dtype = like ? like->dtype : host->dtype();
    DeviceArray d{allocate_device(L, device_bytes(shape, dtype)), dtype, shape};
    push_device_array(L, std::move(d));
    return 1;
  });
}

// cuda.pinned_array(shape [, dtype]) -> a host array (page-locked where the backend has it). [-0,
// +1]
int cuda_pinned_array(lua_State* L) {
  DType dtype = opt_dtype(L, 2, DType::float64);
  return protect(L, [&] {
    Shape shape = check_shape(L, 1);  // its Lua error comes before any C++ object exists
    push_host_array(L, pinned_host_array(L, shape, dtype));
    return 1;
  });
}

// cuda.reset(): recreates the GPU context after a kernel fault; older device arrays become
// invalid. A no-op on the cpu backend. [-0, +0]
int cuda_reset(lua_State* L) {
  return protect(L, [&] {
#ifdef KILN_HAVE_CUDA
    if (auto* c = dynamic_cast<CudaBackend*>(&runtime(L).backend())) c->reset();
#endif
    return 0;
  });
}

// cuda.info() -> {kiln=, backend=, device=, nvrtc=, cache_dir=, ...} for kiln --info. [-0, +1]
int cuda_info(lua_State* L) {
  return protect(L, [&] {
    jit::Jit& j = runtime(L);
    lua_createtable(L, 0, 8);
    lua_pushstring(L, KILN_VERSION), lua_setfield(L, -2, "kiln");
    lua_pushstring(L, box(L).note.c_str()), lua_setfield(L, -2, "backend");
    lua_pushstring(L, j.backend().describe().c_str()), lua_setfield(L, -2, "device");
    lua_pushstring(L, j.compiler().describe().c_str()), lua_setfield(L, -2, "host_compiler");
    std::string why;
    std::shared_ptr<jit::Nvrtc> nvrtc = j.nvrtc(&why);
    std::string nvrtc_text =
        nvrtc ? nvrtc->version() + " (" + nvrtc->library() + ")" : "unavailable: " + why;
    lua_pushstring(L, nvrtc_text.c_str()), lua_setfield(L, -2, "nvrtc");
    std::string cuda_why;
    bool has_cuda =
        j.backend().name() == "cuda" || jit::cuda_available(settings(L).platform, &cuda_why);
    lua_pushstring(L, has_cuda ? "available" : ("unavailable: " + cuda_why).c_str());
    lua_setfield(L, -2, "cuda");
    std::string cache = j.cache().enabled() ? j.cache().dir().string() : "disabled";
    lua_pushstring(L, cache.c_str()), lua_setfield(L, -2, "cache_dir");
    lua_pushstring(L, j.compiler().identity(j.target("")).c_str());
    lua_setfield(L, -2, "compiler");
    lua_pushstring(L, j.target("").c_str()), lua_setfield(L, -2, "target");
    lua_pushstring(L, j.kernels_dir().c_str()), lua_setfield(L, -2, "kernels_dir");
    return 1;
  });
}

// cuda.cache_stats() -> {dir=, enabled=, entries=, bytes=, max_bytes=}. [-0, +1]
int cuda_cache_stats(lua_State* L) {
  return protect(L, [&] {
    jit::CacheStats s = disk_cache(L).stats();
    lua_createtable(L, 0, 5);
    lua_pushstring(L, s.dir.c_str()), lua_setfield(L, -2, "dir");
    lua_pushboolean(L, s.enabled), lua_setfield(L, -2, "enabled");
    lua_pushinteger(L, static_cast<lua_Integer>(s.entries)), lua_setfield(L, -2, "entries");
    lua_pushinteger(L, static_cast<lua_Integer>(s.bytes)), lua_setfield(L, -2, "bytes");
    lua_pushinteger(L, static_cast<lua_Integer>(s.max_bytes)), lua_setfield(L, -2, "max_bytes");
    return 1;
  });
}

// cuda.cache_clear(): removes every entry of the disk cache. [-0, +0]
int cuda_cache_clear(lua_State* L) {
  return protect(L, [&] { return disk_cache(L).clear(), 0; });
}

}  // namespace

// ------------------------------------------------------------------------------ shared API

HostArray pinned_host_array(lua_State* L, const Shape& shape, DType dtype) {
#ifdef KILN_HAVE_CUDA
  std::shared_ptr<Backend> backend = runtime(L).backend_ptr();
  if (auto* c = dynamic_cast<CudaBackend*>(backend.get())) {
    std::size_t bytes = device_bytes(shape, dtype);
    void* data = c->pinned_alloc(bytes);
    std::memset(data, 0, bytes);
    // The free callback holds the backend, so pinned arrays may outlive everything else.
    return HostArray(shape, dtype, data, [backend, c](void* p) { c->pinned_free(p); });
  }
#endif
  return HostArray(shape, dtype);
}

jit::Jit& runtime(lua_State* L) {
  return *runtime_ptr(L);
}

std::shared_ptr<jit::Jit> runtime_ptr(lua_State* L) {
  RuntimeBox& b = box(L);
  if (!b.jit) {
    const Settings& s = settings(L);
    for (const std::string& w : s.warnings) std::fprintf(stderr, "%s\n", w.c_str());
    if (!s.error.empty()) throw Error(s.error);
    jit::Platform platform = jit::open_platform(s.platform);
    jit::JitOptions options = s.jit;
    if (options.compile_notice_ms > 0)  // a slow first launch says why it waits
      options.on_slow_compile = [](const std::string& what) {
        std::fprintf(stderr, "kiln: %s...\n", what.c_str());
      };
    if (s.notes)  // a kernel that runs slowly for a reason the user can change says so
      options.on_note = [](const std::string& what) {
        std::fprintf(stderr, "kiln: note: %s\n", what.c_str());
      };
    b.jit = std::make_shared<jit::Jit>(platform.backend, platform.compiler, disk_cache(L),
                                       s.platform.kernels_dir, options);
    b.note = platform.note;
  }
  return b.jit;
}

DeviceArray* test_device_array(lua_State* L, int idx) {
  return static_cast<DeviceArray*>(luaL_testudata(L, idx, kDeviceArrayMeta));
}

DeviceArray& check_device_array(lua_State* L, int idx) {
  auto* d = static_cast<DeviceArray*>(luaL_checkudata(L, idx, kDeviceArrayMeta));
  if (d->buffer->freed()) luaL_argerror(L, idx, "the device array was freed");
  if (d->buffer->stale())
    luaL_argerror(L, idx, "the device array is invalid: it was made before cuda.reset()");
  return *d;
}

void push_device_array(lua_State* L, DeviceArray a) {
  std::size_t bytes = a.nbytes();
  new_object<DeviceArray>(L, kDeviceArrayMeta, std::move(a));
  account_bytes(L, bytes);
}

std::shared_ptr<DeviceBuffer> allocate_device(lua_State* L, std::size_t bytes) {
  std::shared_ptr<Backend> backend = runtime(L).backend_ptr();
  try {
    return std::make_shared<DeviceBuffer>(backend, bytes);
  } catch (const Error&) {
    lua_gc(L, LUA_GCCOLLECT);  // arrays that are garbage but not yet collected hold memory
    return std::make_shared<DeviceBuffer>(backend, bytes);
  }
}

Stream* opt_stream(lua_State* L, int idx) {
  if (lua_isnoneornil(L, idx) || (lua_isinteger(L, idx) && lua_tointeger(L, idx) == 0))
    return nullptr;
  return static_cast<std::unique_ptr<Stream>*>(luaL_checkudata(L, idx, kStreamMeta))->get();
}

// luaopen_kiln_cuda: the cuda table. [-0, +1]
int open_cuda(lua_State* L) {
  static const luaL_Reg device_array_methods[] = {{"copy_to_host", device_array_copy_to_host},
                                                  {"copy_to_device", device_array_copy_to_device},
                                                  {"free", device_array_free},
                                                  {"view", device_array_view},
                                                  {"sub", device_array_sub},
                                                  {nullptr, nullptr}};
  new_metatable<DeviceArray>(L, kDeviceArrayMeta, device_array_methods, device_array_index);
  lua_pushcfunction(L, device_array_tostring), lua_setfield(L, -2, "__tostring");
  lua_pushcfunction(L, device_array_len), lua_setfield(L, -2, "__len");
  lua_pop(L, 1);

  static const luaL_Reg stream_methods[] = {{"synchronize", stream_synchronize},
                                            {nullptr, nullptr}};
  new_metatable<std::unique_ptr<Stream>>(L, kStreamMeta, stream_methods, nullptr);
  lua_pop(L, 1);
  static const luaL_Reg event_methods[] = {
      {"record", event_record}, {"synchronize", event_synchronize},   {"query", event_query},
      {"wait", event_wait},     {"elapsed_time", event_elapsed_time}, {nullptr, nullptr}};
  new_metatable<std::unique_ptr<Event>>(L, kEventMeta, event_methods, nullptr);
  lua_pop(L, 1);
  luaL_newmetatable(L, kRuntimeKey);
  lua_pushcfunction(L, destroy_object<RuntimeBox>), lua_setfield(L, -2, "__gc");
  lua_pop(L, 1);

  static const luaL_Reg functions[] = {{"backend", cuda_backend},
                                       {"is_available", cuda_is_available},
                                       {"synchronize", cuda_synchronize},
                                       {"default_stream", cuda_default_stream},
                                       {"list_devices", cuda_list_devices},
                                       {"get_current_device", cuda_get_current_device},
                                       {"select_device", cuda_select_device},
                                       {"memory_info", cuda_memory_info},
                                       {"to_device", cuda_to_device},
                                       {"device_array", cuda_device_array},
                                       {"device_array_like", cuda_device_array_like},
                                       {"pinned_array", cuda_pinned_array},
                                       {"reset", cuda_reset},
                                       {"stream", cuda_stream},
                                       {"event", cuda_event},
                                       {"event_elapsed_time", cuda_event_elapsed_time},
                                       {"info", cuda_info},
                                       {"cache_stats", cuda_cache_stats},
                                       {"cache_clear", cuda_cache_clear},
                                       {nullptr, nullptr}};
  luaL_newlib(L, functions);
  // cuda.null: a null pointer for a pointer parameter, as CUDA code passes NULL mid-list
  // (nil is refused there: in Lua it is more often a misspelt name than a choice).
  lua_pushlightuserdata(L, nullptr), lua_setfield(L, -2, "null");
  register_kernel_functions(L);
  return 1;
}

}  // namespace kiln::lua
