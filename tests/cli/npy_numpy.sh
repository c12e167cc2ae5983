#!/usr/bin/env bash
# array.save / array.load against NumPy itself (Debian's python3-numpy), both ways, for every
# kiln dtype: kiln writes, NumPy reads and checks the values and dtypes; NumPy writes, kiln reads
# and checks. Exits 77 (skipped) where python3-numpy is not installed.
# Usage: bash npy_numpy.sh /path/to/kiln
set -euo pipefail
kiln=$(realpath "$1")
python=/usr/bin/python3
if ! "$python" -c 'import numpy' 2>/dev/null; then
  echo "SKIP: python3-numpy is not installed (scripts/setup.sh installs it)"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

# kiln -> NumPy: each array is i*3 - 7 (as the dtype holds it) in shape {4, 5}; bool is i % 3 == 0;
# a float4 array saves as float32 with one more axis.
"$kiln" -e '
for _, t in ipairs({"float32", "float64", "int8", "uint8", "int16", "uint16", "int32", "uint32",
                    "int64", "uint64", "bool", "float16"}) do
  local a = array.zeros({4, 5}, t)
  for i = 1, 20 do
    if t == "bool" then a[i] = (i - 1) % 3 == 0
    elseif t:sub(1, 4) == "uint" then a[i] = (i - 1) * 3
    else a[i] = (i - 1) * 3 - 7 end
  end
  array.save("kiln_" .. t .. ".npy", a)
end
local v = array.zeros(3, "float4")
for i = 1, 3 do v[i] = {i, i + 0.5, -i, 0.25} end
array.save("kiln_float4.npy", v)
array.save("kiln_scalar.npy", array.from(2.5))'
"$python" - <<'PY'
import numpy as np
for t in ["float32", "float64", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64",
          "uint64", "bool", "float16"]:
    a = np.load(f"kiln_{t}.npy")
    assert a.dtype == np.dtype(t), (t, a.dtype)
    assert a.shape == (4, 5), (t, a.shape)
    i = np.arange(20).reshape(4, 5)
    want = (i % 3 == 0) if t == "bool" else (i * 3 if t.startswith("uint") else i * 3 - 7).astype(t)
    assert (a == want).all(), (t, a, want)
v = np.load("kiln_float4.npy")
assert v.dtype == np.float32 and v.shape == (3, 4)
assert (v == np.array([[i, i + 0.5, -i, 0.25] for i in (1, 2, 3)], np.float32)).all(), v
s = np.load("kiln_scalar.npy")
assert s.shape == () and s == 2.5
# NumPy -> kiln: random values of every dtype, odd shapes, a 0-d and an empty array.
rng = np.random.default_rng(7)
for t in ["float32", "float64", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64",
          "uint64", "float16"]:
    info = np.finfo(t) if t.startswith("float") else np.iinfo(t)
    if t.startswith("float"):
        a = (rng.standard_normal((3, 7)) * 1000).astype(t)
    else:
        a = rng.integers(info.min, info.max, size=(3, 7), dtype=t, endpoint=True)
    np.save(f"np_{t}.npy", a)
    with open(f"np_{t}.txt", "w") as f:
        f.write("\n".join(repr(float(x)) if t.startswith("float") else str(int(x)) for x in a.ravel()))
np.save("np_bool.npy", np.array([True, False, True]))
np.save("np_empty.npy", np.zeros((0, 4), np.int32))
np.save("np_fortran.npy", np.asfortranarray(np.ones((2, 3))))
np.save("np_bigendian.npy", np.ones(3, ">f4"))
PY
"$kiln" -e '
for _, t in ipairs({"float32", "float64", "int8", "uint8", "int16", "uint16", "int32", "uint32",
                    "int64", "uint64", "float16"}) do
  local a = array.load("np_" .. t .. ".npy")
  assert(a.dtype == t and a.shape[1] == 3 and a.shape[2] == 7, t .. ": dtype or shape")
  local k = 0
  for line in io.lines("np_" .. t .. ".txt") do
    k = k + 1
    local want = math.tointeger(tonumber(line)) or tonumber(line)
    if t == "uint64" and want == nil then want = tonumber(line) end
    local got = a[k]
    if t == "uint64" and math.type(got) == "integer" and got < 0 then got = got + 2.0^64 end
    assert(got == want or (t == "uint64" and math.abs(got - tonumber(line)) <= 2^11),
           t .. " element " .. k .. ": " .. tostring(got) .. " vs " .. line)
  end
  assert(k == 21, t .. ": element count")
end
local b = array.load("np_bool.npy")
assert(b.dtype == "bool" and b[1] == true and b[2] == false and b[3] == true)
local e = array.load("np_empty.npy")
assert(e.size == 0 and e.shape[1] == 0 and e.shape[2] == 4 and e.dtype == "int32")
local ok, err = pcall(array.load, "np_fortran.npy")
assert(not ok and err:find("Fortran order"), tostring(err))
ok, err = pcall(array.load, "np_bigendian.npy")
assert(not ok and err:find(">f4"), tostring(err))
print("npy: kiln and NumPy agree both ways")'
