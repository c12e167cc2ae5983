#!/usr/bin/env bash
# Runs every kiln benchmark on the current backend (KILN_BACKEND honoured: auto, cuda, cpu) and
# writes bench/results/<YYYY-MM-DD>-<machine>.md (the report, every target marked met / not met)
# and .csv (every figure: median, min, max over repetitions) beside it, with the seed 004 sweep
# plots in bench/results/<YYYY-MM-DD>-<machine>-sweeps/.
# Usage: bench/run.sh [--full] [--quick] [--dirty]
#   --full   the sweeps to the seed's 2^27 (default 2^22) and more repetitions
#   --quick  few repetitions (a smoke test of the pipeline; not for committed results)
#   --dirty  measure a tree with uncommitted changes (refused otherwise: results must name the
#            commit that reproduces them; the report then says "(modified)")
# Needs only what the build needs (Google Benchmark: Debian libbenchmark-dev); ~6 min on 2 cores.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

full=0 quick=0 dirty=0
for a in "$@"; do
  case "$a" in
    --full) full=1 ;;
    --quick) quick=1 ;;
    --dirty) dirty=1 ;;
    *) echo "usage: bench/run.sh [--full] [--quick] [--dirty]" >&2; exit 2 ;;
  esac
done
# Results from a tree git does not hold cannot be reproduced: refuse one unless told.
if git rev-parse --git-dir >/dev/null 2>&1 && ! git diff --quiet HEAD -- . ':!bench/results' &&
  ((!dirty)); then
  echo "bench/run.sh: the tree has uncommitted changes (commit them, or pass --dirty)" >&2
  exit 2
fi

# Build (Release) what the benchmarks run, unless KILN_BENCH_NO_BUILD=1 (binaries built elsewhere:
# scripts/gpu_bundle.sh).
if [[ "${KILN_BENCH_NO_BUILD:-0}" != 1 ]]; then
  if [[ ! -f build/build.ninja ]]; then cmake --preset release >/dev/null; fi
  cmake --build build -j2 --target kiln kiln_bench_micro kiln_proc_timer >/dev/null
  if grep -q 'kiln_cuda_floor' build/build.ninja; then
    cmake --build build -j2 --target kiln_cuda_floor >/dev/null
  fi
  # The OpenMP versions of the Rodinia-style kernels, where the compiler has OpenMP.
  if grep -q 'kiln_bench_omp' build/build.ninja; then
    cmake --build build -j2 --target kiln_bench_omp >/dev/null
  fi
fi
kiln="$root/build/kiln"
timer="$root/build/bench/kiln_proc_timer"
micro="$root/build/bench/kiln_bench_micro"
omp="$root/build/bench/kiln_bench_omp"

backend=$("$kiln" -e 'io.write(cuda.backend())')
chosen_backend=${KILN_BACKEND:-}  # the user's own choice, if any
export KILN_BACKEND="$backend"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export KILN_CACHE_DIR="$work/cache"
facts="$work/facts.txt" figs="$work/figures.txt"
export KILN_BENCH_FACTS="$facts"
: >"$facts"
: >"$figs"
fact() { printf 'FACT,%s,%s\n' "$1" "${2//,/;}" >>"$facts"; }

# Sizes: the cpu backend's modest, a GPU's large enough to reach its bandwidth.
if [[ "$backend" == cuda ]]; then
  export KILN_BENCH_IMAGE=4096 KILN_BENCH_MATMUL=2048 KILN_BENCH_N=$((1 << 26))
else
  export KILN_BENCH_IMAGE=1024 KILN_BENCH_MATMUL=512 KILN_BENCH_N=$((1 << 24))
fi
reps=5 proc_reps=20 gb_reps=5 sweep_exp=22 rodinia_runs=3
if ((full)); then reps=9 proc_reps=40 gb_reps=9 sweep_exp=27; fi
if ((quick)); then reps=2 proc_reps=3 gb_reps=2 sweep_exp=16 rodinia_runs=1; fi

# The machine and versions.
cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
cores=$(nproc)
gpu_name=""
if [[ "$backend" == cuda ]] && command -v nvidia-smi >/dev/null; then
  gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
