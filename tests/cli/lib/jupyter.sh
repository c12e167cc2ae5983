# Helpers for the Jupyter tests (jupyter_kernel.sh, jupyter_notebook.sh). Source it after setting
# KILN (the binary) and WORK (a private folder, removed by the caller).
PYTHON=/usr/bin/python3

# Exits 77 (skipped) unless kiln has the kernel and Python imports every module named.
require_jupyter() {
  if "$KILN" --jupyter "$WORK/none.json" 2>&1 | grep -q "built without the Jupyter kernel"; then
    echo "SKIP: kiln was built without the Jupyter kernel (scripts/setup.sh installs xeus-dev)"
    exit 77
  fi
  local module
  for module in "$@"; do
    if ! "$PYTHON" -c "import $module" 2>/dev/null; then
      echo "SKIP: Python cannot import $module (scripts/setup.sh installs it)"
      exit 77
    fi
  done
}

# Installs the kernelspec under WORK/prefix and points Jupyter there; everything Jupyter writes
# (runtime files, config, HOME) and every temporary folder go under WORK; the cpu backend.
use_private_jupyter() {
  "$KILN" --install-kernel --prefix "$WORK/prefix" >/dev/null
  export JUPYTER_PATH="$WORK/prefix/share/jupyter" JUPYTER_DATA_DIR="$WORK/data"
  export JUPYTER_RUNTIME_DIR="$WORK/runtime" JUPYTER_CONFIG_DIR="$WORK/config" HOME="$WORK/home"
  export TMPDIR="$WORK" KILN_BACKEND=cpu
  mkdir -p "$HOME"
}

# Runs a command (Python starting kernels) with its standard error, and so the kernels', saved in
# WORK/stderr and shown; fails when a kernel reported a sanitizer error there (LeakSanitizer
# reports at the kernel's exit, which Jupyter does not look at).
run_checking_kernels() {
  local status=0
  "$@" 2>"$WORK/stderr" || status=$?
  cat "$WORK/stderr" >&2
  if grep -Eq "ERROR: [A-Za-z]+Sanitizer|runtime error:" "$WORK/stderr"; then
    echo "FAIL: a kernel reported a sanitizer error (above)" >&2
    return 1
  fi
  return "$status"
}
