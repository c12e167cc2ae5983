// The kiln.mpi module: the ranks of an mpirun job and the messages between them, on host arrays
// and device arrays (and views of either). runtime/mpi/world.h does the MPI; this file turns Lua
// arguments into host-addressable buffers, staging device memory that the host cannot address.
#include "repl/lua_mpi.h"

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "repl/lua_array.h"
#include "repl/lua_cuda.h"
#include "repl/lua_host.h"
#include "repl/lua_util.h"
#include "repl/settings.h"
#include "runtime/mpi/world.h"
#ifdef KILN_HAVE_NCCL
#include "runtime/cuda/nccl.h"
#endif

namespace kiln::lua {
namespace {

constexpr const char* kRequestMeta = "kiln.mpi.request";
constexpr const char* kDevicePathMeta = "kiln.mpi.DevicePath";
constexpr const char* kDevicePathKey = "kiln.mpi.device_path";  // the registry's DevicePath

// How device arrays travel between ranks, chosen once when the module opens: directly (the cpu
// backend's device memory is host memory), GPU to GPU through NCCL for the collectives (the
// cuda backend, when every rank has NCCL), else staged through pinned host memory.
struct DevicePath {
  std::string description;  // mpi.device_path
#ifdef KILN_HAVE_NCCL
  std::unique_ptr<cuda::NcclComm> nccl;
#endif
};

enum class Use { send, receive, both };

// The world, opened by luaopen (so that any function here can rely on it).
mpi::World& world() {
  return mpi::World::open();
}

// An array argument as MPI sees it: count scalar elements of memory MPI can reach. A device
// array first waits for the work queued on its device (so a message carries what earlier
// launches wrote). Where neither the host nor a CUDA-aware MPI can address device memory (the
// cuda backend under Debian's Open MPI) it is staged through a pinned host copy: copied out
// before a send, copied back by finish() after a receive.
class Payload {
 public:
  Payload(lua_State* L, int idx, Use use) : use_(use) {
    if (HostArray* h = test_host_array(L, idx)) {
      set(h->data(), h->size(), h->dtype());
      return;
    }
    DeviceArray& d = *test_device_array(L, idx);  // check_array vetted it
    Backend& backend = d.buffer->backend();
    backend.synchronize();
    if (backend.host_addressable() || world().cuda_aware()) {
      set(d.data(), d.size(), d.dtype);
      return;
    }
    device_ = d;
    staged_.emplace(pinned_host_array(L, d.shape, d.dtype));
    if (use != Use::receive) backend.copy_to_host(staged_->data(), d.data(), d.nbytes(), nullptr);
    set(staged_->data(), d.size(), d.dtype);
  }

  const mpi::Buffer& buffer() const { return buffer_; }

  // Writes what a staged receive brought back to the device.
  void finish() {
    if (staged_ && use_ != Use::send)
      device_->buffer->backend().copy_to_device(device_->data(), staged_->data(),
                                                device_->nbytes(), nullptr);
  }

 private:
  void set(void* data, std::int64_t size, DType dtype) {
    const DTypeInfo& info = dtype_info(dtype);  // a vector's lanes travel as its lane type
    buffer_ = {data, static_cast<std::size_t>(size) * info.lanes, info.base};
  }

  Use use_;
  mpi::Buffer buffer_;
  std::optional<DeviceArray> device_;
  std::optional<HostArray> staged_;
};

// A non-blocking operation and what it holds: the payloads whose memory it uses (the Lua arrays
// themselves are kept alive in the userdata's user value).
struct LuaRequest {
  std::optional<mpi::Request> request;
  std::vector<Payload> payloads;
  bool finished = false;  // the payloads' staged data went back to the device

