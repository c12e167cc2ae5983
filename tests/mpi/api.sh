#!/usr/bin/env bash
# kiln.mpi's functions (tests/mpi/api.lua) on 2 and 3 ranks, each rank checking answers it
# can work out alone; and require "kiln.mpi" without mpirun, which must say it needs mpirun.
# Usage: bash api.sh /path/to/kiln
. "$(dirname "$0")/lib.sh" "$1"

for n in 2 3; do
  out=$(run_ranks "$n" "$here/api.lua" 2>&1) || fail "api.lua on $n ranks: $out"
  grep -q "mpi api: $n ranks OK" <<<"$out" || fail "api.lua on $n ranks printed: $out"
done

if out=$("$kiln" -e 'require "kiln.mpi"' 2>&1); then fail "kiln.mpi loaded without mpirun"; fi
grep -q "kiln.mpi needs mpirun" <<<"$out" || fail "without mpirun: $out"
echo "mpi api: OK"
