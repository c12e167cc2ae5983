#!/usr/bin/env bash
# The cpu prelude is precompiled once per set of flags, beside the first compile that needs it,
# kept in the disk cache (none without one), and used (GCC says so with -H: "! .../cpu_prelude.h.gch") by every
# later compile, in this process or the next; a coroutine module gets its own; KILN_PCH=0
# turns it off. clang is not given one.
# Usage: bash prelude_pch.sh /path/to/kiln
set -euo pipefail
kiln=$(realpath "$1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
[ "$("$kiln" -e 'io.write(cuda.backend())' 2>/dev/null)" = cpu ] || { echo "cpu backend only"; exit 77; }
real_cxx=$(command -v "${KILN_CXX:-c++}")
if "$real_cxx" --version | grep -qi clang; then echo "GCC only"; exit 77; fi

# A host compiler that logs each run: its kind (header or kernel) and the headers it reads.
cat >"$work/cxx" <<WRAP
#!/bin/sh
case " \$* " in *" c++-header "*) echo header >>"$work/runs" ;; *) echo kernel >>"$work/runs" ;; esac
exec "$real_cxx" -H "\$@" 2>>"$work/headers"
WRAP
chmod +x "$work/cxx"
export KILN_CXX="$work/cxx" KILN_NVRTC_CHECK=0 KILN_CACHE_DIR="$work/cache" KILN_COMPILE_NOTICE=0
count() { grep -c "^$1\$" "$work/runs" || true; }
used() { grep -c '^! .*/kiln/cpu_prelude.h.gch$' "$work/headers" || true; }
run() { rm -f "$work/runs" "$work/headers"; "$kiln" -e "$1"; }
scale() {  # a loop kernel, distinct per argument, checked
  printf '%s' "local k = cuda.jit('__global__ void scale$1(float* y) { y[threadIdx.x] *= $1; }')
local y = cuda.to_device(array.arange(8, 'float32'))
k[{1, 8}](y)
assert(y:copy_to_host()[8] == 7 * $1, 'wrong result')"
}

# The first compile builds the precompiled prelude beside itself and stores it.
run "$(scale 2)"
[ "$(count kernel)" = 1 ] && [ "$(count header)" = 1 ] || fail "first compile: $(cat "$work/runs")"
big=$(find "$work/cache" -name '*.kc' -size +1M | wc -l)
[ "$big" = 1 ] || fail "the precompiled prelude is one cache entry, found $big"

# The next process uses it: no header build, GCC reads the .gch.
run "$(scale 3)"
[ "$(count header)" = 0 ] || fail "the second process builds the prelude again"
[ "$(used)" = 1 ] || fail "the second compile does not use the precompiled prelude: $(head -5 "$work/headers")"

# Two compiles in one process: one build at most, the second compile uses it.
run "$(scale 4); $(scale 5)"
[ "$(count header)" = 0 ] && [ "$(used)" = 2 ] || fail "two compiles: $(cat "$work/runs"), used $(used)"

# A coroutine module (a __syncthreads_count after &&, which regions decline) has its own flags,
# so its own precompiled prelude.
coroutine='local k = cuda.jit([[
__global__ void bins(const int* v, int* h, int n) {
  __shared__ int s[4];
  if (threadIdx.x < 4) s[threadIdx.x] = 0;
  __syncthreads();
  for (int i = threadIdx.x; i < n; i += blockDim.x) atomicAdd(&s[v[i] % 4], 1);
  if (n > 0 && __syncthreads_count(1) != blockDim.x) return;
  if (threadIdx.x < 4) h[threadIdx.x] = s[threadIdx.x];
}]], {defines = {NONCE = NONCE_VALUE}})
local h = cuda.device_array(4, "int32")
k[{1, 32}](cuda.to_device(array.arange(100, "int32")), h, 100)
local t = h:copy_to_host()
assert(t[1] == 25 and t[4] == 25, "bins: wrong result")
io.write(k:info().threads)'
out=$(run "${coroutine/NONCE_VALUE/1}")
[ "$out" = coroutines ] || fail "the coroutine kernel ran as '$out'"
[ "$(count header)" = 1 ] || fail "a coroutine module builds its own prelude: $(cat "$work/runs")"
run "${coroutine/NONCE_VALUE/2}" >/dev/null
[ "$(count header)" = 0 ] && [ "$(used)" = 1 ] || fail "the coroutine prelude is not reused"

# Without a disk cache to keep it, none is built (every process's first compile would wait for
# one it then throws away).
KILN_CACHE=0 run "$(scale 7)"
[ "$(count header)" = 0 ] && [ "$(count kernel)" = 1 ] || fail "KILN_CACHE=0 builds a prelude: $(cat "$work/runs")"

# KILN_PCH=0: none built, none used.
KILN_PCH=0 run "$(scale 6)"
[ "$(count header)" = 0 ] && [ "$(used)" = 0 ] || fail "KILN_PCH=0 still precompiles"
echo "prelude pch: ok"
