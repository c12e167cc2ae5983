#include "jit/source.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
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

// Whether token i of t is the first of a directive (the lexer drops the '#': a directive's
// first token is the first marked one on its line).
bool directive_start(const std::vector<Token>& t, std::size_t i) {
  return t[i].directive && (i == 0 || !t[i - 1].directive || t[i - 1].line != t[i].line);
}

// The header "name" an #include in a file of folder dir finds: in dir (none when empty), then
// in include_dirs; nullopt when none is a regular file. (The one header search: the walk's and
// the splice's.)
std::optional<std::filesystem::path> find_quoted(
    const std::string& name, const std::filesystem::path& dir,
    const std::vector<std::filesystem::path>& include_dirs) {
  std::vector<std::filesystem::path> candidates;
  if (!dir.empty()) candidates.push_back(dir / name);
  for (const auto& d : include_dirs) candidates.push_back(d / name);
  for (const auto& c : candidates) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(c, ec)) continue;
    std::filesystem::path p = std::filesystem::weakly_canonical(c, ec);
    if (!ec) return p;
  }
  return std::nullopt;
}

}  // namespace

std::vector<IncludeLine> find_includes(std::string_view text) {
  std::vector<IncludeLine> lines;
  std::vector<Token> t = lex(text);
  for (std::size_t i = 0; i + 1 < t.size(); ++i) {
    if (!directive_start(t, i) || !is_ident(t[i], "include") || !t[i + 1].directive) continue;
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
    // ("name" in dir, the current folder when dir is empty; <name> in include_dirs only)
    const std::optional<std::filesystem::path> p = find_quoted(
        inc.name, inc.quoted ? (dir.empty() ? std::filesystem::path(".") : dir) : "", include_dirs);
    if (!p || !seen.insert(*p).second) continue;
    out.push_back({*p, read_file(*p)});
    std::string included = out.back().text;  // out may grow: walk a copy
    walk(included, p->parent_path(), include_dirs, follow_angled, seen, out);
  }
}

// name as the body of a C string literal (for #line).
std::string quoted_name(const std::string& name) {
  std::string out;
  for (char c : name) {
    if (c == '\\' || c == '"') out += '\\';
    out += c;
  }
  return out;
}

// Whether a header's tokens are included once: `#pragma once`, or an include guard around all
// of it (its first directive `#ifndef X`, its second `#define X`, its last token an `#endif`'s).
bool included_once(const std::vector<Token>& t) {
  std::vector<std::size_t> starts;
  for (std::size_t i = 0; i < t.size(); ++i)
    if (directive_start(t, i)) starts.push_back(i);
  for (std::size_t i : starts)
    if (is_ident(t[i], "pragma") && i + 1 < t.size() && is_ident(t[i + 1], "once")) return true;
  return starts.size() >= 3 && is_ident(t[starts[0]], "ifndef") &&
         is_ident(t[starts[1]], "define") && starts[1] + 1 < t.size() &&
         t[starts[0] + 1].text == t[starts[1] + 1].text && is_ident(t[starts.back()], "endif") &&
         t.back().line == t[starts.back()].line;  // (nothing after that #endif)
}

// splice_includes' recursion: headers spliced into text, the ones already spliced remembered.
struct Splicer {
  const std::vector<std::filesystem::path>& include_dirs;
  std::size_t max_bytes;
  std::vector<IncludedFile>* headers;       // each header spliced, as read (may be null)
  std::vector<std::filesystem::path> open;  // the headers being spliced (a cycle stops there)
  std::set<std::filesystem::path> guarded;  // those spliced once, whose guard skips them after
  bool spliced = false, too_big = false;

