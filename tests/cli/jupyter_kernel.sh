#!/usr/bin/env bash
# The Jupyter kernel from outside: --install-kernel writes the kernelspec where it is told
# (--prefix DIR, --user under JUPYTER_DATA_DIR), then Jupyter starts `kiln --jupyter` from it and
# tests/jupyter/kernel_test.py (jupyter_kernel_test) talks the protocol to it. Everything Jupyter
# writes goes to a private folder. Exits 77 (skipped) where kiln was built without the kernel or
# python3-jupyter-kernel-test is not installed.
# Usage: bash jupyter_kernel.sh /path/to/kiln
set -euo pipefail
kiln=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
python=/usr/bin/python3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if "$kiln" --jupyter "$work/none.json" 2>&1 | grep -q "built without the Jupyter kernel"; then
  echo "SKIP: kiln was built without the Jupyter kernel (scripts/setup.sh installs xeus-dev)"
  exit 77
fi
if ! "$python" -c 'import jupyter_kernel_test' 2>/dev/null; then
  echo "SKIP: python3-jupyter-kernel-test is not installed (scripts/setup.sh installs it)"
  exit 77
fi
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# --user honours JUPYTER_DATA_DIR; --prefix DIR writes DIR/share/jupyter/kernels/kiln.
JUPYTER_DATA_DIR="$work/user" "$kiln" --install-kernel --user | grep -q "$work/user/kernels/kiln" ||
  fail "--install-kernel --user did not say where it wrote"
"$kiln" --install-kernel --prefix "$work/prefix" >/dev/null
for spec in "$work/user/kernels/kiln/kernel.json" "$work/prefix/share/jupyter/kernels/kiln/kernel.json"; do
  [ -f "$spec" ] || fail "no $spec"
  "$python" - "$spec" "$kiln" <<'PY'
import json, sys
spec = json.load(open(sys.argv[1]))
assert spec["argv"] == [sys.argv[2], "--jupyter", "{connection_file}"], spec["argv"]
assert spec["language"] == "lua" and spec["interrupt_mode"] == "signal", spec
PY
done
out=$("$kiln" --user 2>&1 || true)
grep -q "goes with --install-kernel" <<<"$out" || fail "--user alone was accepted: $out"
out=$("$kiln" --install-kernel --user --prefix "$work/x" 2>&1 || true)
grep -q "cannot go together" <<<"$out" || fail "--user with --prefix was accepted: $out"

export JUPYTER_PATH="$work/prefix/share/jupyter" JUPYTER_DATA_DIR="$work/data"
export JUPYTER_RUNTIME_DIR="$work/runtime" JUPYTER_CONFIG_DIR="$work/config" HOME="$work/home"
export TMPDIR="$work" KILN_BACKEND=cpu
mkdir -p "$HOME"
cd "$work"
"$python" "$here/../jupyter/kernel_test.py"
