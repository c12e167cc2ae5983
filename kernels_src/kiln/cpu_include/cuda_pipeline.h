// cpu backend shim: <cuda_pipeline.h>, the __pipeline_* primitives and the older C++ form
// nvcuda::experimental::pipeline. Copies happen at once (cuda_pipeline_primitives.h).
#pragma once
#include "cuda_pipeline_primitives.h"

namespace nvcuda {
namespace experimental {

class pipeline {
 public:
  pipeline() = default;
  pipeline(const pipeline&) = delete;
  pipeline& operator=(const pipeline&) = delete;
  std::size_t commit() { return batch_++; }
  void commit_and_wait() { commit(); }
  void wait(std::size_t) {}
  template <unsigned N>
  void wait_prior() {}

 private:
  std::size_t batch_ = 0;
};

template <class T>
void memcpy_async(T& dst, const T& src, pipeline&) {
  dst = src;
}
// Copies SrcN elements and fills the rest of dst's DstN with zeros.
template <class T, std::size_t DstN, std::size_t SrcN>
void memcpy_async(T (*dst)[DstN], const T (*src)[SrcN], pipeline&) {
  static_assert(DstN >= SrcN, "memcpy_async: the destination is smaller than the source");
  std::memcpy(*dst, *src, sizeof(T) * SrcN);
  std::memset(static_cast<void*>(*dst + SrcN), 0, sizeof(T) * (DstN - SrcN));
}
template <std::size_t N, class T>
auto segment(T* ptr) -> T (*)[N] {
  return (T(*)[N])ptr;
}

}  // namespace experimental
}  // namespace nvcuda
