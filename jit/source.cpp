#include "jit/source.h"

#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <system_error>

#include "jit/lexer.h"
#include "runtime/error.h"

namespace kiln::jit {
namespace {

// Kernel sources and the files they include are read only when they are regular files of at
// most this size: /dev/zero, a FIFO or a folder would otherwise read for ever or block.
constexpr std::uintmax_t kMaxSourceBytes = 16u << 20;

// Throws when text holds a NUL byte: every compiler would stop reading there, silently.
void refuse_nul(const std::string& text, const std::string& what) {
  const std::size_t at = text.find('\0');
  if (at == std::string::npos) return;
  const auto line = 1 + std::count(text.begin(), text.begin() + std::ptrdiff_t(at), '\n');
  throw Error(what + " holds a NUL byte (line " + std::to_string(line) +
              "): a compiler would stop reading there");
}

// Why path cannot be a kernel source ("" when it can).
std::string unreadable_source(const std::filesystem::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return "does not exist";
  if (S_ISDIR(st.st_mode)) return "is a folder, not a kernel file";
  if (!S_ISREG(st.st_mode)) return "is not a regular file (a device, FIFO or socket)";
  if (std::uintmax_t(st.st_size) > kMaxSourceBytes)
    return "is " + std::to_string(st.st_size) + " bytes, more than a kernel source may be (" +
           std::to_string(kMaxSourceBytes) + ")";
  return "";
}

// The whole content of a kernel file; throws kiln::Error naming it when it cannot be read.
std::string read_file(const std::filesystem::path& path) {
  if (std::string why = unreadable_source(path); !why.empty())
    throw Error("kernel file '" + path.string() + "' " + why);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read kernel file '" + path.string() + "'");
  // In chunks, up to one byte past the cap: a file that grew since the check is cut, not read
  // on. (Not one buffer of the cap's size: zeroing 16 MiB per file cost every start ~4 ms.)
  std::string text;
  char chunk[65536];
  while (text.size() <= kMaxSourceBytes && in.read(chunk, sizeof chunk).gcount() > 0)
    text.append(chunk, std::size_t(in.gcount()));
  if (text.size() > kMaxSourceBytes)
    throw Error("kernel file '" + path.string() + "' grew past " + std::to_string(kMaxSourceBytes) + " bytes");
  refuse_nul(text, "kernel file '" + path.string() + "'");
  return text;
}

// stat() of a file as (mtime in ns, size); false when it does not exist.
bool stat_file(const std::filesystem::path& path, std::int64_t* mtime_ns, std::uintmax_t* size) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return false;
  *mtime_ns = std::int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  *size = static_cast<std::uintmax_t>(st.st_size);
  return true;
}

}  // namespace

std::vector<IncludeLine> find_includes(std::string_view text) {
  std::vector<IncludeLine> lines;
  std::vector<Token> t = lex(text);
  for (std::size_t i = 0; i + 1 < t.size(); ++i) {
    // The lexer drops the '#': a directive's first token is the first marked one on its line.
    bool first = t[i].directive && (i == 0 || !t[i - 1].directive || t[i - 1].line != t[i].line);
    if (!first || !is_ident(t[i], "include") || !t[i + 1].directive) continue;
    if (t[i + 1].kind == Token::string) {
      lines.push_back({t[i + 1].text, true});
    } else if (is_punct(t[i + 1], "<")) {
      std::size_t close = i + 2;
      while (close < t.size() && t[close].directive && !is_punct(t[close], ">")) ++close;
      if (close < t.size() && is_punct(t[close], ">"))
        lines.push_back(
            {std::string(text.substr(t[i + 1].end, t[close].begin - t[i + 1].end)), false});
    }
  }
  return lines;
}

namespace {

// walk_includes' depth-first step: appends the headers text reaches that seen does not hold.
void walk(std::string_view text, const std::filesystem::path& dir,
          const std::vector<std::filesystem::path>& include_dirs,
          bool (*follow_angled)(const std::string&), std::set<std::filesystem::path>& seen,
          std::vector<IncludedFile>& out) {
  for (const IncludeLine& inc : find_includes(text)) {
    if (!inc.quoted && !(follow_angled && follow_angled(inc.name))) continue;
    std::vector<std::filesystem::path> candidates;
    if (inc.quoted) candidates.push_back(dir / inc.name);
    for (const auto& d : include_dirs) candidates.push_back(d / inc.name);
    for (const auto& c : candidates) {
      std::error_code ec;
      if (!std::filesystem::is_regular_file(c, ec)) continue;
      std::filesystem::path p = std::filesystem::weakly_canonical(c, ec);
      if (ec || !seen.insert(p).second) break;
      out.push_back({p, read_file(p)});
      std::string included = out.back().text;  // out may grow: walk a copy
      walk(included, p.parent_path(), include_dirs, follow_angled, seen, out);
      break;
    }
  }
}

}  // namespace

std::vector<IncludedFile> walk_includes(std::string_view text, const std::filesystem::path& dir,
                                        const std::vector<std::filesystem::path>& include_dirs,
                                        bool (*follow_angled)(const std::string&)) {
  std::set<std::filesystem::path> seen;
  std::vector<IncludedFile> out;
  walk(text, dir, include_dirs, follow_angled, seen, out);
  return out;
}

SourceText SourceText::from_string(std::string text, std::string origin) {
  refuse_nul(text, origin);
  SourceText s;
  s.text_ = std::move(text);
  s.filename_ = "kernel.cu";
  s.origin_ = std::move(origin);
  return s;
}

SourceText SourceText::from_file(const std::filesystem::path& path) {
  SourceText s;
  s.is_file_ = true;
  s.filename_ = path.string();
  s.origin_ = path.string();
  s.text_ = read_file(path);  // first: a FIFO or a folder is refused before anything else
  if (!stat_file(path, &s.mtime_ns_, &s.size_))
    throw Error("kernel file '" + path.string() + "' does not exist");
  return s;
}

std::filesystem::path SourceText::folder() const {
  if (!is_file_) return {};
  std::filesystem::path parent = std::filesystem::path(filename_).parent_path();
  return parent.empty() ? std::filesystem::path(".") : parent;
}

std::vector<std::string> SourceText::included_texts() const {
  std::vector<std::string> texts;
  if (!is_file_) return texts;
  for (IncludedFile& f : walk_includes(text_, folder()))
    texts.push_back(f.path.string() + "\n" + f.text);
  return texts;
}

bool SourceText::refresh() {
  if (!is_file_) return false;
  std::int64_t mtime = 0;
  std::uintmax_t size = 0;
  if (!stat_file(filename_, &mtime, &size)) throw Error("kernel file '" + filename_ + "' has gone");
  if (mtime == mtime_ns_ && size == size_) return false;
  mtime_ns_ = mtime;
  size_ = size;
  std::string text = read_file(filename_);
  if (text == text_) return false;  // touched, not changed
  text_ = std::move(text);
  ++revision_;
  return true;
}

}  // namespace kiln::jit
