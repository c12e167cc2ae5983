-- Runs the copy lab at a small size on the cpu backend (it validates itself, exiting 1 on a mismatch).
local root = os.getenv("KILN_HOME") or "../.."
package.path = root .. "/scripts/lib/?.lua;" .. package.path
require("labtest").run(root, "copy", { "--size", "10000" }, {  })
