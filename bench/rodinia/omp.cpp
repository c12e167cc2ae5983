// kiln_bench_omp: the OpenMP versions of the Rodinia-style benchmarks (bench/rodinia/*.cu), the
// same algorithms written the way one writes them for a CPU: plain loops over rows, one parallel
// loop per step, no shared-memory tiles or pyramids (nw keeps a wavefront of tiles, as a CPU
// needs one too). The inputs come from scramble(), the same function as inputs.cu's, with the
// seeds and constants of bench/rodinia/host.lua, so kiln's results can be compared with these.
//
// Prints, per benchmark, "SAMPLE,rodinia.<name>.omp,ms,<time>" for each timed run (after one
// untimed warm-up run) and FACT lines; with --out DIR writes each result to DIR/<name>.npy.
// Usage: kiln_bench_omp [--only hotspot,pathfinder,nw,srad] [--reps R] [--out DIR]
//                       [--<name>-<size> V ...]   (e.g. --hotspot-steps 20, --nw-n 1024)
// Threads: OMP_NUM_THREADS (bench/run.sh sets it to kiln's worker count).
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace {

// --- Inputs: the same generator as inputs.cu --------------------------------------------------

unsigned scramble(unsigned i, unsigned seed) {
  unsigned x = i * 2654435761u + seed * 0x9e3779b9u + 1u;
  x ^= x >> 16;
  x *= 0x6b43a9b5u;
  x ^= x >> 15;
  x *= 0xa1f3c2d7u;
  x ^= x >> 16;
  return x;
}

std::vector<int> random_ints(int n, unsigned seed, int lo, int hi) {
  std::vector<int> out(n);
  for (int i = 0; i < n; i++) out[i] = lo + (int)(scramble(i, seed) % (unsigned)(hi - lo + 1));
  return out;
}

std::vector<float> random_floats(int n, unsigned seed, float lo, float span) {
  std::vector<float> out(n);
  for (int i = 0; i < n; i++) out[i] = lo + span * ((float)(scramble(i, seed) >> 8) * (1.0f / 16777216.0f));
  return out;
}

// host.lua's M.SEEDS.
enum Seed : unsigned { kTemp = 1, kPower = 2, kWall = 3, kReference = 4, kImage = 5 };

// --- Results as NumPy .npy files (what kiln's array.load reads) -------------------------------

template <typename T>
const char* npy_descr();
template <>
const char* npy_descr<float>() { return "<f4"; }
template <>
const char* npy_descr<int>() { return "<i4"; }

template <typename T>
void write_npy(const std::string& path, const T* data, long count, const std::vector<long>& shape) {
  std::string dims;
  for (long d : shape) dims += std::to_string(d) + ",";
  if (shape.size() > 1) dims.pop_back();  // (n,) for one axis, (r, c) for two
  std::string header = std::string("{'descr': '") + npy_descr<T>() + "', 'fortran_order': False, 'shape': (" + dims + "), }";
  // Magic (6) + version (2) + length (2) + header, padded with spaces to a multiple of 64, ending in \n.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) { std::perror(path.c_str()); std::exit(1); }
  const unsigned char preamble[8] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
  const uint16_t length = (uint16_t)header.size();
  std::fwrite(preamble, 1, 8, f);
  std::fwrite(&length, 2, 1, f);  // little-endian on every machine this runs on (x86, arm64)
  std::fwrite(header.data(), 1, header.size(), f);
  std::fwrite(data, sizeof(T), count, f);
  if (std::fclose(f) != 0) { std::perror(path.c_str()); std::exit(1); }
}

// --- hotspot ------------------------------------------------------------------------------------

// host.lua's M.HOTSPOT.
constexpr float kCapStep = 0.05f, kRx1 = 2.0f, kRy1 = 2.0f, kRz1 = 0.1f, kAmbTemp = 300.0f;

// One explicit step of a cell from its neighbours' temperatures; same expression as hotspot.cu.
inline float heat(float t, float p, float n, float s, float w, float e) {
  return t + kCapStep * (p + (s + n - 2.0f * t) * kRy1 + (e + w - 2.0f * t) * kRx1 + (kAmbTemp - t) * kRz1);
}

// Runs `steps` steps from temp0, alternating between a and b; returns the last one written. At
// the chip's edge a missing neighbour is the cell itself.
const float* hotspot(int rows, int cols, int steps, const float* temp0, const float* power, float* a, float* b) {
  const float* src = temp0;
  for (int step = 0; step < steps; step++) {
    float* dst = step % 2 == 0 ? a : b;
#pragma omp parallel for schedule(static)
    for (int r = 0; r < rows; r++) {
      const float* here = src + (long)r * cols;
      const float* north = src + (long)(r > 0 ? r - 1 : r) * cols;
      const float* south = src + (long)(r < rows - 1 ? r + 1 : r) * cols;
      const float* p = power + (long)r * cols;
      float* out = dst + (long)r * cols;
      // The first and last columns apart, so that the loop between them vectorises.
      const int last = cols - 1;
      out[0] = heat(here[0], p[0], north[0], south[0], here[0], here[last > 0 ? 1 : 0]);
      for (int c = 1; c < last; c++) out[c] = heat(here[c], p[c], north[c], south[c], here[c - 1], here[c + 1]);
      if (last > 0) out[last] = heat(here[last], p[last], north[last], south[last], here[last - 1], here[last]);
    }
    src = dst;
  }
  return src;
}

// --- pathfinder ---------------------------------------------------------------------------------

// The last row of cheapest-path totals through wall (rows x cols), alternating between a and b.
const int* pathfinder(int rows, int cols, const int* wall, int* a, int* b) {
  const int* src = wall;  // row 0: where every path starts
  for (int r = 1; r < rows; r++) {
    int* dst = r % 2 == 1 ? a : b;
    const int* cost = wall + (long)r * cols;
    // The first and last columns apart, so that the loop between them vectorises.
    const int last = cols - 1;
    dst[0] = std::min(src[0], src[last > 0 ? 1 : 0]) + cost[0];
#pragma omp parallel for schedule(static)
    for (int c = 1; c < last; c++) dst[c] = std::min({src[c - 1], src[c], src[c + 1]}) + cost[c];
    if (last > 0) dst[last] = std::min(src[last - 1], src[last]) + cost[last];
    src = dst;
  }
  return src;
}

// --- nw -----------------------------------------------------------------------------------------

// A CPU's tile: large enough that a thread's tile outlasts the wavefront's synchronisation.
constexpr int kNwTile = 64;

// Fills score ((n + 1) x (n + 1), row 0 and column 0 hold the borders) tile diagonal by tile
// diagonal, the tiles of one diagonal in parallel; inside a tile, row by row.
void nw(int n, int penalty, const int* reference, int* score) {
  const int cols = n + 1, tiles = (n + kNwTile - 1) / kNwTile;
  for (int diagonal = 0; diagonal < 2 * tiles - 1; diagonal++) {
    const int first = std::max(0, diagonal - tiles + 1), last = std::min(diagonal, tiles - 1);
#pragma omp parallel for schedule(dynamic)
    for (int tile_row = first; tile_row <= last; tile_row++) {
      const int tile_col = diagonal - tile_row;
      const int r0 = tile_row * kNwTile + 1, r1 = std::min(r0 + kNwTile, n + 1);
      const int c0 = tile_col * kNwTile + 1, c1 = std::min(c0 + kNwTile, n + 1);
      for (int r = r0; r < r1; r++) {
        int* row = score + (long)r * cols;
        const int* above = row - cols;
        const int* subst = reference + (long)r * cols;
        for (int c = c0; c < c1; c++)
          row[c] = std::max({above[c - 1] + subst[c], above[c] - penalty, row[c - 1] - penalty});
      }
    }
  }
}

// --- srad ---------------------------------------------------------------------------------------

struct SradPlanes {
  std::vector<float> dN, dS, dW, dE, c;
};

// q0^2, the speckle statistic: variance over squared mean of the whole image.
float speckle(const float* J, long n) {
  double total = 0, total2 = 0;
#pragma omp parallel for reduction(+ : total, total2) schedule(static)
  for (long i = 0; i < n; i++) {
    total += J[i];
    total2 += (double)J[i] * J[i];
  }
  const double mean = total / n, variance = total2 / n - mean * mean;
  return (float)(variance / (mean * mean));
}

// Each pixel's differences to its neighbours and diffusion coefficient; same arithmetic as
// srad.cu's srad_coefficients. At the image's edge a missing neighbour is the pixel itself.
void srad_coefficients(int rows, int cols, const float* J, float q0sqr, SradPlanes& p) {
#pragma omp parallel for schedule(static)
  for (int r = 0; r < rows; r++) {
    const int up = r > 0 ? r - 1 : r, down = r < rows - 1 ? r + 1 : r;
    for (int col = 0; col < cols; col++) {
      const long i = (long)r * cols + col;
      const float jc = J[i];
      const float n = J[(long)up * cols + col] - jc, s = J[(long)down * cols + col] - jc;
      const float w = J[i - (col > 0 ? 1 : 0)] - jc, e = J[i + (col < cols - 1 ? 1 : 0)] - jc;
      const float g2 = (n * n + s * s + w * w + e * e) / (jc * jc);
      const float lap = (n + s + w + e) / jc;
      const float num = 0.5f * g2 - 0.0625f * (lap * lap);
      const float den = 1.0f + 0.25f * lap;
      const float qsqr = num / (den * den);
      const float excess = (qsqr - q0sqr) / (q0sqr * (1.0f + q0sqr));
      const float coef = 1.0f / (1.0f + excess);
      p.dN[i] = n, p.dS[i] = s, p.dW[i] = w, p.dE[i] = e;
      p.c[i] = std::clamp(coef, 0.0f, 1.0f);
    }
  }
}

// J_out = J + lambda/4 * divergence; same arithmetic as srad.cu's srad_update.
void srad_update(int rows, int cols, const float* J, float* J_out, float lambda, const SradPlanes& p) {
#pragma omp parallel for schedule(static)
  for (int r = 0; r < rows; r++) {
    const int down = r < rows - 1 ? r + 1 : r;
    for (int col = 0; col < cols; col++) {
      const long i = (long)r * cols + col;
      const float c_here = p.c[i];
      const float c_south = p.c[(long)down * cols + col], c_east = p.c[i + (col < cols - 1 ? 1 : 0)];
      const float divergence = c_here * p.dN[i] + c_south * p.dS[i] + c_here * p.dW[i] + c_east * p.dE[i];
      J_out[i] = J[i] + 0.25f * lambda * divergence;
    }
  }
}

// `iterations` iterations from image, alternating between a and b; returns the last one written.
const float* srad(int rows, int cols, int iterations, float lambda, const float* image, SradPlanes& p, float* a, float* b) {
  const float* J = image;
  for (int it = 0; it < iterations; it++) {
    float* out = it % 2 == 0 ? a : b;
    srad_coefficients(rows, cols, J, speckle(J, (long)rows * cols), p);
    srad_update(rows, cols, J, out, lambda, p);
    J = out;
  }
  return J;
}

// --- The driver ---------------------------------------------------------------------------------

using Sizes = std::map<std::string, double>;

// host.lua's M.DEFAULTS, without the kernels' pyramid heights.
std::map<std::string, Sizes> default_sizes() {
  return {
      {"hotspot", {{"rows", 1024}, {"cols", 1024}, {"steps", 20}}},
      {"pathfinder", {{"rows", 100}, {"cols", 100000}}},
      {"nw", {{"n", 2048}, {"penalty", 10}}},
      {"srad", {{"rows", 1024}, {"cols", 1024}, {"iterations", 3}, {"lambda", 0.5}}},
  };
}

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr,
               "kiln_bench_omp: %s\nusage: kiln_bench_omp [--only hotspot,pathfinder,nw,srad] [--reps R] "
               "[--out DIR] [--<name>-<size> V ...]\n",
               why.c_str());
  std::exit(2);
}

