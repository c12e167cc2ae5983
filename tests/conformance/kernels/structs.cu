// Conformance: structs by value, as Rodinia-style kernels take their parameters: one struct of
// grid sizes and coefficients (some sized by macros, one a vector, one an array), passed from a
// Lua table whose layout kiln takes from the compiler.
#define NCOEF 3

typedef struct {
  int rows, cols;
  float step;
  double coef[NCOEF];
  float2 origin;
  unsigned char clamp;
} StencilParams;

struct Empty {};

// One explicit step of a 3-point stencil along the rows, with the parameters above.
__global__ void stencil(StencilParams p, const float* in, float* out) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y;
  if (c >= p.cols || r >= p.rows) return;
  const float* row = in + r * p.cols;
  const float left = row[c > 0 ? c - 1 : 0], right = row[c + 1 < p.cols ? c + 1 : p.cols - 1];
  float v = (float)(p.coef[0] * left + p.coef[1] * row[c] + p.coef[2] * right) * p.step +
            p.origin.x * r + p.origin.y;
  if (p.clamp) v = fminf(fmaxf(v, 0.0f), 1.0f);
  out[r * p.cols + c] = v;
}

// A struct with no members still passes (from an empty table).
__global__ void tagged(Empty, int* out) { out[threadIdx.x] = (int)threadIdx.x; }
