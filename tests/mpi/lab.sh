#!/usr/bin/env bash
# The distributed lab (scripts/labs/heat.lua) alone and on 1, 2 and 4 ranks: each run checks
# that its answer equals the one-process answer bit for bit, its allreduce totals, and a Lua
# reference. An uneven split (size 50 on 4 ranks) and float32 run too.
# Usage: bash lab.sh /path/to/kiln
. "$(dirname "$0")/lib.sh" "$1"
lab=$here/../../scripts/labs/heat.lua

# Runs the lab with the given launcher words and checks its verdicts for n ranks.
check_lab() {
  local n=$1
  shift
  local out
  out=$("$@" 2>&1) || fail "heat lab ($*): $out"
  for verdict in "$n ranks = 1 rank: OK" "allreduce totals: OK" "Lua reference: OK"; do
    grep -qF "$verdict" <<<"$out" || fail "heat lab ($*) lacks '$verdict': $out"
  done
}

check_lab 1 "$kiln" "$lab" --reps 1
for n in 1 2 4; do
  check_lab "$n" timeout 120 mpirun -n "$n" "$kiln" "$lab" --reps 1
done
check_lab 4 timeout 120 mpirun -n 4 "$kiln" "$lab" --reps 1 --size 50 --steps 30 --dtype float32
echo "mpi lab: OK"
