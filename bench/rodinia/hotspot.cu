// 2-D heat diffusion over a chip, in the style of Rodinia's hotspot: each cell's temperature
// moves towards its four neighbours, its own power input and the ambient temperature, one
// explicit step at a time. A cell on the chip's edge has no neighbour beyond it: the missing
// neighbour counts as the cell itself, so no heat crosses the edge sideways.
//
// Pyramid halos: a block of BLOCK_SIZE x BLOCK_SIZE threads loads a tile of temperatures into
// __shared__ memory and runs up to PYRAMID_HEIGHT steps on it without going back to global
// memory. Each step can only trust one cell less on every side of the tile than the step before
// (the outer ring has no neighbours in the tile), so after `steps` steps the inner
// TILE x TILE cells are exact, and each block writes only those. Tiles overlap by
// 2 * PYRAMID_HEIGHT cells: redundant work traded for fewer trips to global memory.
// The host launches ceil(total_steps / PYRAMID_HEIGHT) times, swapping source and destination.
#ifndef BLOCK_SIZE
#define BLOCK_SIZE 16
#endif
#ifndef PYRAMID_HEIGHT
#define PYRAMID_HEIGHT 2
#endif
// The cells a block writes, per side.
#define TILE (BLOCK_SIZE - 2 * PYRAMID_HEIGHT)
#define IN_RANGE(x, lo, hi) ((x) >= (lo) && (x) <= (hi))

// steps <= PYRAMID_HEIGHT (the last launch may run fewer); cap_step is the time step over the
// heat capacity, rx_1, ry_1 and rz_1 the conductances to the side neighbours and to ambient.
__global__ void hotspot_pyramid(int steps, const float* power, const float* temp_src,
                                float* temp_dst, int rows, int cols, float cap_step, float rx_1,
                                float ry_1, float rz_1, float amb_temp) {
  __shared__ float temp_tile[BLOCK_SIZE][BLOCK_SIZE];
  __shared__ float power_tile[BLOCK_SIZE][BLOCK_SIZE];
  __shared__ float next_tile[BLOCK_SIZE][BLOCK_SIZE];

  int tx = threadIdx.x, ty = threadIdx.y;
  // This thread's cell: the tile starts PYRAMID_HEIGHT cells before the block's output.
  int row = blockIdx.y * TILE - PYRAMID_HEIGHT + ty;
  int col = blockIdx.x * TILE - PYRAMID_HEIGHT + tx;
  bool on_chip = IN_RANGE(row, 0, rows - 1) && IN_RANGE(col, 0, cols - 1);
  int index = row * cols + col;
  if (on_chip) {
    temp_tile[ty][tx] = temp_src[index];
    power_tile[ty][tx] = power[index];
  }
  __syncthreads();

  // Neighbours in the tile; at the chip's edge, the cell itself.
  int north = row > 0 ? ty - 1 : ty;
  int south = row < rows - 1 ? ty + 1 : ty;
  int west = col > 0 ? tx - 1 : tx;
  int east = col < cols - 1 ? tx + 1 : tx;

  bool computed;
  for (int i = 0; i < steps; i++) {
    computed = false;
    // After step i only cells i + 1 or more from the tile's border are exact.
    if (on_chip && IN_RANGE(tx, i + 1, BLOCK_SIZE - 2 - i) && IN_RANGE(ty, i + 1, BLOCK_SIZE - 2 - i)) {
      float t = temp_tile[ty][tx];
      next_tile[ty][tx] = t + cap_step * (power_tile[ty][tx] +
                                          (temp_tile[south][tx] + temp_tile[north][tx] - 2.0f * t) * ry_1 +
                                          (temp_tile[ty][east] + temp_tile[ty][west] - 2.0f * t) * rx_1 +
                                          (amb_temp - t) * rz_1);
      computed = true;
    }
    __syncthreads();  // every read of this step's temperatures is done
    if (computed) temp_tile[ty][tx] = next_tile[ty][tx];
    __syncthreads();  // the next step reads the new temperatures
  }

  if (on_chip && IN_RANGE(tx, PYRAMID_HEIGHT, BLOCK_SIZE - 1 - PYRAMID_HEIGHT) &&
      IN_RANGE(ty, PYRAMID_HEIGHT, BLOCK_SIZE - 1 - PYRAMID_HEIGHT))
    temp_dst[index] = temp_tile[ty][tx];
}
