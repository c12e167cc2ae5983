#!/usr/bin/env bash
# Every ```lua block of README.md and docs/*.md runs: each one alone, with kiln on the cpu
# backend, in a fresh temporary folder, and must exit 0. A block that cannot run on its own (a
# signature summary, a fragment, a REPL transcript, GPU-only or mpirun-only code) says so on the
# line before its fence, with a reason:
#   <!-- not run: a summary of signatures, not a program -->
# A block that needs kiln options says so the same way, and runs with them:
#   <!-- run with: --check -->
# An unmarked block that fails fails the test; so does a marker with no reason, or one that is
# not followed by a ```lua block. A block that requires kiln.mpi runs under `mpirun -n 2` (and
# is skipped, saying so, where there is no MPI). Every relative link in those files must name a
# file that exists.
# Usage: bash docs_blocks.sh /path/to/kiln
set -euo pipefail
KILN=$(realpath "$1")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export TMPDIR="$WORK/tmp" KILN_BACKEND=cpu KILN_COMPILE_NOTICE=0 KILN_CACHE_DIR="$WORK/cache"
export KILN_HISTORY=""
mkdir -p "$TMPDIR" "$WORK/blocks"
: >"$WORK/index"
failures=0
fail() { echo "FAIL $1"; failures=$((failures + 1)); }

# Split each file into blocks: $WORK/blocks/N.lua, and a line "N<TAB>file:line<TAB>marker<TAB>
# options" in $WORK/index, where marker is the "not run" reason ("-" for a block that runs) or
# "!problem" for a malformed marker, and options the "run with" words ("-" for none). N counts
# the index's lines, across files.
cd "$ROOT"
for md in README.md docs/*.md; do
  awk -v md="$md" -v dir="$WORK/blocks" -v start="$(wc -l <"$WORK/index")" '
    function flush_marker() {
      if (marker != "") printf "%d\t%s:%d\t!a marker not followed by a ```lua block\t-\n", ++n + start, md, marker_line
      marker = ""; marker_reason = ""; options = "-"
    }
    BEGIN { n = 0; inside = 0; marker = ""; other = 0; options = "-" }
    # Inside a block of another language: skip to its end.
    other && /^ *```/ { other = 0; next }
    other { next }
    inside && /^```[ \t]*$/ { inside = 0; close(file); next }
    inside { print > file; next }
    /^```lua[ \t]*$/ {
      n++
      file = dir "/" (n + start) ".lua"
      printf "" > file
      reason = marker_reason == "" ? "-" : marker_reason
      printf "%d\t%s:%d\t%s\t%s\n", n + start, md, NR, reason, options
      marker = ""; marker_reason = ""; options = "-"; inside = 1; next
    }
    /^ *```/ { flush_marker(); other = 1; next }
    /^<!-- *not run/ {
      flush_marker()
      marker = $0; marker_line = NR
      marker_reason = $0
      sub(/^<!-- *not run:? */, "", marker_reason); sub(/ *-->.*$/, "", marker_reason)
      if (marker_reason == "") marker_reason = "!a not-run marker without a reason"
      next
    }
    /^<!-- *run with:/ {
      flush_marker()
      marker = $0; marker_line = NR; marker_reason = ""
      options = $0
      sub(/^<!-- *run with: */, "", options); sub(/ *-->.*$/, "", options)
      if (options == "") { marker_reason = "!a run-with marker without options"; options = "-" }
      next
    }
    /^[ \t]*$/ { next }
    { flush_marker() }
    END { flush_marker() }
  ' "$md" >>"$WORK/index"
done

# mpirun for the blocks that use kiln.mpi: as root too (CI), and 2 ranks on any core count.
have_mpi=1 no_mpi_reason=""
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
if ! command -v mpirun >/dev/null; then
  have_mpi=0 no_mpi_reason="no mpirun"
elif ! "$KILN" -e 'local ok, e = pcall(require, "kiln.mpi") os.exit(tostring(e):find("built without MPI") and 1 or 0)'; then
  have_mpi=0 no_mpi_reason="this kiln was built without MPI"
fi

ran=0 skipped=0
while IFS=$'\t' read -r n where reason options; do
  if [[ $reason == '!'* ]]; then
    fail "$where: ${reason#!}"
    continue
  fi
  if [[ $reason != - ]]; then
    skipped=$((skipped + 1))
    continue
  fi
  dir=$(mktemp -d "$WORK/run-XXXXXX")
  cp "$WORK/blocks/$n.lua" "$dir/block.lua"
  # A block that requires kiln.mpi runs on 2 ranks under mpirun, where there is one.
  launcher=()
  words=()
  [[ $options == - ]] || read -r -a words <<<"$options"
  if grep -q 'require *[("]*kiln\.mpi' "$dir/block.lua"; then
    if ((!have_mpi)); then
      echo "docs_blocks: $where not run: $no_mpi_reason"
      skipped=$((skipped + 1))
      continue
    fi
    # Open MPI's unloaded plugins leak what LeakSanitizer can neither name nor suppress
    # (tests/mpi/lib.sh): no leak check under mpirun in sanitizer builds.
    launcher=(env "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" mpirun -n 2)
  fi
  rc=0
  out=$(cd "$dir" && timeout 60 "${launcher[@]}" "$KILN" "${words[@]}" block.lua 2>&1 </dev/null) || rc=$?
  ran=$((ran + 1))
  if ((rc != 0)); then
    fail "$where: the block exits $rc:"
    sed 's/^/    /' <<<"$out" | head -n 20
  fi
done <"$WORK/index"

# Every relative link of the same files resolves (outside code: fenced blocks and `spans`).
for md in README.md docs/*.md; do
  while IFS=$'\t' read -r line target; do
    path=${target%%#*}
    [[ -z $path || -e $ROOT/$(dirname "$md")/$path ]] || fail "$md:$line: the link ($target) names no file"
  done < <(awk '
    /^ *```/ { fenced = !fenced; next }
    fenced { next }
    {
      text = $0
      gsub(/`[^`]*`/, "", text)
      while (match(text, /\]\([^) ]+\)/)) {
        target = substr(text, RSTART + 2, RLENGTH - 3)
        if (target !~ /^(https?:|mailto:|#)/) printf "%d\t%s\n", NR, target
        text = substr(text, RSTART + RLENGTH)
      }
    }' "$ROOT/$md")
done

echo "docs_blocks: $ran blocks ran, $skipped marked not run"
((failures == 0)) && echo "docs_blocks: ok"
exit $((failures > 0))
