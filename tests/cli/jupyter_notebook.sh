#!/usr/bin/env bash
# The shipped notebook (scripts/notebooks/labs.ipynb: the Julia, blur and histogram labs) run
# headless on the kiln kernel by `jupyter nbconvert --execute`, as CI runs it; passes when every
# cell ran without an error and an output holds a PNG. Exits 77 (skipped) where kiln was built
# without the kernel or nbconvert is not installed.
# Usage: bash jupyter_notebook.sh /path/to/kiln
set -euo pipefail
KILN=$(realpath "$1")
notebook=$(cd "$(dirname "$0")/../../scripts/notebooks" && pwd)/labs.ipynb
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
source "$(dirname "$0")/lib/jupyter.sh"
require_jupyter nbconvert nbclient
use_private_jupyter
cd "$WORK"
run_checking_kernels "$PYTHON" -m nbconvert --to notebook --execute --ExecutePreprocessor.timeout=600 \
  --output-dir "$WORK" --output executed.ipynb "$notebook"
"$PYTHON" - "$WORK/executed.ipynb" <<'PY'
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
