#!/usr/bin/env bash
# Ctrl-C against a kernel that never returns (a block spinning on a flag no one sets, in loop
# mode and in fiber mode, on the main thread and on helpers), after NVRTC has run in the
# process: the first Ctrl-C asks the launch to stop, which a spinning block never sees; the
# second abandons the launch, and the script ends with its error (the REPL's case is in
# repl_interrupt.sh), rather than leaving it to SIGKILL.
set -euo pipefail
kiln=$(realpath "$1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/spin.lua" <<'LUA'
local src = os.getenv("SPIN_WARP") and
  "__global__ void spin(volatile int* x) { while (__shfl_sync(0xffffffffu, x[0], 0) == 0) { } }" or
  "__global__ void spin(volatile int* x) { while (x[0] == 0) { } }"
local k = cuda.jit(src)
k[{64, 128}](cuda.to_device(array.ones(1, "int32")))  -- (compiled first: the Ctrl-C is the launch's)
io.stderr:write("launching\n")
k[{64, 128}](cuda.to_device(array.zeros(1, "int32")))
LUA
# Runs the spinning script (env: $@), presses Ctrl-C twice, and checks the launch was abandoned.
abandon() {
  env "$@" KILN_BACKEND=cpu KILN_COMPILE_NOTICE=0 "$kiln" "$work/spin.lua" 2>"$work/err" &
  local pid=$! status=0
  for _ in $(seq 100); do grep -q launching "$work/err" 2>/dev/null && break; sleep 0.2; done
  grep -q launching "$work/err" || { echo "FAIL: the script did not reach its launch"; kill -9 $pid; exit 1; }
  sleep 1
  kill -INT $pid
  sleep 0.5
  kill -0 $pid 2>/dev/null || { echo "FAIL: the first Ctrl-C ended the process"; cat "$work/err"; exit 1; }
  kill -INT $pid
  for _ in $(seq 50); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
  if kill -0 $pid 2>/dev/null; then
    kill -9 $pid
    echo "FAIL: two Ctrl-C did not end a launch stuck in a kernel ($*)"
    exit 1
  fi
  wait $pid || status=$?
  [[ $status == 1 ]] || { echo "FAIL: status $status, not 1 ($*)"; cat "$work/err"; exit 1; }
  grep -q "kernel 'spin'.*abandoned at the second Ctrl-C" "$work/err" ||
    { echo "FAIL: no abandon message ($*)"; cat "$work/err"; exit 1; }
}
abandon MODE=loop
abandon SPIN_WARP=1
echo "stuck_kernel: ok"
