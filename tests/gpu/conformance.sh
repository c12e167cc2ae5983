#!/usr/bin/env bash
# The conformance suite (tests/conformance/*.lua) on the cuda backend (label gpu). Exits 77
# (skipped) only where no GPU is expected (lib/gpu.lua says when one is); fails where one is and
# the cuda backend does not start, or when any script fails.
# Usage: bash conformance.sh /path/to/kiln
set -uo pipefail
kiln=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
GPU_LIB="$here/lib" "$kiln" -e 'package.path = os.getenv("GPU_LIB") .. "/?.lua;" .. package.path
                               require("gpu").require_cuda()' || exit $?
failed=0
for script in "$here"/../conformance/*.lua; do
  if KILN_BACKEND=cuda "$kiln" "$script" >/dev/null; then
    echo "pass  $(basename "$script")"
  else
    echo "FAIL  $(basename "$script")"
    failed=1
  fi
done
exit $failed
