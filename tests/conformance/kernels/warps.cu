// Warp-level idioms of NVIDIA's samples and the CUDA programming guide, written for kiln's
// conformance suite (tests/conformance/warps.lua): a block scan from warp scans (shuffle up
// under `if (lane >= offset)`, a device function whose local shares a kernel parameter's name),
// stream compaction by ballot, and row maxima by an xor butterfly.
#define FULL_MASK 0xffffffff
#define WARP 32

// Inclusive warp scan, NVIDIA-sample style: `if (lane >= offset)` around the add.
__device__ __forceinline__ int warp_scan(int v) {
  const int lane = threadIdx.x & (WARP - 1);
#pragma unroll
  for (int offset = 1; offset < WARP; offset <<= 1) {
    int n = __shfl_up_sync(FULL_MASK, v, offset);
    if (lane >= offset) v += n;
  }
  return v;
}

// Block scan: warp scans, warp totals in shared memory, the first warp scans those.
__global__ void block_scan(const int* in, int* out, int n) {
  __shared__ int totals[32];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = i < n ? in[i] : 0;
  v = warp_scan(v);
  const int lane = threadIdx.x % WARP, warp = threadIdx.x / WARP;
  if (lane == WARP - 1) totals[warp] = v;
  __syncthreads();
  if (warp == 0) {
    int t = lane < (blockDim.x + WARP - 1) / WARP ? totals[lane] : 0;
    t = warp_scan(t);
    totals[lane] = t;
  }
  __syncthreads();
  if (warp > 0) v += totals[warp - 1];
  if (i < n) out[i] = v;
}

// Stream compaction by ballot: each warp writes its kept elements contiguously.
__global__ void compact(const int* in, int* out, int* counts, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = i < n ? in[i] : -1;
  bool keep = v >= 0 && (v % 3) != 0;
  unsigned mask = __ballot_sync(FULL_MASK, keep);
  int lane = threadIdx.x % 32;
  int before = __popc(mask & ((1u << lane) - 1));
  int warp_global = i / 32;
  if (keep) out[warp_global * 32 + before] = v;
  if (lane == 0) counts[warp_global] = __popc(mask);
}

// Row maxima by an xor butterfly in a device function whose loop variable shares the kernel's
// name `m`, then lane 0's value broadcast; grid-stride loops over a row's columns.
__device__ float warp_max(float v) {
  for (int m = 16; m >= 1; m /= 2) v = fmaxf(v, __shfl_xor_sync(FULL_MASK, v, m));
  return v;
}
__global__ void normalize_rows(const float* in, float* out, int cols) {
  int row = blockIdx.x, lane = threadIdx.x;
  float m = -1e30f;
  for (int c = lane; c < cols; c += 32) m = fmaxf(m, in[row * cols + c]);
  m = warp_max(m);
  float lead = __shfl_sync(FULL_MASK, m, 0);
  for (int c = lane; c < cols; c += 32) out[row * cols + c] = in[row * cols + c] / lead;
}
