#!/usr/bin/env bash
# The one command for a machine with an NVIDIA GPU: builds kiln, runs the GPU tests (ctest -L gpu,
# and the cuda unit tests, which skip without a GPU elsewhere), the labs (scripts/labs/*.lua
# --full) and the benchmarks (bench/run.sh), and writes everything to
# bench/results/<date>-<gpu>-check.md (beside bench/run.sh's <date>-<gpu>.md). Exits non-zero when a
# test failed.
# Usage: scripts/gpu_check.sh [--no-build] [--no-bench]
# On a machine that cannot install kiln's packages, build here first: scripts/gpu_bundle.sh.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build=1 bench=1
for arg in "$@"; do
  case "$arg" in
    --no-build) build=0 ;;
    --no-bench) bench=0 ;;
    *) echo "usage: $0 [--no-build] [--no-bench]" >&2; exit 2 ;;
  esac
done

command -v nvidia-smi >/dev/null || { echo "gpu_check: nvidia-smi not found: is this a GPU machine?" >&2; exit 1; }
gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n1)
driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -n1)
driver_cuda=$(nvidia-smi | sed -n 's/.*CUDA Version: *\([0-9.]*\).*/\1/p' | head -n1)
toolkit=$( (/usr/local/cuda/bin/nvcc --version 2>/dev/null || true) | sed -n 's/.*release \([0-9.]*\).*/\1/p')
slug=$(echo "$gpu_name" | tr 'A-Z' 'a-z' | tr -c 'a-z0-9\n' '-' | tr -s '-' | sed 's/^-//; s/-$//')
mkdir -p bench/results
report="bench/results/$(date +%Y-%m-%d)-${slug}-check.md"  # beside bench/run.sh's report
log_dir=$(mktemp -d)
trap 'rm -rf "$log_dir"' EXIT
status=0

# Appends a fenced block of a file to the report.
fenced() { echo '```'; cat "$1"; echo '```'; }

{
  echo "# kiln GPU check: $gpu_name"
  echo
  echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "- commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "- GPU: $gpu_name"
  echo "- driver: $driver (CUDA $driver_cuda)"
  echo "- toolkit (NVRTC): ${toolkit:-unknown}"
  echo
} >"$report"

if ((build)); then
  echo "gpu_check: building" >&2
  if ! { cmake --preset release && cmake --build --preset release -j "$(nproc)"; } >"$log_dir/build.txt" 2>&1; then
    { echo "## Build: FAILED"; echo; fenced <(tail -n 60 "$log_dir/build.txt"); } >>"$report"
    echo "gpu_check: build failed; see $report" >&2
    exit 1
  fi
fi
((build)) || export KILN_BENCH_NO_BUILD=1  # bench/run.sh uses the binaries as they are
kiln="$root/build/kiln"
{ echo "## kiln --info"; echo; fenced <("$kiln" --info 2>&1 || true); echo; } >>"$report"

# GPU tests: those ctest labels gpu, and the cuda unit tests (which skip without a device).
echo "gpu_check: tests" >&2
export KILN_BACKEND=cuda
# A hang is a failure: every test and lab runs under a time limit (seconds).
test_limit=${KILN_GPU_TEST_TIMEOUT:-180} lab_limit=${KILN_GPU_LAB_TIMEOUT:-120}
ctest --test-dir build -L gpu --timeout "$test_limit" --output-on-failure >"$log_dir/ctest-gpu.txt" 2>&1 || status=1
if grep -q "No tests were found" "$log_dir/ctest-gpu.txt"; then
  # Not registered with ctest yet: run tests/gpu/*.lua directly (exit 77 means skipped).
  : >"$log_dir/ctest-gpu.txt"
  status=0
  for script in tests/gpu/*.lua; do
    [ -e "$script" ] || continue
    timeout "$test_limit" "$kiln" "$script" >"$log_dir/one.txt" 2>&1
    rc=$?
    # A skip here is a failure: this script runs where a GPU is.
    case $rc in 0) verdict=PASS ;; 77) verdict="SKIP (a failure here)"; status=1 ;; *) verdict="FAIL (exit $rc)"; status=1 ;; esac
    { echo "== $script: $verdict"; cat "$log_dir/one.txt"; } >>"$log_dir/ctest-gpu.txt"
  done
fi
ctest --test-dir build -R 'Cuda' --timeout "$test_limit" --output-on-failure >"$log_dir/ctest-unit.txt" 2>&1 || status=1
# On a GPU machine nothing may skip: a skipped GPU or cuda test hides a cuda backend that did not
# start (tests/gpu/lib/gpu.lua already fails then; this catches any test that still skips).
# Except the tests of a machine without a driver, and NCCL's where the toolkit has no NCCL (an
# optional part: the report shows why they skipped).
if grep -E '\(Skipped\)|\*\*\*Skipped' "$log_dir/ctest-gpu.txt" "$log_dir/ctest-unit.txt" |
  grep -vqE 'NoDriver|WithoutADriver|CudaNccl'; then
  echo "gpu_check: tests were skipped on a GPU machine (counted as failures)" >&2
  status=1
fi
{
  echo "## GPU tests"; echo; fenced "$log_dir/ctest-gpu.txt"; echo
  echo "## cuda unit tests"; echo; fenced <(tail -n 40 "$log_dir/ctest-unit.txt"); echo
} >>"$report"

# Labs at full size.
if compgen -G "scripts/labs/*.lua" >/dev/null; then
  echo "gpu_check: labs" >&2
  echo "## Labs (--full)" >>"$report"
  for lab in scripts/labs/*.lua; do
    [[ "$lab" == */tour.lua ]] && continue  # the tour runs every lab again
    start=$(date +%s.%N)
    timeout "$lab_limit" "$kiln" "$lab" --full >"$log_dir/lab.txt" 2>&1
    rc=$?
    secs=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
    ((rc == 0)) || status=1
    { echo; echo "### $lab (exit $rc, ${secs} s)"; echo; fenced <(tail -n 80 "$log_dir/lab.txt"); } >>"$report"
  done
  echo >>"$report"
fi

# Benchmarks.
if ((bench)) && [ -x bench/run.sh ]; then
  echo "gpu_check: benchmarks" >&2
  bench/run.sh >"$log_dir/bench.txt" 2>&1 || status=1
  { echo "## Benchmarks (bench/run.sh)"; echo; fenced "$log_dir/bench.txt"; echo; } >>"$report"
fi

{ echo "## Verdict"; echo; ((status == 0)) && echo "PASS" || echo "FAIL"; } >>"$report"
echo "gpu_check: report in $report" >&2
exit $status
