#include "runtime/cuda/nccl.h"

#include <dlfcn.h>

#include <cstring>

#include <nccl.h>

#include "runtime/error.h"

namespace kiln::cuda {

#define KILN_NCCL_ENTRY_POINTS(X)                                                              \
  X(ncclGetVersion) X(ncclGetUniqueId) X(ncclCommInitRank) X(ncclCommDestroy)                 \
  X(ncclGetErrorString) X(ncclAllReduce) X(ncclBroadcast) X(ncclReduce) X(ncclAllGather)

struct NcclApi {
#define KILN_NCCL_MEMBER(name) decltype(&::name) name = nullptr;
  KILN_NCCL_ENTRY_POINTS(KILN_NCCL_MEMBER)
#undef KILN_NCCL_MEMBER
};

namespace {

// NCCL's datatype for a scalar dtype (bool travels as uint8).
ncclDataType_t datatype(DType t) {
  switch (t) {
    case DType::float32: return ncclFloat32;
    case DType::float64: return ncclFloat64;
    case DType::int8: return ncclInt8;
    case DType::uint8: case DType::boolean: return ncclUint8;
    case DType::int32: return ncclInt32;
    case DType::uint32: return ncclUint32;
    case DType::int64: return ncclInt64;
    case DType::uint64: return ncclUint64;
    case DType::float16:
      return ncclFloat16;
    case DType::bfloat16:
      return ncclBfloat16;
    default: break;
  }
  throw Error("mpi: NCCL has no datatype for " + std::string(dtype_info(t).name) +
              " (int16 and uint16 go through host memory instead)");
}

ncclRedOp_t reduction(mpi::Op op) {
  switch (op) {
    case mpi::Op::sum: return ncclSum;
    case mpi::Op::prod: return ncclProd;
    case mpi::Op::min: return ncclMin;
    case mpi::Op::max: return ncclMax;
  }
  return ncclSum;
}

}  // namespace

std::shared_ptr<Nccl> Nccl::load(const std::vector<std::string>& toolkits, std::string* why) {
  std::vector<std::string> candidates{"libnccl.so.2"};
  std::vector<std::string> homes = toolkits;
  homes.push_back("/usr/local/cuda");
  for (const std::string& home : homes)
    for (const char* lib : {"/lib64/libnccl.so.2", "/lib/libnccl.so.2"}) candidates.push_back(home + lib);
  std::shared_ptr<Nccl> nccl(new Nccl());
  for (const std::string& path : candidates)
    if ((nccl->handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL))) break;
  if (!nccl->handle_) {
    if (why) *why = "no NCCL (libnccl.so.2 not found)";
    return nullptr;
  }
  nccl->api_ = std::make_unique<NcclApi>();
  std::string missing;
#define KILN_NCCL_RESOLVE(name)                                                        \
  nccl->api_->name = reinterpret_cast<decltype(&::name)>(dlsym(nccl->handle_, #name)); \
  if (!nccl->api_->name) missing += std::string(missing.empty() ? "" : ", ") + #name;
  KILN_NCCL_ENTRY_POINTS(KILN_NCCL_RESOLVE)
#undef KILN_NCCL_RESOLVE
  if (!missing.empty()) {
    if (why) *why = "libnccl.so.2 lacks " + missing;
    return nullptr;
  }
  return nccl;
}

Nccl::~Nccl() {
  // libnccl is never unloaded: ncclGetUniqueId leaves a bootstrap thread running in its code
  // (as libcuda, which kiln never unloads either).
}

Nccl::UniqueId Nccl::unique_id() const {
  ncclUniqueId id;
  ncclResult_t r = api_->ncclGetUniqueId(&id);
  if (r != ncclSuccess) throw Error(std::string("mpi: ncclGetUniqueId: ") + api_->ncclGetErrorString(r));
  UniqueId out;
  static_assert(sizeof(id.internal) == std::tuple_size_v<UniqueId>);
  std::memcpy(out.data(), id.internal, out.size());
  return out;
}

std::string Nccl::version() const {
  int v = 0;
  api_->ncclGetVersion(&v);  // 22703 for 2.27.3
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
}

NcclComm::NcclComm(std::shared_ptr<const Nccl> nccl, const Nccl::UniqueId& id, int size, int rank)
    : nccl_(std::move(nccl)) {
  ncclUniqueId nid;
  std::memcpy(nid.internal, id.data(), id.size());
  ncclComm_t comm = nullptr;
  ncclResult_t r = nccl_->api().ncclCommInitRank(&comm, size, nid, rank);
  if (r != ncclSuccess)
    throw Error(std::string("mpi: NCCL could not join the ranks' GPUs (ncclCommInitRank): ") +
                nccl_->api().ncclGetErrorString(r));
  comm_ = comm;
}

NcclComm::~NcclComm() {
  if (comm_) nccl_->api().ncclCommDestroy(static_cast<ncclComm_t>(comm_));
}

// Throws with NCCL's text when queueing an operation failed.
void NcclComm::check(int result, const char* what) {
  if (result != ncclSuccess)
    throw Error(std::string(what) + " (NCCL): " +
                nccl_->api().ncclGetErrorString(static_cast<ncclResult_t>(result)));
}

void NcclComm::allreduce(void* data, std::size_t count, DType dtype, mpi::Op op, CUstream stream) {
  check(nccl_->api().ncclAllReduce(data, data, count, datatype(dtype), reduction(op),
                                    static_cast<ncclComm_t>(comm_), stream),
        "mpi.allreduce");
}

void NcclComm::bcast(void* data, std::size_t count, DType dtype, int root, CUstream stream) {
  check(nccl_->api().ncclBroadcast(data, data, count, datatype(dtype), root,
                                    static_cast<ncclComm_t>(comm_), stream),
        "mpi.bcast");
}

void NcclComm::reduce(void* data, std::size_t count, DType dtype, mpi::Op op, int root,
                      CUstream stream) {
  check(nccl_->api().ncclReduce(data, data, count, datatype(dtype), reduction(op), root,
                                 static_cast<ncclComm_t>(comm_), stream),
        "mpi.reduce");
}

void NcclComm::allgather(const void* send, void* recv, std::size_t count, DType dtype,
                         CUstream stream) {
  check(nccl_->api().ncclAllGather(send, recv, count, datatype(dtype),
                                    static_cast<ncclComm_t>(comm_), stream),
        "mpi.allgather");
}

}  // namespace kiln::cuda