int positive(const Sizes& s, const char* key, const char* name) {
  const int v = (int)s.at(key);
  if (v < 1) usage(std::string(name) + ": " + key + " must be positive");
  return v;
}

// A benchmark: inputs made and buffers allocated up front, run() the timed section, save() the
// result of the last run.
struct Benchmark {
  virtual ~Benchmark() = default;
  virtual void run() = 0;
  virtual void save(const std::string& path) const = 0;
  std::string describe;
};

struct Hotspot : Benchmark {
  int rows, cols, steps;
  std::vector<float> temp0, power, a, b;
  const float* result = nullptr;
  explicit Hotspot(const Sizes& s)
      : rows(positive(s, "rows", "hotspot")), cols(positive(s, "cols", "hotspot")), steps(positive(s, "steps", "hotspot")),
        temp0(random_floats(rows * cols, kTemp, 320.0f, 20.0f)), power(random_floats(rows * cols, kPower, 0.0f, 2.0f)),
        a(rows * cols), b(rows * cols) {
    describe = std::to_string(rows) + "x" + std::to_string(cols) + " float32; " + std::to_string(steps) + " steps";
  }
  void run() override { result = hotspot(rows, cols, steps, temp0.data(), power.data(), a.data(), b.data()); }
  void save(const std::string& path) const override { write_npy(path, result, (long)rows * cols, {rows, cols}); }
};

