// The disk cache. An entry file is
//   "KILNCACHE" u32 format u64 total_size str kiln_version str image_kind bytes image str ptx
//   u64 n str[n] lowered_names u64 n str[n] signatures str log u64 xxh3_64(everything before)
// with integers little-endian and every str/bytes a u64 length then the bytes. Files are written
// to a mkstemp() temporary in the cache folder and renamed over the entry, so readers see a
// whole old entry or a whole new one, never a mix, whatever number of processes race.
#include "jit/cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <system_error>
#include <utility>

#include "runtime/error.h"

namespace kiln::jit {
namespace fs = std::filesystem;
namespace {

constexpr std::string_view kMagic = "KILNCACHE";
constexpr std::uint32_t kFormat = 1;
constexpr std::string_view kEntrySuffix = ".kc";
constexpr std::string_view kTempMarker = ".tmp.";

// Appends v little-endian.
template <typename T>
void put_int(std::string& out, T v) {
  for (std::size_t i = 0; i < sizeof(T); ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

// Appends a length-prefixed byte string.
void put_bytes(std::string& out, std::string_view s) {
  put_int<std::uint64_t>(out, s.size());
  out.append(s);
}

// Reads the fields put_* wrote, failing (without throwing) past the end.
class Reader {
 public:
  explicit Reader(std::string_view s) : s_(s) {}
  template <typename T>
  bool get_int(T* v) {
    if (s_.size() - pos_ < sizeof(T)) return false;
    T x = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i)
      x |= static_cast<T>(static_cast<unsigned char>(s_[pos_ + i])) << (8 * i);
    pos_ += sizeof(T);
    *v = x;
    return true;
  }
  bool get_bytes(std::string* out) {
    std::uint64_t n;
    if (!get_int(&n) || n > s_.size() - pos_) return false;
    out->assign(s_.substr(pos_, n));
    pos_ += n;
    return true;
  }
  bool get_list(std::vector<std::string>* out) {
    std::uint64_t n;
    if (!get_int(&n) || n > s_.size() - pos_) return false;  // each item takes >= 8 bytes
    out->resize(n);
    for (std::string& s : *out)
      if (!get_bytes(&s)) return false;
    return true;
  }
  bool at_end() const { return pos_ == s_.size(); }

 private:
  std::string_view s_;
  std::size_t pos_ = 0;
};

// A file descriptor closed on scope exit.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

// Whether key can be a file name: hex digits, letters, '-' and '_' only.
bool safe_key(const std::string& key) {
  if (key.empty() || key.size() > 200) return false;
  return std::all_of(key.begin(), key.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
  });
}

// Reads a whole file; nullopt with why on error.
std::optional<std::string> read_file(const fs::path& path, std::string* why) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (fd.get() < 0) {
    *why = std::strerror(errno);
    return std::nullopt;
  }
  std::string out;
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      *why = std::strerror(errno);
      return std::nullopt;
    }
    if (n == 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

// Writes all of data to fd; false with errno set on failure.
bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

}  // namespace

std::string hash_key(const std::vector<std::string>& parts) {
  XXH3_state_t* state = XXH3_createState();
  if (!state) throw Error("kiln: out of memory hashing a cache key");
  std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> guard(state, XXH3_freeState);
  XXH3_128bits_reset(state);
  for (const std::string& p : parts) {
    std::string len;
    put_int<std::uint64_t>(len, p.size());
    XXH3_128bits_update(state, len.data(), len.size());
    XXH3_128bits_update(state, p.data(), p.size());
  }
  XXH128_hash_t h = XXH3_128bits_digest(state);
  char hex[33];
  std::snprintf(hex, sizeof hex, "%016llx%016llx", static_cast<unsigned long long>(h.high64),
                static_cast<unsigned long long>(h.low64));
  return hex;
}

std::string encode_entry(const CompileResult& r) {
  std::string out(kMagic);
  put_int<std::uint32_t>(out, kFormat);
  std::size_t size_at = out.size();
  put_int<std::uint64_t>(out, 0);  // total size, patched below
  put_bytes(out, KILN_VERSION);
  put_bytes(out, r.image_kind);
  put_bytes(out, std::string_view(r.image.data(), r.image.size()));
  put_bytes(out, r.ptx);
  for (const auto* list : {&r.lowered_names, &r.signatures}) {
    put_int<std::uint64_t>(out, list->size());
    for (const std::string& s : *list) put_bytes(out, s);
  }
  put_bytes(out, r.log);
  std::string size;
  put_int<std::uint64_t>(size, out.size() + 8);
  out.replace(size_at, 8, size);
  put_int<std::uint64_t>(out, XXH3_64bits(out.data(), out.size()));
  return out;
}

std::optional<CompileResult> decode_entry(std::string_view bytes, std::string* why) {
  auto fail = [why](std::string msg) -> std::optional<CompileResult> {
    if (why) *why = std::move(msg);
    return std::nullopt;
  };
  if (bytes.empty()) return fail("empty file");
  if (!bytes.starts_with(kMagic)) return fail("not a kiln cache entry: bad magic");
  Reader head(bytes.substr(kMagic.size()));
  std::uint32_t format = 0;
  std::uint64_t total = 0;
  if (!head.get_int(&format) || !head.get_int(&total))
    return fail("truncated: " + std::to_string(bytes.size()) + " bytes");
  if (format != kFormat)
    return fail("cache format " + std::to_string(format) + ", this kiln reads format " +
                std::to_string(kFormat));
  if (bytes.size() < total)
    return fail("truncated: " + std::to_string(bytes.size()) + " of " + std::to_string(total) +
                " bytes");
  if (bytes.size() > total)
    return fail("trailing data: " + std::to_string(bytes.size()) + " bytes, expected " +
                std::to_string(total));
  std::string_view body = bytes.substr(0, bytes.size() - 8);
  Reader tail(bytes.substr(bytes.size() - 8));
  std::uint64_t sum = 0;
  tail.get_int(&sum);
  if (XXH3_64bits(body.data(), body.size()) != sum) return fail("checksum mismatch");
  Reader r(body.substr(kMagic.size() + 4 + 8));
  std::string version, image;
  CompileResult out;
  if (!r.get_bytes(&version)) return fail("malformed kiln version field");
  if (version != KILN_VERSION)
    return fail("written by kiln " + version + ", this is kiln " KILN_VERSION);
  if (!r.get_bytes(&out.image_kind) || !r.get_bytes(&image) || !r.get_bytes(&out.ptx) ||
      !r.get_list(&out.lowered_names) || !r.get_list(&out.signatures) || !r.get_bytes(&out.log) ||
      !r.at_end())
    return fail("malformed fields");
  out.image.assign(image.begin(), image.end());
  return out;
}

DiskCache::DiskCache(fs::path dir, std::uint64_t max_bytes, bool enabled, Warn warn)
    : dir_(std::move(dir)), max_bytes_(max_bytes), enabled_(enabled), warn_(std::move(warn)) {}

namespace {

struct FolderProblem {
  std::string why;  // empty: the folder is fine
  bool insecure = false;
};

// Whether the cache folder may be used (created here with mode 0700 when missing). Loading a
// cached shared object runs its code, so a folder others can write to, or one owned by someone
// else, is refused.
FolderProblem prepare_folder(const fs::path& dir) {
  std::error_code ec;
  if (dir.has_parent_path()) fs::create_directories(dir.parent_path(), ec);
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    return {"cannot create it: " + std::string(std::strerror(errno))};
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return {std::strerror(errno)};
  if (!S_ISDIR(st.st_mode)) return {"it is not a folder"};
  if (st.st_uid != ::geteuid())
    return {"it is owned by user " + std::to_string(st.st_uid) + ", not by this user (" +
                std::to_string(::geteuid()) + "), and loading a cached kernel runs its code",
            true};
  if (st.st_mode & (S_IWGRP | S_IWOTH)) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return {std::string("other users can write to it (mode ") + mode +
                "), and loading a cached kernel runs its code; chmod 700 it",
            true};
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0) return {std::strerror(errno)};
  return {};
}

}  // namespace

