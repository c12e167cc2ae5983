#!/usr/bin/env bash
# Cross-backend equivalence (label gpu): runs tests/gpu/lib/cross_cases.lua on the cpu backend and on
# the cuda backend and compares the results (integers identical, floats within each case's
# tolerance). Exits 77 (skipped) only where no GPU is expected (lib/gpu.lua says when one is);
# fails where one is expected and the cuda backend does not start. CROSS_SECOND=cpu compares the cpu
# backend with itself, to check the harness on a machine without a GPU; CROSS_SECOND_REGIONS=0
# turns region mode off for that second run (so kernels with barriers run as coroutines).
# Usage: bash cross_backend.sh /path/to/kiln
set -euo pipefail
kiln=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
second=${CROSS_SECOND:-cuda}
if [ "$second" = cuda ]; then
  # The same rule as the Lua GPU tests (lib/gpu.lua): exit 0 on cuda, 77 to skip, 1 to fail.
  GPU_LIB="$here/lib" "$kiln" -e 'package.path = os.getenv("GPU_LIB") .. "/?.lua;" .. package.path
                                require("gpu").require_cuda()' || exit $?
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
KILN_BACKEND=cpu "$kiln" "$here/lib/cross_cases.lua" run "$work/cpu.lua"
KILN_BACKEND="$second" KILN_REGIONS="${CROSS_SECOND_REGIONS:-1}" \
  "$kiln" "$here/lib/cross_cases.lua" run "$work/second.lua"
"$kiln" "$here/lib/cross_cases.lua" compare "$work/cpu.lua" "$work/second.lua"
