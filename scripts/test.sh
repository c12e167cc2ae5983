#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite (ctest) on the cpu backend.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
ctest --preset "${KILN_PRESET:-release}" -j "$(nproc)" "$@"