struct Pathfinder : Benchmark {
  int rows, cols;
  std::vector<int> wall, a, b;
  const int* result = nullptr;
  explicit Pathfinder(const Sizes& s)
      : rows(positive(s, "rows", "pathfinder")), cols(positive(s, "cols", "pathfinder")),
        wall(random_ints(rows * cols, kWall, 0, 9)), a(cols), b(cols) {
    if (rows < 2) usage("pathfinder: needs at least 2 rows");
    describe = std::to_string(cols) + " columns x " + std::to_string(rows) + " rows int32";
  }
  void run() override { result = pathfinder(rows, cols, wall.data(), a.data(), b.data()); }
  void save(const std::string& path) const override { write_npy(path, result, cols, {cols}); }
};

struct NeedlemanWunsch : Benchmark {
  int n, penalty;
  std::vector<int> reference, score;
  explicit NeedlemanWunsch(const Sizes& s)
      : n(positive(s, "n", "nw")), penalty((int)s.at("penalty")),
        reference(random_ints((n + 1) * (n + 1), kReference, -4, 5)), score((long)(n + 1) * (n + 1), 0) {
    // The borders: a leading gap of i costs i * penalty. Each run overwrites every other cell.
    for (int i = 0; i <= n; i++) score[i] = score[(long)i * (n + 1)] = -i * penalty;
    describe = std::to_string(n) + "x" + std::to_string(n) + " int32; penalty " + std::to_string(penalty) + "; " +
               std::to_string(kNwTile) + "x" + std::to_string(kNwTile) + " tiles";
  }
  void run() override { nw(n, penalty, reference.data(), score.data()); }
  void save(const std::string& path) const override { write_npy(path, score.data(), (long)score.size(), {n + 1, n + 1}); }
};

