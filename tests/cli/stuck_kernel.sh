#!/usr/bin/env bash
# Ctrl-C against a kernel that never returns (a block spinning on a flag no one sets), after
# NVRTC has run in the process (its check compile re-installs kiln's SIGINT handler without
# SA_RESETHAND): the first Ctrl-C asks the launch to stop, which a spinning block never sees;
# the second ends the process, as lua.c's does, rather than leaving it to SIGKILL.
set -euo pipefail
kiln=$(realpath "$1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/spin.lua" <<'LUA'
local k = cuda.jit("__global__ void spin(volatile int* x) { while (x[0] == 0) { } }")
io.stderr:write("launching\n")
k[{1, 1}](cuda.device_array(1, "int32"))
LUA
KILN_BACKEND=cpu KILN_COMPILE_NOTICE=0 "$kiln" "$work/spin.lua" 2>"$work/err" &
pid=$!
for _ in $(seq 100); do grep -q launching "$work/err" 2>/dev/null && break; sleep 0.2; done
grep -q launching "$work/err" || { echo "FAIL: the script did not reach its launch"; kill -9 $pid; exit 1; }
sleep 0.5
kill -INT $pid
sleep 0.5
kill -0 $pid 2>/dev/null || { echo "FAIL: the first Ctrl-C ended the process"; exit 1; }
kill -INT $pid
for _ in $(seq 50); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
if kill -0 $pid 2>/dev/null; then
  kill -9 $pid
  echo "FAIL: two Ctrl-C did not end a process stuck in a kernel"
  exit 1
fi
status=0
wait $pid || status=$?
[[ $status == 130 ]] || { echo "FAIL: status $status, not 130 (SIGINT)"; exit 1; }
echo "stuck_kernel: ok"
