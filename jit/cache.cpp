// The disk cache. An entry file is
//   "KILNCACHE" u32 format u64 total_size str kiln_version str key str image_kind bytes image str
//   ptx u64 n str[n] lowered_names u64 n str[n] signatures u64 n u32[n] max_threads str log u64
//   xxh3_64(everything before)
// with integers little-endian and every str/bytes a u64 length then the bytes. Files are written
// to a mkstemp() temporary in the cache folder and renamed over the entry, so readers see a
// whole old entry or a whole new one, never a mix, whatever number of processes race.
#include "jit/cache.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <ctime>
#include <cstdlib>
#include <cstring>
#include <system_error>
#include <utility>

#include "runtime/error.h"

namespace kiln::jit {
namespace fs = std::filesystem;
namespace {

constexpr std::string_view kMagic = "KILNCACHE";
constexpr std::uint32_t kFormat = 3;  // 2: the entry holds its key; 3: max_threads
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
  bool get_ints(std::vector<int>* out) {
    std::uint64_t n;
    if (!get_int(&n) || n > (s_.size() - pos_) / 4) return false;
    out->resize(n);
    for (int& v : *out) {
      std::uint32_t x;
      if (!get_int(&x) || x > (1u << 20)) return false;
      v = int(x);
    }
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

std::string encode_entry(const CompileResult& r, const std::string& key) {
  std::string out(kMagic);
  put_int<std::uint32_t>(out, kFormat);
  std::size_t size_at = out.size();
  put_int<std::uint64_t>(out, 0);  // total size, patched below
  put_bytes(out, KILN_VERSION);
  put_bytes(out, key);
  put_bytes(out, r.image_kind);
  put_bytes(out, std::string_view(r.image.data(), r.image.size()));
  put_bytes(out, r.ptx);
  for (const auto* list : {&r.lowered_names, &r.signatures}) {
    put_int<std::uint64_t>(out, list->size());
    for (const std::string& s : *list) put_bytes(out, s);
  }
  put_int<std::uint64_t>(out, r.max_threads.size());
  for (int n : r.max_threads) put_int<std::uint32_t>(out, std::uint32_t(n));
  put_bytes(out, r.log);
  std::string size;
  put_int<std::uint64_t>(size, out.size() + 8);
  out.replace(size_at, 8, size);
  put_int<std::uint64_t>(out, XXH3_64bits(out.data(), out.size()));
  return out;
}

std::optional<CompileResult> decode_entry(std::string_view bytes, std::string* why,
                                          std::string* key) {
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
  std::string version, image, stored_key;
  CompileResult out;
  if (!r.get_bytes(&version)) return fail("malformed kiln version field");
  if (version != KILN_VERSION)
    return fail("written by kiln " + version + ", this is kiln " KILN_VERSION);
  if (!r.get_bytes(&stored_key)) return fail("malformed key field");
  if (key) *key = stored_key;
  if (!r.get_bytes(&out.image_kind) || !r.get_bytes(&image) || !r.get_bytes(&out.ptx) ||
      !r.get_list(&out.lowered_names) || !r.get_list(&out.signatures) ||
      !r.get_ints(&out.max_threads) || !r.get_bytes(&out.log) || !r.at_end())
    return fail("malformed fields");
  out.image.assign(image.begin(), image.end());
  return out;
}

DiskCache::DiskCache(fs::path dir, std::uint64_t max_bytes, bool enabled, Warn warn)
    : dir_(std::move(dir)), max_bytes_(max_bytes), enabled_(enabled), warn_(std::move(warn)) {}

DiskCache::~DiskCache() {
  if (dir_fd_ >= 0) ::close(dir_fd_);
}

DiskCache::DiskCache(DiskCache&& other) noexcept
    : dir_(std::move(other.dir_)),
      max_bytes_(other.max_bytes_),
      enabled_(other.enabled_),
      warn_(std::move(other.warn_)),
      warned_unwritable_(other.warned_unwritable_),
      warned_entries_(std::move(other.warned_entries_)),
      dir_fd_(std::exchange(other.dir_fd_, -1)) {
  std::swap(mutex_, other.mutex_);
}

DiskCache& DiskCache::operator=(DiskCache&& other) noexcept {
  if (this != &other) {
    if (dir_fd_ >= 0) ::close(dir_fd_);
    dir_ = std::move(other.dir_), max_bytes_ = other.max_bytes_, enabled_ = other.enabled_;
    warn_ = std::move(other.warn_), warned_unwritable_ = other.warned_unwritable_;
    warned_entries_ = std::move(other.warned_entries_);
    dir_fd_ = std::exchange(other.dir_fd_, -1);
    std::swap(mutex_, other.mutex_);
  }
  return *this;
}

namespace {

struct FolderProblem {
  std::string why;  // empty: the folder is fine
  bool insecure = false;
};

// "0777": a mode's permission bits, for messages.
std::string mode_text(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

// A folder above the cache that others may write to without the sticky bit: another user
// could rename the cache folder away and put one of theirs in its place. "" when none.
std::string unsafe_parent(const fs::path& dir) {
  std::error_code ec;
  fs::path p = fs::absolute(dir, ec).parent_path();
  for (; !ec && !p.empty(); p = p.parent_path()) {
    struct stat st {};
    if (::stat(p.c_str(), &st) == 0 && (st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX))
      return p.string() + " (mode " + mode_text(st.st_mode) + ")";
    if (p == p.root_path()) break;
  }
  return "";
}

// Opens the cache folder (created here with mode 0700 when missing) as a directory descriptor
// and checks it through that descriptor: ours, not writable by others, not below a folder
// others may write to without the sticky bit. Returns the descriptor, or -1 with *problem.
int open_folder(const fs::path& dir, FolderProblem* problem) {
  std::error_code ec;
  if (dir.has_parent_path()) fs::create_directories(dir.parent_path(), ec);
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    *problem = {"cannot create it: " + std::string(std::strerror(errno))};
    return -1;
  }
  Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (fd.get() < 0) {
    *problem = {errno == ELOOP || errno == ENOTDIR ? std::string("it is not a folder (or is a link)")
                                                   : std::string(std::strerror(errno))};
    return -1;
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    *problem = {std::strerror(errno)};
    return -1;
  }
  if (st.st_uid != ::geteuid()) {
    *problem = {"it is owned by user " + std::to_string(st.st_uid) + ", not by this user (" +
                    std::to_string(::geteuid()) + "), and loading a cached kernel runs its code",
                true};
    return -1;
  }
  if (st.st_mode & (S_IWGRP | S_IWOTH)) {
    *problem = {"other users can write to it (mode " + mode_text(st.st_mode) +
                    "), and loading a cached kernel runs its code; chmod 700 it",
                true};
    return -1;
  }
  if (std::string parent = unsafe_parent(dir); !parent.empty()) {
    *problem = {"it lies in " + parent + ", which other users can write to without the sticky "
                    "bit, so they could replace it, and loading a cached kernel runs its code; "
                    "choose a folder of your own (KILN_CACHE_DIR)",
                true};
    return -1;
  }
  if (::faccessat(fd.get(), ".", W_OK | X_OK, AT_EACCESS) != 0) {
    *problem = {std::strerror(errno)};
    return -1;
  }
  return fd.release();
}

// Why an opened entry must not be used ("" when it may): only a regular file of this user that
// others cannot write is loaded, since loading it runs its code.
std::string untrusted_entry(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return std::strerror(errno);
  if (!S_ISREG(st.st_mode)) return "it is not a regular file";
  if (st.st_uid != ::geteuid()) return "it belongs to user " + std::to_string(st.st_uid);
  if (st.st_mode & (S_IWGRP | S_IWOTH)) return "others can write to it (mode " + mode_text(st.st_mode) + ")";
  return "";
}

// Reads all of fd; nullopt with why on error.
std::optional<std::string> read_all(int fd, std::string* why) {
  std::string out;
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      *why = std::strerror(errno);
      return std::nullopt;
    }
    if (n == 0) return out;
    out.append(buf, static_cast<std::size_t>(n));
  }
}

}  // namespace

// Opens and checks (once) the folder; disables the cache with a warning when it cannot be used.
bool DiskCache::ready() {
  if (!enabled_) return false;
  if (dir_fd_ >= 0) return true;
  FolderProblem problem;
  dir_fd_ = open_folder(dir_, &problem);
  if (dir_fd_ < 0) {
    disable("kiln: cache folder " + dir_.string() +
            (problem.insecure ? " is not safe to use (" : " is not writable (") + problem.why +
            "); continuing without the disk cache");
    return false;
  }
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
  std::lock_guard lock(*mutex_);
  if (!safe_key(key) || !ready()) return std::nullopt;
  const std::string name = key + std::string(kEntrySuffix);
  // O_NONBLOCK: a FIFO planted at the entry's name must not hang the open.
  Fd fd(::openat(dir_fd_, name.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  if (fd.get() < 0) return std::nullopt;  // a miss (or a link: the next store replaces it)
  std::string why = untrusted_entry(fd.get());
  const bool trusted = why.empty();
  std::optional<std::string> bytes;
  if (trusted) bytes = read_all(fd.get(), &why);
  std::optional<CompileResult> entry;
  std::string stored_key;
  if (bytes) entry = decode_entry(*bytes, &why, &stored_key);
  if (entry && stored_key != key) {
    why = "it was stored under another key (" + stored_key.substr(0, 16) + "...)";
    entry.reset();
  }
  // An entry of another format or kiln version is simply stale after an upgrade: replaced
  // without a word. Anything else is worth one.
  const bool stale = why.starts_with("cache format") || why.starts_with("written by kiln");
  if (!entry) {
    // Said once per entry and process: what cannot be removed (a folder at the entry's name,
    // another user's file) would otherwise be said at every load.
    if (warn_ && !stale && warned_entries_.insert(key).second)
      warn_("kiln: cache entry " + entry_path(key).string() +
            (trusted ? " is corrupt (" : " is not safe to load (") + why + "); recompiling");
    ::unlinkat(dir_fd_, name.c_str(), 0);
    return std::nullopt;
  }
  ::futimens(fd.get(), nullptr);  // now: least-recently-used order
  return entry;
}

void DiskCache::store(const std::string& key, const CompileResult& result) {
  std::lock_guard lock(*mutex_);
  if (!safe_key(key) || !ready()) return;
  std::string data = encode_entry(result, key);
  // A temporary of a random name, created exclusively (never through a link), then renamed.
  std::string tmp;
  int raw = -1;
  for (int attempt = 0; attempt < 16 && raw < 0; ++attempt) {
    char suffix[17];
    std::snprintf(suffix, sizeof suffix, "%016llx",
                  static_cast<unsigned long long>(XXH3_64bits_withSeed(
                      key.data(), key.size(), std::uint64_t(::getpid()) * 1000003u + attempt +
                                                  std::uint64_t(::time(nullptr)) * 7919u)));
    tmp = "." + key + std::string(kTempMarker) + suffix;
    raw = ::openat(dir_fd_, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (raw < 0 && errno != EEXIST) break;
  }
  Fd fd(raw);
  const bool created = fd.get() >= 0;
  auto fail = [&](const char* what) {
    std::string msg = std::strerror(errno);
    if (created) ::unlinkat(dir_fd_, tmp.c_str(), 0);  // a partial file (also after a failed close)
    disable("kiln: cache folder " + dir_.string() + " is not writable (" + what + ": " + msg +
            "); continuing without the disk cache");
  };
  if (fd.get() < 0) return fail("creating a file");
  if (!write_all(fd.get(), data)) return fail("writing");
  if (::close(fd.release()) != 0) return fail("writing");
  const std::string name = key + std::string(kEntrySuffix);
  if (::renameat(dir_fd_, tmp.c_str(), dir_fd_, name.c_str()) != 0) {
    const int error = errno;
    std::string msg = std::strerror(error);
    ::unlinkat(dir_fd_, tmp.c_str(), 0);
    if (error == EISDIR || error == ENOTEMPTY || error == EEXIST) {
      // A folder sits at this entry's name: this one entry cannot be stored, the rest can.
      if (warn_) warn_("kiln: cache entry " + entry_path(key).string() + " is a folder; not stored");
      return;
    }
    disable("kiln: cache folder " + dir_.string() + " is not writable (renaming: " + msg +
            "); continuing without the disk cache");
    return;
  }
  evict(key);
}

std::vector<DiskCache::Listed> DiskCache::list() const {
  std::vector<Listed> out;
  if (dir_fd_ < 0) return out;
  int copy = ::dup(dir_fd_);
  if (copy < 0) return out;
  DIR* d = ::fdopendir(copy);
  if (!d) {
    ::close(copy);
    return out;
  }
  ::rewinddir(d);
  while (const dirent* e = ::readdir(d)) {
    struct stat st {};
    if (::fstatat(dir_fd_, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) continue;
    out.push_back({e->d_name, std::int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec,
                   std::uint64_t(st.st_size)});
  }
  ::closedir(d);
  return out;
}

// Removes least-recently-used entries (oldest mtime first) until the folder fits max_bytes,
// keeping the entry just stored; also removes temporaries that crashed writers left behind.
void DiskCache::evict(const std::string& keep) {
  std::vector<Listed> items;
  std::uint64_t total = 0;
  const auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                       std::chrono::system_clock::now().time_since_epoch()).count();
  for (Listed& e : list()) {
    if (e.name.starts_with(".") && e.name.find(kTempMarker) != std::string::npos) {
      if (now - e.mtime_ns > std::int64_t(3600) * 1000000000) ::unlinkat(dir_fd_, e.name.c_str(), 0);
      continue;
    }
    if (!e.name.ends_with(kEntrySuffix)) continue;
    total += e.size;
    items.push_back(std::move(e));
  }
  if (total <= max_bytes_) return;
  std::sort(items.begin(), items.end(),
            [](const Listed& a, const Listed& b) { return a.mtime_ns < b.mtime_ns; });
  const std::string kept = keep + std::string(kEntrySuffix);
  for (const Listed& it : items) {
    if (total <= max_bytes_) break;
    if (it.name == kept) continue;
    ::unlinkat(dir_fd_, it.name.c_str(), 0);  // another process may have removed it first: fine
    total -= it.size;
  }
}

bool DiskCache::usable() {
  std::lock_guard lock(*mutex_);
  return ready();
}

CacheStats DiskCache::stats() {
  std::lock_guard lock(*mutex_);
  CacheStats s;
  s.dir = dir_;
  s.enabled = enabled_;
  s.max_bytes = max_bytes_;
  ready();  // a folder not opened yet (kiln --cache-stats) is opened and checked now
  for (const Listed& e : list()) {
    if (!e.name.ends_with(kEntrySuffix)) continue;
    ++s.entries;
    s.bytes += e.size;
  }
  return s;
}

void DiskCache::clear() {
  std::lock_guard lock(*mutex_);
  if (!ready()) return;
  for (const Listed& e : list())
    if (e.name.ends_with(kEntrySuffix) ||
        (e.name.starts_with(".") && e.name.find(kTempMarker) != std::string::npos))
      ::unlinkat(dir_fd_, e.name.c_str(), 0);
}

}  // namespace kiln::jit
