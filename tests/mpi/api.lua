-- kiln.mpi's functions against answers every rank can work out alone. Run by tests/cli/mpi.sh
-- under mpirun on 2 and 3 ranks; any failure raises, and the failing rank ends the job.
local mpi = require "kiln.mpi"
local rank, size = mpi.rank(), mpi.size()
assert(size >= 2, "run on at least 2 ranks")
assert(rank >= 0 and rank < size)
assert(mpi.local_rank() >= 0 and mpi.local_rank() < size)
assert(type(mpi.library) == "string" and #mpi.library > 0)
assert(type(mpi.wtime()) == "number")
-- On the cpu backend device arrays are host memory, and travel as they are.
assert(mpi.device_path:find("^direct"), mpi.device_path)

-- Fails with what was expected, naming the rank.
local function check(cond, what, ...)
  if not cond then error(("rank %d: %s"):format(rank, what:format(...)), 2) end
end
-- The error message of f(...), or nil when it did not fail.
local function fails(f, ...)
  local ok, err = pcall(f, ...)
  return not ok and tostring(err) or nil
end

-- bcast, from each root in turn, on host and device arrays.
for root = 0, size - 1 do
  local a = array.full(5, rank == root and 40 + root or -1, "int32")
  check(mpi.bcast(a, root) == a, "bcast returns its array")
  for i = 1, 5 do check(a[i] == 40 + root, "bcast from %d: a[%d] = %s", root, i, a[i]) end
  local d = cuda.to_device(array.full(3, rank == root and 2.5 or 0, "float32"))
  mpi.bcast(d, root)
  check(array.equal(d:copy_to_host(), array.full(3, 2.5, "float32")), "device bcast from %d", root)
end

-- allreduce with each op, against the closed forms over ranks 0..size-1.
local function series(f) local t = {} for r = 0, size - 1 do t[#t + 1] = f(r) end return t end
local sum, prod, min, max = 0, 1, math.huge, -math.huge
for _, v in ipairs(series(function(r) return r + 2 end)) do
  sum, prod, min, max = sum + v, prod * v, math.min(min, v), math.max(max, v)
end
for _, dtype in ipairs({ "float64", "float32", "int64", "int32", "uint8", "int16" }) do
  for _, case in ipairs({ { "sum", sum }, { "prod", prod }, { "min", min }, { "max", max } }) do
    local op, want = case[1], case[2]
    local a = array.full(4, rank + 2, dtype)
    mpi.allreduce(a, op)
    for i = 1, 4 do check(a[i] == want, "allreduce %s %s: %s, not %s", dtype, op, a[i], want) end
  end
end
local v = array.zeros(2, "float4")  -- a vector dtype reduces lane by lane
v[1], v[2] = { rank, 1, 2, 3 }, { 4, 5, 6, rank }
mpi.allreduce(v)
local lanes = v:totable()
check(lanes[1].x == sum - 2 * size and lanes[1].y == size and lanes[2].w == sum - 2 * size,
      "float4 allreduce lanes")

-- reduce: the root holds the sum; the others keep their own values.
local r = array.full(3, rank + 1, "float64")
mpi.reduce(r, "sum", size - 1)
local want = rank == size - 1 and size * (size + 1) / 2 or rank + 1
check(r[1] == want and r[3] == want, "reduce: %s, not %s", r[1], want)

-- allgather: a new array {size, 2}; and into a device array given as out.
local g = mpi.allgather(array.from({ rank, 10 * rank }, "int32"))
check(g.ndim == 2 and g.shape[1] == size and g.shape[2] == 2, "allgather shape")
for q = 0, size - 1 do check(g:get(q + 1, 1) == q and g:get(q + 1, 2) == 10 * q, "allgather row %d", q) end
local dg = cuda.device_array({ size, 2 }, "int32")
check(mpi.allgather(cuda.to_device(array.from({ rank, -rank }, "int32")), dg) == dg, "allgather out")
check(dg:copy_to_host():get(size, 2) == -(size - 1), "allgather into a device array")

-- send/recv on a ring, into a view of a larger array; tags keep two messages apart.
local right, left = (rank + 1) % size, (rank - 1) % size
if rank % 2 == 0 then
  mpi.send(array.full(4, rank, "float64"), right, 7)
  mpi.send(array.full(4, rank + 0.5, "float64"), right, 8)
end
local big = array.zeros({ 3, 4 }, "float64")
if rank % 2 == 1 or size % 2 == 1 then
  if left % 2 == 0 then
    check(mpi.recv(big:sub(3, 3), left, 8) ~= nil, "recv returns")
    mpi.recv(big:sub(2, 2), left, 7)
    check(big:get(2, 4) == left and big:get(3, 1) == left + 0.5 and big:get(1, 1) == 0,
          "recv into views by tag")
  end
end
mpi.barrier()

-- sendrecv around the ring (device views), and nil peers that skip a half.
local ring = cuda.to_device(array.full({ 2, 3 }, rank, "int64"))
mpi.sendrecv(ring:sub(1, 1), right, ring:sub(2, 2), left)
local got = ring:copy_to_host()
check(got:get(1, 1) == rank and got:get(2, 3) == left, "sendrecv ring")
local edge = array.full(2, 5, "int32")
mpi.sendrecv(array.full(2, rank, "int32"), rank < size - 1 and rank + 1 or nil, edge,
             rank > 0 and rank - 1 or nil)
check(edge[1] == (rank > 0 and rank - 1 or 5), "sendrecv with a nil peer: %s", edge[1])

-- Non-blocking: irecv from the left, isend to the right, waitall; iallreduce; ibcast.
local inbox = array.zeros(3, "int32")
local rq = mpi.irecv(inbox, left, 3)
local sq = mpi.isend(array.full(3, 100 + rank, "int32"), right, 3)
mpi.waitall({ sq, rq })
check(rq:wait() == inbox and inbox[2] == 100 + left, "irecv: %s", inbox[2])
check(rq:test() == true, "a completed request tests true")
local s = mpi.iallreduce(array.full(2, 1, "float64"))
check(s:wait()[1] == size, "iallreduce")
check(mpi.ibcast(array.full(1, rank, "int32"), 1):wait()[1] == 1, "ibcast")

-- Errors: clear, on every rank alike for collectives, and the job goes on after them.
local e = fails(mpi.allreduce, array.zeros(rank == 0 and 3 or 4))
check(e and e:find("disagree on the element count", 1, true), "count mismatch: %s", e)
e = fails(mpi.allreduce, array.zeros(2, rank == 0 and "float32" or "float64"))
check(e and e:find("disagree on the dtype", 1, true), "dtype mismatch: %s", e)
e = fails(mpi.bcast, array.zeros(2), rank == 0 and 0 or 1)
check(e and e:find("disagree on the root", 1, true), "root mismatch: %s", e)
e = fails(mpi.allreduce, array.zeros(2), rank == 0 and "min" or "max")
check(e and e:find("disagree on the reduction (min and max)", 1, true), "op mismatch: %s", e)
e = fails(function() if rank == 0 then mpi.bcast(array.zeros(2)) else mpi.allreduce(array.zeros(2)) end end)
check(e and e:find("disagree on the collective", 1, true), "different collectives: %s", e)
e = fails(mpi.send, array.zeros(2), size)
check(e and e:find("rank " .. size .. " is not in this job", 1, true), "bad rank: %s", e)
e = fails(mpi.allreduce, array.zeros(2), "mean")
check(e and e:find("unknown op 'mean'", 1, true), "bad op: %s", e)
e = fails(mpi.allreduce, array.zeros(2, "bool"))
check(e and e:find("bool", 1, true), "bool sum: %s", e)
e = fails(mpi.send, {}, 0)
check(e and e:find("host or device array expected", 1, true), "not an array: %s", e)
e = fails(mpi.send, array.zeros(1), 0, 40000)
check(e and e:find("tags run from 0 to 32767", 1, true), "bad tag: %s", e)
local freed = cuda.device_array(2)
freed:free()
e = fails(mpi.bcast, freed)
check(e and e:find("freed", 1, true), "freed: %s", e)
-- A message of the wrong length is named by its element counts.
if rank == 0 then mpi.send(array.zeros(5, "int32"), 1, 9) end
if rank == 1 then
  e = fails(mpi.recv, array.zeros(4, "int32"), 0, 9)
  check(e and e:find("rank 0 sent 5 elements where this rank receives 4 int32", 1, true), "length: %s", e)
end
mpi.barrier()
if rank == 0 then print(("mpi api: %d ranks OK"):format(size)) end
