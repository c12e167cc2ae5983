// Global sequence alignment by Needleman-Wunsch, in the style of Rodinia's nw: score is an
// (n + 1) x (n + 1) matrix whose row 0 and column 0 hold the gap penalties of a leading gap;
// every other cell is the best of a match/mismatch step from the north-west (plus the
// substitution score in reference) or a gap from the north or the west (minus penalty).
//
// A cell depends on three earlier ones, so the matrix is filled as a wavefront of TILE x TILE
// tiles: tiles on one anti-diagonal of tiles are independent, and each launch fills one such
// diagonal, one block per tile. Inside a tile the same holds for cells: the block (TILE threads,
// one per tile row) loads the tile's north row and west column into __shared__ memory with its
// substitution scores, then sweeps the tile's 2 * TILE - 1 anti-diagonals with a barrier after
// each, and writes the tile back. n must be a multiple of TILE.
#ifndef TILE
#define TILE 16
#endif

__device__ int best_of(int diagonal, int north, int west) {
  int best = diagonal > north ? diagonal : north;
  return best > west ? best : west;
}

// Fills the tiles (row, col) with row + col == diagonal (tile coordinates, 0-based).
__global__ void nw_tile_diagonal(int* score, const int* reference, int n, int penalty, int diagonal) {
  __shared__ int cells[TILE + 1][TILE + 1];  // the tile with its north row and west column
  __shared__ int subst[TILE][TILE];

  int tiles = n / TILE;
  int tile_row = (diagonal < tiles ? 0 : diagonal - tiles + 1) + blockIdx.x;
  int tile_col = diagonal - tile_row;
  int cols = n + 1;
  // The cell north-west of the tile's first cell: already final (tile above-left, or a border).
  int corner = tile_row * TILE * cols + tile_col * TILE;
  int tx = threadIdx.x;

  if (tx == 0) cells[0][0] = score[corner];
  cells[0][tx + 1] = score[corner + tx + 1];
  cells[tx + 1][0] = score[corner + (tx + 1) * cols];
  for (int r = 0; r < TILE; r++) subst[r][tx] = reference[corner + (r + 1) * cols + tx + 1];
  __syncthreads();

  // On the tile's k-th anti-diagonal, thread tx fills row tx, column k - tx.
  for (int k = 0; k < 2 * TILE - 1; k++) {
    int c = k - tx;
    if (c >= 0 && c < TILE)
      cells[tx + 1][c + 1] = best_of(cells[tx][c] + subst[tx][c], cells[tx][c + 1] - penalty,
                                     cells[tx + 1][c] - penalty);
    __syncthreads();
  }

  for (int r = 0; r < TILE; r++) score[corner + (r + 1) * cols + tx + 1] = cells[r + 1][tx + 1];
}
