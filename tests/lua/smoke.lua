-- The host opens Lua's standard libraries and preloads kiln's modules.
assert(type(cuda) == "table" and type(array) == "table")
assert(require("kiln.cuda") == cuda and require("kiln.array") == array)
assert(string.format("%d", 1 + 1) == "2" and math.pi and table.concat and io.write and os.time)
