// The MPI plugin (libkiln_mpi.so): kiln::mpi::World over Open MPI's MPI_COMM_WORLD. kiln loads
// it in World::open() (runtime/mpi/world.cpp), so that only a kiln that runs kiln.mpi loads
// libmpi. Its references to kiln's own functions (dtype_info) resolve against the kiln binary.
#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // Open MPI's extensions: MPIX_CUDA_AWARE_SUPPORT
#endif

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string_view>

#include "runtime/error.h"
#include "runtime/mpi/world.h"

namespace kiln::mpi {

namespace {

// Throws kiln::Error with MPI's own text when rc is not MPI_SUCCESS.
void check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(rc, text, &length) != MPI_SUCCESS) length = 0;
  throw Error(std::string(what) + ": " +
              (length ? std::string(text, length) : "MPI error " + std::to_string(rc)));
}

// The MPI datatype of a scalar dtype.
MPI_Datatype datatype(DType t) {
  switch (t) {
    case DType::float32:
      return MPI_FLOAT;
    case DType::float64:
      return MPI_DOUBLE;
    case DType::int8:
      return MPI_INT8_T;
    case DType::uint8:
      return MPI_UINT8_T;
    case DType::int16:
      return MPI_INT16_T;
    case DType::uint16:
      return MPI_UINT16_T;
    case DType::int32:
      return MPI_INT32_T;
    case DType::uint32:
      return MPI_UINT32_T;
    case DType::int64:
      return MPI_INT64_T;
    case DType::uint64:
      return MPI_UINT64_T;
    case DType::boolean:
      return MPI_C_BOOL;
    default:
      break;
  }
  throw Error("mpi: no MPI datatype for " + std::string(dtype_info(t).name) +
              (dtype_info(t).size == 2
                   ? " (send a:astype('float32'), or a:view('uint16') to move bits)"
                   : ""));
}

MPI_Op mpi_op(Op op, DType t, const char* what) {
  if (t == DType::boolean)
    throw Error(std::string(what) + ": bool arrays have no sum, prod, min or max; use uint8");
  switch (op) {
    case Op::sum:
      return MPI_SUM;
    case Op::prod:
      return MPI_PROD;
    case Op::min:
      return MPI_MIN;
    case Op::max:
      return MPI_MAX;
  }
  return MPI_SUM;
}

// MPI counts are ints: a larger message is an error rather than a truncated one.
int count_of(const Buffer& b, const char* what) {
  if (b.count > static_cast<std::size_t>(INT_MAX))
    throw Error(std::string(what) + ": " + std::to_string(b.count) +
                " elements is more than MPI sends at once (2^31 - 1); send it in parts");
  return static_cast<int>(b.count);
}

// The elements a completed receive brought, as status says.
std::size_t received(const MPI_Status& status, DType t) {
  int n = 0;
  MPI_Get_count(&status, datatype(t), &n);
  return n == MPI_UNDEFINED ? SIZE_MAX : static_cast<std::size_t>(n);
}

// Throws unless a receive brought exactly the expected elements (a smaller message is not an
// error to MPI, and a different dtype of the same bytes cannot be told apart).
void check_received(std::size_t got, std::size_t expected, DType t, int src, const char* what) {
  if (got == expected) return;
  throw Error(std::string(what) + ": rank " + std::to_string(src) + " sent " +
              (got == SIZE_MAX ? std::string("a message that is not whole ") +
                                     std::string(dtype_info(t).name) + " elements"
                               : std::to_string(got) + " elements") +
              " where this rank receives " + std::to_string(expected) + " " +
              std::string(dtype_info(t).name));
}

// One non-blocking MPI operation.
class MpiRequest final : public Request::Impl {
 public:
  MpiRequest(const char* what, const Buffer& b, bool receive)
      : receive_(receive), expected_(b.count), dtype_(b.dtype), what_(what) {}

  // Memory the operation uses may be freed right after: cancel a pending receive, then wait.
  ~MpiRequest() override {
    if (done_ || request_ == MPI_REQUEST_NULL) return;
    if (receive_) MPI_Cancel(&request_);
    MPI_Wait(&request_, MPI_STATUS_IGNORE);
  }

  std::size_t wait() override {
    if (done_) return count_;
    MPI_Status status{};
    check(MPI_Wait(&request_, &status), what_);
    complete(status);
    return count_;
  }

  bool test() override {
    if (done_) return true;
    int flag = 0;
    MPI_Status status{};
    check(MPI_Test(&request_, &flag, &status), what_);
    if (flag) complete(status);
    return done_;
  }

  bool done() const override { return done_; }
  MPI_Request* handle() { return &request_; }
  const char* what() const { return what_; }

 private:
  // Records a completed operation's status; throws when a receive is short.
  void complete(const MPI_Status& status) {
    done_ = true;
    count_ = expected_;
    if (!receive_) return;
    count_ = received(status, dtype_);
    check_received(count_, expected_, dtype_, status.MPI_SOURCE, what_);
  }

