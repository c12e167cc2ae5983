#!/usr/bin/env bash
# The labs' command lines are checked before anything runs: an unknown option names itself and
# the lab's options, a bad value or a missing --out folder fails at once, the tour refuses a lab
# name it does not know, and sizes given positionally or by option are the sizes that run.
# Usage: bash labs_options.sh /path/to/kiln
set -euo pipefail
KILN=$(realpath "$1")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
LABS=$ROOT/scripts/labs
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
export TMPDIR="$WORK/tmp" KILN_BACKEND=cpu KILN_COMPILE_NOTICE=0
mkdir -p "$TMPDIR"
failures=0
fail() { echo "FAIL $1"; failures=$((failures + 1)); }

# run LAB ARGS...: runs a lab, leaving its output (stdout and stderr) in $out and its status in $rc.
run() {
  local lab=$1
  shift
  rc=0
  out=$(timeout 120 "$KILN" "$LABS/$lab.lua" "$@" 2>&1) || rc=$?
}

# expect_usage_error WHAT LAB ARGS... -- PATTERN...: the lab must exit 2 at once (no report
# header: nothing ran) with a message holding every PATTERN.
expect_usage_error() {
  local what=$1 lab=$2
  shift 2
  local args=()
  while [[ $1 != -- ]]; do args+=("$1"); shift; done
  shift
  run "$lab" "${args[@]}"
  ((rc == 2)) || fail "$what: exit status $rc, expected 2 (a usage error): $out"
  [[ $out != *"== $lab:"* ]] || fail "$what: the lab started before refusing its arguments: $out"
  [[ $out != *"stack traceback"* ]] || fail "$what: a usage error printed a Lua traceback: $out"
  local p
  for p in "$@"; do
    [[ $out == *"$p"* ]] || fail "$what: the message lacks '$p': $out"
  done
}

# Unknown options: named, with the lab's own options listed (and one the lab does not take absent).
expect_usage_error "copy --bogus" copy --bogus -- "unknown option --bogus" "--size" "--dtype" "--reps" "--out"
[[ $out != *"--max-exp"* ]] || fail "copy --bogus lists an option of another lab: $out"
expect_usage_error "matmul --bogus 3" matmul --bogus 3 -- "unknown option --bogus" "--m" "--n" "--k" "--size"
expect_usage_error "reduce --bogus=1" reduce --bogus=1 -- "unknown option --bogus" "--min-exp" "--max-exp"
expect_usage_error "tour --bogus" tour --bogus -- "unknown option --bogus" "--only" "--skip"

# Values: missing, malformed, out of a fixed set.
expect_usage_error "copy --size" copy --size -- "--size needs a value"
expect_usage_error "copy --size --full" copy --size --full -- "--size needs a value"
expect_usage_error "copy --size ten" copy --size ten -- "--size wants a positive integer, not 'ten'"
expect_usage_error "copy --size 0" copy --size 0 -- "--size wants a positive integer"
expect_usage_error "copy --dtype int32" copy --dtype int32 -- "--dtype wants one of float32, float64"
expect_usage_error "julia --re x" julia --re x -- "--re wants a number"
expect_usage_error "copy --full=1" copy --full=1 -- "--full takes no value"
expect_usage_error "copy --size twice" copy --size 10 --size 20 -- "--size given twice"

# Positional arguments: only where the usage line has them.
expect_usage_error "copy 100" copy 100 -- "unexpected argument '100'" "--size"
expect_usage_error "matmul 1 2 3 4" matmul 1 2 3 4 -- "unexpected argument '4'" "M N K"
expect_usage_error "matmul 5 --m 6" matmul 5 --m 6 -- "--m given twice"
expect_usage_error "blur a.png b.png" blur a.png b.png -- "unexpected argument 'b.png'"
expect_usage_error "blur with a missing image" blur "$WORK/none.png" -- "cannot open" "none.png"
expect_usage_error "blur IMAGE --size" blur "$WORK/none.png" --size 8 -- "has its own size"

# --out: a folder that does not exist, or a file, fails before the lab runs.
expect_usage_error "julia --out missing" julia --size 16 --out "$WORK/missing/deeper" -- "--out $WORK/missing/deeper" "does not exist"
touch "$WORK/a-file"
expect_usage_error "julia --out a file" julia --size 16 --out "$WORK/a-file" -- "is not a folder"
expect_usage_error "tour --out missing" tour --only copy --out "$WORK/missing" -- "does not exist"
[[ ! -e $WORK/missing ]] || fail "--out made the missing folder"

