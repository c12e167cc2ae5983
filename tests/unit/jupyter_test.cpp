// repl/kernelspec and the pieces of the notebook display below it: the kernelspec
// --install-kernel writes, and PNGs encoded in memory (runtime/image).
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "repl/jupyter.h"
#include "runtime/error.h"
#include "runtime/image.h"
#include "temp_dir.h"

namespace kiln {
namespace {

TEST(Kernelspec, NamesThisBinaryAndTheConnectionFile) {
  std::string json = jupyter::kernelspec_json("/opt/kiln \"x\"/kiln");
  EXPECT_NE(json.find(R"("argv": ["/opt/kiln \"x\"/kiln", "--jupyter", "{connection_file}"])"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find(R"("language": "lua")"), std::string::npos);
  EXPECT_NE(json.find(R"("interrupt_mode": "signal")"), std::string::npos);
}

TEST(Kernelspec, InstallWritesKernelsKiln) {
  test::TempDir dir;
  std::filesystem::path written = jupyter::install_kernelspec(dir.path() / "data", "/bin/kiln");
  EXPECT_EQ(written, dir.path() / "data" / "kernels" / "kiln");
  std::ifstream in(written / "kernel.json");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, jupyter::kernelspec_json("/bin/kiln"));
  EXPECT_THROW(jupyter::install_kernelspec("", "/bin/kiln"), Error);
}

TEST(EncodePng, ImagesOnly) {
  HostArray gray({2, 3}, DType::uint8);
  EXPECT_TRUE(is_image(gray));
  std::vector<unsigned char> png = encode_png(gray);
  ASSERT_GE(png.size(), 8u);
  EXPECT_EQ(std::string(png.begin() + 1, png.begin() + 4), "PNG");
  EXPECT_TRUE(is_image(HostArray({2, 3, 4}, DType::uint8)));
  EXPECT_FALSE(is_image(HostArray({2, 3, 5}, DType::uint8)));
  EXPECT_FALSE(is_image(HostArray({2, 3}, DType::float32)));
  EXPECT_FALSE(is_image(HostArray({6}, DType::uint8)));
  EXPECT_THROW(encode_png(HostArray({6}, DType::uint8)), Error);
}

}  // namespace
}  // namespace kiln
