-- Lab: 9x9 box blur, naive (every pixel reads its 81 neighbours from global memory; the kernel
-- reads the image's shape through kiln::Array as the seed's reads input_img.shape). Validated
-- exactly against a CPU blur computed differently (a summed-area table). Writes the input and
-- the output side by side. The image is generated (kiln ships no copyrighted picture) unless a
-- PNG/JPEG path is given; colour images are blurred as gray.
-- Usage: kiln scripts/labs/blur.lua [IMAGE] [--size N] [--height H] [--width W] [--out DIR] [--reps R] [--full]
local here = arg and arg[0] and arg[0]:match("^(.*)/[^/]*$") or "."
package.path = here .. "/../lib/?.lua;" .. package.path
local labs = require "labs"
local plot = require "plot"
local images = require "images"

local opts, img = images.blur_input(labs, arg, "blur.lua")
labs.header("blur", "9x9 box blur, naive")
local h, w = img.shape[1], img.shape[2]
local k = cuda.jit_file("blur.cu", { defines = { RADIUS = 4 } })

local d_in = cuda.to_device(img)
local d_out = cuda.device_array_like(d_in)
local grid = { labs.blocks(w, 16), labs.blocks(h, 16) }
local ms = labs.time_device(function() k[{ grid, { 16, 16 } }](d_in, d_out) end, opts.reps)
local out = d_out:copy_to_host()

local ref = images.box_blur_reference(img, 4, true)
local differ, worst = images.count_differences(out:reshape(h * w):totable(), ref)

local png = not opts["no-pictures"] and labs.out_path(opts, "blur.png")
if png then
  local cv = plot.canvas(2 * w + 30, h + 40)
  cv:text(10, 12, "input", { 0, 0, 0 }, 2)
  cv:text(w + 20, 12, "naive 9x9 blur", { 0, 0, 0 }, 2)
  cv:image(img, 10, 34)
  cv:image(out, w + 20, 34)
  cv:save(png)
end
labs.line("image", ("%d x %d gray uint8 (%s)"):format(w, h, opts.image or "generated"))
labs.line("time per launch", labs.fmt_ms(ms))
labs.line("bandwidth", labs.fmt_gbs(2 * h * w, ms) .. " effective (image read once + written once)")
labs.line("picture", png or "(skipped)")
labs.verdict("blur", differ == 0,
  ("%d of %d pixels differ from the CPU reference, largest difference %d"):format(differ, h * w, worst))
