// Conformance: asynchronous copies into shared memory as Ampere code stages them. A block's
// cuda::pipeline with two stages streams batches of a tile through shared memory while every
// thread reads its neighbours' elements; a thread's own pipeline and the __pipeline_* primitives
// (with a zero-filled tail) copy what only that thread reads until a barrier.
#include <cooperative_groups.h>
#include <cuda_pipeline.h>
#include <cuda/pipeline>

namespace cg = cooperative_groups;

#ifndef TILE
#define TILE 64
#endif
#define STAGES 2

// out[b][t] = in[b][(t + 1) % TILE] - in[b][TILE - 1 - t] for each batch b of the block's rows.
extern "C" __global__ void staged(const float* in, float* out, int batches) {
  auto block = cg::this_thread_block();
  __shared__ float tile[STAGES][TILE];
  __shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, STAGES> state;
  auto pipe = cuda::make_pipeline(block, &state);
  const float* rows = in + (size_t)blockIdx.x * batches * TILE;
  float* outs = out + (size_t)blockIdx.x * batches * TILE;
  int fetched = 0;
  for (; fetched < STAGES && fetched < batches; ++fetched) {
    pipe.producer_acquire();
    cuda::memcpy_async(block, tile[fetched % STAGES], rows + fetched * TILE, sizeof(float) * TILE,
                       pipe);
    pipe.producer_commit();
  }
  for (int b = 0; b < batches; ++b) {
    pipe.consumer_wait();
    const float* t = tile[b % STAGES];
    const int i = threadIdx.x;
    outs[b * TILE + i] = t[(i + 1) % TILE] - t[TILE - 1 - i];
    pipe.consumer_release();
    if (fetched < batches) {
      pipe.producer_acquire();
      cuda::memcpy_async(block, tile[fetched % STAGES], rows + fetched * TILE, sizeof(float) * TILE,
                         pipe);
      pipe.producer_commit();
      ++fetched;
    }
  }
}

// Each thread copies its own float4 with its own pipeline; after the barrier it reads the next
// thread's: out[i] = the sum of the four floats of in4[i + 1 (mod the block)].
extern "C" __global__ void own_copies(const float4* in4, float* out) {
  __shared__ float4 staged4[TILE];
  auto pipe = cuda::make_pipeline();
  const int i = threadIdx.x, base = blockIdx.x * TILE;
  pipe.producer_acquire();
  cuda::memcpy_async(&staged4[i], &in4[base + i], sizeof(float4), pipe);
  pipe.producer_commit();
  cuda::pipeline_consumer_wait_prior<0>(pipe);
  pipe.consumer_release();
  __syncthreads();
  const float4 v = staged4[(i + 1) % TILE];
  out[base + i] = v.x + v.y + v.z + v.w;
}

// The primitives: each thread copies 16 bytes (four ints) of in, with the last `tail` ints of the
// block's last thread zero-filled; out[i] = the sum of the four ints thread i + 1 copied.
extern "C" __global__ void primitives(const int* in, int* out, int tail) {
  __shared__ int4 words[TILE];
  const int i = threadIdx.x, base = blockIdx.x * TILE;
  const size_t zfill = i == TILE - 1 ? sizeof(int) * tail : 0;
  __pipeline_memcpy_async(&words[i], in + 4 * (base + i), sizeof(int4), zfill);
  __pipeline_commit();
  __pipeline_wait_prior(0);
  __syncthreads();
  const int4 w = words[(i + 1) % TILE];
  out[base + i] = w.x + w.y + w.z + w.w;
}
