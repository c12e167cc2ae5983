-- Runs the abs_sum lab at a small size on the cpu backend (it validates itself, exiting 1 on a mismatch).
local root = os.getenv("KILN_HOME") or "../.."
package.path = root .. "/scripts/lib/?.lua;" .. package.path
require("labtest").run(root, "abs_sum", { "--size", "100000", "--min-exp", "10", "--max-exp", "14" }, { "abs_sum_sweep.csv", "abs_sum_sweep.png" })
