// Kernel source text: a Lua string, or a file watched for edits (hot edit). The text a kernel
// compiles from, and the text of the local headers it includes (they are part of its identity).
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace kiln::jit {

class SourceText {
 public:
  // A string given to cuda.jit; origin says where it came from ("script.lua:12") for messages.
  static SourceText from_string(std::string text, std::string origin);
  // A file given to cuda.jit_file; throws kiln::Error when it cannot be read.
  static SourceText from_file(const std::filesystem::path& path);

  const std::string& text() const { return text_; }
  // The name compilers and their logs use: the path for files, "kernel.cu" for strings.
  const std::string& filename() const { return filename_; }
  // Where the kernel was written, for messages: the path, or the Lua line of cuda.jit.
  const std::string& origin() const { return origin_; }
  bool is_file() const { return is_file_; }
  // The folder of a file (for #include "..."), empty for strings.
  std::filesystem::path folder() const;
  // Text of every local header reachable through #include "..." (for cache keys), in order.
  std::vector<std::string> included_texts() const;

  // For files: a cheap stat, then a content hash when the stat changed. True when the text
  // is now different (and text() is the new text). A vanished file throws kiln::Error.
  bool refresh();
  // Counts the changes refresh() has seen, so each kernel of a module notices every edit.
  std::uint64_t revision() const { return revision_; }

 private:
  std::string text_, filename_, origin_;
  bool is_file_ = false;
  std::int64_t mtime_ns_ = 0;
  std::uintmax_t size_ = 0;
  std::uint64_t revision_ = 0;
};

}  // namespace kiln::jit
