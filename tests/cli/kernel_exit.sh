#!/usr/bin/env bash
# abort() and exit(N) in a kernel end its launch with an error naming them and the thread, in
# every way the cpu backend runs threads, and the session goes on (with the NVRTC check off:
# NVRTC refuses exit() in device code before the host compiler sees it).
# Usage: bash kernel_exit.sh /path/to/kiln
set -euo pipefail
kiln=$(realpath "$1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
[ "$("$kiln" -e 'io.write(cuda.backend())' 2>/dev/null)" = cpu ] || { echo "cpu backend only"; exit 77; }
out=$(KILN_NVRTC_CHECK=0 KILN_CACHE_DIR="$work/cache" KILN_NOTES=0 KILN_COMPILE_NOTICE=0 "$kiln" -e '
local bodies = {
  loop = "if (threadIdx.x == 3) { if (how == 0) abort(); else std::exit(3); } x[threadIdx.x] = 1;",
  regions = "__shared__ int s[32]; s[threadIdx.x] = 1; __syncthreads(); if (threadIdx.x == 3) { if (how == 0) std::abort(); else exit(3); } x[threadIdx.x] = s[0];",
  fibers = "int p; int v = __match_all_sync(0xffffffffu, 1, &p); if (threadIdx.x == 3) { if (how == 0) abort(); else exit(3); } x[threadIdx.x] = v;",
}
for mode, body in pairs(bodies) do
  local k = cuda.jit("#include <cstdlib>\n__global__ void boom(int* x, int how) { " .. body .. " }")
  local x = cuda.device_array(32, "int32")
  for how = 0, 1 do
    local ok, err = pcall(function() k[{1, 32}](x, how) end)
    assert(not ok, mode .. ": the launch returned")
    local what = how == 0 and "abort() called in a kernel" or "exit(3) called in a kernel"
    assert(tostring(err):find(what, 1, true) and tostring(err):find("kernel .boom."),
           mode .. ": " .. tostring(err))
  end
  assert(k:info().threads == mode, mode .. " ran as " .. tostring(k:info().threads))
end
-- The session goes on: a kernel after them works.
local k = cuda.jit("__global__ void fine(int* x) { x[threadIdx.x] = 7; }")
local x = cuda.device_array(32, "int32")
k[{1, 32}](x)
print(x:copy_to_host()[32])') || { echo "FAIL: kiln ended (status $?): $out" >&2; exit 1; }
[ "$out" = 7 ] || { echo "FAIL: '$out'" >&2; exit 1; }
echo "kernel_exit: ok"