  MPI_Request request_ = MPI_REQUEST_NULL;
  bool receive_ = false;
  bool done_ = false;
  std::size_t expected_ = 0;
  DType dtype_ = DType::float32;
  std::size_t count_ = 0;  // what wait() returns
  const char* what_ = "";
};

// MPI_COMM_WORLD.
class MpiWorld final : public World {
 public:
  MpiWorld();
  ~MpiWorld() override;
  std::string library_version() const override;
  double wtime() const override { return MPI_Wtime(); }
  bool cuda_aware() const override;
  void barrier() override;
  void bcast(Buffer b, int root) override;
  void allreduce(Buffer b, Op op) override;
  void reduce(Buffer b, Op op, int root) override;
  void allgather(Buffer send, Buffer recv) override;
  void send(Buffer b, int dest, int tag) override;
  void recv(Buffer b, int src, int tag) override;
  void sendrecv(Buffer send, int dest, Buffer recv, int src, int tag) override;
  Request isend(Buffer b, int dest, int tag) override;
  Request irecv(Buffer b, int src, int tag) override;
  Request iallreduce(Buffer b, Op op) override;
  Request ibcast(Buffer b, int root) override;
  void check_agreement(const char* what, Buffer b, int root, Op op, int route) override;
  [[noreturn]] void abort(int status) override;

 private:
  bool finalize_ = false;
};

}  // namespace

MpiWorld::MpiWorld() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;  // Lua runs on one thread at a time; SERIALIZED lets it be any thread
    check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided), "mpi: MPI_Init");
    finalize_ = true;
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);  // errors become kiln::Errors
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  MPI_Comm node;
  check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node),
        "mpi: finding the ranks on this node");
  MPI_Comm_rank(node, &local_rank_);
  MPI_Comm_size(node, &local_size_);
  MPI_Comm_free(&node);
}

MpiWorld::~MpiWorld() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalize_ && !finalized) MPI_Finalize();
}

std::string MpiWorld::library_version() const {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(text, &length);
  std::string s(text, length);
  if (auto nl = s.find('\n'); nl != std::string::npos) s.resize(nl);
  return s;
}