  // text (named filename, in folder dir) with its quoted #includes spliced.
  std::string splice(std::string_view text, const std::string& filename,
                     const std::filesystem::path& dir) {
    const std::vector<Token> t = lex(text);
    std::string out;
    std::size_t done = 0;
    for (std::size_t i = 0; i + 1 < t.size() && !too_big; ++i) {
      if (!directive_start(t, i) || !t[i + 1].directive) continue;
      const bool pragma_once = is_ident(t[i], "pragma") && is_ident(t[i + 1], "once");
      if (!pragma_once && !(is_ident(t[i], "include") && t[i + 1].kind == Token::string)) continue;
      const std::size_t newline = text.rfind('\n', t[i].begin);
      const std::size_t begin = newline == std::string_view::npos ? 0 : newline + 1;
      const std::size_t end = std::min(text.find('\n', t[i + 1].end), text.size());
      if (pragma_once) {  // (blanked: later #includes of this header are left out below)
        out.append(text.substr(done, begin - done));
        done = end;
        continue;
      }
      // Only an #include alone on its line (a comment or a continuation there: as written).
      std::string_view rest = text.substr(t[i + 1].end, end - t[i + 1].end);
      rest.remove_prefix(std::min(rest.find_first_not_of(" \t\r"), rest.size()));
      if (!rest.empty() && !rest.starts_with("//")) continue;
      const std::optional<std::filesystem::path> header =
          find_quoted(t[i + 1].text, dir, include_dirs);
      if (!header) continue;
      out.append(text.substr(done, begin - done));
      done = end;
      // (a cycle, or a header included once again: the line blank, as its guard leaves it;
      // its functions are then defined once, as the plan and the inlining need them)
      if (std::find(open.begin(), open.end(), *header) != open.end() || guarded.count(*header))
        continue;
      std::string body;
      try {
        body = read_file(*header);
      } catch (const Error&) {
        out.append(text.substr(begin, end - begin));  // (the compiler says what is wrong)
        continue;
      }
      if (body.starts_with("\xEF\xBB\xBF")) body.erase(0, 3);  // (a BOM only starts a file)
      if (included_once(lex(body))) guarded.insert(*header);
      if (headers) headers->push_back({*header, body});
      open.push_back(*header);
      body = splice(body, header->string(), header->parent_path());
      open.pop_back();
      out += "#line 1 \"" + quoted_name(header->string()) + "\"\n" + body +
             (body.empty() || body.back() == '\n' ? "" : "\n") + "#line " +
             std::to_string(t[i].line + 1) + " \"" + quoted_name(filename) + "\"";
      spliced = true;
      too_big = too_big || out.size() > max_bytes;  // (headers included again and again)
    }
    out.append(text.substr(done));
    return out;
  }
};

}  // namespace

std::optional<std::string> splice_includes(std::string_view text, const std::string& filename,
                                           const std::filesystem::path& dir,
                                           const std::vector<std::filesystem::path>& include_dirs,
                                           std::vector<IncludedFile>* headers,
                                           std::size_t max_bytes) {
  Splicer splicer{include_dirs, max_bytes, headers, {}};
  std::string out = splicer.splice(text, filename, dir);
  if (!splicer.spliced || splicer.too_big) return std::nullopt;
  return out;
}

std::string written_places(std::string message, std::string_view text,
                           const std::string& filename) {
  // Each line of text: the file and line it stands for.
  std::vector<std::pair<std::string, int>> lines;
  std::string file = filename;
  int next = 1;
  for (std::size_t at = 0; at <= text.size();) {
    std::size_t end = std::min(text.find('\n', at), text.size());
    std::string_view line = text.substr(at, end - at);
    lines.emplace_back(file, next++);
    const std::size_t hash = line.find_first_not_of(" \t");
    if (hash != std::string_view::npos && line.substr(hash).starts_with("#line ")) {
      std::string_view rest = line.substr(hash + 6);
      next = std::atoi(std::string(rest).c_str());
      const std::size_t open = rest.find('"'), close = rest.rfind('"');
      if (open != std::string_view::npos && close > open) {
        file.clear();  // (quoted_name's escapes undone)
        for (std::size_t k = open + 1; k < close; ++k)
          file += rest[k] == '\\' ? rest[++k] : rest[k];
      }
    }
    at = end + 1;
  }
  const std::string prefix = filename + ":";
  for (std::size_t at = message.find(prefix); at != std::string::npos;
       at = message.find(prefix, at + 1)) {
    // (the name whole: not the end of another path, "my_kernel.cu:2" for "kernel.cu")
    if (at > 0 && std::string_view(" ('\"\n").find(message[at - 1]) == std::string_view::npos)
      continue;
    std::size_t digits = at + prefix.size(), end = digits;
    while (end < message.size() && std::isdigit(static_cast<unsigned char>(message[end]))) ++end;
    const int n = end > digits ? std::atoi(message.c_str() + digits) : 0;
    if (n < 1 || std::size_t(n) > lines.size()) continue;
    const std::string place = lines[n - 1].first + ":" + std::to_string(lines[n - 1].second);
    message.replace(at, end - at, place);
    at += place.size() - 1;
  }
  return message;
}

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

std::vector<IncludedFile> SourceText::headers() const {
  if (!is_file_) return {};
  return walk_includes(text_, folder());
}

std::vector<std::string> SourceText::included_texts() const {
  std::vector<std::string> texts;
  for (IncludedFile& f : headers()) texts.push_back(f.path.string() + "\n" + f.text);
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