  // Once the operation has completed (by wait or test): staged receives back to the device.
  void finish() {
    if (finished) return;
    finished = true;
    for (Payload& p : payloads) p.finish();
  }
};

// Raises a Lua argument error unless the value at idx is a host array or a usable device
// array; runs before any C++ object exists. [-0, +0, v]
void check_array(lua_State* L, int idx) {
  if (test_host_array(L, idx)) return;
  if (test_device_array(L, idx)) {
    check_device_array(L, idx);  // freed or stale: its own message
    return;
  }
  luaL_typeerror(L, idx, "host or device array");
}

// A rank argument: 0 .. size-1; nil too where none is allowed (MPI_PROC_NULL: the message is
// skipped, as at the edges of a halo exchange). [-0, +0, v]
int check_rank(lua_State* L, int idx, bool nil_ok) {
  if (nil_ok && lua_isnoneornil(L, idx)) return mpi::kNoRank;
  lua_Integer r = luaL_checkinteger(L, idx);
  if (r < 0 || r >= world().size())
    luaL_argerror(L, idx,
                  lua_pushfstring(L, "rank %I is not in this job (ranks 0 to %d)", r,
                                  world().size() - 1));
  return static_cast<int>(r);
}

// An optional tag: 0 .. 32767 (the least upper bound MPI promises). [-0, +0, v]
int opt_tag(lua_State* L, int idx) {
  lua_Integer t = luaL_optinteger(L, idx, 0);
  if (t < 0 || t > 32767) luaL_argerror(L, idx, "tags run from 0 to 32767");
  return static_cast<int>(t);
}

// An optional reduction: "sum" (the default), "prod", "min" or "max". [-0, +0, v]
mpi::Op opt_op(lua_State* L, int idx) {
  const char* name = luaL_optstring(L, idx, "sum");
  const mpi::Op* op = mpi::parse_op(name);
  if (!op)
    luaL_argerror(L, idx, lua_pushfstring(L, "unknown op '%s' (sum, prod, min or max)", name));
  return *op;
}

// The state's DevicePath (made by open_mpi). [-0, +0]
DevicePath& device_path(lua_State* L) {
  lua_getfield(L, LUA_REGISTRYINDEX, kDevicePathKey);
  auto* path = static_cast<DevicePath*>(luaL_checkudata(L, -1, kDevicePathMeta));
  lua_pop(L, 1);
  return *path;
}

// Runs a collective GPU to GPU through NCCL when the array at idx is a device array NCCL can
// move: checks that the ranks agree (the route included, so that a host array on one rank and
// a device array on another is an error, not a hang), runs run(comm, buffer, device pointer) and
// waits for the device. Returns false, having done nothing, otherwise. [-0, +0]
template <typename Run>
bool through_nccl(lua_State* L, int idx, const char* what, int root, mpi::Op op, Run&& run) {
#ifdef KILN_HAVE_NCCL
  DeviceArray* d = test_device_array(L, idx);
  cuda::NcclComm* comm = device_path(L).nccl.get();
  const DTypeInfo& info = dtype_info(d ? d->dtype : DType::float32);
  if (d && comm && info.base != DType::int16 && info.base != DType::uint16) {
    mpi::Buffer b{d->data(), static_cast<std::size_t>(d->size()) * info.lanes, info.base};
    world().check_agreement(what, b, root, op, 1);
    d->buffer->backend().synchronize();  // NCCL's stream must see what earlier launches wrote
    run(*comm, b, d->data());
    d->buffer->backend().synchronize();
    return true;
  }
#else
  (void)L, (void)idx, (void)what, (void)root, (void)op, (void)run;
#endif
  return false;
}

// mpi.rank() -> this process's rank, 0 .. size-1. [-0, +1]
int mpi_rank(lua_State* L) {
  lua_pushinteger(L, world().rank());
  return 1;
}

// mpi.size() -> the job's number of ranks. [-0, +1]
int mpi_size(lua_State* L) {
  lua_pushinteger(L, world().size());
  return 1;
}

// mpi.local_rank() -> this rank's place among the ranks on its node (its GPU). [-0, +1]
int mpi_local_rank(lua_State* L) {
  lua_pushinteger(L, world().local_rank());
  return 1;
}

// mpi.wtime() -> seconds on a wall clock (MPI_Wtime). [-0, +1]
int mpi_wtime(lua_State* L) {
  lua_pushnumber(L, world().wtime());
  return 1;
}

// mpi.barrier(): returns when every rank has called it. [-0, +0]
int mpi_barrier(lua_State* L) {
  return protect(L, [] {
    world().barrier();
    return 0;
  });
}

// mpi.bcast(a [, root]) -> a, holding root's a on every rank. [-0, +1]
int mpi_bcast(lua_State* L) {
  check_array(L, 1);
  int root = lua_isnoneornil(L, 2) ? 0 : check_rank(L, 2, false);
  return protect(L, [&] {
    lua_settop(L, 1);
    if (through_nccl(L, 1, "mpi.bcast", root, mpi::Op::sum, [&](auto& c, mpi::Buffer b, void* p) {
          c.bcast(p, b.count, b.dtype, root, nullptr);
        }))
      return 1;
    Payload p(L, 1, Use::both);
    world().check_agreement("mpi.bcast", p.buffer(), root);
    world().bcast(p.buffer(), root);
    p.finish();
    lua_settop(L, 1);
    return 1;
  });
}

// mpi.allreduce(a [, op]) -> a, every rank's a combined element by element (in place). [-0, +1]
int mpi_allreduce(lua_State* L) {
  check_array(L, 1);
  mpi::Op op = opt_op(L, 2);
  return protect(L, [&] {
    lua_settop(L, 1);
    if (through_nccl(L, 1, "mpi.allreduce", 0, op, [&](auto& c, mpi::Buffer b, void* p) {
          c.allreduce(p, b.count, b.dtype, op, nullptr);
        }))
      return 1;
    Payload p(L, 1, Use::both);
    world().check_agreement("mpi.allreduce", p.buffer(), 0, op);
    world().allreduce(p.buffer(), op);
    p.finish();
    lua_settop(L, 1);
    return 1;
  });
}

// mpi.reduce(a [, op [, root]]) -> a: on root, every rank's a combined (in place); the other
// ranks' a unchanged. [-0, +1]
int mpi_reduce(lua_State* L) {
  check_array(L, 1);
  mpi::Op op = opt_op(L, 2);
  int root = lua_isnoneornil(L, 3) ? 0 : check_rank(L, 3, false);
  return protect(L, [&] {
    lua_settop(L, 1);
    if (through_nccl(L, 1, "mpi.reduce", root, op, [&](auto& c, mpi::Buffer b, void* p) {
          c.reduce(p, b.count, b.dtype, op, root, nullptr);
        }))
      return 1;
    Payload p(L, 1, Use::both);
    world().check_agreement("mpi.reduce", p.buffer(), root, op);
    world().reduce(p.buffer(), op, root);
    p.finish();
    lua_settop(L, 1);
    return 1;
  });
}

// Pushes a new array like the one at idx (host or device) with shape {size, shape...}. [-0, +1]
void push_gathered(lua_State* L, int idx) {
  Shape shape{world().size()};
  if (HostArray* h = test_host_array(L, idx)) {
    shape.insert(shape.end(), h->shape().begin(), h->shape().end());
    push_host_array(L, HostArray(shape, h->dtype()));
    return;
  }
  DeviceArray& d = *test_device_array(L, idx);
  shape.insert(shape.end(), d.shape.begin(), d.shape.end());
  DeviceArray out{allocate_device(L, static_cast<std::size_t>(shape_size(shape)) *
                                         dtype_info(d.dtype).size),
                  d.dtype, shape};
  push_device_array(L, std::move(out));
}

// mpi.allgather(a [, out]) -> out: every rank's a in rank order; a new array of shape
// {size, a's shape...}, of a's kind, unless out is given. [-0, +1]
int mpi_allgather(lua_State* L) {
  check_array(L, 1);
  if (!lua_isnoneornil(L, 2)) check_array(L, 2);
  lua_settop(L, 2);
  return protect(L, [&] {
    if (lua_isnil(L, 2)) {
      push_gathered(L, 1);
      lua_replace(L, 2);
    }
    DeviceArray* out = test_device_array(L, 2);
    if (out && out->nbytes() == test_device_array(L, 1)->nbytes() * world().size() &&
        through_nccl(L, 1, "mpi.allgather", 0, mpi::Op::sum, [&](auto& c, mpi::Buffer b, void* p) {
          c.allgather(p, out->data(), b.count, b.dtype, nullptr);
        }))
      return 1;
    Payload send(L, 1, Use::send), recv(L, 2, Use::receive);
    world().check_agreement("mpi.allgather", send.buffer(), 0);
    world().allgather(send.buffer(), recv.buffer());
    recv.finish();
    return 1;
  });
}

// mpi.send(a, dest [, tag]): sends a to rank dest; returns when a may be reused. [-0, +0]
int mpi_send(lua_State* L) {
  check_array(L, 1);
  int dest = check_rank(L, 2, false);
  int tag = opt_tag(L, 3);
  return protect(L, [&] {
    Payload p(L, 1, Use::send);
    world().send(p.buffer(), dest, tag);
    return 0;
  });
}

// mpi.recv(a, src [, tag]) -> a, holding what rank src sent: exactly a's element count. [-0, +1]
int mpi_recv(lua_State* L) {
  check_array(L, 1);
  int src = check_rank(L, 2, false);
  int tag = opt_tag(L, 3);
  return protect(L, [&] {
    Payload p(L, 1, Use::receive);
    world().recv(p.buffer(), src, tag);
    p.finish();
    lua_settop(L, 1);
    return 1;
  });
}

// mpi.sendrecv(send, dest, recv, src [, tag]) -> recv: sends to dest while receiving from src,
// so that a ring or a halo exchange cannot deadlock. A nil rank skips that half. [-0, +1]
int mpi_sendrecv(lua_State* L) {
  check_array(L, 1);
  int dest = check_rank(L, 2, true);
  check_array(L, 3);
  int src = check_rank(L, 4, true);
  int tag = opt_tag(L, 5);
  return protect(L, [&] {
    Payload out(L, 1, Use::send), in(L, 3, Use::receive);
    world().sendrecv(out.buffer(), dest, in.buffer(), src, tag);
    in.finish();
    lua_settop(L, 3);
    return 1;
  });
}

// Pushes a request userdata for an operation on the array at idx, which it keeps alive and
// returns from :wait(). [-0, +1]
LuaRequest& push_request(lua_State* L, int idx) {
  auto* r = new_object<LuaRequest>(L, kRequestMeta);
  lua_pushvalue(L, idx);
  lua_setiuservalue(L, -2, 1);
  return *r;
}

// Starts a non-blocking operation on the array at 1: start(buffer) returns its mpi::Request.
// [-0, +1]
template <typename Start>
int start_request(lua_State* L, Use use, Start&& start) {
  return protect(L, [&] {
    LuaRequest& r = push_request(L, 1);
    r.payloads.emplace_back(L, 1, use);
    r.request.emplace(start(r.payloads.back().buffer()));
    return 1;
  });
}

// mpi.isend(a, dest [, tag]) -> request; a must not change until request:wait(). [-0, +1]
int mpi_isend(lua_State* L) {
  check_array(L, 1);
  int dest = check_rank(L, 2, false);
  int tag = opt_tag(L, 3);
  return start_request(L, Use::send, [&](mpi::Buffer b) { return world().isend(b, dest, tag); });
}

// mpi.irecv(a, src [, tag]) -> request; a holds the message after request:wait(). [-0, +1]
int mpi_irecv(lua_State* L) {
  check_array(L, 1);
  int src = check_rank(L, 2, false);
  int tag = opt_tag(L, 3);
  return start_request(L, Use::receive, [&](mpi::Buffer b) { return world().irecv(b, src, tag); });
}

// mpi.iallreduce(a [, op]) -> request: allreduce in place, complete after request:wait(). The
// ranks' agreement is not checked (that would block). [-0, +1]
int mpi_iallreduce(lua_State* L) {
  check_array(L, 1);
  mpi::Op op = opt_op(L, 2);
  return start_request(L, Use::both, [&](mpi::Buffer b) { return world().iallreduce(b, op); });
}

// mpi.ibcast(a [, root]) -> request: bcast, complete after request:wait(). [-0, +1]
int mpi_ibcast(lua_State* L) {
  check_array(L, 1);
  int root = lua_isnoneornil(L, 2) ? 0 : check_rank(L, 2, false);
  return start_request(L, Use::both, [&](mpi::Buffer b) { return world().ibcast(b, root); });
}

// request:wait() -> the array: completes the operation (a receive's data is in place). [-0, +1]
int request_wait(lua_State* L) {
  auto* r = static_cast<LuaRequest*>(luaL_checkudata(L, 1, kRequestMeta));
  return protect(L, [&] {
    r->request->wait();  // at once when already done
    r->finish();
    lua_getiuservalue(L, 1, 1);
    return 1;
  });
}

// request:test() -> whether the operation has completed (then :wait() returns at once). [-0, +1]
int request_test(lua_State* L) {
  auto* r = static_cast<LuaRequest*>(luaL_checkudata(L, 1, kRequestMeta));
  return protect(L, [&] {
    const bool done = r->request->test();
    if (done) r->finish();  // a later wait() must find the data in place, too
    lua_pushboolean(L, done);
    return 1;
  });
}

// mpi.waitall(requests): waits for each request in the list. [-0, +0]
int mpi_waitall(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  const lua_Integer n = luaL_len(L, 1);
  for (lua_Integer i = 1; i <= n; ++i) {
    lua_pushcfunction(L, request_wait);
    lua_geti(L, 1, i);
    if (!luaL_testudata(L, -1, kRequestMeta))
      return luaL_argerror(L, 1, lua_pushfstring(L, "item %I is not an mpi request", i));
    lua_call(L, 1, 0);
  }
  return 0;
}

// os.exit under mpirun: a failure status ends the whole job, since ranks waiting for this one
// would otherwise wait for ever; success exits as before (MPI_Finalize waits for the others).
// Upvalue 1: the original os.exit. [-?, +0]
int mpi_os_exit(lua_State* L) {
  const int status = lua_isboolean(L, 1)    ? (lua_toboolean(L, 1) ? 0 : 1)
                     : lua_isnoneornil(L, 1) ? 0
                                             : static_cast<int>(luaL_checkinteger(L, 1));
  if (status != 0) end_job_if_failed(status);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, 0);
  return 0;
}

// Replaces os.exit with mpi_os_exit. [-0, +0]
void wrap_os_exit(lua_State* L) {
  if (lua_getglobal(L, "os") != LUA_TTABLE) {
    lua_pop(L, 1);
    return;
  }
  lua_getfield(L, -1, "exit");
  lua_pushcclosure(L, mpi_os_exit, 1);
  lua_setfield(L, -2, "exit");
  lua_pop(L, 1);
}

#ifdef KILN_HAVE_NCCL
// A communicator between the ranks' GPUs, when every rank loads NCCL: rank 0 makes the id and
// MPI carries it to the others (with a flag, so that a rank 0 without an id fails no one).
// Collective: every rank calls it. Returns nullptr, with why, when some rank cannot.
std::unique_ptr<cuda::NcclComm> join_gpus(lua_State* L, std::string* why) {
  std::shared_ptr<cuda::Nccl> nccl = cuda::Nccl::load(settings(L).platform.cuda_toolkits, why);
  int have = nccl ? 1 : 0;
  world().allreduce({&have, 1, DType::int32}, mpi::Op::min);
  if (!have) {
    if (why->empty()) *why = "a rank has no NCCL";
    return nullptr;
  }
  struct {
    cuda::Nccl::UniqueId id{};
    char ok = 0;
  } message;
  if (world().rank() == 0) {
    try {
      message.id = nccl->unique_id(), message.ok = 1;
    } catch (const Error& e) {
      *why = e.what();
    }
  }
  world().bcast({&message, sizeof message, DType::uint8}, 0);
  if (!message.ok) {
    if (why->empty()) *why = "rank 0 could not make an NCCL id";
    return nullptr;
  }
  return std::make_unique<cuda::NcclComm>(nccl, message.id, world().size(), world().rank());
}
#endif

// Makes the state's DevicePath (opening the backend): collective, as NCCL's setup is. [-0, +0]
void open_device_path(lua_State* L) {
  static const luaL_Reg none[] = {{nullptr, nullptr}};
  new_metatable<DevicePath>(L, kDevicePathMeta, none, nullptr);
  lua_pop(L, 1);
  DevicePath& path = *new_object<DevicePath>(L, kDevicePathMeta);
  lua_setfield(L, LUA_REGISTRYINDEX, kDevicePathKey);
  if (runtime(L).backend().host_addressable()) {
    path.description = "direct (the cpu backend's device memory is host memory)";
    return;
  }
  path.description =
      world().cuda_aware() ? "direct (a CUDA-aware MPI)" : "staged through pinned host memory";
#ifdef KILN_HAVE_NCCL
  std::string why;
  path.nccl = join_gpus(L, &why);
  if (path.nccl)
    path.description = "collectives GPU to GPU through NCCL; send and recv " + path.description;
  else
    path.description += " (" + why + ")";
#endif
}

// luaopen_kiln_mpi: the mpi table; MPI starts here, once per process. [-0, +1]
int open_mpi(lua_State* L) {
  if (!mpi::World::available())
    return luaL_error(L, "kiln.mpi: kiln was built without MPI (scripts/setup.sh installs "
                         "libopenmpi-dev and openmpi-bin; then rebuild)");
  if (!settings(L).mpi.launched)
    return luaL_error(L, "kiln.mpi needs mpirun, which did not start this kiln; run the script as "
                         "'mpirun -n 4 kiln script.lua' (add --oversubscribe for more ranks than "
                         "cores)");
  protect(L, [L] {
    world();
    open_device_path(L);
    return 0;
  });
  static const luaL_Reg request_methods[] = {{"wait", request_wait}, {"test", request_test},
                                             {nullptr, nullptr}};
  new_metatable<LuaRequest>(L, kRequestMeta, request_methods, nullptr);
  lua_pop(L, 1);
  wrap_os_exit(L);
  static const luaL_Reg functions[] = {
      {"rank", mpi_rank},           {"size", mpi_size},         {"local_rank", mpi_local_rank},
      {"barrier", mpi_barrier},     {"bcast", mpi_bcast},       {"allreduce", mpi_allreduce},
      {"reduce", mpi_reduce},       {"allgather", mpi_allgather}, {"send", mpi_send},
      {"recv", mpi_recv},           {"sendrecv", mpi_sendrecv}, {"isend", mpi_isend},
      {"irecv", mpi_irecv},         {"iallreduce", mpi_iallreduce}, {"ibcast", mpi_ibcast},
      {"waitall", mpi_waitall},     {"wtime", mpi_wtime},       {nullptr, nullptr}};
  luaL_newlib(L, functions);
  lua_pushstring(L, world().library_version().c_str());
  lua_setfield(L, -2, "library");
  lua_pushstring(L, device_path(L).description.c_str());
  lua_setfield(L, -2, "device_path");
  return 1;
}

}  // namespace

void preload_mpi(lua_State* L) {
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
  lua_pushcfunction(L, open_mpi);
  lua_setfield(L, -2, "kiln.mpi");
  lua_pop(L, 1);
}

void end_job_if_failed(int status) {
  if (status == 0 || !mpi::World::is_open()) return;
  mpi::World& w = mpi::World::open();
  if (w.size() <= 1) return;
  std::fflush(stdout);
  std::fprintf(stderr, "kiln: rank %d of %d failed (status %d); ending the whole job\n", w.rank(),
               w.size(), status);
  w.abort(status);
}

}  // namespace kiln::lua
