#include "jit/source.h"

#include <sys/stat.h>

#include <fstream>
#include <set>
#include <sstream>
#include <system_error>

#include "jit/lexer.h"
#include "runtime/error.h"

namespace kiln::jit {
namespace {

// The whole content of a file; throws kiln::Error naming it when it cannot be read.
std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read kernel file '" + path.string() + "'");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
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
      std::ifstream in(p, std::ios::binary);
      if (!in) break;
      std::ostringstream s;
      s << in.rdbuf();
      out.push_back({p, s.str()});
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
  if (!stat_file(path, &s.mtime_ns_, &s.size_))
    throw Error("kernel file '" + path.string() + "' does not exist");
  s.text_ = read_file(path);
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
