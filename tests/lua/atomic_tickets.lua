-- Compaction by atomic tickets, as real kernels write it: each kept element takes a slot from
-- atomicAdd's return value (the count before its add). Checked on the host: the kept elements,
-- each exactly once, whatever order the slots came in; with an int counter and a float one.
local n = 5000
local keep_odd = cuda.jit([[
template <typename C>
__global__ void keep_odd(const int* in, int* out, C* count, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && in[i] % 2 != 0) {
    int slot = (int)atomicAdd(count, (C)1);
    out[slot] = in[i];
  }
}]])
local values = array.random.integers(0, 1000000, n, {dtype = "int32", seed = 17})
local wanted = {}
local kept = 0
for i = 1, n do
  local v = values[i]
  if v % 2 ~= 0 then wanted[v] = (wanted[v] or 0) + 1; kept = kept + 1 end
end
for _, counter in ipairs { "int32", "float32" } do
  local d_in = cuda.to_device(values)
  local d_out = cuda.to_device(array.full(n, -1, "int32"))
  local d_count = cuda.to_device(array.zeros(1, counter))
  keep_odd[{(n + 255) // 256, 256}](d_in, d_out, d_count, n)
  local count = d_count:copy_to_host()[1]
  assert(count == kept, ("%s counter: %s kept, expected %d"):format(counter, count, kept))
  local out = d_out:copy_to_host()
  local seen = {}
  for i = 1, kept do
    local v = out[i]
    assert(v % 2 ~= 0, ("%s counter: slot %d holds %d"):format(counter, i, v))
    seen[v] = (seen[v] or 0) + 1
  end
  for v, times in pairs(wanted) do
    assert(seen[v] == times, ("%s counter: %d kept %s times, expected %d"):format(counter, v, seen[v], times))
  end
  for i = kept + 1, n do assert(out[i] == -1, counter .. " counter: slot " .. i .. " written") end
end
