#!/usr/bin/env bash
# kiln's private temporary folders (kiln-XXXXXX) that a killed process left behind are removed
# by the next kiln that compiles a kernel (before its first compile; a kiln that compiles
# nothing leaves $TMPDIR alone), and nothing else is: not a folder touched within the hour (a running
# compile's), not the labs' output folders (kiln-labs-XXXXXX), not a link, not another name.
set -euo pipefail
kiln=$(realpath "$1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export TMPDIR=$work/tmp
mkdir -p "$TMPDIR" "$work/elsewhere"
mkdir "$TMPDIR/kiln-Ab12Cd" "$TMPDIR/kiln-Fresh1" "$TMPDIR/kiln-labs-Xy34Zw" "$TMPDIR/kilnXAbcdef"
touch "$TMPDIR/kiln-Ab12Cd/kernel.cu" "$work/elsewhere/keep"
ln -s "$work/elsewhere" "$TMPDIR/kiln-Link01"
for d in kiln-Ab12Cd kiln-labs-Xy34Zw kilnXAbcdef; do touch -d '2 hours ago' "$TMPDIR/$d"; done
touch -h -d '2 hours ago' "$TMPDIR/kiln-Link01"
export KILN_BACKEND=cpu KILN_CACHE_DIR=$work/cache
"$kiln" -e 'io.write("ran")' >"$work/out"
[[ $(cat "$work/out") == ran ]] || { echo "FAIL: kiln did not run"; exit 1; }
[[ -e "$TMPDIR/kiln-Ab12Cd" ]] || { echo "FAIL: a kiln that compiled nothing swept"; exit 1; }
"$kiln" -e 'cuda.jit("__global__ void k(int* p) { *p = 7; }")[{1, 1}](cuda.device_array(1, "int32")) io.write("ran")' >"$work/out"
[[ $(cat "$work/out") == ran ]] || { echo "FAIL: kiln did not compile"; exit 1; }
[[ ! -e "$TMPDIR/kiln-Ab12Cd" ]] || { echo "FAIL: the stale folder is still there"; exit 1; }
for kept in kiln-Fresh1 kiln-labs-Xy34Zw kilnXAbcdef kiln-Link01; do
  [[ -e "$TMPDIR/$kept" ]] || { echo "FAIL: $kept was removed"; exit 1; }
done
[[ -e "$work/elsewhere/keep" ]] || { echo "FAIL: a link's target was emptied"; exit 1; }
echo "temp_sweep: ok"
