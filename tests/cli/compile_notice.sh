#!/usr/bin/env bash
# A compile that takes longer than KILN_COMPILE_NOTICE milliseconds (default 500) says so on
# stderr, once; a cached kernel says nothing; 0 turns it off; a bad value is a warning.
# Usage: bash compile_notice.sh /path/to/kiln
set -euo pipefail
kiln=$(realpath "$1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
script='local k = cuda.jit("__global__ void noticed(int* x) { x[0] = 1; }")
k[{1, 1}](cuda.device_array(1, "int32"))'
fail() { echo "FAIL: $*" >&2; exit 1; }

err=$(KILN_CACHE_DIR="$work/cache" KILN_COMPILE_NOTICE=1 "$kiln" -e "$script" 2>&1 >/dev/null)
[[ "$err" == *"kiln: compiling noticed (kernel.cu)..."* ]] || fail "no notice for a compile: '$err'"
[ "$(grep -c 'compiling' <<<"$err")" = 1 ] || fail "the notice is said once: '$err'"
err=$(KILN_CACHE_DIR="$work/cache" KILN_COMPILE_NOTICE=1 "$kiln" -e "$script" 2>&1 >/dev/null)
[ -z "$err" ] || fail "a disk-cache hit says nothing, got '$err'"
err=$(KILN_CACHE_DIR="$work/other" KILN_COMPILE_NOTICE=0 "$kiln" -e "$script" 2>&1 >/dev/null)
[ -z "$err" ] || fail "KILN_COMPILE_NOTICE=0 says nothing, got '$err'"
err=$(KILN_CACHE_DIR="$work/cache" KILN_COMPILE_NOTICE=soon "$kiln" -e "$script" 2>&1 >/dev/null)
[[ "$err" == *"KILN_COMPILE_NOTICE='soon' is not a number of milliseconds"* ]] || fail "bad value: '$err'"
echo "compile notice: ok"
