#!/usr/bin/env bash
# The disk cache across processes: a second process finds the kernel on disk; 8 processes
# compiling the same kernel into an empty cache all succeed; corrupt entries are recompiled.
set -euo pipefail
kiln="$1"
export KILN_BACKEND=cpu
export KILN_CACHE_DIR="$(mktemp -d)"
trap 'rm -rf "$KILN_CACHE_DIR"' EXIT

script='
local k = cuda.jit("__global__ void k(int* x, int v) { x[threadIdx.x] = v + threadIdx.x; }")
local d = cuda.device_array(32, "int32")
k[{1, 32}](d, 10)
assert(d:copy_to_host():sum() == 32 * 10 + 31 * 32 // 2, "wrong result")
io.write(k:info().cache)'

first=$("$kiln" -e "$script")
second=$("$kiln" -e "$script")
[ "$first" = compiled ] || { echo "first run: expected compiled, got $first"; exit 1; }
[ "$second" = disk ] || { echo "second run: expected disk, got $second"; exit 1; }

# Corrupt every entry: the next run warns, recompiles and still computes the right answer.
for f in $(find "$KILN_CACHE_DIR" -type f); do printf 'garbage' > "$f"; done
third=$("$kiln" -e "$script" 2>"$KILN_CACHE_DIR/stderr")
[ "$third" = compiled ] || { echo "after corruption: expected compiled, got $third"; exit 1; }
grep -q "corrupt\|ignor\|recompil\|invalid" "$KILN_CACHE_DIR/stderr" || { echo "no warning for the corrupt entry"; cat "$KILN_CACHE_DIR/stderr"; exit 1; }
rm -f "$KILN_CACHE_DIR/stderr"

# Eight processes racing on an empty cache.
rm -rf "$KILN_CACHE_DIR"/*
pids=()
for i in 1 2 3 4 5 6 7 8; do "$kiln" -e "$script" > "$KILN_CACHE_DIR.out$i" 2>&1 & pids+=($!); done
for p in "${pids[@]}"; do wait "$p" || { echo "a racing process failed"; cat "$KILN_CACHE_DIR".out*; exit 1; }; done
rm -f "$KILN_CACHE_DIR".out*
[ "$("$kiln" -e "$script")" = disk ] || { echo "after the race: expected disk"; exit 1; }

# KILN_CACHE=0: no disk cache at all.
[ "$(KILN_CACHE=0 "$kiln" -e "$script")" = compiled ] || { echo "KILN_CACHE=0 still read the disk"; exit 1; }
echo "jit_cache: ok"
