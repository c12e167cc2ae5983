#!/usr/bin/env bash
# The disk cache against another user (issue: another user's code must never run as you through
# the cache). As root, setpriv plays two users, a victim (uid 4242) and an attacker (uid 4343):
#  1. a cache folder below a folder others may write to without the sticky bit is refused (the
#     attacker could rename it away and put theirs in its place); the kernel still runs;
#  2. in a sticky shared folder (like /tmp) the victim's own cache works;
#  3. an entry the attacker planted in the victim's folder (root's doing, as a stand-in for any
#     way in) is refused because it is not the victim's file, and one renamed to another key is
#     refused because it holds its own key;
#  4. a FIFO at an entry's name neither hangs nor stops the cache.
# Skipped (77) unless run as root with setpriv.
set -euo pipefail
kiln=$(realpath "$1")
if [[ $(id -u) != 0 ]] || ! command -v setpriv >/dev/null; then
  echo "SKIP: needs root and setpriv to play two users"
  exit 77
fi
work=$(mktemp -d)
trap "rm -rf $work" EXIT
chmod 755 "$work"
export KILN_BACKEND=cpu KILN_COMPILE_NOTICE=0 KILN_NVRTC_CHECK=0 HOME="$work"

# Runs kiln's -e code as uid $1 with KILN_CACHE_DIR=$2; stdout to $work/out, stderr to $work/err.
# (KILN_PCH=0: the cache then holds only kernel entries, which the cases below pick by age.)
as_user() {
  local uid=$1 dir=$2 code=$3
  KILN_PCH=0 KILN_CACHE_DIR="$dir" setpriv --reuid="$uid" --regid="$uid" --clear-groups \
    "$kiln" -e "$code" >"$work/out" 2>"$work/err"
}
fail() { echo "FAIL: $*"; cat "$work/err"; exit 1; }

script='local k = cuda.jit("__global__ void k(int* x) { x[threadIdx.x] = 7 + threadIdx.x; }")
local d = cuda.device_array(8, "int32")
k[{1, 8}](d)
assert(d:copy_to_host()[8] == 14, "wrong answer")
io.write(k:info().cache)'

# 1. A shared folder without the sticky bit.
mkdir -m 0777 "$work/open"
as_user 4242 "$work/open/cache" "$script" || fail "the kernel did not run without a cache"
[[ $(cat "$work/out") == compiled ]] || fail "expected a compile, got $(cat "$work/out")"
grep -q "other users can write to without the sticky bit" "$work/err" || fail "no warning about $work/open"
as_user 4242 "$work/open/cache" "$script"
[[ $(cat "$work/out") == compiled ]] || fail "a refused cache answered from disk"

# 2. A sticky shared folder: the victim's cache works.
mkdir -m 1777 "$work/sticky"
as_user 4242 "$work/sticky/cache" "$script" || fail "first run in a sticky folder"
as_user 4242 "$work/sticky/cache" "$script" || fail "second run in a sticky folder"
[[ $(cat "$work/out") == disk ]] || fail "expected a disk hit, got $(cat "$work/out")"
[[ ! -s "$work/err" ]] || fail "warnings in a sound cache"

# 3a. The attacker's file at the entry's name (here root puts it there and gives it to 4343).
cache="$work/sticky/cache"
entry=$(ls "$cache"/*.kc | head -1)
chown 4343:4343 "$entry" && chmod 0644 "$entry"  # readable, so only its owner gives it away
as_user 4242 "$cache" "$script" || fail "run after a foreign entry"
[[ $(cat "$work/out") == compiled ]] || fail "a foreign entry was loaded"
grep -q "belongs to user 4343" "$work/err" || fail "no warning naming the foreign owner"

# 3b. The victim's own entry of another kernel, renamed to this kernel's key.
other='local k = cuda.jit("__global__ void other(int* x) { x[0] = 1; }")
k[{1, 1}](cuda.device_array(1, "int32"))'
as_user 4242 "$cache" "$other" || fail "storing another kernel"
entry=$(ls -t "$cache"/*.kc | tail -1)  # this kernel's (the older one)
newest=$(ls -t "$cache"/*.kc | head -1)
[[ "$entry" != "$newest" ]] || fail "expected two entries"
cp "$newest" "$entry" && chown 4242:4242 "$entry"
as_user 4242 "$cache" "$script" || fail "run after a renamed entry"
[[ $(cat "$work/out") == compiled ]] || fail "a renamed entry was loaded"
grep -q "stored under another key" "$work/err" || fail "no warning naming the renamed entry"

# 4. A FIFO at the entry's name: no hang (timeout would fail the test), the kernel runs.
rm -f "$entry"
mkfifo "$entry" && chown 4242:4242 "$entry"
timeout 60 env KILN_PCH=0 KILN_CACHE_DIR="$cache" setpriv --reuid=4242 --regid=4242 --clear-groups \
  "$kiln" -e "$script" >"$work/out" 2>"$work/err" || fail "run with a FIFO entry (status $?)"
[[ $(cat "$work/out") == compiled ]] || fail "expected a compile past the FIFO"
echo "cache_two_users: ok"
