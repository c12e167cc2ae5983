#include <cuda/barrier>
__global__ void k(int* p) {
  using barrier = cuda::barrier<cuda::thread_scope_block>;
  __shared__ barrier bar;
  if (threadIdx.x == 0) init(&bar, blockDim.x);
  __syncthreads();
  barrier::arrival_token t = bar.arrive();
  p[threadIdx.x] += 1;
  bar.wait(std::move(t));
  if (p[0]) bar.arrive_and_wait();
}