fi
slug() { tr 'A-Z' 'a-z' | sed -e 's/(r)//g; s/(tm)//g; s/processor//g; s/[^a-z0-9]\+/-/g; s/^-//; s/-$//'; }
if [[ -n "$gpu_name" ]]; then machine=$(echo "$gpu_name" | slug)
else machine="cpu-${cores}core-$(echo "$cpu" | slug)"; fi
date=$(date +%F)
stem="bench/results/$date-$machine"
fact date "$date"
fact machine "$machine"
fact cpu "$cpu"
fact cores "$cores"
fact memory "$(free -g | awk '/^Mem:/ {print $2 " GiB"}')"
[[ -n "$gpu_name" ]] && fact gpu "$gpu_name"
fact os "$(. /etc/os-release && echo "$PRETTY_NAME")"
fact kernel "$(uname -r)"
fact kiln "$("$kiln" --version)"
fact compiler "$(${KILN_CXX:-c++} --version | head -1)"
fact git "$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . ':!bench/results' || echo ' (modified)')"
fact size.image "$KILN_BENCH_IMAGE"
fact size.matmul "$KILN_BENCH_MATMUL"
fact size.n "$KILN_BENCH_N"
echo "kiln benchmarks: backend $backend, machine $machine -> $stem.md"

# Whole-process figures, timed from outside.
# They run as the user would: with KILN_BACKEND only where the user set it. (An explicit
# KILN_BACKEND=cuda opens the driver at start, to fail at once where it cannot run: about 190 ms
# of cuInit on an H200. The default, auto, opens it at the first kernel.)
proc() {  # id, timer options and command...
  local id=$1; shift
  local t
  t=$(KILN_BACKEND="$chosen_backend" "$timer" --reps "$proc_reps" "$@")
  read -r med lo hi <<<"$t"
  echo "FIG,$id,ms,$med,$lo,$hi,$proc_reps" | tee -a "$figs"
}
proc proc.kiln_e -- "$kiln" -e ''
proc proc.repl_prompt --pty --until "kiln> " -- "$kiln"
"$kiln" bench/first_launch.lua >/dev/null   # fills the disk cache
proc proc.cached_first_launch --until KILN_BENCH_LAUNCHED -- "$kiln" bench/first_launch.lua
# The figure counts only if those launches were disk-cache hits: ask a last one where its kernel came from.
fact first_launch.cache "$(KILN_BENCH_CHECK_CACHE=1 "$kiln" bench/first_launch.lua | sed -n 's/^cache: //p')"
# On a GPU, the floor under that figure: the same steps in a bare process through the driver.
floor="$root/build/bench/kiln_cuda_floor"
if [[ "$backend" == cuda && -x "$floor" ]] && "$floor" --write "$work/floor.cubin"; then
  proc proc.cuda_floor_first_launch --until KILN_BENCH_LAUNCHED -- "$floor" "$work/floor.cubin"
fi

# C++ micro-benchmarks (Google Benchmark): per-repetition aggregates as CSV -> FIG lines.
echo "C++ micro-benchmarks ..."
# The serial C++ references are the cpu backend's yardstick; at a GPU's sizes (a 2048^3 naive
# matmul, a 4096^2 9x9 blur) they take minutes, so the cuda backend's report goes without them.
micro_filter=()
if [[ "$backend" == cuda ]]; then
  micro_filter=(--benchmark_filter=-BM_serial)
  fact skip.serial "the serial C++ references are not run on the cuda backend (minutes at GPU sizes)"
fi
"$micro" "${micro_filter[@]}" --benchmark_repetitions="$gb_reps" --benchmark_report_aggregates_only=true \
  --benchmark_min_time=0.2 --benchmark_format=csv >"$work/micro.csv" 2>"$work/micro.err" || {
  cat "$work/micro.err" >&2; exit 1; }
awk -F, '
  /^"/ {
    name = $1; gsub(/"/, "", name)
    gsub(/\/(iterations|repeats):[0-9]+/, "", name); sub(/\/real_time/, "", name)
    n = split(name, parts, "_"); stat = parts[n]
    if (stat != "median" && stat != "min" && stat != "max") next
    base = substr(name, 1, length(name) - length(stat) - 1)
    if (!(base in seen)) { seen[base] = 1; order[++count] = base }
    v[base, stat] = $3; unit[base] = $5
  }
  END { for (i = 1; i <= count; i++) { b = order[i]
    printf "FIG,%s,%s,%s,%s,%s,%s\n", b, unit[b], v[b, "median"], v[b, "min"], v[b, "max"], reps } }
' reps="$gb_reps" "$work/micro.csv" | tee -a "$figs"

# Lua-side figures: cold compiles, launch overhead from Lua, the lab kernels.
echo "Lua benchmarks ..."
"$kiln" bench/kernels.lua --reps "$reps" | tee "$work/lua.txt"
grep '^FIG,' "$work/lua.txt" >>"$figs"
grep '^FACT,' "$work/lua.txt" >>"$facts"

