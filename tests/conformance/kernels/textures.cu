// Conformance: texture references as code written before CUDA 12 declares them (Rodinia's
// kmeans and hybridsort): 1-D, read element by element with tex1Dfetch, bound from Lua with
// m:bind_texture. kiln declares each as a pointer global (jit/textures.h); the lines below them
// keep their numbers.
#define NFEATURES 4

texture<float, 1, cudaReadModeElementType> t_points;  // npoints x NFEATURES, row by row
texture<float4, 1> t_centres;
static texture<int, 1, cudaReadModeElementType> t_weights;

// Each point's nearest centre (squared distance), times the point's weight.
__global__ void nearest(int* membership, int npoints, int ncentres) {
  const int p = blockIdx.x * blockDim.x + threadIdx.x;
  if (p >= npoints) return;
  int best = 0;
  float best_d = 3.4e38f;
  for (int c = 0; c < ncentres; ++c) {
    const float4 centre = tex1Dfetch(t_centres, c);
    const float want[NFEATURES] = {centre.x, centre.y, centre.z, centre.w};
    float d = 0;
    for (int f = 0; f < NFEATURES; ++f) {
      const float diff = tex1Dfetch(t_points, p * NFEATURES + f) - want[f];
      d += diff * diff;
    }
    if (d < best_d) best_d = d, best = c;
  }
  membership[p] = best * tex1Dfetch(t_weights, p);
}

// Fetches around the array bound: outside it a texture reads zero.
__global__ void around(float* out, int first) {
  out[threadIdx.x] = tex1Dfetch(t_points, first + (int)threadIdx.x);
}

// Reads no texture: launches whatever is bound.
__global__ void plain(int* out) {
  out[threadIdx.x] = (int)threadIdx.x;
}
