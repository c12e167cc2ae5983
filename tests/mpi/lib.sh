# Shared by the tests/mpi/*.sh tests: kiln's path, an mpirun that may run as root (CI's user) and
# oversubscribe (4 ranks on 2 cores), and a skip (exit 77) where kiln or the machine has no MPI.
# Usage (sourced): . lib.sh /path/to/kiln
set -euo pipefail
kiln=$(realpath "$1")
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export KILN_BACKEND=cpu OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
# In sanitizer builds: no leak check under mpirun. Open MPI's plugins keep allocations past
# MPI_Finalize and are unloaded by it, so LeakSanitizer can neither name nor suppress them (their
# frames are "<unknown module>"). Address and UB checks stay on; kiln's own code is leak-checked
# by the rest of the suite.
if [[ -n "${ASAN_OPTIONS:-}" ]]; then export ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0"; fi
if ! command -v mpirun >/dev/null; then
  echo "SKIP: no mpirun (scripts/setup.sh installs openmpi-bin)"
  exit 77
fi
if "$kiln" -e 'local ok, e = pcall(require, "kiln.mpi") os.exit(tostring(e):find("built without MPI") and 1 or 0)'; then :; else
  echo "SKIP: this kiln was built without MPI (scripts/setup.sh installs libopenmpi-dev)"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Runs kiln under mpirun with n ranks, bounded in time: a hang fails the test.
run_ranks() {
  local n=$1
  shift
  timeout 120 mpirun -n "$n" "$kiln" "$@"
}

# Fails the test with a message.
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
