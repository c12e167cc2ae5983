#!/usr/bin/env bash
# Ctrl-C through the REPL on a real terminal (tmux), on the cpu backend. First during a compile
# that would take minutes (a constexpr loop of 2e9 steps for the host compiler; one step for the
# NVRTC check that comes first): the compile stops at once with a Lua error that says so, the
# compiler is killed, its temporary folder removed, and the REPL, its globals and the JIT keep
# working. Then during a long kernel launch (about 20 s of work on 2 cores): it stops at its
# next chunk of blocks with the launch's error. Last, a kernel that never ends: the second
# Ctrl-C abandons it. Usage: bash repl_interrupt.sh /path/to/kiln
set -euo pipefail
KILN=$(realpath "$1")
WORK=$(mktemp -d)
trap 'tmux -S "$WORK/tmux.sock" kill-server 2>/dev/null || true; rm -rf "$WORK"' EXIT
source "$(dirname "$0")/lib/pty.sh"
mkdir "$WORK/tmp"

cat > "$WORK/slow.cu" <<'CU'
#ifdef KILN_CPU
constexpr long kOuter = 20000;
#else
constexpr long kOuter = 1;
#endif
__host__ __device__ constexpr long burn() {
  long s = 0;
  for (long i = 0; i < kOuter; ++i)
    for (long j = 0; j < 100000; ++j) s += (i ^ j) & 3;
  return s;
}
__global__ void slow(int* out) {
  constexpr long v = burn();
  out[0] = static_cast<int>(v & 1);
}
CU

start_kiln KILN_BACKEND=cpu "KILN_CACHE_DIR=$WORK/cache" "TMPDIR=$WORK/tmp"
pid=$(kiln_pid)
type_keys 'g = 41' Enter
type_keys "slow = cuda.jit_file('$WORK/slow.cu')" Enter
type_keys 'd = cuda.device_array(1, "int32")' Enter
type_keys 'slow[{1, 1}](d)' Enter

# Ctrl-C once the compiler runs: its translation unit is written and kiln has a child process.
deadline=$((SECONDS + 20))
until compgen -G "$WORK/tmp/kiln-*/kernel.cpp" > /dev/null && [[ -n $(children_of "$pid") ]]; do
  ((SECONDS < deadline)) || fail "the compile of slow.cu never started"
  sleep 0.05
done
tm send-keys -t kiln C-c
wait_for 'compile of .*slow\.cu \(kernels: slow\) interrupted by Ctrl-C'

# The REPL is back with its state; the compiler is gone and so is its folder.
type_keys 'g + 1' Enter
wait_for '^42$'
[[ -z $(children_of "$pid") ]] || fail "the compiler still runs after Ctrl-C"
# (The session's copy of the precompiled prelude stays until kiln ends: jit/cpu/prelude_pch.h.)
left=$(find "$WORK/tmp" -type f ! -path '*/kiln/cpu_prelude.h*')
[[ -z $left ]] || fail "compile folder left behind: $left"

# The JIT still works: a new kernel compiles and gives the right answer (3 * (0 + ... + 31)).
type_keys 'fast = cuda.jit("__global__ void fast(int* x) { x[threadIdx.x] = 3 * threadIdx.x; }")' Enter
type_keys 'e = cuda.device_array(32, "int32"); fast[{1, 32}](e); print(e:copy_to_host():sum())' Enter
wait_for '^1488$'

# Ctrl-C during a long cpu-backend kernel (seconds of work per chunk of blocks; an LCG chain per
# thread that the compiler cannot shorten) stops the launch at its next chunk with the launch's
# own error, and the REPL goes on. A first launch with n = 1 compiles it, so that the Ctrl-C
# lands in the long launch, not in a compile.
type_keys 'spin = cuda.jit("__global__ void spin(unsigned long long* out, long n) { unsigned long long x = threadIdx.x; for (long i = 0; i < n; ++i) x = x * 6364136223846793005ULL + 1442695040888963407ULL; out[blockIdx.x * blockDim.x + threadIdx.x] = x; }")' Enter
type_keys 'o = cuda.device_array(256 * 64, "uint64"); spin[{256, 64}](o, 1); print("compiled")' Enter
wait_for '^compiled$'
type_keys 'spin[{256, 64}](o, 2500000); print("finished")' Enter
sleep 0.5
tm send-keys -t kiln C-c
wait_for 'kiln: stdin:1: interrupted$'
pane | grep -q '^finished$' && fail "the launch finished instead of stopping"
type_keys 'g + 2' Enter
wait_for '^43$'

# A kernel that never ends (a block spinning on a flag no one sets; loop mode, so the launch
# runs its blocks on the REPL's own thread and on a helper): the first Ctrl-C asks it to stop, which it
# never sees; the second abandons it, and the REPL goes on with its state, and launches work.
type_keys 'stuck = cuda.jit("__global__ void stuck(volatile int* x) { while (x[0] == 0) { } }")' Enter
type_keys 'flag = cuda.device_array(1, "int32"); stuck[{64, 128}](flag); print("returned")' Enter
sleep 2
tm send-keys -t kiln C-c
sleep 0.5
pane | grep -q 'abandoned' && fail "the first Ctrl-C abandoned the launch"
tm send-keys -t kiln C-c
wait_for "kernel 'stuck'.*abandoned at the second Ctrl-C"
pane | grep -q '^returned$' && fail "the stuck launch returned"
type_keys 'g + 3' Enter
wait_for '^44$'
type_keys 'fast[{1, 32}](e); print(e:copy_to_host():sum() + 1)' Enter
wait_for '^1489$'
echo "repl_interrupt: ok"
