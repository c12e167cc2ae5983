#include "jit/textures.h"

#include <algorithm>
#include <cstddef>

#include "jit/lexer.h"

namespace kiln::jit {

namespace {

// What a texture reference becomes: the array it is bound to (m:bind_texture writes both
// fields), read as a GPU reads linear memory through a texture, zero outside it (Rodinia's
// kmeans reads past its last point and counts on that). On one line, before the first one.
constexpr const char* kTextureType =
    "template <class T> struct kiln_texture { const T* data; unsigned long long size; }; "
    "template <class T> __device__ __forceinline__ T tex1Dfetch(const kiln_texture<T>& t, int i) "
    "{ return i >= 0 && (unsigned long long)i < t.size ? t.data[i] : T(); } ";

// One texture reference as the scan found it: its tokens [first, last] (a `static` before it
// included) and what it declares.
struct Found {
  std::size_t first, last;
  TextureRef ref;
};

// The template arguments of the list that opens at t[open] ('<'), each as [begin, end) token
// indices, and the index of its '>'; close is t.size() when the list does not close.
std::vector<std::pair<std::size_t, std::size_t>> template_arguments(const std::vector<Token>& t,
                                                                    std::size_t open,
                                                                    std::size_t* close) {
  std::vector<std::pair<std::size_t, std::size_t>> args;
  int angle = 0, paren = 0;
  std::size_t begin = open + 1;
  for (std::size_t k = open; k < t.size(); ++k) {
    if (is_punct(t[k], "(")) ++paren;
    if (is_punct(t[k], ")")) --paren;
    if (paren > 0) continue;
    if (is_punct(t[k], "<")) ++angle;
    const bool ends = is_punct(t[k], ">") && --angle == 0;
    if (ends || (angle == 1 && is_punct(t[k], ","))) {
      args.emplace_back(begin, k);
      begin = k + 1;
    }
    if (ends) {
      *close = k;
      return args;
    }
  }
  *close = t.size();
  return args;
}

// Every 1-D element-type texture reference of source outside braces.
std::vector<Found> scan(std::string_view source, const std::vector<Token>& t) {
  std::vector<Found> found;
  int depth = 0;
  for (std::size_t k = 0; k + 1 < t.size(); ++k) {
    if (t[k].directive) continue;
    if (is_punct(t[k], "{")) ++depth;
    if (is_punct(t[k], "}")) --depth;
    if (depth != 0 || !is_ident(t[k], "texture") || !is_punct(t[k + 1], "<") ||
        (k > 0 && is_punct(t[k - 1], "::")))
      continue;
    std::size_t close = 0;
    const auto args = template_arguments(t, k + 1, &close);
    if (close + 2 >= t.size() || t[close + 1].kind != Token::ident ||
        !is_punct(t[close + 2], ";") || args.empty() || args.size() > 3 ||
        args[0].first == args[0].second)
      continue;
    auto single = [&](std::size_t a) {  // the one token of argument a, or ""
      return args.size() > a && args[a].second == args[a].first + 1 ? t[args[a].first].text
                                                                    : std::string();
    };
    const std::string dims = args.size() > 1 ? single(1) : "1";
    const std::string mode = args.size() > 2 ? single(2) : "cudaReadModeElementType";
    if ((dims != "1" && dims != "cudaTextureType1D") || mode != "cudaReadModeElementType")
      continue;  // 2-D, 3-D, layered or normalised: left for the compiler (and texture_hint)
    const std::size_t type_begin = t[args[0].first].begin, type_end = t[args[0].second - 1].end;
    Found f{k > 0 && is_ident(t[k - 1], "static") ? k - 1 : k, close + 2, {}};
    f.ref = {t[close + 1].text, std::string(source.substr(type_begin, type_end - type_begin)),
             t[k].line};
    found.push_back(std::move(f));
  }
  return found;
}

}  // namespace

std::vector<TextureRef> find_texture_references(std::string_view source) {
  if (source.find("texture") == std::string_view::npos) return {};
  std::vector<TextureRef> refs;
  for (Found& f : scan(source, lex(source))) refs.push_back(std::move(f.ref));
  return refs;
}

std::string rewrite_texture_references(std::string_view source) {
  if (source.find("texture") == std::string_view::npos) return std::string(source);
  const std::vector<Token> t = lex(source);
  const std::vector<Found> found = scan(source, t);
  if (found.empty()) return std::string(source);
  std::string out;
  std::size_t done = 0;
  for (const Found& f : found) {
    const std::size_t begin = t[f.first].begin, end = t[f.last].end;
    out.append(source.substr(done, begin - done));
    if (&f == &found.front()) out += kTextureType;
    out += "__device__ ::kiln_texture<" + f.ref.type + "> " + f.ref.name + ";";
    // The lines the declaration spanned, so that the lines after it keep their numbers.
    out.append(
        static_cast<std::size_t>(std::count(source.begin() + begin, source.begin() + end, '\n')),
        '\n');
    done = end;
  }
  out.append(source.substr(done));
  return out;
}

std::string texture_hint(std::string_view log) {
  // A texture reference: NVRTC's words, and GCC's (its quotes typographic, or plain under LANG=C).
  if (log.find("texture is not a template") != std::string_view::npos ||
      log.find("texture\u2019 does not name a type") != std::string_view::npos ||
      log.find("texture' does not name a type") != std::string_view::npos)
    return "texture references were removed in CUDA 12: kiln reads 1-D ones, `texture<T, 1> "
           "name;` or `texture<T, 1, cudaReadModeElementType> name;` read with tex1Dfetch(name, "
           "i) and bound with m:bind_texture(\"name\", array); others (2-D, 3-D, normalised "
           "reads) need a pointer parameter";
  // A texture or surface object: the cpu backend's prelude has no such type.
  return names_texture_object(log) ? texture_object_hint() : "";
}

bool names_texture_object(std::string_view type) {
  for (std::string_view word : {"cudaTextureObject_t", "cudaSurfaceObject_t"})
    if (type.find(word) != std::string_view::npos) return true;
  return false;
}

std::string texture_object_hint() {
  return "texture and surface objects (cudaTextureObject_t, tex2D<T>(t, x, y), surf2Dwrite) "
         "are not supported by kiln: the cpu backend has no texture unit and no Lua function "
         "makes one; pass the array as a pointer and read it by index (clamping or wrapping the "
         "coordinates as the texture's address mode would)";
}

}  // namespace kiln::jit
