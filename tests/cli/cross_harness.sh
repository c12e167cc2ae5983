#!/usr/bin/env bash
# The cross-backend harness (tests/gpu/cross_backend.sh) on the cpu backend against itself: every
# case runs, matches its Lua reference, and the cpu backend gives the same results twice (atomics
# across workers included), the second time with region mode off: kernels the first run ran as
# regions run as coroutines.
# On a GPU machine the same harness compares cpu with cuda (ctest label gpu).
# Usage: bash cross_harness.sh /path/to/kiln
set -euo pipefail
CROSS_SECOND=cpu CROSS_SECOND_REGIONS=0 exec bash "$(dirname "$0")/../gpu/cross_backend.sh" "$1"