struct Srad : Benchmark {
  int rows, cols, iterations;
  float lambda;
  std::vector<float> image, a, b;
  SradPlanes planes;
  const float* result = nullptr;
  explicit Srad(const Sizes& s)
      : rows(positive(s, "rows", "srad")), cols(positive(s, "cols", "srad")), iterations(positive(s, "iterations", "srad")),
        lambda((float)s.at("lambda")), image(random_floats(rows * cols, kImage, 0.5f, 1.0f)), a(rows * cols), b(rows * cols) {
    for (auto* plane : {&planes.dN, &planes.dS, &planes.dW, &planes.dE, &planes.c}) plane->resize((long)rows * cols);
    char text[64];
    std::snprintf(text, sizeof text, "; %d iterations; lambda %g", iterations, lambda);
    describe = std::to_string(rows) + "x" + std::to_string(cols) + " float32" + text;
  }
  void run() override { result = srad(rows, cols, iterations, lambda, image.data(), planes, a.data(), b.data()); }
  void save(const std::string& path) const override { write_npy(path, result, (long)rows * cols, {rows, cols}); }
};

std::unique_ptr<Benchmark> make_benchmark(const std::string& name, const Sizes& s) {
  if (name == "hotspot") return std::make_unique<Hotspot>(s);
  if (name == "pathfinder") return std::make_unique<Pathfinder>(s);
  if (name == "nw") return std::make_unique<NeedlemanWunsch>(s);
  if (name == "srad") return std::make_unique<Srad>(s);
  usage("no benchmark '" + name + "'");
}

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    if (comma > start) out.push_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  auto sizes = default_sizes();
  std::vector<std::string> only = {"hotspot", "pathfinder", "nw", "srad"};
  int reps = 1;
  std::string out;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    if (a.rfind("--", 0) != 0 || i + 1 >= argc) usage("expected --option value, got '" + a + "'");
    std::string key = a.substr(2), value = argv[++i];
    char* end = nullptr;
    if (key == "only") {
      only = split(value);
    } else if (key == "out") {
      out = value;
    } else if (key == "reps") {
      reps = (int)std::strtol(value.c_str(), &end, 10);
      if (*end || reps < 1) usage("--reps wants a positive integer");
    } else {
      // --<name>-<size>: a size of one benchmark.
      const size_t dash = key.find('-');
      const std::string name = key.substr(0, dash), size = dash == std::string::npos ? "" : key.substr(dash + 1);
      if (!sizes.count(name) || !sizes[name].count(size)) usage("unknown option --" + key);
      sizes[name][size] = std::strtod(value.c_str(), &end);
      if (*end || value.empty()) usage("--" + key + " wants a number");
    }
  }
  std::printf("FACT,omp.threads,%d\n", omp_get_max_threads());
  for (const std::string& name : only) {
    if (!sizes.count(name)) usage("no benchmark '" + name + "'");
    std::unique_ptr<Benchmark> bench = make_benchmark(name, sizes[name]);
    std::printf("FACT,size.rodinia.%s.omp,%s\n", name.c_str(), bench->describe.c_str());
    bench->run();  // warm-up: pages touched, threads started
    for (int r = 0; r < reps; r++) {
      const double start = omp_get_wtime();
      bench->run();
      const double ms = (omp_get_wtime() - start) * 1e3;
      std::printf("SAMPLE,rodinia.%s.omp,ms,%.6g\n", name.c_str(), ms);
      std::fflush(stdout);
    }
    if (!out.empty()) bench->save(out + "/" + name + ".npy");
  }
  return 0;
}
