#!/usr/bin/env bash
# The mutation check: plants each small bug of the list below in a copy of the committed tree
# (build-mutants/src, from `git archive HEAD`), rebuilds it, runs the whole suite there and reports
# which tests caught it. A mutant caught by fewer than two tests is a gap in the suite; the
# script exits 1 when there is one. docs/testing.md says how to read and extend it.
# Usage: scripts/mutants.sh [NAME...]   (no names: every mutant; about 1.5 min each on 2 cores)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work="$root/build-mutants"
src="$work/src"

# name | file | text planted instead of... | ...this text (which must occur exactly once)
mutants=$(cat <<'EOF'
block_index_y|kernels_src/kiln/cpu_modes.h|return uint3{unsigned(blk % g.x), 0u,|return uint3{unsigned(blk % g.x), unsigned((blk / g.x) % g.y),
cache_key_options|jit/jit.cpp|std::string()};|join(request.options, "\n")};
uint16_size|runtime/dtype.cpp|{"uint16", "u16", "unsigned short", 4, true, false},|{"uint16", "u16", "unsigned short", 2, true, false},
reduce_drops_init|jit/reduce.cpp|out[blockIdx.x] = value[0];|out[blockIdx.x] = use_init ? kiln_reduce_op<T>(init, value[0]) : value[0];
atomic_float_add_new|kernels_src/kiln/cpu_atomics.h|return kiln_cpu::atomic_update_bits<float, unsigned>(p, [v](float o) { return o + v; }) + v;|return kiln_cpu::atomic_update_bits<float, unsigned>(p, [v](float o) { return o + v; });
syncthreads_count_and|runtime/cpu/block_runner.cpp|      return res_and_;  // mutant|      return res_count_;
check_one_past_end|runtime/cpu/check.cpp|if (a >= it->first + it->second) return false;|if (a > it->first + it->second) return false;
format_edge_items|runtime/array_format.cpp|constexpr std::int64_t kEdgeItems = 2;|constexpr std::int64_t kEdgeItems = 3;
EOF
)
wanted=("$@")

# Replaces the one occurrence of old with new in file; exits 3 when old does not occur once.
plant() {
  python3 - "$1" "$2" "$3" <<'PY'
import sys
path, new, old = sys.argv[1], sys.argv[2], sys.argv[3]
text = open(path).read()
if text.count(old) != 1:
    sys.exit(3)
open(path, "w").write(text.replace(old, new))
PY
}

# Runs the suite in the copy (a fresh kernel cache each time: a planted cache-key bug must not
# be hidden, or caused, by entries of another run); prints the failing tests, one per line.
failing_tests() {
  rm -rf "$src/build/test-cache"
  (cd "$src" && ctest --test-dir build -j "$(nproc)" -LE gpu --timeout 300 2>&1 || true) |
    sed -n 's/^[[:space:]]*[0-9]* - \(.*\) (\(Failed\|Timeout\|SEGFAULT\|Exception\|Child aborted\|Subprocess aborted\))$/\1/p'
}

rm -rf "$src"
mkdir -p "$src"
git -C "$root" archive HEAD | tar -x -C "$src"
cmake -S "$src" -B "$src/build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$src/build" -j "$(nproc)" >/dev/null
echo "mutants: baseline" >&2
baseline=$(failing_tests)
if [ -n "$baseline" ]; then
  echo "mutants: the unmutated suite fails:"$'\n'"$baseline" >&2
  exit 2
fi

report="$work/report.md"
{
  echo "| mutant | file | tests that caught it |"
  echo "|---|---|---|"
} >"$report"
gaps=0
while IFS='|' read -r name file new old; do
  [ -n "$name" ] || continue
  if ((${#wanted[@]})) && [[ " ${wanted[*]} " != *" $name "* ]]; then continue; fi
  echo "mutants: $name" >&2
  cp "$src/$file" "$work/original"
  if ! plant "$src/$file" "$new" "$old"; then
    echo "| $name | $file | STALE: the text to mutate is not in the file once |" >>"$report"
    gaps=$((gaps + 1))
    continue
  fi
  if ! cmake --build "$src/build" -j "$(nproc)" >"$work/build.log" 2>&1; then
    caught="does not compile (not a test result)"
    gaps=$((gaps + 1))
  else
    tests=$(failing_tests)
    count=$(grep -c . <<<"$tests" || true)
    caught="$count: $(tr '\n' ' ' <<<"$tests" | cut -c1-300)"
    ((count >= 2)) || gaps=$((gaps + 1))
  fi
  echo "| $name | $file | $caught |" >>"$report"
  cp "$work/original" "$src/$file"
done <<<"$mutants"
cmake --build "$src/build" -j "$(nproc)" >/dev/null  # leave the copy unmutated
cat "$report"
echo "mutants: report in $report; $gaps mutant(s) caught by fewer than two tests" >&2
((gaps == 0))
