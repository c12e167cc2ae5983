#!/usr/bin/env bash
# The disk cache under kill -9: a script that compiles and checks several kernels runs many
# times, each run killed with SIGKILL after a random delay (0 to 1.5 s) so that kills land in
# the middle of compiles and of cache writes. Then the script runs to completion twice, over
# every kernel the killed runs may have stored: every kernel must give the right answer, the
# cache must never warn about a corrupt entry (writes are atomic: temp file + rename), and the
# second complete run must load everything from disk. Usage: bash cache_kill.sh /path/to/kiln
set -euo pipefail
kiln=$(realpath "$1")
WORK=$(mktemp -d)
export KILN_BACKEND=cpu KILN_CACHE_DIR="$WORK/cache" TMPDIR="$WORK/tmp"
mkdir "$WORK/tmp"
trap 'rm -rf "$WORK"' EXIT
RUNS=${CACHE_KILL_RUNS:-20}

# RUN=i compiles kernels shared by every run (a template at two dtypes, a reduction) and one
# kernel of its own (FACTOR=i), so that every run has a compile and a cache write to interrupt.
# FROM..TO (the complete runs) checks the kernels of runs FROM to TO as well.
cat > "$WORK/kernels.lua" <<'EOF'
local run, from = tonumber(os.getenv("RUN")), tonumber(os.getenv("FROM") or os.getenv("RUN"))
local add = cuda.jit [[
template <typename T>
__global__ void add(const T* a, const T* b, T* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] + b[i];
}]]
local n = 1000
for _, dt in ipairs { "float32", "int32" } do
  local out = cuda.device_array(n, dt)
  add[{8, 128}](cuda.to_device(array.arange(n, dt)), cuda.to_device(array.full(n, 3, dt)), out, n)
  local h = out:copy_to_host()
  for i = 1, n do assert(h[i] == i - 1 + 3, "add " .. dt .. " element " .. i) end
end
assert(cuda.reduce("a + b")(array.arange(n, "int64")) == n * (n - 1) // 2, "reduce")
local sources = {}
for r = from, run do
  local scaled = cuda.jit("__global__ void scaled(int* x) { x[threadIdx.x] = threadIdx.x * FACTOR; }",
    { defines = { FACTOR = r } })
  local d = cuda.device_array(32, "int32")
  scaled[{1, 32}](d)
  assert(d:copy_to_host():sum() == r * 31 * 32 // 2, "scaled FACTOR=" .. r)
  sources[#sources + 1] = scaled:info().cache
end
io.write(add:info().cache, " ", table.concat(sources, " "), "\n")
EOF

# The killed runs: each in its own process group, so that after kiln itself is killed the
# compiler it had started (now an orphan) can be cleaned up too.
for ((i = 1; i <= RUNS; i++)); do
  RUN=$i setsid "$kiln" "$WORK/kernels.lua" > /dev/null 2>&1 &
  pid=$!
  sleep "$(printf '0.%03d' $((RANDOM % 1000)))"
  ((RANDOM % 2)) && sleep 0.5
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  kill -9 -- "-$pid" 2>/dev/null || true
done

# Two complete runs over every kernel: right answers, no corrupt entries, all from disk at last.
for pass in 1 2; do
  if ! out=$(FROM=1 RUN=$RUNS "$kiln" "$WORK/kernels.lua" 2> "$WORK/stderr"); then
    echo "FAIL: complete run $pass after the kills failed:" >&2
    cat "$WORK/stderr" >&2
    exit 1
  fi
  if grep -Eiq "corrupt|truncat|checksum|invalid|cannot" "$WORK/stderr"; then
    echo "FAIL: complete run $pass warned about the cache after the kills:" >&2
    cat "$WORK/stderr" >&2
    exit 1
  fi
done
for word in $out; do
  [ "$word" = disk ] || { echo "FAIL: the second complete run compiled again: $out" >&2; exit 1; }
done

# Left-overs of the kills: temp files in the cache folder (swept by eviction after an hour)
# and compile folders under TMPDIR (nothing removes those after a SIGKILL). They must not be
# mistaken for entries: the cache's own count ignores them.
temps=$(find "$KILN_CACHE_DIR" -name '.*.tmp.*' | wc -l)
entries=$(find "$KILN_CACHE_DIR" -name '*.kc' | wc -l)
stats_entries=$("$kiln" -e 'io.write(cuda.cache_stats().entries)')
[ "$stats_entries" = "$entries" ] || { echo "FAIL: cache_stats says $stats_entries entries, the folder holds $entries" >&2; exit 1; }
leaked=$(find "$TMPDIR" -maxdepth 1 -name 'kiln-*' | wc -l)
echo "cache_kill: ok ($RUNS runs killed; $entries entries, $temps temp files and $leaked compile folders left by the kills)"
