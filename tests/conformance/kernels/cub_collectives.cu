// Conformance: CUB's block- and warp-level collectives as its examples use them: a block loads
// a tile (BlockLoad), reduces it (BlockReduce), scans it (BlockScan), sorts it (BlockRadixSort)
// and stores it (BlockStore); warps reduce and scan (WarpReduce, WarpScan).
#include <cub/block/block_adjacent_difference.cuh>
#include <cub/block/block_discontinuity.cuh>
#include <cub/block/block_exchange.cuh>
#include <cub/block/block_histogram.cuh>
#include <cub/block/block_load.cuh>
#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/block/block_store.cuh>
#include <cub/thread/thread_reduce.cuh>
#include <cub/warp/warp_reduce.cuh>
#include <cub/warp/warp_scan.cuh>
#include <cuda/functional>
#include <cuda/std/functional>

#define BLOCK_THREADS 128
#define ITEMS_PER_THREAD 4
#define TILE (BLOCK_THREADS * ITEMS_PER_THREAD)

// Per block: its tile's sum and max, the tile's exclusive prefix sums, and the tile sorted.
__global__ void tiles(const int* in, int* sums, int* maxes, int* prefix, int* sorted) {
  using Load = cub::BlockLoad<int, BLOCK_THREADS, ITEMS_PER_THREAD, cub::BLOCK_LOAD_TRANSPOSE>;
  using Store = cub::BlockStore<int, BLOCK_THREADS, ITEMS_PER_THREAD, cub::BLOCK_STORE_TRANSPOSE>;
  using Reduce = cub::BlockReduce<int, BLOCK_THREADS>;
  using Scan = cub::BlockScan<int, BLOCK_THREADS>;
  using Sort = cub::BlockRadixSort<int, BLOCK_THREADS, ITEMS_PER_THREAD>;
  __shared__ union {
    typename Load::TempStorage load;
    typename Store::TempStorage store;
    typename Reduce::TempStorage reduce;
    typename Scan::TempStorage scan;
    typename Sort::TempStorage sort;
  } temp;

  const int offset = blockIdx.x * TILE;
  int items[ITEMS_PER_THREAD];
  Load(temp.load).Load(in + offset, items);
  __syncthreads();
  int sum = Reduce(temp.reduce).Sum(items);
  __syncthreads();
  int biggest = Reduce(temp.reduce).Reduce(items, cuda::maximum<>{});
  if (threadIdx.x == 0) sums[blockIdx.x] = sum, maxes[blockIdx.x] = biggest;
  __syncthreads();
  int scanned[ITEMS_PER_THREAD];
  Scan(temp.scan).ExclusiveSum(items, scanned);
  __syncthreads();
  Store(temp.store).Store(prefix + offset, scanned);
  __syncthreads();
  Sort(temp.sort).Sort(items);
  __syncthreads();
  Store(temp.store).Store(sorted + offset, items);
}

// Per logical warp of 16: the sum (lane 0), and each lane's inclusive and exclusive scans.
__global__ void warps(const int* in, int* warp_sums, int* inclusive, int* exclusive) {
  using WarpReduce = cub::WarpReduce<int, 16>;
  using WarpScan = cub::WarpScan<int, 16>;
  __shared__ typename WarpReduce::TempStorage reduce_temp[BLOCK_THREADS / 16];
  __shared__ typename WarpScan::TempStorage scan_temp[BLOCK_THREADS / 16];
  const int i = blockIdx.x * blockDim.x + threadIdx.x, warp = threadIdx.x / 16;
  const int v = in[i];
  int total = WarpReduce(reduce_temp[warp]).Sum(v);
  if (threadIdx.x % 16 == 0) warp_sums[i / 16] = total;
  int inc, exc;
  WarpScan(scan_temp[warp]).InclusiveSum(v, inc);
  WarpScan(scan_temp[warp]).ExclusiveScan(v, exc, 1000, cuda::std::plus<int>{});
  inclusive[i] = inc;
  exclusive[i] = exc;
}

// A tile's runs, CUB style: loaded striped and exchanged to blocked, flagged at each run's head
// and tail, differenced with its left neighbour, counted into a 16-bin histogram (each item's
// low 4 bits), and each thread's own sum with cub::ThreadReduce.

struct Differ {
  __device__ bool operator()(int a, int b) const { return a != b; }
};

extern "C" __global__ void runs(const int* in, int* heads, int* tails, int* diffs, unsigned* bins,
                                int* thread_sums) {
  using Exchange = cub::BlockExchange<int, 64, 4>;
  using Discontinuity = cub::BlockDiscontinuity<int, 64>;
  using Difference = cub::BlockAdjacentDifference<int, 64>;
  using Histogram = cub::BlockHistogram<unsigned char, 64, 4, 16>;
  __shared__ typename Exchange::TempStorage exchange_storage;
  __shared__ typename Discontinuity::TempStorage discontinuity_storage;
  __shared__ typename Difference::TempStorage difference_storage;
  __shared__ unsigned histogram[16];
  const int t = threadIdx.x, base = blockIdx.x * 256;
  int items[4];
  for (int i = 0; i < 4; ++i) items[i] = in[base + i * 64 + t];  // striped
  Exchange(exchange_storage).StripedToBlocked(items);
  int head[4], tail[4], diff[4];
  Discontinuity(discontinuity_storage).FlagHeadsAndTails(head, tail, items, Differ());
  Difference(difference_storage).SubtractLeft(items, diff, [](int a, int b) { return a - b; });
  unsigned char low[4];
  for (int i = 0; i < 4; ++i) low[i] = (unsigned char)(items[i] & 15);
  Histogram().Histogram(low, histogram);
  __syncthreads();
  for (int i = 0; i < 4; ++i) {
    heads[base + t * 4 + i] = head[i];
    tails[base + t * 4 + i] = tail[i];
    diffs[base + t * 4 + i] = diff[i];
  }
  if (t < 16) bins[blockIdx.x * 16 + t] = histogram[t];
  thread_sums[blockIdx.x * 64 + t] = cub::ThreadReduce(items, cuda::std::plus<int>());
}