// Checks (once) that the folder is usable; disables the cache with a warning when not.
bool DiskCache::ready() {
  if (!enabled_) return false;
  if (checked_) return true;
  FolderProblem problem = prepare_folder(dir_);
  if (!problem.why.empty()) {
    disable("kiln: cache folder " + dir_.string() +
            (problem.insecure ? " is not safe to use (" : " is not writable (") + problem.why +
            "); continuing without the disk cache");
    return false;
  }
  checked_ = true;
  return true;
}

// Warns once and turns the cache off for the rest of this process.
void DiskCache::disable(const std::string& message) {
  enabled_ = false;
  if (!warned_unwritable_ && warn_) warn_(message);
  warned_unwritable_ = true;
}

fs::path DiskCache::entry_path(const std::string& key) const {
  return dir_ / (key + std::string(kEntrySuffix));
}

std::optional<CompileResult> DiskCache::load(const std::string& key) {
  if (!safe_key(key) || !ready()) return std::nullopt;
  fs::path path = entry_path(key);
  std::string why;
  std::optional<std::string> bytes = read_file(path, &why);
  if (!bytes) return std::nullopt;  // a miss (or unreadable: the next store replaces it)
  std::optional<CompileResult> entry = decode_entry(*bytes, &why);
  if (!entry) {
    if (warn_)
      warn_("kiln: cache entry " + path.string() + " is corrupt (" + why + "); recompiling");
    ::unlink(path.c_str());
    return std::nullopt;
  }
  ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0);  // now: least-recently-used order
  return entry;
}

