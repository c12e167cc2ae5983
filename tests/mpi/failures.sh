#!/usr/bin/env bash
# A failing rank ends the whole job: with a non-zero status, a message naming the rank, and no
# hang (each run is bounded by timeout, which would fail the test). The other ranks wait in a
# receive, a barrier or a collective when the failure comes.
# Usage: bash failures.sh /path/to/kiln
. "$(dirname "$0")/lib.sh" "$1"

# Runs the Lua code on n ranks; it must fail, not time out, and say "rank <r> of <n> failed".
expect_job_failure() {
  local n=$1 r=$2 code=$3 out status=0
  printf '%s\n' "$code" >"$work/job.lua"
  out=$(run_ranks "$n" "$work/job.lua" 2>&1) || status=$?
  ((status != 0)) || fail "the job succeeded: $code"
  ((status != 124)) || fail "the job hung (timeout): $code"
  grep -q "rank $r of $n failed" <<<"$out" || fail "no message naming rank $r: $out"
}

# A Lua error on rank 1 while rank 0 waits for its message.
expect_job_failure 2 1 'local mpi = require "kiln.mpi"
if mpi.rank() == 1 then error("boom") end
mpi.recv(array.zeros(4), 1)'
# os.exit with a failure status on the last rank while the others wait at a barrier.
expect_job_failure 3 2 'local mpi = require "kiln.mpi"
if mpi.rank() == 2 then os.exit(3) end
mpi.barrier()'
# A kernel fault (a null pointer) on rank 0 while rank 1 waits in an allreduce.
expect_job_failure 2 0 'local mpi = require "kiln.mpi"
if mpi.rank() == 0 then
  local k = cuda.jit("__global__ void poke(float* p) { p[threadIdx.x + (1ll << 40)] = 1; }")
  k[{1, 1}](cuda.device_array(1, "float32"))
end
mpi.allreduce(array.zeros(2))'
# A collective error caught by pcall is not a failure: the job goes on and exits 0.
printf '%s\n' 'local mpi = require "kiln.mpi"
assert(not pcall(mpi.allreduce, array.zeros(mpi.rank() + 1)))
mpi.barrier()' >"$work/ok.lua"
run_ranks 2 "$work/ok.lua" || fail "a caught collective error ended the job"
# libmpi is loaded by require "kiln.mpi" only (the plugin libkiln_mpi.so), not at every start.
maps_have_mpi='for l in io.lines("/proc/self/maps") do if l:find("libmpi") then return true end end'
"$kiln" -e "assert(not (function() $maps_have_mpi end)(), 'libmpi loaded at start')" ||
  fail "kiln loads libmpi without kiln.mpi"
printf '%s\n' "require 'kiln.mpi'; assert((function() $maps_have_mpi end)(), 'no libmpi')" >"$work/maps.lua"
run_ranks 1 "$work/maps.lua" || fail "require 'kiln.mpi' did not load libmpi"
# A kiln without its plugin beside it: a Lua error naming the plugin, the script goes on.
mkdir "$work/alone" && cp "$kiln" "$work/alone/kiln"
printf '%s\n' 'local ok, e = pcall(require, "kiln.mpi")
assert(not ok and e:find("libkiln_mpi.so", 1, true), e)
print("went on")' >"$work/alone.lua"
out=$(timeout 120 mpirun -n 1 "$work/alone/kiln" "$work/alone.lua" 2>&1) || fail "no plugin: $out"
grep -q "went on" <<<"$out" || fail "no plugin: $out"
echo "mpi failures: OK"
