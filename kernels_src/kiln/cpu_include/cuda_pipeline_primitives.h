// cpu backend shim: <cuda_pipeline_primitives.h>, the per-thread asynchronous copies of sm_80.
// A copy happens at once (the cpu backend has no copy engine), so commits and waits have nothing
// left to do; as on a GPU, other threads see a copy only after a barrier.
#pragma once
#include <cstddef>
#include <cstring>

// Copies size_and_align (4, 8 or 16) bytes, the last zfill of them zeros instead of src's.
inline void __pipeline_memcpy_async(void* __restrict__ dst_shared,
                                    const void* __restrict__ src_global, std::size_t size_and_align,
                                    std::size_t zfill = 0) {
  if ((size_and_align != 4 && size_and_align != 8 && size_and_align != 16) ||
      zfill > size_and_align)
    kiln_cpu::trap(
        "__pipeline_memcpy_async: size_and_align must be 4, 8 or 16 and zfill at most "
        "that");
  std::memcpy(dst_shared, src_global, size_and_align - zfill);
  std::memset(static_cast<char*>(dst_shared) + (size_and_align - zfill), 0, zfill);
}
inline void __pipeline_commit() {}
inline void __pipeline_wait_prior(std::size_t) {}
