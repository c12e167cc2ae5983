#!/usr/bin/env bash
# The shipped notebook (scripts/notebooks/labs.ipynb: the Julia, blur and histogram labs) run
# headless on the kiln kernel by `jupyter nbconvert --execute`, as CI runs it; passes when every
# cell ran without an error and an output holds a PNG. Exits 77 (skipped) where kiln was built
# without the kernel or nbconvert is not installed.
# Usage: bash jupyter_notebook.sh /path/to/kiln
set -euo pipefail
kiln=$(realpath "$1")
notebook=$(cd "$(dirname "$0")/../../scripts/notebooks" && pwd)/labs.ipynb
python=/usr/bin/python3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if "$kiln" --jupyter "$work/none.json" 2>&1 | grep -q "built without the Jupyter kernel"; then
  echo "SKIP: kiln was built without the Jupyter kernel (scripts/setup.sh installs xeus-dev)"
  exit 77
fi
if ! "$python" -c 'import nbconvert, nbclient' 2>/dev/null; then
  echo "SKIP: jupyter-nbconvert or python3-nbclient is not installed (scripts/setup.sh installs them)"
  exit 77
fi

"$kiln" --install-kernel --prefix "$work/prefix" >/dev/null
export JUPYTER_PATH="$work/prefix/share/jupyter" JUPYTER_DATA_DIR="$work/data"
export JUPYTER_RUNTIME_DIR="$work/runtime" JUPYTER_CONFIG_DIR="$work/config" HOME="$work/home"
export TMPDIR="$work" KILN_BACKEND=cpu
mkdir -p "$HOME"
cd "$work"
"$python" -m nbconvert --to notebook --execute --ExecutePreprocessor.timeout=600 \
  --output-dir "$work" --output executed.ipynb "$notebook"
"$python" - "$work/executed.ipynb" <<'PY'
import json, sys
nb = json.load(open(sys.argv[1]))
outputs = [o for c in nb["cells"] if c["cell_type"] == "code" for o in c.get("outputs", [])]
errors = [o for o in outputs if o["output_type"] == "error"]
assert not errors, errors
pngs = [o for o in outputs if "image/png" in o.get("data", {})]
assert len(pngs) >= 5, f"{len(pngs)} PNG outputs (julia twice, blur, histogram, ramp expected)"
text = "".join("".join(o.get("text", "")) for o in outputs if o["output_type"] == "stream")
for verdict in ["julia: OK", "blur: OK", "histogram: OK"]:
    assert verdict in text, f"no '{verdict}' in the streams:\n{text}"
assert any("text/html" in o.get("data", {}) for o in outputs), "no array shown as HTML"
print(f"notebook ran: {len(outputs)} outputs, {len(pngs)} PNGs")
PY
