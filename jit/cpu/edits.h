// Text edits as the cpu backend's source rewrites make them: each replaces the source's bytes
// [begin, end) with text (an insertion where they are equal).
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace kiln::cpu {

// One edit: source bytes [begin, end) become text.
struct TextEdit {
  std::size_t begin, end;
  std::string text;
};

// source with edits made, given in order of begin and not overlapping. Edit: any struct with
// members begin, end and text.
template <class Edit>
std::string apply_edits(std::string_view source, const std::vector<Edit>& edits) {
  std::string out;
  std::size_t done = 0;
  for (const Edit& e : edits) {
    out.append(source.substr(done, e.begin - done));
    out += e.text;
    done = e.end;
  }
  return out.append(source.substr(done));
}

}  // namespace kiln::cpu
