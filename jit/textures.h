// Texture references, CUDA's `texture<T, 1, cudaReadModeElementType> name;` (removed in CUDA 12),
// as Rodinia's kmeans and hybridsort declare them and read them with tex1Dfetch(name, i). Each
// becomes a global `__device__ kiln_texture<T> name;` (a pointer and an element count) that
// m:bind_texture points at a device array (cudaBindTexture), and tex1Dfetch an overload that
// reads through it, zero outside the array as a texture fetch is. Other texture references (2-D
// and 3-D, normalised reads) are left as written: the compiler's error about them carries a
// hint (texture_hint).
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace kiln::jit {

struct TextureRef {
  std::string name;
  std::string type;  // the element type as written: "float", "float4", "unsigned int"
  int line = 0;
};

// The 1-D element-type texture references source declares outside any braces, in order.
std::vector<TextureRef> find_texture_references(std::string_view source);

// source with each of them declared as a kiln_texture global on its own lines, and kiln_texture
// and tex1Dfetch defined before the first; source unchanged when it declares none.
std::string rewrite_texture_references(std::string_view source);

// The hint for a compile log that says a texture reference did not compile, else "".
std::string texture_hint(std::string_view log);

// Whether a parameter's declared type names a texture or surface object (cudaTextureObject_t,
// cudaSurfaceObject_t): an integer handle to the compiler, which no Lua value makes; and why
// such a parameter is refused.
bool names_texture_object(std::string_view type);
std::string texture_object_hint();

}  // namespace kiln::jit
