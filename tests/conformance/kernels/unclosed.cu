// Conformance: a kernel file whose function body (line 4) is never closed, for errors.lua.
#include <stdio.h>

__global__ void broken(int* out, int n) {
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    out[i] = i;
}
