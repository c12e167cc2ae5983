__global__ void k(int *out)
{
    __shared__ int s[64];
    unsigned tid = threadIdx.x;          // one warp of 32 threads
    s[tid] = 1; s[tid + 32] = 1;
    __syncthreads();
    volatile int *vs = s;
    vs[tid] += vs[tid + 32];
    vs[tid] += vs[tid + 16];
    vs[tid] += vs[tid + 8];
    vs[tid] += vs[tid + 4];
    vs[tid] += vs[tid + 2];
    vs[tid] += vs[tid + 1];
    if (tid == 0) out[0] = s[0];
}