bool MpiWorld::cuda_aware() const {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

void MpiWorld::barrier() {
  check(MPI_Barrier(MPI_COMM_WORLD), "mpi.barrier");
}

void MpiWorld::bcast(Buffer b, int root) {
  check(MPI_Bcast(b.data, count_of(b, "mpi.bcast"), datatype(b.dtype), root, MPI_COMM_WORLD),
        "mpi.bcast");
}

void MpiWorld::allreduce(Buffer b, Op op) {
  check(MPI_Allreduce(MPI_IN_PLACE, b.data, count_of(b, "mpi.allreduce"), datatype(b.dtype),
                      mpi_op(op, b.dtype, "mpi.allreduce"), MPI_COMM_WORLD),
        "mpi.allreduce");
}

void MpiWorld::reduce(Buffer b, Op op, int root) {
  const int n = count_of(b, "mpi.reduce");
  MPI_Op o = mpi_op(op, b.dtype, "mpi.reduce");
  if (rank_ == root)
    check(MPI_Reduce(MPI_IN_PLACE, b.data, n, datatype(b.dtype), o, root, MPI_COMM_WORLD),
          "mpi.reduce");
  else
    check(MPI_Reduce(b.data, nullptr, n, datatype(b.dtype), o, root, MPI_COMM_WORLD), "mpi.reduce");
}

void MpiWorld::allgather(Buffer send, Buffer recv) {
  if (recv.count != send.count * static_cast<std::size_t>(size_) || recv.dtype != send.dtype)
    throw Error("mpi.allgather: the result needs " + std::to_string(send.count * size_) + " " +
                std::string(dtype_info(send.dtype).name) + " elements (" + std::to_string(size_) +
                " ranks x " + std::to_string(send.count) + "), not " + std::to_string(recv.count) +
                " " + std::string(dtype_info(recv.dtype).name));
  const int n = count_of(send, "mpi.allgather");
  check(MPI_Allgather(send.data, n, datatype(send.dtype), recv.data, n, datatype(recv.dtype),
                      MPI_COMM_WORLD),
        "mpi.allgather");
}

void MpiWorld::send(Buffer b, int dest, int tag) {
  check(MPI_Send(b.data, count_of(b, "mpi.send"), datatype(b.dtype), dest, tag, MPI_COMM_WORLD),
        "mpi.send");
}

void MpiWorld::recv(Buffer b, int src, int tag) {
  // Probe first: a longer message is reported by its size instead of MPI's truncation error.
  MPI_Status status{};
  check(MPI_Probe(src, tag, MPI_COMM_WORLD, &status), "mpi.recv");
  check_received(received(status, b.dtype), b.count, b.dtype, status.MPI_SOURCE, "mpi.recv");
  check(MPI_Recv(b.data, count_of(b, "mpi.recv"), datatype(b.dtype), status.MPI_SOURCE,
                 status.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
        "mpi.recv");
}

void MpiWorld::sendrecv(Buffer send, int dest, Buffer recv, int src, int tag) {
  if (dest == kNoRank) dest = MPI_PROC_NULL;
  if (src == kNoRank) src = MPI_PROC_NULL;
  MPI_Status status{};
  check(MPI_Sendrecv(send.data, count_of(send, "mpi.sendrecv"), datatype(send.dtype), dest, tag,
                     recv.data, count_of(recv, "mpi.sendrecv"), datatype(recv.dtype), src, tag,
                     MPI_COMM_WORLD, &status),
        "mpi.sendrecv");
  if (src != MPI_PROC_NULL)
    check_received(received(status, recv.dtype), recv.count, recv.dtype, src, "mpi.sendrecv");
}

Request MpiWorld::isend(Buffer b, int dest, int tag) {
  auto r = std::make_unique<MpiRequest>("mpi.isend", b, false);
  check(MPI_Isend(b.data, count_of(b, r->what()), datatype(b.dtype), dest, tag, MPI_COMM_WORLD,
                  r->handle()),
        r->what());
  return Request(std::move(r));
}

Request MpiWorld::irecv(Buffer b, int src, int tag) {
  auto r = std::make_unique<MpiRequest>("mpi.irecv", b, true);
  check(MPI_Irecv(b.data, count_of(b, r->what()), datatype(b.dtype), src, tag, MPI_COMM_WORLD,
                  r->handle()),
        r->what());
  return Request(std::move(r));
}

Request MpiWorld::iallreduce(Buffer b, Op op) {
  auto r = std::make_unique<MpiRequest>("mpi.iallreduce", b, false);
  check(MPI_Iallreduce(MPI_IN_PLACE, b.data, count_of(b, r->what()), datatype(b.dtype),
                       mpi_op(op, b.dtype, r->what()), MPI_COMM_WORLD, r->handle()),
        r->what());
  return Request(std::move(r));
}

Request MpiWorld::ibcast(Buffer b, int root) {
  auto r = std::make_unique<MpiRequest>("mpi.ibcast", b, false);
  check(MPI_Ibcast(b.data, count_of(b, r->what()), datatype(b.dtype), root, MPI_COMM_WORLD,
                   r->handle()),
        r->what());
  return Request(std::move(r));
}

void MpiWorld::check_agreement(const char* what, Buffer b, int root, Op op, int route) {
  // Each value and its negation under MPI_MAX: every rank then knows the largest and the
  // smallest of each, and they agree exactly when the two are equal.
  constexpr int kFields = 6;
  const long long mine[kFields] = {
      static_cast<long long>(std::hash<std::string_view>{}(what)&0x7fffffff),
      static_cast<long long>(b.dtype),
      static_cast<long long>(b.count),
      root,
      static_cast<long long>(op),
      route};
  long long both[2 * kFields];
  for (int i = 0; i < kFields; ++i) both[i] = mine[i], both[kFields + i] = -mine[i];
  check(MPI_Allreduce(MPI_IN_PLACE, both, 2 * kFields, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD),
        what);
  static constexpr const char* fields[kFields] = {"collective", "dtype",     "element count",
                                                  "root",       "reduction", "memory"};
  static constexpr const char* ops[] = {"sum", "prod", "min", "max"};
  for (int i = 0; i < kFields; ++i) {
    const long long low = -both[kFields + i], high = both[i];
    if (low == high) continue;
    std::string range;
    if (i == 0)
      range = " (this rank calls " + std::string(what) + "; another calls a different one)";
    else if (i == 1)
      range = " (" + std::string(dtype_info(static_cast<DType>(low)).name) + " and " +
              std::string(dtype_info(static_cast<DType>(high)).name) + ")";
    else if (i == 4)
      range = std::string(" (") + ops[low] + " and " + ops[high] + ")";
    else if (i == 5)
      range = " (GPU arrays through NCCL on some ranks, host memory through MPI on others)";
    else
      range = " (from " + std::to_string(low) + " to " + std::to_string(high) + ")";
    throw Error(std::string(what) + ": the ranks disagree on the " + fields[i] + range);
  }
}

void MpiWorld::abort(int status) {
  std::fflush(stdout);
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, status);
  std::_Exit(status);  // MPI_Abort does not return; this is for the compiler
}

}  // namespace kiln::mpi

// The plugin's entry point (kOpenWorldSymbol): the one world, MPI_Init on the first call,
// MPI_Finalize when the process exits normally.
extern "C" kiln::mpi::World* kiln_mpi_open_world_v1() {
  static kiln::mpi::MpiWorld world;
  return &world;
}
