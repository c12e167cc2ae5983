// Texture references (jit/textures.h): which declarations kiln rewrites, and that the rewrite
// keeps every line where it was.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "jit/textures.h"

namespace kiln::jit {
namespace {

TEST(JitTextures, FindsOneDimensionalElementReads) {
  const std::string source = R"(#define N 4
texture<float, 1, cudaReadModeElementType> a;
texture<float4> b;  // the defaults: 1-D, element reads
static texture<unsigned int, cudaTextureType1D> c;
texture<float, 2, cudaReadModeElementType> flat;
texture<unsigned char, 1, cudaReadModeNormalizedFloat> normalised;
struct S { texture<float, 1> member; };
// texture<float, 1> commented;
__global__ void k(float* out) { out[0] = tex1Dfetch(a, 0); }
)";
  const std::vector<TextureRef> refs = find_texture_references(source);
  ASSERT_EQ(refs.size(), 3u);
  EXPECT_EQ(refs[0].name, "a");
  EXPECT_EQ(refs[0].type, "float");
  EXPECT_EQ(refs[0].line, 2);
  EXPECT_EQ(refs[1].name, "b");
  EXPECT_EQ(refs[1].type, "float4");
  EXPECT_EQ(refs[2].name, "c");
  EXPECT_EQ(refs[2].type, "unsigned int");
  EXPECT_TRUE(find_texture_references("__global__ void texture_free() {}").empty());
}

TEST(JitTextures, RewriteKeepsLinesAndLeavesTheRest) {
  const std::string source =
      "texture<float, 1>\n    spread;\nstatic texture<int> w;\n"
      "texture<float, 2> flat;\n__global__ void k() {}\n";
  const std::string out = rewrite_texture_references(source);
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'),
            std::count(source.begin(), source.end(), '\n'));
  EXPECT_NE(out.find("__device__ ::kiln_texture<float> spread;"), std::string::npos) << out;
  EXPECT_NE(out.find("__device__ ::kiln_texture<int> w;"), std::string::npos) << out;
  EXPECT_EQ(out.find("static"), std::string::npos) << out;
  EXPECT_NE(out.find("texture<float, 2> flat;"), std::string::npos) << out;  // not kiln's to read
  EXPECT_EQ(out.substr(out.rfind("__global__")), "__global__ void k() {}\n");
  EXPECT_EQ(rewrite_texture_references("__global__ void k() {}"), "__global__ void k() {}");
}

TEST(JitTextures, HintsAtTheOnesLeftAsWritten) {
  EXPECT_NE(texture_hint("kernel.cu(1): error: texture is not a template").find("m:bind_texture"),
            std::string::npos);
  EXPECT_NE(texture_hint("kernel.cu:1:1: error: \u2018texture\u2019 does not name a type"), "");
  EXPECT_EQ(texture_hint("kernel.cu(3): error: identifier \"x\" is undefined"), "");
  // A texture object: the cpu backend's compile error, and a parameter's declared type.
  EXPECT_EQ(texture_hint("error: 'cudaTextureObject_t' has not been declared"),
            texture_object_hint());
  EXPECT_TRUE(names_texture_object("const cudaSurfaceObject_t"));
  EXPECT_FALSE(names_texture_object("unsigned long long"));
}

}  // namespace
}  // namespace kiln::jit
