-- Legacy warp-synchronous code through volatile memory (pre-Volta: a warp's lanes run each
-- statement together, no __syncwarp) on the cpu backend. By default its stores are split around
-- __syncwarp() (jit/cpu/lockstep_stores.h) and the kernels run as regions; with the region
-- rewrite off (KILN_REGIONS=0: ctest's lua.warp_synchronous_volatile.fibers) they run as fibers
-- whose volatile pointers are kiln_cpu::lockstep_ptr. Either way a store is seen by the lanes
-- that skipped it (the warp runs the store, masked, before the reads that follow), a shared
-- array of two extents is followed as one of one, and a volatile kernel parameter keeps its type
-- in the signature.
if cuda.backend() ~= "cpu" then print("warp_synchronous_volatile: the cpu backend's test; skipped on " .. cuda.backend()) return end
local split = os.getenv("KILN_REGIONS") ~= "0"

-- Asserts that kernel k ran its warp-synchronous code through volatile name as this run
-- expects: split into regions, or as lockstep pointers' fibers.
local function lockstep(k, name, label)
  local info = k:info()
  assert(info.threads == (split and "regions" or "fibers"), label .. ": " .. info.threads .. ": " .. info.why)
  assert(split or info.why:find("volatile '" .. name .. "'", 1, true), label .. ": " .. info.why)
end

-- CUSP's CSR-vector SpMV reads its row bounds so: lanes 0 and 1 store, every lane reads.
local bounds = array.from({ 0, 10, 20, 50, 100, 170, 200, 290 }, "int32")
for name, decl in pairs({ one_d = "bounds[8]", two_d = "bounds[4][2]" }) do
  local at = name == "one_d" and function(w, l) return "bounds[" .. w .. " * 2 + " .. l .. "]" end
    or function(w, l) return "bounds[" .. w .. "][" .. l .. "]" end
  local k = cuda.jit(([[
__global__ void k(const int* in, int* out) {
  __shared__ volatile int %s;
  int lane = threadIdx.x & 31, w = threadIdx.x / 32;
  if (lane < 2) %s = in[w * 2 + lane];
  int lo = %s;
  int hi = %s;
  out[threadIdx.x] = hi - lo;
}]]):format(decl, at("w", "lane"), at("w", 0), at("w", 1)))
  local out = cuda.device_array(128, "int32")
  k[{ 1, 128 }](cuda.to_device(bounds), out)
  local o = out:copy_to_host()
  for t = 0, 127 do
    local w = t // 32
    assert(o[t + 1] == bounds[w * 2 + 2] - bounds[w * 2 + 1], ("%s: thread %d: %d"):format(name, t, o[t + 1]))
  end
  lockstep(k, "bounds", name)
end

-- One lane stores three elements, the others read the last: they wait for all three, whether
-- the storer is the warp's first lane, one between, or its last (which then finds no lower lane
-- ready to hand over to: every one waits on its read).
local three = cuda.jit([[
__global__ void k(int* out, int storer) {
  __shared__ volatile int s[3];
  if (threadIdx.x == storer) { s[0] = 1; s[1] = 2; s[2] = 3; }
  out[threadIdx.x] = s[2] * 10 + s[threadIdx.x % 2];
}]])
for _, storer in ipairs({ 0, 17, 31 }) do
  local o3 = cuda.device_array(32, "int32")
  three[{ 1, 32 }](o3, storer)
  local h3 = o3:copy_to_host()
  for t = 0, 31 do
    assert(h3[t + 1] == 30 + 1 + t % 2, ("three, storer %d: thread %d: %d"):format(storer, t, h3[t + 1]))
  end
end

