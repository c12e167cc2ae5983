-- Inputs a careless or hostile user gives, each answered at once with a clear error or the
-- right empty result: huge empty shapes, sources that are not regular files or hold NUL bytes,
-- tolerances that would make a comparison meaningless.
package.path = arg[0]:gsub("[^/]*$", "") .. "lib/?.lua;" .. package.path
local expect = require("expect")

-- Empty arrays with a huge extent print, copy and convert without walking their rows.
local huge = array.zeros({ 2 ^ 62, 0 })
assert(huge.size == 0)
assert(tostring(huge) == "array([], shape=(4611686018427387904, 0), dtype=float64)", tostring(huge))
local d = cuda.device_array({ 2 ^ 40, 0 }, "int32")
assert(tostring(d):find("shape=(1099511627776, 0)", 1, true), tostring(d))
assert(d:copy_to_host().size == 0)
expect.error("nested tables", huge.totable, huge)
assert(#array.zeros({ 3, 0 }):totable() == 3)  -- a small one still converts

-- Kernel files must be regular files of sane size.
expect.error("is not a regular file", cuda.jit_file, "/dev/zero")
local dir = os.mkdtemp("kiln-hostile")
expect.error("is a folder, not a kernel file", cuda.jit_file, dir)
expect.error("does not exist", cuda.jit_file, "/nonexistent/k.cu")
local f = assert(io.open(dir .. "/nul.cu", "wb"))
f:write("__global__ void k(int* x) { x[0] = 1; }\n\0 // the rest\n")
f:close()
expect.error("holds a NUL byte (line 2)", cuda.jit_file, dir .. "/nul.cu")
os.remove(dir .. "/nul.cu")
os.remove(dir)
expect.error("holds a NUL byte", cuda.jit, "__global__ void k(int* x) { x[0] = 1; }\0 garbage")

-- Tolerances: negative or NaN would make allclose always true (or never).
local a = array.zeros(2)
expect.error("rtol must be a number >= 0", array.allclose, a, a, -1)
expect.error("atol must be a number >= 0", array.allclose, a, a, 1e-5, 0 / 0)
assert(array.allclose(a, a, 0, 0))
print("hostile_inputs: ok")
