-- load_image / save_image: PNG round trips through a temporary file, and the errors.

package.path = arg[0]:gsub("[^/]*$", "") .. "lib/?.lua;" .. package.path
local fails = require("expect").error

local base = os.tmpname()
local path = base .. ".png"

-- A pattern no encoder gets right by accident: every pixel and channel differs.
local function pattern(h, w, c)
  local shape = c and {h, w, c} or {h, w}
  local a = array.zeros(shape, "u8")
  for i = 1, a.size do a[i] = (i * 37 + i // 7) % 256 end
  return a
end

for _, c in ipairs({false, 1, 2, 3, 4}) do
  local img = pattern(13, 17, c or nil)
  array.save_image(path, img)
  local back = array.load_image(path)
  assert(back.dtype == "uint8")
  if c == false or c == 1 then  -- gray comes back as {h, w}
    assert(back.ndim == 2 and back.shape[1] == 13 and back.shape[2] == 17)
    assert(array.equal(back, img:reshape({13, 17})))
  else
    assert(back.ndim == 3 and back.shape[3] == c)
    assert(array.equal(back, img), "channels " .. c)
  end
end

-- Pixel layout: row-major, channels last (a red pixel at row 1, column 2).
local rgb = array.zeros({2, 3, 3}, "u8")
rgb:set(1, 2, 1, 255)
array.save_image(path, rgb)
local px = array.load_image(path)
assert(px:get(1, 2, 1) == 255 and px:get(1, 2, 2) == 0 and px:get(1, 1, 1) == 0 and px:sum() == 255)

-- Errors name the path and the reason.
fails("load_image: cannot open '" .. base .. ".missing.png': No such file or directory",
      array.load_image, base .. ".missing.png")
local f = assert(io.open(path, "wb"))
f:write("this is not an image")
f:close()
fails("load_image: cannot decode '" .. path .. "'", array.load_image, path)
fails("expected a uint8 array, got float32", array.save_image, path, array.zeros({2, 2}, "f32"))
fails("expected shape {h, w} or {h, w, c} with c in 1..4, got (2, 2, 5)", array.save_image, path,
      array.zeros({2, 2, 5}, "u8"))
fails("got (4,)", array.save_image, path, array.zeros(4, "u8"))
fails("got (0, 3)", array.save_image, path, array.zeros({0, 3}, "u8"))
fails("too large for the PNG writer", array.save_image, path, array.zeros({40000, 40000}, "u8"))
fails("save_image: cannot open '/nonexistent-dir/x.png'", array.save_image, "/nonexistent-dir/x.png",
      array.zeros({2, 2}, "u8"))
fails("bad argument #1", array.load_image, nil)

-- array.show outside a notebook prints a non-image array; with a display hook (what the
-- Jupyter kernel registers) it hands the array to the hook instead.
array.show(array.arange(3))
fails("bad argument #1", array.show, 42)
local shown
debug.getregistry()["kiln.display"] = function(a) shown = a end
local img = pattern(2, 3, 3)
array.show(img)
assert(shown == img, "array.show did not call the display hook")
debug.getregistry()["kiln.display"] = nil

os.remove(path)
os.remove(base)
