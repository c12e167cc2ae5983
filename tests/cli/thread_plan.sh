#!/usr/bin/env bash
# The cpu backend plans each kernel's thread mode before compiling and says why (k:info().why);
# a kernel compiles once (twice only when kiln's own rewrite may be what failed); a kernel that
# runs as fibers says so on stderr once, naming the construct and its line (KILN_NOTES=0: not),
# as does one whose shuffle reads a lane not taking part (undefined on a GPU).
# Usage: bash thread_plan.sh /path/to/kiln
set -euo pipefail
kiln=$(realpath "$1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
[ "$("$kiln" -e 'io.write(cuda.backend())' 2>/dev/null)" = cpu ] || { echo "cpu backend only"; exit 77; }

# A host compiler that counts its kernel compiles (not the precompiled prelude's).
real_cxx=$(command -v "${KILN_CXX:-c++}")
cat >"$work/cxx" <<WRAP
#!/bin/sh
case " \$* " in *" c++-header "*) ;; *) echo run >>"$work/runs" ;; esac
exec "$real_cxx" "\$@"
WRAP
chmod +x "$work/cxx"
export KILN_CXX="$work/cxx" KILN_NVRTC_CHECK=0 KILN_CACHE_DIR="$work/cache" KILN_COMPILE_NOTICE=0
runs() { if [ -f "$work/runs" ]; then wc -l <"$work/runs" | tr -d ' '; else echo 0; fi; }
run() { rm -f "$work/runs"; "$kiln" -e "$1" 2>"$work/err"; }

