#!/usr/bin/env bash
# Where the labs write: into the folder --out names, else into a new temporary folder they name
# on a line of their own; never into the current folder. Usage: bash labs_output.sh /path/to/kiln
set -uo pipefail
KILN=$(realpath "$1")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
export TMPDIR="$WORK/tmp"
mkdir -p "$TMPDIR"
failures=0
fail() { echo "FAIL $1"; failures=$((failures + 1)); }

# No --out: the picture goes to a fresh folder under $TMPDIR, and the lab says which.
out=$("$KILN" "$ROOT/scripts/labs/julia.lua" --size 64 --reps 1 2>&1) || fail "julia without --out: $out"
dir=$(sed -n 's/^ *output: *\([^ ]*\).*/\1/p' <<<"$out")
[[ $dir == "$TMPDIR"/kiln-labs-* ]] || fail "the output folder is not announced under \$TMPDIR: $out"
[[ -s $dir/julia.png ]] || fail "julia.png is not in the announced folder '$dir'"
[[ -z $(ls -A "$WORK" | grep -v '^tmp$') ]] || fail "files written to the current folder: $(ls -A "$WORK")"

# --out DIR: the files go there, and no temporary folder is made.
mkdir named
out=$("$KILN" "$ROOT/scripts/labs/julia.lua" --size 64 --reps 1 --out named 2>&1) || fail "julia --out: $out"
[[ -s named/julia.png ]] || fail "julia.png is not in the folder --out named"
[[ $out != *"output:"* ]] || fail "a temporary folder was announced despite --out: $out"
[[ $(ls "$TMPDIR" | wc -l) -eq 1 ]] || fail "--out still made a temporary folder: $(ls "$TMPDIR")"

# --no-pictures: nothing to write, so no temporary folder is made or announced.
out=$("$KILN" "$ROOT/scripts/labs/julia.lua" --size 64 --reps 1 --no-pictures 2>&1) || fail "julia --no-pictures: $out"
[[ $out != *"output:"* ]] || fail "a temporary folder was announced with --no-pictures: $out"
[[ $(ls "$TMPDIR" | wc -l) -eq 1 ]] || fail "--no-pictures still made a temporary folder: $(ls "$TMPDIR")"
[[ -z $(ls -A "$WORK" | grep -v -e '^tmp$' -e '^named$') ]] || fail "files written to the current folder: $(ls -A "$WORK")"

((failures == 0)) && echo "labs_output: ok"
exit $((failures > 0))