-- A volatile kernel parameter written and then read at another element: it stays `volatile
-- int*` in the kernel's signature, so a launch can pass a device array to it. Read at another
-- lane's element, it is warp-synchronous code; at another block's (a flag array, its
-- subscripts the same in every thread of a block), it is not (a thread loop).
local lanes = cuda.jit([[
__global__ void lanes(volatile int* flags, int* out) {
  flags[threadIdx.x] = threadIdx.x;
  out[threadIdx.x] = flags[threadIdx.x ^ 1];
}]])
local flags, out = cuda.to_device(array.zeros(32, "int32")), cuda.device_array(32, "int32")
lanes[{ 1, 32 }](flags, out)
local got = out:copy_to_host()
for t = 0, 31 do assert(got[t + 1] == t ~ 1, ("lanes: thread %d: %d"):format(t, got[t + 1])) end
lockstep(lanes, "flags", "lanes")
local publish = cuda.jit([[
__global__ void publish(volatile int* flags, int* out) {
  int b = blockIdx.x;
  if (threadIdx.x == 0) {
    flags[b] = 1;
    out[b] = b > 0 ? flags[b - 1] : 0;
  }
}]])
flags, out = cuda.to_device(array.zeros(4, "int32")), cuda.device_array(4, "int32")
publish[{ 1, 32 }](flags, out)
assert(flags:copy_to_host()[1] == 1 and out:copy_to_host()[1] == 0)
assert(publish:info().threads == "loop", publish:info().why)

-- Lanes that skip a store read after it, whichever lane completes the warp's step last (the
-- readers wait on while the stores complete: none of them runs on early).
local skip = cuda.jit([[
__global__ void skip(int* out) {
  __shared__ volatile int b[32];
  const unsigned lane = threadIdx.x;
  b[lane] = 0;
  if (lane >= 2) b[lane] = lane;
  out[lane] = b[5];
}]])
local skipped = cuda.device_array(32, "int32")
skip[{ 1, 32 }](skipped)
local hs = skipped:copy_to_host()
for t = 1, 32 do assert(hs[t] == 5, ("skip: thread %d read %d"):format(t - 1, hs[t])) end

-- Harris's warpReduce on a two-extent volatile array (one row per warp).
local reduce = cuda.jit([[
__global__ void k(const int* in, int* out) {
  __shared__ volatile int s[2][64];
  const unsigned w = threadIdx.x / 32, lane = threadIdx.x % 32;
  s[w][lane] = in[threadIdx.x];
  s[w][lane + 32] = 0;
  s[w][lane] += s[w][lane + 16];
  s[w][lane] += s[w][lane + 8];
  s[w][lane] += s[w][lane + 4];
  s[w][lane] += s[w][lane + 2];
  s[w][lane] += s[w][lane + 1];
  if (lane == 0) out[w] = s[w][0];
}]])
local h = array.zeros(64, "int32")
for i = 1, 64 do h[i] = (i * 37) % 23 - 5 end
local sums = cuda.device_array(2, "int32")
reduce[{ 1, 64 }](cuda.to_device(h), sums)
local s = sums:copy_to_host()
for w = 0, 1 do
  local want = 0
  for i = w * 32 + 1, w * 32 + 32 do want = want + h[i] end
  assert(s[w + 1] == want, ("reduce: warp %d: %d vs %d"):format(w, s[w + 1], want))
end

-- A warp reduction whose subscript is the thread's index however it is computed: through a
-- loop that threads leave or skip unevenly, a for header's step, a do loop, or a macro of a
-- thread's value. Each is warp-synchronous code (every lane reads another's element), never a
-- subscript the same in every thread (which would run the lanes one after another: 63).
local ways = {
  continued = "int t = 0; for (int j = 0; j < 64; ++j) { if (j >= (int)threadIdx.x) continue; t++; }",
  broken = "int t = 0; for (; t < 64; t++) if (t == (int)threadIdx.x) break;",
  stepped = "int t = 0; for (; t < (int)threadIdx.x; t++) {}",
  done = "int t = -1; do { t++; } while (t < (int)threadIdx.x);",
  returned = "int t = 0; while (true) { if (t == (int)threadIdx.x) break; if (t > 64) return; ++t; }",
  local_macro = "int tid = threadIdx.x; int t = OF_LOCAL;",
  chained_macro = "int t = CHAINED;",
  either_macro = "int t = EITHER;",
  shadowed = "int t = threadIdx.x; { __shared__ int t; (void)t; }",
}
local source = { "#define THREAD threadIdx.x\n#define CHAINED THREAD\n#define OF_LOCAL tid\n",
                 "#ifdef SOMETIMES\n#define EITHER 0\n#else\n#define EITHER threadIdx.x\n#endif\n" }
