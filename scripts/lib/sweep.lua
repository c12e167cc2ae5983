-- The benchmark sweeps of the seed's 004 notebook: run timers over N = 2^lo .. 2^hi, print a
-- table, write a CSV file and a log-log plot of time against N.
local labs = require "labs"
local plot = require "plot"
local M = {}

-- The sizes 2^lo .. 2^hi.
function M.sizes(lo, hi)
  local t = {}
  for e = lo, hi do t[#t + 1] = 1 << e end
  return t
end

-- Reports rows (one per N, keys N and each series' key, times in ms) as a table, a CSV file
-- and a log-log plot. series = { {key=, name=}, ... }; files are named stem.csv and stem.png.
function M.report(opts, stem, title, series, rows)
  local columns = { { key = "N", title = "N", fmt = "%d" } }
  local csv_columns = { "N" }
  for _, s in ipairs(series) do
    columns[#columns + 1] = { key = s.key, title = s.key .. " ms", fmt = "%.4g" }
    csv_columns[#csv_columns + 1] = s.key .. "_ms"
  end
  labs.print_table(columns, rows)
  local csv_rows = {}
  for i, r in ipairs(rows) do
    csv_rows[i] = { N = r.N }
    for _, s in ipairs(series) do csv_rows[i][s.key .. "_ms"] = r[s.key] end
  end
  local csv = labs.out_path(opts, stem .. ".csv")
  labs.write_csv(csv, csv_columns, csv_rows)
  labs.line("csv", csv)
  if opts["no-pictures"] then return end
  local plot_series, xticks = {}, {}
  for _, s in ipairs(series) do
    local xs, ys = {}, {}
    for _, r in ipairs(rows) do
      if r[s.key] then xs[#xs + 1] = r.N; ys[#ys + 1] = r[s.key] end
    end
    plot_series[#plot_series + 1] = { name = s.name, x = xs, y = ys }
  end
  local step = #rows > 10 and 2 or 1
  for i = 1, #rows, step do xticks[#xticks + 1] = rows[i].N end
  local png = labs.out_path(opts, stem .. ".png")
  plot.line_plot({
    title = title .. " [" .. cuda.backend() .. " backend]", xlabel = "N (elements)",
    ylabel = "time per call (ms)", series = plot_series, xticks = xticks,
    xtick = function(v) return ("2^%d"):format(math.floor(math.log(v, 2) + 0.5)) end,
    width = 900, height = 520,
  }):save(png)
  labs.line("plot", png)
end

return M
