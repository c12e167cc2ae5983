#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite (ctest) on the cpu backend.
# Usage: scripts/test.sh [--sanitizers] [ctest arguments...]
#   --sanitizers  then also builds the debug preset (build-debug/: AddressSanitizer with
#                 LeakSanitizer, UndefinedBehaviorSanitizer without recovery) and runs the whole
#                 suite again under it; the test preset sets ASAN_OPTIONS/UBSAN_OPTIONS
#                 (CMakePresets.json, docs/reliability.md). CI (.ci/run) passes it.
# A failing test fails the run at once: no retries (the terminal tests used to flake, see
# tests/cli/lib/pty.sh wait_exit_status).
set -euo pipefail
cd "$(dirname "$0")/.."
sanitizers=0
if [[ ${1:-} == --sanitizers ]]; then
  sanitizers=1
  shift
fi
scripts/setup.sh
ctest --preset "${KILN_PRESET:-release}" -j "$(nproc)" "$@"
if ((sanitizers)); then
  KILN_PRESET=debug scripts/setup.sh
  ctest --preset debug -j "$(nproc)" "$@"
fi
