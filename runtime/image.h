// Image files <-> uint8 host arrays, through stb_image (PNG, JPEG, and the other formats it reads)
// and stb_image_write (PNG).
#pragma once
#include <string>
#include <vector>

#include "runtime/host_array.h"

namespace kiln {

// Reads an image file: uint8 of shape {h, w} for gray images, {h, w, c} otherwise (c = 2 for
// gray+alpha, 3 for RGB, 4 for RGBA); 16-bit files are scaled to 8 bits. Throws kiln::Error
// naming the path and the reason.
HostArray load_image(const std::string& path);

// Writes a uint8 array of shape {h, w} or {h, w, c} (c from 1 to 4) as a PNG file. Throws
// kiln::Error naming the path and the reason.
void save_image(const std::string& path, const HostArray& image);

// Whether save_image and encode_png take the array: uint8 of shape {h, w} or {h, w, c}, c in
// 1..4, no dimension 0.
bool is_image(const HostArray& a);

// The PNG file's bytes for the image, in memory (for a notebook's image/png). Throws kiln::Error
// as save_image does; what names the caller in the message.
std::vector<unsigned char> encode_png(const HostArray& image, const std::string& what = "encode_png");

}  // namespace kiln
