#!/usr/bin/env bash
# Backend choice: auto falls back to cpu quietly; an explicit cuda without a GPU fails at
# start-up naming what is missing; an unknown name is an error.
set -euo pipefail
kiln="$1"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
out=$(KILN_BACKEND=auto "$kiln" -e 'io.write(cuda.backend())' 2>&1)
if [ "$("$kiln" -e 'io.write(tostring(cuda.is_available()))')" = false ]; then
  [ "$out" = cpu ] || { echo "auto without a GPU: expected cpu, got '$out'"; exit 1; }
  if KILN_BACKEND=cuda "$kiln" -e 'print("ran")' > out.txt 2> err.txt; then
    echo "KILN_BACKEND=cuda without a GPU did not fail"; exit 1
  fi
  grep -q "cuda backend cannot run: " err.txt || { echo "no reason given:"; cat err.txt; exit 1; }
  grep -q ran out.txt && { echo "the script ran anyway"; exit 1; }
  grep -q "KILN_BACKEND=cuda, but" err.txt || { echo "the variable is not named:"; cat err.txt; exit 1; }
  if KILN_BACKEND=cpu "$kiln" --backend cuda -e 'print("ran")' > out.txt 2> err.txt; then
    echo "--backend cuda without a GPU did not fail"; exit 1
  fi
  grep -q "\-\-backend cuda, but the cuda backend cannot run: " err.txt ||
    { echo "--backend cuda is not named:"; cat err.txt; exit 1; }
fi
[ "$(KILN_BACKEND=cpu "$kiln" -e 'io.write(cuda.backend())')" = cpu ]
if KILN_BACKEND=tpu "$kiln" -e 'cuda.backend()' 2> err.txt; then echo "unknown backend accepted"; exit 1; fi
grep -q "not one of auto, cuda, cpu" err.txt || { cat err.txt; exit 1; }
# The cpu backend's workers: one per core this process may use (its affinity), not per core of
# the machine; under mpirun, the ranks on a node share them (OMPI_COMM_WORLD_LOCAL_SIZE).
workers() { KILN_BACKEND=cpu "$@" "$kiln" -e 'io.write(cuda.get_current_device().multiprocessors)'; }
if command -v taskset >/dev/null; then
  [ "$(workers taskset -c 0)" = 1 ] || { echo "taskset -c 0: $(workers taskset -c 0) workers"; exit 1; }
fi
cores=$(nproc)
[ "$(workers env)" = "$cores" ] || { echo "$(workers env) workers on $cores cores"; exit 1; }
[ "$(workers env OMPI_COMM_WORLD_LOCAL_SIZE="$cores")" = 1 ] || { echo "ranks do not share cores"; exit 1; }
[ "$(workers env OMPI_COMM_WORLD_LOCAL_SIZE="$cores" KILN_CPU_THREADS=3)" = 3 ] ||
  { echo "KILN_CPU_THREADS does not win under mpirun"; exit 1; }
echo "backend_choice: ok"
