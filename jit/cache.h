// The compile cache on disk: one file per entry under KILN_CACHE_DIR, written atomically
// (temporary file in the same folder, then rename), checked by a checksum when read, evicted
// least-recently-used past a size cap. Corrupt, truncated or foreign entries are ignored with a
// warning and replaced by the next store. Entries are <dir>/<key>.kc and hold their key: an
// entry renamed to another key is refused.
//
// Loading a cached shared object runs its code, so the folder is trusted only as far as it is
// provably this user's: it is created with mode 0700, opened once as a directory descriptor and
// checked on that descriptor (owner, mode), never again by path, so swapping the folder after
// the check changes nothing; every entry is opened relative to it with O_NOFOLLOW and used only
// when the opened file is a regular file of this user that others cannot write. A folder owned
// by someone else, writable by others, or below a folder that others may write to without the
// sticky bit (where another user could rename it away) is refused: kiln then runs without the
// disk cache, saying why. One cache may be used from several threads (a compile and the NVRTC
// check beside it).
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/backend.h"

namespace kiln::jit {

// A 128-bit xxHash (XXH3) of the parts, in hex; each part is length-prefixed so that
// {"ab","c"} and {"a","bc"} differ.
std::string hash_key(const std::vector<std::string>& parts);

struct CacheStats {
  std::filesystem::path dir;
  bool enabled = false;
  std::uint64_t entries = 0;
  std::uint64_t bytes = 0;
  std::uint64_t max_bytes = 0;
};

class DiskCache {
 public:
  using Warn = std::function<void(const std::string&)>;

  // The cache in dir (repl/settings reads it from KILN_CACHE_DIR & co.), capped at max_bytes.
  DiskCache(std::filesystem::path dir, std::uint64_t max_bytes, bool enabled, Warn warn);
  ~DiskCache();
  DiskCache(DiskCache&& other) noexcept;
  DiskCache& operator=(DiskCache&& other) noexcept;

  // The entry for key, or nullopt (missing, or unreadable: warned, and removed).
  std::optional<CompileResult> load(const std::string& key);
  // Stores atomically; on failure (unwritable, full disk) warns once and goes on without.
  void store(const std::string& key, const CompileResult& result);

  CacheStats stats();  // opens the folder when this process has not yet
  // Whether stores can persist: the cache is on and its folder usable (opened and checked now
  // when this process has not yet).
  bool usable();
  void clear();
  bool enabled() const { return enabled_; }
  const std::filesystem::path& dir() const { return dir_; }

 private:
  bool ready();
  void disable(const std::string& message);
  std::filesystem::path entry_path(const std::string& key) const;
  void evict(const std::string& keep);
  // The folder's regular files (name, mtime, size), read through the descriptor.
  struct Listed {
    std::string name;
    std::int64_t mtime_ns;
    std::uint64_t size;
  };
  std::vector<Listed> list() const;

  std::filesystem::path dir_;
  std::uint64_t max_bytes_;
  bool enabled_;
  Warn warn_;
  bool warned_unwritable_ = false;
  std::set<std::string> warned_entries_;  // keys whose bad entry this process has reported
  int dir_fd_ = -1;  // the folder, opened and checked once (closed by the destructor)
  // Held by each public member; a moved-from cache keeps a mutex of its own.
  std::unique_ptr<std::mutex> mutex_ = std::make_unique<std::mutex>();
};

// Entry (de)serialisation, exposed for tests and the fuzzer. An entry records the key it was
// stored under; decode_entry returns it in *key when asked.
std::string encode_entry(const CompileResult& result, const std::string& key = "");
std::optional<CompileResult> decode_entry(std::string_view bytes, std::string* why,
                                          std::string* key = nullptr);

}  // namespace kiln::jit