local names = {}
for name, pre in pairs(ways) do
  names[#names + 1] = name
  source[#source + 1] = ([[
extern "C" __global__ void %s(const float* in, float* out) {
  __shared__ volatile float s[64];
  %s
  s[t] = in[t];
  __syncthreads();
  if (t < 32) {
    s[t] += s[t + 32]; s[t] += s[t + 16]; s[t] += s[t + 8];
    s[t] += s[t + 4]; s[t] += s[t + 2]; s[t] += s[t + 1];
  }
  if (t == 0) out[0] = s[0];
}
]]):format(name, pre)
end
local reductions = cuda.module(table.concat(source))
local values = cuda.to_device(array.arange(64, "float32"))
for _, name in ipairs(names) do
  local total = cuda.device_array(1, "float32")
  reductions[name][{ 1, 64 }](values, total)
  local got = total:copy_to_host()[1]
  assert(got == 2016, ("%s: %s (%s), expected 2016"):format(name, got, reductions[name]:info().threads))
end

-- A lane's store at an element every lane then reads: the others read it (lockstep), not their
-- own earlier store.
local broadcast = cuda.jit([[
__global__ void k(int* out) {
  __shared__ volatile int s[1];
  int lane = threadIdx.x & 31;
  s[0] = -1;
  if (lane == 5) s[0] = 42;
  out[threadIdx.x] = s[0];
}]])
local heard = cuda.device_array(32, "int32")
broadcast[{ 1, 32 }](heard)
local hh = heard:copy_to_host()
for t = 1, 32 do assert(hh[t] == 42, ("broadcast: lane %d read %d"):format(t - 1, hh[t])) end
-- Harris's reduction (its last warp a templated warpReduce of `if (blockSize >= 64) s[tid] +=
-- s[tid + 32];` steps), a warp-level inclusive scan in GPU Gems 3's style (`s[i] = sum = sum +
-- s[i - 1];` under lane conditions, reading a zero pad), a loop of steps whose header is the same
-- in every lane, and a swap whose every lane reads before any lane writes: each in lockstep.
local lockstep_source = [[
template <unsigned blockSize, class T>
__device__ void warpReduce(volatile T* sdata, unsigned tid) {
  if (blockSize >= 64) sdata[tid] += sdata[tid + 32];
  if (blockSize >= 32) sdata[tid] += sdata[tid + 16];
  if (blockSize >= 16) sdata[tid] += sdata[tid + 8];
  if (blockSize >= 8) sdata[tid] += sdata[tid + 4];
  if (blockSize >= 4) sdata[tid] += sdata[tid + 2];
  if (blockSize >= 2) sdata[tid] += sdata[tid + 1];
}
template <unsigned blockSize>
__global__ void reduce6(const int* in, int* out, unsigned n) {
  __shared__ int sdata[blockSize];
  unsigned tid = threadIdx.x, i = blockIdx.x * (blockSize * 2) + tid;
  const unsigned gridSize = blockSize * 2 * gridDim.x;
  int sum = 0;
  while (i < n) { sum += in[i]; if (i + blockSize < n) sum += in[i + blockSize]; i += gridSize; }
  sdata[tid] = sum;
  __syncthreads();
  if (blockSize >= 256) { if (tid < 128) sdata[tid] += sdata[tid + 128]; __syncthreads(); }
  if (blockSize >= 128) { if (tid < 64) sdata[tid] += sdata[tid + 64]; __syncthreads(); }
  if (tid < 32) warpReduce<blockSize>(sdata, tid);
  if (tid == 0) out[blockIdx.x] = sdata[0];
}
__global__ void warp_scan(const int* in, int* out) {
  __shared__ int pad[2 * 64];
  const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  volatile int* s = pad + warp * 64;
  s[lane] = 0;  // the zeros a lane's s[i - d] reads below the warp's values
  const unsigned idx = 32 + lane;
  int sum = in[threadIdx.x];
  s[idx] = sum;
  if (lane >= 1) s[idx] = sum = sum + s[idx - 1];
  if (lane >= 2) s[idx] = sum = sum + s[idx - 2];
  if (lane >= 4) s[idx] = sum = sum + s[idx - 4];
  if (lane >= 8) s[idx] = sum = sum + s[idx - 8];
  if (lane >= 16) s[idx] = sum = sum + s[idx - 16];
  out[threadIdx.x] = s[idx];
}
#define HALF 16
__global__ void looped(const float* in, float* out) {
  __shared__ volatile float v[64];
  const unsigned t = threadIdx.x;
  v[t] = in[t];
  v[t + 32] = 0;
  #pragma unroll
  for (int d = HALF; d > 0; d >>= 1)
    if (t < d) v[t] = v[t] + v[t + d];
  out[t] = v[0];
}
__global__ void swap(int* out) {
  __shared__ volatile int s[32];
  const int lane = threadIdx.x;
  s[lane] = lane;
  s[lane] = s[lane ^ 1];
  out[lane] = s[lane];
}
]]
local harris = cuda.module(lockstep_source)
local reduce6 = cuda.jit(lockstep_source, { name = "reduce6<256>" })
local n = 100000
local values = array.zeros(n, "int32")
for i = 1, n do values[i] = (i * 7919) % 1000 - 300 end
local want = values:sum()
local partial = cuda.device_array(64, "int32")
reduce6[{ 64, 256 }](cuda.to_device(values), partial, n)
assert(partial:copy_to_host():sum() == want, ("reduce6: %d vs %d"):format(partial:copy_to_host():sum(), want))
lockstep(reduce6, "sdata", "reduce6")

local scanned = cuda.device_array(64, "int32")
local scan_in = array.zeros(64, "int32")
for i = 1, 64 do scan_in[i] = (i * 13) % 9 - 2 end
harris.warp_scan[{ 1, 64 }](cuda.to_device(scan_in), scanned)
local sc = scanned:copy_to_host()
for w = 0, 1 do
  local run = 0
  for l = 1, 32 do
    run = run + scan_in[w * 32 + l]
    assert(sc[w * 32 + l] == run, ("warp_scan: warp %d lane %d: %d vs %d"):format(w, l - 1, sc[w * 32 + l], run))
  end
end
lockstep(harris.warp_scan, "s", "warp_scan")

local looped_out = cuda.device_array(32, "float32")
harris.looped[{ 1, 32 }](cuda.to_device(array.arange(32, "float32")), looped_out)
assert(looped_out:copy_to_host()[1] == 496, "looped: " .. looped_out:copy_to_host()[1])
lockstep(harris.looped, "v", "looped")

local swapped = cuda.device_array(32, "int32")
harris.swap[{ 1, 32 }](swapped)
local sw = swapped:copy_to_host()
for l = 0, 31 do assert(sw[l + 1] == l ~ 1, ("swap: lane %d read %d"):format(l, sw[l + 1])) end
lockstep(harris.swap, "s", "swap")

-- A store in a while loop (lanes might leave it apart) is left to the lockstep pointers: fibers.
local kept = cuda.jit([[
__global__ void kept(const int* in, int* out) {
  __shared__ volatile int s[64];
  const unsigned t = threadIdx.x;
  s[t] = in[t];
  s[t + 32] = 0;
  int d = 16;
  while (d > 0) { s[t] += s[t + d]; d >>= 1; }
  out[t] = s[0];
}]])
local kept_out = cuda.device_array(32, "int32")
kept[{ 1, 32 }](cuda.to_device(array.arange(32, "int32")), kept_out)
assert(kept_out:copy_to_host()[1] == 496, "kept: " .. kept_out:copy_to_host()[1])
assert(kept:info().threads == "fibers" and kept:info().why:find("volatile 's'", 1, true), kept:info().why)
-- A kernel the region rewrite declines (a barrier in a switch) keeps its stores as written:
-- split, its lanes would run one by one, and those that skip the bounds' store would read
-- before it. As lockstep pointers (fibers) they read after it.
local declined = cuda.jit([[
__global__ void declined(const int* in, int* out, int mode) {
  __shared__ volatile int bounds[2];
  const int lane = threadIdx.x;
  switch (mode) { case 1: __syncthreads(); break; default: break; }
  if (lane < 2) bounds[lane] = in[lane];
  out[lane] = bounds[1] - bounds[0];
}]])
local declined_out = cuda.device_array(32, "int32")
declined[{ 1, 32 }](cuda.to_device(array.from({ 7, 50 }, "int32")), declined_out, 1)
local dh = declined_out:copy_to_host()
for l = 1, 32 do assert(dh[l] == 43, ("declined: lane %d read %d"):format(l - 1, dh[l])) end
assert(declined:info().threads == "fibers", declined:info().why)
print("warp_synchronous_volatile: ok")
