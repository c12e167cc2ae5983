// The compile cache on disk: one file per entry under KILN_CACHE_DIR, written atomically
// (temporary file in the same folder, then rename), checked by a checksum when read, evicted
// least-recently-used past a size cap. Corrupt, truncated or foreign entries are ignored with a
// warning and replaced by the next store. Entries are <dir>/<key>.kc. The folder is created
// with mode 0700 and refused (with a warning; the cache is then off) when another user owns it
// or others can write to it: loading a cached shared object runs its code.
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
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

  // The entry for key, or nullopt (missing, or unreadable: warned, and removed).
  std::optional<CompileResult> load(const std::string& key);
  // Stores atomically; on failure (unwritable, full disk) warns once and goes on without.
  void store(const std::string& key, const CompileResult& result);

  CacheStats stats() const;
  void clear();
  bool enabled() const { return enabled_; }
  const std::filesystem::path& dir() const { return dir_; }

 private:
  bool ready();
  void disable(const std::string& message);
  std::filesystem::path entry_path(const std::string& key) const;
  void evict(const std::string& keep);

  std::filesystem::path dir_;
  std::uint64_t max_bytes_;
  bool enabled_;
  Warn warn_;
  bool warned_unwritable_ = false;
  bool checked_ = false;  // the folder exists, is ours and private
};

// Entry (de)serialisation, exposed for tests and the fuzzer.
std::string encode_entry(const CompileResult& result);
std::optional<CompileResult> decode_entry(std::string_view bytes, std::string* why);

}  // namespace kiln::jit