# A tiled kernel: regions, one compile, no note.
out=$(run '
local k = cuda.jit([[
__global__ void tile(const float* x, float* y) {
  __shared__ float s[64];
  s[threadIdx.x] = x[blockIdx.x * 64 + threadIdx.x];
  __syncthreads();
  y[blockIdx.x * 64 + threadIdx.x] = s[63 - threadIdx.x];
}]])
local x = cuda.to_device(array.arange(128, "float32"))
local y = cuda.device_array(128, "float32")
k[{2, 64}](x, y)
local h = y:copy_to_host()
assert(h[1] == 63 and h[65] == 127 and h[128] == 64, "regions: wrong result")
print(k:info().threads .. "|" .. k:info().why)')
[[ "$out" == "regions|its barriers are __syncthreads(); statements"* ]] || fail "regions plan: '$out'"
[ "$(runs)" = 1 ] || fail "a region kernel compiles once, ran the compiler $(runs) times"
[ ! -s "$work/err" ] || fail "a region kernel says nothing on stderr: $(cat "$work/err")"

# The user's mistake in a region kernel: one compile, the user's line in the error.
out=$(run '
local ok, e = pcall(function()
  local k = cuda.jit([[
__global__ void typo(float* y) {
  __shared__ float s[64];
  s[threadIdx.x] = 1;
  __syncthreads();
  y[threadIdx.x] = s[threadIdx.x] + undeclared_name;
}]])
  k[{1, 64}](cuda.device_array(64, "float32"))
end)
print(ok, e)')
[[ "$out" == false*"kernel.cu:5"*"undeclared_name"* ]] || fail "the user's error: '$out'"
[ "$(runs)" = 1 ] || fail "a user's error compiles once, ran the compiler $(runs) times"

# A `return` from a macro defeats the region rewrite: built again as fibers (two compiles),
# with the reason, the right answer and one note.
out=$(run '
local k = cuda.jit([[
#define BAIL_IF(c) if (c) return
__global__ void bail(float* y, int n) {
  __shared__ float s[64];
  s[threadIdx.x] = threadIdx.x;
  __syncthreads();
  BAIL_IF(threadIdx.x >= n);
  y[threadIdx.x] = s[63 - threadIdx.x];
}]])
local y = cuda.to_device(array.full(64, -1, "float32"))
k[{1, 64}](y, 10)
k[{1, 64}](y, 10)
local h = y:copy_to_host()
assert(h[1] == 63 and h[10] == 54 and h[11] == -1, "fallback: wrong result")
print(k:info().threads .. "|" .. k:info().why)')
[[ "$out" == "fibers|the regions rewrite did not compile: "*"(planned: "* ]] || fail "rewrite fallback: '$out'"
[ "$(runs)" = 2 ] || fail "a failed rewrite compiles twice, ran the compiler $(runs) times"
[ "$(grep -c 'kiln: note: kernel .bail. runs its threads as fibers' "$work/err")" = 1 ] ||
  fail "one note for a fiber kernel: $(cat "$work/err")"

# A region rewrite that does not compile (index variables declared by a macro, CloverLeaf's
# __kernel_indexes) sends that kernel to fibers, and only it: the kernel beside it stays regions.
# (NVRTC tells that the source as written is valid: the error is the rewrite's.)
out=$(KILN_NVRTC_CHECK=sm_80 run '
local m = cuda.module([[
#define INDEXES const int gid = threadIdx.x + blockIdx.x * blockDim.x; const int row = gid / 8;
__global__ void rows(const float* v, float* out) {
  INDEXES;
  __shared__ float s[64];
  s[threadIdx.x] = row < 4 ? v[gid] : 0.0f;
  __syncthreads();
  if (threadIdx.x == 0) { float t = 0; for (int i = 0; i < 64; ++i) t += s[i]; out[blockIdx.x] = t; }
}
__global__ void sums(const float* v, float* out) {
  __shared__ float s[64];
  s[threadIdx.x] = v[blockIdx.x * 64 + threadIdx.x];
  __syncthreads();
  if (threadIdx.x == 0) { float t = 0; for (int i = 0; i < 64; ++i) t += s[i]; out[blockIdx.x] = t; }
}]])
local v, o = cuda.to_device(array.ones(64, "float32")), cuda.device_array(1, "float32")
m.rows[{1, 64}](v, o)
assert(o:copy_to_host()[1] == 32, "rows: " .. o:copy_to_host()[1])
m.sums[{1, 64}](v, o)
assert(o:copy_to_host()[1] == 64, "sums: " .. o:copy_to_host()[1])
print(m.rows:info().threads .. "|" .. m.rows:info().why)
print(m.sums:info().threads)')
[[ "$out" == "fibers|the regions rewrite did not compile: "*"row"*$'\n'"regions" ]] ||
  fail "one kernel's failed region rewrite: '$out'"

# A warp operation in a device function that a kernel calls inside an expression (no statement
# of its own to inline): that kernel runs as fibers and says so, naming the construct and its
# line; one note per kernel, however many specialisations. The kernel beside it, which calls
# nothing, runs as a loop and says why.
script='
local m = cuda.module([[
template <class T> __device__ T pair_sum(T v) {
  return v + __shfl_xor_sync(0xffffffffu, v, 1);
}
template <class T> __global__ void pairs(T* y) { y[threadIdx.x] = T(0) + pair_sum(y[threadIdx.x]); }
__global__ void plain(float* y) { y[threadIdx.x] = 2; }
]])
local a = cuda.to_device(array.arange(32, "float32"))
local b = cuda.to_device(array.arange(32, "int32"))
m.pairs[{1, 32}](a); m.pairs[{1, 32}](b)
assert(a:copy_to_host()[1] == 1 and b:copy_to_host()[32] == 61, "pairs: wrong result")
m.plain[{1, 32}](a)
print(m.pairs:info().threads .. "|" .. m.pairs:info().why)
print(m.plain:info().threads .. "|" .. m.plain:info().why)'
out=$(run "$script")
[ "$(grep -c '^fibers|its body does not synchronise, but it may call code that does: warp or group operation __shfl_xor_sync at kernel.cu:2$' <<<"$out")" = 1 ] &&
  grep -q '^loop|no barrier or warp operation$' <<<"$out" ||
  fail "plans of kernels beside a device function that synchronises: '$out'"
[ "$(grep -c 'note: kernel .pairs<float>. runs its threads as fibers.*__shfl_xor_sync' "$work/err")" = 1 ] ||
  fail "one note for two specialisations: $(cat "$work/err")"
# A template kernel's instance, built on its own beside a module's other kernels, has its own
# copy of the source's __device__ variables: one note says so, naming them (not the const
# table), however many instances.
out=$(run '
local m = cuda.module([[
__device__ int g_hits, g_misses[4];
__device__ const int table[2] = {1, 2};
__global__ void count() { atomicAdd(&g_hits, table[1]); }
template <class T> __global__ void fill(T* y) { y[threadIdx.x] = T(g_hits); }
]])
m.count[{1, 1}]()
m.fill[{1, 4}](cuda.device_array(4, "float32")); m.fill[{1, 4}](cuda.device_array(4, "int32"))')
[ "$(grep -c "note: kernel 'fill<float>' is built on its own (a template's instance), with its own copy of the module's __device__ variables (g_hits, g_misses)" "$work/err")" = 1 ] &&
  [ "$(grep -c 'note:' "$work/err")" = 1 ] || fail "one note for a template instance's globals: $(cat "$work/err")"

# Called as a statement of its own, the function is inlined into the kernel, which runs as
# regions (the shuffle a step between them); the kernel beside it, which cannot call it any
# more, is a loop.
out=$(run "${script//T(0) + /}")
[ "$out" = "regions|its barriers and warp operations are statements: the code between them loops over the block's threads, and each warp operation is one step for all of them
loop|no barrier or warp operation" ] || fail "plans with the device function inlined: '$out'"
[ ! -s "$work/err" ] || fail "no note for regions and loops: $(cat "$work/err")"
out=$(run 'local k = cuda.jit("__global__ void plain(float* y) { y[threadIdx.x] = 2; }")
k[{1, 32}](cuda.device_array(32, "float32"))
print(k:info().threads .. "|" .. k:info().why)')
[ "$out" = "loop|no barrier or warp operation" ] || fail "loop plan: '$out'"
[ ! -s "$work/err" ] || fail "a loop kernel has no note: $(cat "$work/err")"
KILN_NOTES=0 "$kiln" -e "$script" >/dev/null 2>"$work/err"
[ ! -s "$work/err" ] || fail "KILN_NOTES=0 says nothing: $(cat "$work/err")"
# Conditional directives in a barrier kernel's body: resolved where every macro they test is
# known (defined in the source or by opts.defines), so the kernel runs as regions; one testing
# a macro nothing kiln sees defines (a header might) keeps it in coroutines. Right either way.
out=$(run '
local src = [[
#define SCALE 3
__global__ void scaled(float* y) {
  __shared__ float s[64];
  s[threadIdx.x] = threadIdx.x;
  __syncthreads();
#ifdef TWICE
  y[threadIdx.x] = 2 * s[63 - threadIdx.x];
#elif SCALE > 2
  y[threadIdx.x] = SCALE * s[63 - threadIdx.x];
#endif
}]]
local y = cuda.device_array(64, "float32")
for _, defines in ipairs({ { TWICE = 1 }, {} }) do
  local k = cuda.jit(src, { defines = defines })
  k[{1, 64}](y)
  io.write(y:copy_to_host()[1], " ", k:info().threads, " ")
end')
[ "$out" = "126 regions 189 coroutines " ] || fail "conditionals in a kernel body: '$out'"

# A shuffle from a lane not taking part (the last warp's lanes 8..31 returned): a GPU's value is
# undefined, kiln's 0 (an H200's), said once per kernel, as regions and as fibers. Shuffles
# within 8-lane segments (width 8: a source past the segment is the caller's own, as CUDA
# defines it) read only lanes taking part and say nothing.
for regions in 1 0; do
  for bad in 0 1; do
    out=$(KILN_REGIONS=$regions run '
local k = cuda.jit([[
__global__ void last8(float* x, int first, int width) {
  if (threadIdx.x >= 8) return;
  float v = x[threadIdx.x];
  for (int offset = first; offset > 0; offset /= 2) v += __shfl_down_sync(0xffu, v, offset, width);
  __syncthreads();
  if (threadIdx.x == 0) x[0] = v;
}]])
local x = cuda.to_device(array.ones(32, "float32"))
k[{1, 32}](x, 4, 8)
local sum = x:copy_to_host()[1]
if '$bad' == 1 then k[{1, 32}](x, 16, 32); k[{1, 32}](x, 16, 32) end
print(sum, k:info().threads)')
    [[ "$out" == "8.0	$([ $regions = 1 ] && echo regions || echo fibers)" ]] || fail "last8 ($regions): '$out'"
    [ "$(grep -c "note: kernel 'last8' read a lane that was not taking part in a shuffle" "$work/err")" = $bad ] ||
      fail "$bad note(s) for a shuffle from a lane not taking part ($regions): $(cat "$work/err")"
  done
done
# The same for a lane that runs the shuffle too but is outside the caller's mask (lanes 0..7 name
# only themselves, lanes 8..31 the rest): regions see the masks, as fibers do. (What such a
# read gives is undefined: regions give the other lane's value, fibers, which complete each
# mask's lanes apart, 0; only the note is checked then.)
for regions in 1 0; do
  for bad in 0 1; do
    out=$(KILN_REGIONS=$regions run '
local k = cuda.jit([[
__global__ void masked(float* x, int offset, int width) {
  float v = x[threadIdx.x];
  unsigned m = threadIdx.x < 8 ? 0xffu : 0xffffff00u;
  v += __shfl_down_sync(m, v, offset, width);
  __syncthreads();
  x[threadIdx.x] = v;
}]])
local x = cuda.to_device(array.ones(32, "float32"))
if '$bad' == 1 then k[{1, 32}](x, 16, 32) else k[{1, 32}](x, 4, 8) end
print('$bad' == 1 and "-" or x:copy_to_host()[1], k:info().threads)')
    [[ "$out" == "$([ $bad = 1 ] && echo - || echo 2.0)	$([ $regions = 1 ] && echo regions || echo fibers)" ]] ||
      fail "masked ($regions, $bad): '$out'"
    [ "$(grep -c "note: kernel 'masked' read a lane that was not taking part in a shuffle" "$work/err")" = $bad ] ||
      fail "$bad note(s) for a shuffle from a lane outside the mask ($regions): $(cat "$work/err")"
  done
done
# A module of plain kernels builds them all in one compile, whichever launches first; one with
# a template kernel builds each kernel on its own.
out=$(run '
local m = cuda.module([[
__global__ void one(int* x) { x[threadIdx.x] = 1; }
__global__ void two(int* x) { __shared__ int s[32]; s[threadIdx.x] = 2; __syncthreads(); x[threadIdx.x] += s[31 - threadIdx.x]; }
__global__ void three(int* x) { x[threadIdx.x] *= 3; }
]])
local x = cuda.device_array(32, "int32")
m.two[{1, 32}](x); m.one[{1, 32}](x); m.two[{1, 32}](x); m.three[{1, 32}](x)
print(x:copy_to_host()[32], m.one:info().cache, m.two:info().cache, m.three:info().cache)')
[ "$out" = "9	memory	compiled	memory" ] || fail "a module of plain kernels: '$out'"
[ "$(runs)" = 1 ] || fail "a module of plain kernels compiles once, ran the compiler $(runs) times"
run '
local m = cuda.module([[
template <class T> __global__ void fill(T* x) { x[threadIdx.x] = T(1); }
__global__ void twice(int* x) { x[threadIdx.x] *= 2; }
]])
local x = cuda.device_array(32, "int32")
m.fill[{1, 32}](x); m.twice[{1, 32}](x)
assert(x:copy_to_host()[1] == 2)' >/dev/null
[ "$(runs)" = 2 ] || fail "a module with a template builds each kernel, ran the compiler $(runs) times"
echo "thread plan: ok"
