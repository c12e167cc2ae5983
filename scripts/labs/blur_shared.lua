-- Lab: 9x9 box blur with shared-memory tiling: 16x16 tiles, a 4-pixel halo, a 24x24 __shared__
-- array per block. It must equal the naive blur exactly (same neighbours, same order, same
-- count), and both must equal the CPU reference. Writes input, naive and shared outputs side by
-- side. The image is generated unless a PNG/JPEG path is given.
-- Usage: kiln scripts/labs/blur_shared.lua [IMAGE] [--size N] [--height H] [--width W] [--out DIR] [--reps R] [--full]
local here = arg and arg[0] and arg[0]:match("^(.*)/[^/]*$") or "."
package.path = here .. "/../lib/?.lua;" .. package.path
local labs = require "labs"
local plot = require "plot"
local images = require "images"

local opts, img = images.blur_input(labs, arg, "blur_shared.lua")
labs.header("blur_shared", "9x9 box blur, shared-memory tiles with a 4-pixel halo")
local h, w = img.shape[1], img.shape[2]
local defines = { RADIUS = 4, TILE = 16 }
local naive = cuda.jit_file("blur.cu", { defines = defines })
local shared = cuda.jit_file("blur_shared.cu", { defines = defines })

local d_in = cuda.to_device(img)
local d_naive = cuda.device_array_like(d_in)
local d_shared = cuda.device_array_like(d_in)
local grid = { labs.blocks(w, 16), labs.blocks(h, 16) }
local ms_naive = labs.time_device(function() naive[{ grid, { 16, 16 } }](d_in, d_naive) end, opts.reps)
local ms_shared = labs.time_device(function() shared[{ grid, { 16, 16 } }](d_in, d_shared) end, opts.reps)
local out_naive, out_shared = d_naive:copy_to_host(), d_shared:copy_to_host()

local t_naive, t_shared = out_naive:reshape(h * w):totable(), out_shared:reshape(h * w):totable()
local differ = images.count_differences(t_shared, t_naive)
local ref_differ = images.count_differences(t_shared, images.box_blur_reference(img, 4, true))

local png = not opts["no-pictures"] and labs.out_path(opts, "blur_shared.png")
if png then
  local cv = plot.canvas(3 * w + 40, h + 40)
  cv:text(10, 12, "input", { 0, 0, 0 }, 2)
  cv:text(w + 20, 12, "naive", { 0, 0, 0 }, 2)
  cv:text(2 * w + 30, 12, "shared-memory tiles", { 0, 0, 0 }, 2)
  cv:image(img, 10, 34)
  cv:image(out_naive, w + 20, 34)
  cv:image(out_shared, 2 * w + 30, 34)
  cv:save(png)
end
labs.line("image", ("%d x %d gray uint8 (%s)"):format(w, h, opts.image or "generated"))
labs.line("naive", labs.fmt_ms(ms_naive) .. " per launch, " .. labs.fmt_gbs(2 * h * w, ms_naive))
labs.line("shared", labs.fmt_ms(ms_shared) .. " per launch, " .. labs.fmt_gbs(2 * h * w, ms_shared))
labs.line("speedup over naive", ("%.2fx"):format(ms_naive / ms_shared))
labs.line("picture", png or "(skipped)")
labs.verdict("blur_shared", differ == 0 and ref_differ == 0,
  ("%s naive, %d of %d pixels differ; %d differ from the CPU reference"):format(
    differ == 0 and "equal to" or "NOT equal to", differ, h * w, ref_differ))
