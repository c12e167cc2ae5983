#include "jit/source.h"

#include <sys/stat.h>

#include <fstream>
#include <set>
#include <sstream>

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

// The names in #include "name" lines of text.
std::vector<std::string> quoted_includes(const std::string& text) {
  std::vector<std::string> names;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::size_t p = line.find_first_not_of(" \t");
    if (p == std::string::npos || line[p] != '#') continue;
    p = line.find_first_not_of(" \t", p + 1);
    if (p == std::string::npos || line.compare(p, 7, "include") != 0) continue;
    std::size_t open = line.find('"', p + 7);
    std::size_t close = open == std::string::npos ? open : line.find('"', open + 1);
    if (close != std::string::npos) names.push_back(line.substr(open + 1, close - open - 1));
  }
  return names;
}

}  // namespace

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
  std::set<std::filesystem::path> seen;
  std::vector<std::pair<std::filesystem::path, std::string>> todo{{folder(), text_}};
  while (!todo.empty()) {
    auto [dir, text] = std::move(todo.back());
    todo.pop_back();
    for (const std::string& name : quoted_includes(text)) {
      std::filesystem::path p = std::filesystem::weakly_canonical(dir / name);
      if (!seen.insert(p).second || !std::filesystem::is_regular_file(p)) continue;
      std::string included = read_file(p);
      texts.push_back(p.string() + "\n" + included);
      todo.emplace_back(p.parent_path(), std::move(included));
    }
  }
  return texts;
}

bool SourceText::refresh() {
  if (!is_file_) return false;
  std::int64_t mtime = 0;
  std::uintmax_t size = 0;
  if (!stat_file(filename_, &mtime, &size))
    throw Error("kernel file '" + filename_ + "' has gone");
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
