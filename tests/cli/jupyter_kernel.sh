#!/usr/bin/env bash
# The Jupyter kernel from outside: --install-kernel writes the kernelspec where it is told
# (--prefix DIR, --user under JUPYTER_DATA_DIR), then Jupyter starts `kiln --jupyter` from it and
# tests/jupyter/kernel_test.py (jupyter_kernel_test) talks the protocol to it. Everything Jupyter
# writes goes to a private folder. Exits 77 (skipped) where kiln was built without the kernel or
# python3-jupyter-kernel-test is not installed.
# Usage: bash jupyter_kernel.sh /path/to/kiln
set -euo pipefail
KILN=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
source "$here/lib/jupyter.sh"
require_jupyter jupyter_kernel_test
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# --user honours JUPYTER_DATA_DIR; --prefix DIR writes DIR/share/jupyter/kernels/kiln.
out=$(JUPYTER_DATA_DIR="$WORK/user" "$KILN" --install-kernel --user)
grep -q "$WORK/user/kernels/kiln" <<<"$out" || fail "--install-kernel --user said: $out"
"$KILN" --install-kernel --prefix "$WORK/prefix" >/dev/null
for spec in "$WORK/user/kernels/kiln/kernel.json" "$WORK/prefix/share/jupyter/kernels/kiln/kernel.json"; do
  [ -f "$spec" ] || fail "no $spec"
  "$PYTHON" - "$spec" "$KILN" <<'PY'
import json, sys
spec = json.load(open(sys.argv[1]))
assert spec["argv"] == [sys.argv[2], "--jupyter", "{connection_file}"], spec["argv"]
assert spec["language"] == "lua" and spec["interrupt_mode"] == "signal", spec
PY
done
out=$("$KILN" --user 2>&1 || true)
grep -q "goes with --install-kernel" <<<"$out" || fail "--user alone was accepted: $out"
out=$("$KILN" --install-kernel --user --prefix "$WORK/x" 2>&1 || true)
grep -q "cannot go together" <<<"$out" || fail "--user with --prefix was accepted: $out"
out=$("$KILN" --jupyter "$WORK/missing.json" 2>&1 || true)
grep -q "cannot read $WORK/missing.json: No such file" <<<"$out" || fail "a missing connection file: $out"

use_private_jupyter
cd "$WORK"
run_checking_kernels "$PYTHON" "$here/../jupyter/kernel_test.py"
