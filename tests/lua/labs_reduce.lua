-- Runs the reduce lab at a small size on the cpu backend (it validates itself, exiting 1 on a mismatch).
local root = os.getenv("KILN_HOME") or "../.."
package.path = root .. "/scripts/lib/?.lua;" .. package.path
require("labtest").run(root, "reduce", { "--size", "100000", "--min-exp", "10", "--max-exp", "14" }, { "reduce_sweep.csv", "reduce_sweep.png" })