void DiskCache::store(const std::string& key, const CompileResult& result) {
  if (!safe_key(key) || !ready()) return;
  std::string data = encode_entry(result);
  std::string tmpl = (dir_ / ("." + key + std::string(kTempMarker) + "XXXXXX")).string();
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  Fd fd(::mkostemp(name.data(), O_CLOEXEC));  // O_CREAT | O_EXCL, mode 0600
  const bool created = fd.get() >= 0;
  auto fail = [&](const char* what) {
    std::string msg = std::strerror(errno);
    if (created) ::unlink(name.data());  // a partial file (also after a failed close)
    disable("kiln: cache folder " + dir_.string() + " is not writable (" + what + ": " + msg +
            "); continuing without the disk cache");
  };
  if (fd.get() < 0) return fail("creating a file");
  if (!write_all(fd.get(), data)) return fail("writing");
  if (::close(fd.release()) != 0) return fail("writing");
  if (::rename(name.data(), entry_path(key).c_str()) != 0) {
    std::string msg = std::strerror(errno);
    ::unlink(name.data());
    disable("kiln: cache folder " + dir_.string() + " is not writable (renaming: " + msg +
            "); continuing without the disk cache");
    return;
  }
  evict(key);
}

// Removes least-recently-used entries (oldest mtime first) until the folder fits max_bytes,
// keeping the entry just stored; also removes temporaries that crashed writers left behind.
void DiskCache::evict(const std::string& keep) {
  struct Item {
    fs::path path;
    fs::file_time_type mtime;
    std::uint64_t size;
  };
  std::vector<Item> items;
  std::uint64_t total = 0;
  std::error_code ec;
  auto now = fs::file_time_type::clock::now();
  for (const fs::directory_entry& e : fs::directory_iterator(dir_, ec)) {
    std::error_code e2;
    std::string name = e.path().filename().string();
    if (!e.is_regular_file(e2)) continue;
    fs::file_time_type mtime = e.last_write_time(e2);
    if (e2) continue;
    if (name.starts_with(".") && name.find(kTempMarker) != std::string::npos) {
      if (now - mtime > std::chrono::hours(1)) fs::remove(e.path(), e2);
      continue;
    }
    if (!name.ends_with(kEntrySuffix)) continue;
    std::uint64_t size = e.file_size(e2);
    if (e2) continue;
    total += size;
    items.push_back({e.path(), mtime, size});
  }
  if (total <= max_bytes_) return;
  std::sort(items.begin(), items.end(),
            [](const Item& a, const Item& b) { return a.mtime < b.mtime; });
  fs::path kept = entry_path(keep);
  for (const Item& it : items) {
    if (total <= max_bytes_) break;
    if (it.path == kept) continue;
    std::error_code e2;
    fs::remove(it.path, e2);  // another process may have removed it first: fine
    total -= it.size;
  }
}

CacheStats DiskCache::stats() const {
  CacheStats s;
  s.dir = dir_;
  s.enabled = enabled_;
  s.max_bytes = max_bytes_;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir_, ec)) {
    std::error_code e2;
    if (!e.is_regular_file(e2) || !e.path().filename().string().ends_with(kEntrySuffix)) continue;
    std::uint64_t size = e.file_size(e2);
    if (e2) continue;
    ++s.entries;
    s.bytes += size;
  }
  return s;
}

void DiskCache::clear() {
  std::error_code ec;
  std::vector<fs::path> doomed;
  for (const fs::directory_entry& e : fs::directory_iterator(dir_, ec)) {
    std::string name = e.path().filename().string();
    if (name.ends_with(kEntrySuffix) ||
        (name.starts_with(".") && name.find(kTempMarker) != std::string::npos))
      doomed.push_back(e.path());
  }
  for (const fs::path& p : doomed) fs::remove(p, ec);
}

}  // namespace kiln::jit
