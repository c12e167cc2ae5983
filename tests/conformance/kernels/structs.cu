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

// Arrays of structs through pointers, as Rodinia's b+tree and lavaMD keep their trees and
// particles: the host lays the records out (the test writes them through an int32 or float64
// array of the same bytes).
#define ORDER 4
typedef struct node {
  int location;
  int keys[ORDER + 1];
  int children[ORDER + 1];  // indices into the node array
  bool is_leaf;
  int num_keys;
} node;

// One thread per query: walks from the root (node 0) down to the leaf whose range holds the
// key, and records that leaf's location.
__global__ void find_leaf(const node* nodes, const int* queries, int* location, int n) {
  const int q = blockIdx.x * blockDim.x + threadIdx.x;
  if (q >= n) return;
  const node* at = &nodes[0];
  while (!at->is_leaf) {
    int child = 0;
    while (child < at->num_keys && queries[q] >= at->keys[child]) ++child;
    at = &nodes[at->children[child]];
  }
  location[q] = at->location;
}

#define fp double
typedef struct {
  fp v, x, y, z;
} FOUR_VECTOR;

// Each particle's v becomes its charge times its distance from the origin.
__global__ void weigh(FOUR_VECTOR* rv, const fp* qv, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const FOUR_VECTOR p = rv[i];
  rv[i].v = qv[i] * sqrt(p.x * p.x + p.y * p.y + p.z * p.z);
}

// A typedef of a tagged struct: the compiler names the parameter's type by its tag (_point).
typedef struct _point {
  float x, y;
} Point;
__global__ void shift(Point* p, float dx, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i].x += dx;
}

// A template over the element type, instantiated with a struct by name (`scale<Point>`): the
// parameter is `E*` as declared, `_point*` to the compiler, Point to the name expression.
template <typename E>
__global__ void scale(E* items, float by, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) items[i].y *= by;
}
