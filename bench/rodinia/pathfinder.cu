// The cheapest path down a grid of costs, in the style of Rodinia's pathfinder: a path starts
// anywhere on row 0 and moves down one row at a time, straight or one column sideways; each
// cell's best total is its own cost plus the smallest best total of the (up to) three cells
// above it. The answer is the last row of best totals.
//
// Pyramid over rows: a block of BLOCK_SIZE threads (one column each) loads one row of totals
// into __shared__ memory and advances it by up to PYRAMID_HEIGHT rows before writing back. Each
// row can trust one column less on each side than the row before (the outermost columns lack a
// neighbour), so a block writes only its inner TILE columns, and neighbouring blocks overlap by
// 2 * PYRAMID_HEIGHT columns. Two shared rows take turns as source and destination, so one
// barrier per row suffices. The host launches once per PYRAMID_HEIGHT rows.
#ifndef BLOCK_SIZE
#define BLOCK_SIZE 256
#endif
#ifndef PYRAMID_HEIGHT
#define PYRAMID_HEIGHT 20
#endif
// The columns a block writes.
#define TILE (BLOCK_SIZE - 2 * PYRAMID_HEIGHT)
#define IN_RANGE(x, lo, hi) ((x) >= (lo) && (x) <= (hi))
#define MIN(a, b) ((a) <= (b) ? (a) : (b))

// Adds rows first_row .. first_row + steps - 1 of wall (rows x cols, row-major) to the totals in
// src, writing dst; steps <= PYRAMID_HEIGHT.
__global__ void pathfinder_pyramid(int steps, const int* wall, const int* src, int* dst, int cols,
                                   int first_row) {
  __shared__ int totals[2][BLOCK_SIZE];

  int tx = threadIdx.x;
  int col = blockIdx.x * TILE - PYRAMID_HEIGHT + tx;
  bool in_grid = IN_RANGE(col, 0, cols - 1);
  if (in_grid) totals[0][tx] = src[col];
  __syncthreads();

  // The columns above-left and above-right; at the grid's edge, the column itself.
  int west = col > 0 ? tx - 1 : tx;
  int east = col < cols - 1 ? tx + 1 : tx;

  for (int i = 0; i < steps; i++) {
    int from = i & 1;
    if (in_grid && IN_RANGE(tx, i + 1, BLOCK_SIZE - 2 - i)) {
      int best = MIN(MIN(totals[from][west], totals[from][tx]), totals[from][east]);
      totals[1 - from][tx] = best + wall[(first_row + i) * cols + col];
    }
    __syncthreads();  // row i + 1 is complete before anyone reads it
  }

  if (in_grid && IN_RANGE(tx, PYRAMID_HEIGHT, BLOCK_SIZE - 1 - PYRAMID_HEIGHT))
    dst[col] = totals[steps & 1][tx];
}
