// The cuda backend: one device's primary context through the dlopen'd driver, kernels compiled
// by NVRTC (jit/cuda/). Memory comes from the device's stream-ordered pool (cuMemAllocAsync) where
// the device has one, so allocating in a loop costs no driver round trip.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/backend.h"
#include "runtime/cuda/driver.h"

namespace kiln {

// The cuda backend for device_id, or nullptr with why filled: "no CUDA driver (libcuda.so.1 not
// found)", "no CUDA device". With wrap, device_id is taken modulo the device count (an MPI rank's
// place on its node). Its compiler (NVRTC) is chosen in jit/backends.cpp.
std::shared_ptr<Backend> make_cuda_backend(int device_id, std::string* why, bool wrap = false);

namespace cuda {
struct State;  // the context, its generation and what lives in it (backend.cpp)
}  // namespace cuda

class CudaBackend : public Backend {
 public:
  CudaBackend(std::shared_ptr<const cuda::Driver> driver, int device_id);
  ~CudaBackend() override;

  std::string name() const override { return "cuda"; }
  const DeviceInfo& device() const override;
  std::string describe() const override;

  void* alloc(std::size_t bytes) override;
  void free(void* ptr) noexcept override;
  void copy_to_device(void* dst, const void* src, std::size_t bytes, Stream* s) override;
  void copy_to_host(void* dst, const void* src, std::size_t bytes, Stream* s) override;
  void copy_on_device(void* dst, const void* src, std::size_t bytes, Stream* s) override;
  void memset(void* dst, int byte, std::size_t bytes, Stream* s) override;
  MemoryInfo memory_info() override;

  std::unique_ptr<Stream> create_stream() override;
  std::unique_ptr<Event> create_event() override;
  void synchronize() override;

  std::unique_ptr<Module> load(const CompileResult& compiled, bool own_globals = false) override;
  std::uint64_t generation() const override;

  // ---- cuda only (the Lua binding reaches these through dynamic_cast) ----
  std::vector<DeviceInfo> list_devices() const;  // every device the driver sees
  // Page-locked host memory for cuda.pinned_array; pinned_free gives it back.
  void* pinned_alloc(std::size_t bytes);
  void pinned_free(void* ptr) noexcept;
  // The block size that maximises occupancy for program (cuOccupancyMaxPotentialBlockSize),
  // for k:forall(n); program must come from this backend.
  int occupancy_block_size(Program& program, std::size_t dynamic_shared_bytes = 0);
  // Destroys and recreates the primary context (after a kernel fault); bumps generation():
  // arrays, streams and events from before are invalid, and kernels reload on next launch.
  void reset();
  const std::string& last_kernel() const;  // the last kernel launched, for fault messages
  bool broken() const;                     // a sticky error awaits reset()
  void trim_memory();                      // returns cached pool memory to the device
  bool uses_memory_pool() const;
  int driver_version() const;  // cuDriverGetVersion: 13000 for 13.0
  const cuda::Driver& driver() const;

 private:
  std::shared_ptr<cuda::State> state_;
  std::map<void*, std::unique_ptr<cuda::PinnedHost>> pinned_;
};

}  // namespace kiln
