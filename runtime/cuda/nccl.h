// NCCL (libnccl.so.2 from the CUDA toolkit), loaded with dlopen as the driver is: collectives
// between the GPUs of an MPI job's ranks, device memory to device memory. kiln.mpi bootstraps a
// communicator with an id that rank 0 makes and MPI broadcasts (repl/lua_mpi.cpp).
#pragma once
#include <array>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <cuda.h>

#include "runtime/dtype.h"
#include "runtime/mpi/world.h"

namespace kiln::cuda {

struct NcclApi;  // the entry points (nccl.cpp)

// The loaded library.
class Nccl {
 public:
  using UniqueId = std::array<char, 128>;  // NCCL_UNIQUE_ID_BYTES

  // Loads libnccl.so.2 from the loader's path or the toolkits' lib64/ and lib/ folders; nullptr
  // with why filled when there is none or it lacks an entry point.
  static std::shared_ptr<Nccl> load(const std::vector<std::string>& toolkits, std::string* why);
  ~Nccl();
  Nccl(const Nccl&) = delete;
  Nccl& operator=(const Nccl&) = delete;

  UniqueId unique_id() const;  // on one rank, then sent to the others
  const NcclApi& api() const { return *api_; }
  std::string version() const;  // "2.27.3"

 private:
  Nccl() = default;
  void* handle_ = nullptr;
  std::unique_ptr<NcclApi> api_;
};

// One rank's communicator over the current CUDA context's device. Operations are queued on
// stream; the caller waits for them (kiln.mpi's calls are blocking).
class NcclComm {
 public:
  // Collective over all ranks: each calls it with the same id and size.
  NcclComm(std::shared_ptr<const Nccl> nccl, const Nccl::UniqueId& id, int size, int rank);
  ~NcclComm();
  NcclComm(const NcclComm&) = delete;
  NcclComm& operator=(const NcclComm&) = delete;

  void allreduce(void* data, std::size_t count, DType dtype, mpi::Op op, CUstream stream);
  void bcast(void* data, std::size_t count, DType dtype, int root, CUstream stream);
  void reduce(void* data, std::size_t count, DType dtype, mpi::Op op, int root, CUstream stream);
  void allgather(const void* send, void* recv, std::size_t count, DType dtype, CUstream stream);

 private:
  void check(int result, const char* what);
  std::shared_ptr<const Nccl> nccl_;
  void* comm_ = nullptr;  // ncclComm_t
};

}  // namespace kiln::cuda
