// Kernel source text: a Lua string, or a file watched for edits (hot edit). The text a kernel
// compiles from, and the text of the local headers it includes (they are part of its identity).
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::jit {

// One #include line: the header's name and whether it was "quoted" (else <angled>).
struct IncludeLine {
  std::string name;
  bool quoted = false;
};

// The #include lines of text, in order (the lexer's directives: comments and strings ignored).
std::vector<IncludeLine> find_includes(std::string_view text);

// A header reached through #include, and its text.
struct IncludedFile {
  std::filesystem::path path;  // weakly canonical
  std::string text;
};

// The one include walker: the headers reachable from text (whose folder is dir), each once, in
// the order a preprocessor first reaches them. "name" is looked up in the including file's
// folder, then in include_dirs; <name> in include_dirs only, and only when follow_angled(name)
// says so (system headers stay out). A name that finds no readable file is skipped: the
// compiler reports it.
std::vector<IncludedFile> walk_includes(std::string_view text, const std::filesystem::path& dir,
                                        const std::vector<std::filesystem::path>& include_dirs = {},
                                        bool (*follow_angled)(const std::string& name) = nullptr);

// text with each "quoted" #include alone on its line that finds a header (in dir, unless dir is
// empty, then in include_dirs) replaced by the header's text, its own such #includes spliced the
// same way, between #line directives, so that the compiler's messages and debug lines name each
// file and line as written (filename: text's own name there). A header is spliced where it is
// first included; again only where it has no `#pragma once` (blanked) nor an include guard
// around it all, and not inside itself (a cycle): as its guard would, so that its functions are
// defined once in the text. (A first #include in a branch the preprocessor skips then leaves it
// out: the compile fails, and the cpu compiler goes without the splice.) The headers spliced, as
// read, go to *headers. nullopt when nothing was spliced, or the text would pass max_bytes.
std::optional<std::string> splice_includes(std::string_view text, const std::string& filename,
                                           const std::filesystem::path& dir,
                                           const std::vector<std::filesystem::path>& include_dirs,
                                           std::vector<IncludedFile>* headers = nullptr,
                                           std::size_t max_bytes = std::size_t(4) << 20);

// Each "filename:N" in message, a line of text (splice_includes' output), made the file and
// line that line stands for by text's #line directives ("helpers.cuh:3"). Messages that a scan
// of spliced text words name its lines so.
std::string written_places(std::string message, std::string_view text, const std::string& filename);

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
  // The local headers a file reaches through #include "..." (walk_includes from its folder), in
  // the order walk_includes finds them; none for a string.
  std::vector<IncludedFile> headers() const;
  // Path and text of each of headers() (for cache keys).
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
