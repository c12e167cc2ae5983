#include "runtime/image.h"

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "runtime/error.h"

// The stb implementations live in this file alone (header-only use: no link to libstb).
#define STB_IMAGE_IMPLEMENTATION
#define STBI_FAILURE_USERMSG
#include <stb/stb_image.h>
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb/stb_image_write.h>

namespace kiln {
namespace {

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

struct StbiFree {
  void operator()(unsigned char* p) const { stbi_image_free(p); }
};

// Opens path with mode, or throws naming the operation, the path and errno's reason.
File open_file(const std::string& path, const char* mode, const char* what) {
  File f(std::fopen(path.c_str(), mode));
  if (!f) throw Error(std::string(what) + ": cannot open '" + path + "': " + std::strerror(errno));
  return f;
}

// stb_image_write's sink: appends to a FILE*, remembering a short write.
void write_to_file(void* context, void* data, int size) {
  std::fwrite(data, 1, static_cast<std::size_t>(size), static_cast<std::FILE*>(context));
}

}  // namespace

HostArray load_image(const std::string& path) {
  File f = open_file(path, "rb", "load_image");
  int w = 0, h = 0, c = 0;
  std::unique_ptr<unsigned char, StbiFree> pixels(stbi_load_from_file(f.get(), &w, &h, &c, 0));
  if (!pixels) throw Error("load_image: cannot decode '" + path + "': " + stbi_failure_reason());
  Shape shape = c == 1 ? Shape{h, w} : Shape{h, w, c};
  HostArray image(shape, DType::uint8);
  std::memcpy(image.data(), pixels.get(), image.nbytes());
  return image;
}

bool is_image(const HostArray& a) {
  const Shape& s = a.shape();
  return a.dtype() == DType::uint8 &&
         (s.size() == 2 || (s.size() == 3 && s[2] >= 1 && s[2] <= 4)) && s[0] > 0 && s[1] > 0 &&
         s[0] <= (1 << 24) && s[1] <= (1 << 24);
}

namespace {

// The image's height, width and channels for stb; throws naming where (what: 'path') and why
// when the array is no image or too large for the PNG writer.
std::array<int, 3> png_dims(const HostArray& image, const std::string& where) {
  const Shape& s = image.shape();
  if (image.dtype() != DType::uint8)
    throw Error(where + ": expected a uint8 array, got " +
                std::string(dtype_info(image.dtype()).name) + " (convert with a:astype('uint8'))");
  if (!is_image(image))
    throw Error(where + ": expected shape {h, w} or {h, w, c} with c in 1..4, got " +
                shape_string(s));
  int h = static_cast<int>(s[0]), w = static_cast<int>(s[1]);
  int c = s.size() == 3 ? static_cast<int>(s[2]) : 1;
  if (static_cast<std::int64_t>(h) * w * c > (std::int64_t{1} << 30))  // stb counts bytes in int
    throw Error(where + ": image of shape " + shape_string(s) +
                " is too large for the PNG writer (at most 2^30 bytes)");
  return {h, w, c};
}

// stb_image_write's sink into a byte vector.
void write_to_vector(void* context, void* data, int size) {
  auto* out = static_cast<std::vector<unsigned char>*>(context);
  auto* bytes = static_cast<unsigned char*>(data);
  out->insert(out->end(), bytes, bytes + size);
}

}  // namespace

void save_image(const std::string& path, const HostArray& image) {
  auto [h, w, c] = png_dims(image, "save_image: '" + path + "'");
  File f = open_file(path, "wb", "save_image");
  if (!stbi_write_png_to_func(write_to_file, f.get(), w, h, c, image.data(), w * c))
    throw Error("save_image: cannot encode '" + path + "' as PNG");
  bool failed = std::ferror(f.get()) != 0;
  int err = errno;
  if (std::fclose(f.release()) != 0 || failed)
    throw Error("save_image: cannot write '" + path + "': " + std::strerror(failed ? err : errno));
}

std::vector<unsigned char> encode_png(const HostArray& image, const std::string& what) {
  auto [h, w, c] = png_dims(image, what);
  std::vector<unsigned char> bytes;
  if (!stbi_write_png_to_func(write_to_vector, &bytes, w, h, c, image.data(), w * c))
    throw Error(what + ": cannot encode the image as PNG");
  return bytes;
}

}  // namespace kiln
