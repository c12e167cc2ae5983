#!/usr/bin/env bash
# The cpu backend with clang++ as the kernel compiler (KILN_CXX): the cross-backend cases
# (every lab kernel; warp, barrier and atomic kernels; tests/gpu/lib/cross_cases.lua) built by
# clang++ give the results the default compiler's build gives. Clang optimises across a module
# more eagerly than GCC (it once folded away the thread identity the runtime writes).
# Skipped (77) without clang++. Usage: bash clang_modules.sh /path/to/kiln
set -euo pipefail
kiln=$(realpath "$1")
cases="$(cd "$(dirname "$0")/../gpu/lib" && pwd)/cross_cases.lua"
command -v clang++ >/dev/null || { echo "SKIP: no clang++"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export KILN_BACKEND=cpu
"$kiln" "$cases" run "$work/default.lua"
KILN_CXX=clang++ "$kiln" "$cases" run "$work/clang.lua"
"$kiln" "$cases" compare "$work/default.lua" "$work/clang.lua"