# The peer: Numba's CUDA simulator on the same 9x9 blur (Debian's python3-numba), when installed;
# the report marks its target "not measured" otherwise. Figure: microseconds per pixel, fastest
# of three runs, stored as "ms" per 1000 pixels so that FIG lines keep one unit.
py=/usr/bin/python3
[ -x "$py" ] || py=python3
if [[ "$backend" == cpu ]] && "$py" -c 'import numba' 2>/dev/null; then
  echo "Numba's CUDA simulator ..."
  if us=$(NUMBA_ENABLE_CUDASIM=1 "$py" bench/numba_sim.py 32 2>"$work/numba.err"); then
    echo "FIG,numba_sim.blur_us_per_pixel,us,$us,$us,$us,1" | tee -a "$figs"
    fact numba "$("$py" -c 'import numba; print(numba.__version__)') (simulator)"
  else
    fact skip.numba_sim "numba_sim.py failed: $(head -c 300 "$work/numba.err")"
  fi
else
  fact skip.numba_sim "python3-numba is not installed (apt install python3-numba to measure the peer)"
fi

# The Rodinia-style kernels (bench/rodinia/) against their OpenMP versions (kiln_bench_omp), the
# OpenMP side on as many threads as kiln has workers. Ratios come from one run, fastest of
# several, interleaved: each of $reps rounds runs the OpenMP binary once (it writes its results)
# and then kiln's driver once (a new nonce: its first call compiles afresh; it checks its
# results against the OpenMP ones and fails this script on a mismatch), each timing
# $rodinia_runs runs after a warm-up. KILN_BENCH_RODINIA: size options for both, e.g.
# "--hotspot-steps 10 --nw-n 1024" (bench/rodinia.lua lists them).
# SAMPLE,id,unit,value lines -> FIG,id,unit,median,min,max,count.
samples_to_figs() {
  grep '^SAMPLE,' "$1" | sort -t, -k2,2 -k4,4g | awk -F, '
    function flush() {
      if (n) printf "FIG,%s,%s,%.6g,%.6g,%.6g,%d\n", id, unit, n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2, v[1], v[n], n
    }
    $2 != id { flush(); id = $2; unit = $3; n = 0 }
    { v[++n] = $4 }
    END { flush() }'
}
if [[ -x "$omp" ]]; then
  echo "Rodinia-style kernels against OpenMP ($reps rounds) ..."
  threads=${KILN_CPU_THREADS:-$cores}
  refs="$work/rodinia"
  mkdir -p "$refs"
  : >"$work/rodinia.txt"
  read -r -a rodinia_sizes <<<"${KILN_BENCH_RODINIA:-}"
  for ((round = 1; round <= reps; round++)); do
    OMP_NUM_THREADS=$threads "$omp" --reps "$rodinia_runs" --out "$refs" "${rodinia_sizes[@]}" >>"$work/rodinia.txt"
    KILN_COMPILE_NOTICE=0 "$kiln" bench/rodinia.lua --reps "$rodinia_runs" --ref "$refs" --nonce "$round" \
      "${rodinia_sizes[@]}" >>"$work/rodinia.txt"
  done
  fact rodinia.threads "$threads"
  fact rodinia.rounds "$reps rounds × $rodinia_runs runs"
  grep '^FACT,' "$work/rodinia.txt" >>"$facts"  # the report keeps each key's last value
  samples_to_figs "$work/rodinia.txt" | tee -a "$figs"
else
  fact skip.rodinia "kiln_bench_omp was not built (the compiler has no OpenMP?)"
fi

# The seed 004 sweeps, as the labs draw them.
echo "seed 004 sweeps ..."
sweeps="$stem-sweeps"
mkdir -p "$sweeps"
"$kiln" scripts/labs/reduce.lua --max-exp "$sweep_exp" --reps 3 --out "$sweeps" >"$work/reduce.txt"
"$kiln" scripts/labs/abs_sum.lua --max-exp "$sweep_exp" --max-serial-exp "$sweep_exp" --reps 3 --out "$sweeps" >"$work/abs_sum.txt"
fact sweeps "$(basename "$sweeps")"
fact sweeps.range "N = 2^12 .. 2^$sweep_exp; median of 3 calls per point"

# The CSV and the report.
{ echo "figure,unit,median,min,max,repetitions"; sed 's/^FIG,//' "$figs"; } >"$stem.csv"
"$kiln" bench/report.lua "$stem.csv" "$facts" "$stem.md"
echo "wrote $stem.md and $stem.csv"
