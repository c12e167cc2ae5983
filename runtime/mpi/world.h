// MPI for kiln: the job's processes (ranks) and the messages between them, over host-addressable
// buffers of one dtype. Open MPI from Debian when kiln is built with it (KILN_HAVE_MPI). The MPI
// calls live in a plugin beside the kiln binary (libkiln_mpi.so, runtime/mpi/open_mpi.cpp),
// loaded by World::open(): libmpi and the libraries under it cost every start of kiln about
// 0.75 ms when linked, and only kiln.mpi uses them. Without MPI, open() throws kiln::Error
// saying so. The Lua module (repl/lua_mpi.cpp) stages device memory that the host cannot
// address before it gets here.
#pragma once
#include <cstddef>
#include <memory>
#include <string>

#include "runtime/dtype.h"

namespace kiln::mpi {

enum class Op { sum, prod, min, max };

// A peer rank that is not there (MPI_PROC_NULL): sendrecv skips that half, as at the edges of
// a halo exchange.
inline constexpr int kNoRank = -1;

// An MPI message's payload: count elements of a scalar dtype at data (a vector dtype's lanes are
// counted as elements: float4 x n is 4n float32).
struct Buffer {
  void* data = nullptr;
  std::size_t count = 0;
  DType dtype = DType::float32;
};

// A non-blocking operation in flight. wait() completes it and returns the elements received
// (those sent, for a send). Destroying it cancels a receive still pending and waits for the
// rest, so that no operation outlives the memory it uses.
class Request {
 public:
  // The operation as the MPI plugin implements it.
  struct Impl {
    virtual ~Impl() = default;
    virtual std::size_t wait() = 0;
    virtual bool test() = 0;
    virtual bool done() const = 0;
  };
  explicit Request(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
  std::size_t wait() { return impl_->wait(); }
  bool test() { return impl_->test(); }  // whether it has completed (then wait() returns at once)
  bool done() const { return impl_->done(); }

 private:
  std::unique_ptr<Impl> impl_;
};

// The job this process belongs to (MPI_COMM_WORLD). MPI is initialised once per process: the
// library itself is process-wide state, so this is the one object of its kind, made by the
// plugin on first use and finalised when the process exits normally.
class World {
 public:
  // The world, loading the plugin and initialising MPI on the first call; throws kiln::Error
  // when kiln was built without MPI, the plugin does not load or MPI cannot start.
  static World& open();
  // Whether open() has succeeded in this process (without opening anything).
  static bool is_open();
  // Whether this kiln was built with MPI.
  static bool available();

  // The MPI library's version line (MPI_Get_library_version).
  virtual std::string library_version() const = 0;
  // Seconds on a wall clock (MPI_Wtime), for timing a job's steps.
  virtual double wtime() const = 0;
  // Whether the MPI library takes CUDA device pointers itself (a CUDA-aware Open MPI build, as
  // MPIX_Query_cuda_support reports at run time); Debian's is not.
  virtual bool cuda_aware() const = 0;

  int rank() const { return rank_; }
  int size() const { return size_; }
  int local_rank() const { return local_rank_; }  // among the ranks on this node
  int local_size() const { return local_size_; }

  virtual void barrier() = 0;
  virtual void bcast(Buffer b, int root) = 0;
  virtual void allreduce(Buffer b, Op op) = 0;  // in place
  // In place at root; the other ranks' buffers are sent and left unchanged.
  virtual void reduce(Buffer b, Op op, int root) = 0;
  // Each rank's send (count elements) into recv (size() * count elements), in rank order.
  virtual void allgather(Buffer send, Buffer recv) = 0;
  virtual void send(Buffer b, int dest, int tag) = 0;
  // Receives exactly b.count elements; throws kiln::Error naming the count that came instead.
  virtual void recv(Buffer b, int src, int tag) = 0;
  virtual void sendrecv(Buffer send, int dest, Buffer recv, int src, int tag) = 0;
  virtual Request isend(Buffer b, int dest, int tag) = 0;
  virtual Request irecv(Buffer b, int src, int tag) = 0;
  virtual Request iallreduce(Buffer b, Op op) = 0;
  virtual Request ibcast(Buffer b, int root) = 0;

  // Checks that every rank calls the same collective with the same dtype, element count, root,
  // reduction and route (0: through MPI; 1: between GPUs through NCCL): one small allreduce,
  // and a kiln::Error on every rank naming what differs. what is the collective's name.
  virtual void check_agreement(const char* what, Buffer b, int root, Op op = Op::sum,
                               int route = 0) = 0;

  // Ends every rank of the job with status (MPI_Abort); does not return.
  [[noreturn]] virtual void abort(int status) = 0;

  World(const World&) = delete;
  World& operator=(const World&) = delete;

 protected:
  World() = default;
  virtual ~World() = default;
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
};

// The plugin's entry point: its one World, made (MPI_Init) on the first call. Throws
// kiln::Error when MPI cannot start. The symbol's version names the layout of World and
// Request::Impl (their virtual functions, in order): change it with them, so that a plugin
// from another build of kiln is refused by name instead of called wrongly.
using OpenWorld = World* (*)();
inline constexpr const char* kOpenWorldSymbol = "kiln_mpi_open_world_v1";

// "sum" → Op::sum, ...; nullptr when unknown.
const Op* parse_op(const std::string& name);

}  // namespace kiln::mpi