# The tour: a lab it does not know is an error naming it and listing the labs.
expect_usage_error "tour --only nosuch" tour --only nosuch -- "no lab named 'nosuch'" "copy" "matmul_tiled" "heat"
expect_usage_error "tour --skip copy,nosuch" tour --skip copy,nosuch -- "--skip" "no lab named 'nosuch'" "julia"
expect_usage_error "tour --only ''" tour --only "" -- "--only names no lab"

# --help: the usage line, the lab's own options and the common ones; exit 0, nothing run.
for lab in abs_sum blur blur_shared copy histogram julia matmul matmul_tiled normalize overflow reduce tour; do
  run "$lab" --help
  ((rc == 0)) || fail "$lab --help: exit status $rc: $out"
  [[ $out == "usage: kiln scripts/labs/$lab.lua"* ]] || fail "$lab --help does not start with its usage line: $out"
  [[ $out == *"--out DIR"* && $out == *"--reps R"* ]] || fail "$lab --help lacks the common options: $out"
  [[ $out != *"== $lab:"* ]] || fail "$lab --help ran the lab: $out"
  # Every option the usage line names is one the lab takes (an unknown one would be refused).
  for opt in $(grep -o -- '--[a-z][a-z-]*' <<<"$(head -n 1 <<<"$out")" | sort -u); do
    [[ $opt == --help ]] && continue
    run "$lab" "$opt" --help
    ((rc == 0)) || fail "$lab: its usage names $opt, which it refuses: $out"
  done
done
run copy --size 5 --bogus --help
((rc == 0)) || fail "--help does not win over a mistake elsewhere: $out"

# Sizes are honoured: positionally (M N K) and by option, for both matrix labs.
for lab in matmul matmul_tiled; do
  run "$lab" 33 7 5 --reps 1
  ((rc == 0)) || fail "$lab 33 7 5: exit status $rc: $out"
  [[ $out == *"(33 x 5) * (5 x 7)"* ]] || fail "$lab 33 7 5 did not run M=33 N=7 K=5: $out"
  run "$lab" --m 9 --n 4 --k 6 --reps 1
  [[ $out == *"(9 x 6) * (6 x 4)"* ]] || fail "$lab --m 9 --n 4 --k 6 did not run those sizes: $out"
  run "$lab" 12 --size 3 --reps 1
  [[ $out == *"(12 x 3) * (3 x 3)"* ]] || fail "$lab 12 --size 3: M from the argument, the rest from --size: $out"
done
run copy --size 1000 --reps 1
[[ $out == *"size:"*"1000 float32"* ]] || fail "copy --size 1000 did not copy 1000 values: $out"
run normalize --size=777 --dtype float32 --reps 1
[[ $out == *"777 float32"* ]] || fail "normalize --size=777 --dtype float32 was not honoured: $out"
run blur --height 20 --width 36 --reps 1 --no-pictures
[[ $out == *"36 x 20 gray"* ]] || fail "blur --height 20 --width 36 was not honoured: $out"
run histogram --size 5000 --blocks 3 --reps 1 --no-pictures
[[ $out == *"5000 uint8 values, 3 blocks"* ]] || fail "histogram --size 5000 --blocks 3 was not honoured: $out"
run julia --size 32 --max-iter 20 --reps 1 --no-pictures
[[ $out == *"32 x 24 pixels"*"MAX_ITER 20"* ]] || fail "julia --size 32 --max-iter 20 was not honoured: $out"

# A picture from --out lands there; the tour runs just the labs --only names.
mkdir "$WORK/pictures"
run tour --only copy,julia --reps 1 --out "$WORK/pictures"
((rc == 0)) || fail "tour --only copy,julia: exit status $rc: $out"
[[ $out == *"2 of 2 labs passed"* ]] || fail "tour --only copy,julia did not run exactly two labs: $out"
[[ -s $WORK/pictures/julia.png ]] || fail "the tour's julia.png is not in --out"

((failures == 0)) && echo "labs_options: ok"
exit $((failures > 0))
