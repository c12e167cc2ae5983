#include "jit/cache.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <xxhash.h>
#include <csignal>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>

#include "temp_dir.h"

namespace kiln::jit {
namespace {
namespace fs = std::filesystem;

using test::TempDir;

// Collects warnings.
struct Warnings {
  std::vector<std::string> messages;
  DiskCache::Warn sink() {
    return [this](const std::string& m) { messages.push_back(m); };
  }
};

CompileResult sample(const std::string& tag = "a", std::size_t image_bytes = 64) {
  CompileResult r;
  r.image_kind = "cubin";
  for (std::size_t i = 0; i < image_bytes; ++i)
    r.image.push_back(static_cast<char>((i * 7 + tag.size()) & 0xff));
  r.image[0] = '\0';  // binary, NULs included
  r.ptx = ".version 9.0\n.target sm_90\n// " + tag;
  r.lowered_names = {"_Z5scaleIfEvPT_i", "vec_add"};
  r.signatures = {"void (float*, int)", ""};
  r.max_threads = {128, 0};
  r.log = "warning: " + tag;
  return r;
}

void expect_same(const CompileResult& a, const CompileResult& b) {
  EXPECT_EQ(a.image_kind, b.image_kind);
  EXPECT_EQ(a.image, b.image);
  EXPECT_EQ(a.ptx, b.ptx);
  EXPECT_EQ(a.lowered_names, b.lowered_names);
  EXPECT_EQ(a.signatures, b.signatures);
  EXPECT_EQ(a.max_threads, b.max_threads);
  EXPECT_EQ(a.log, b.log);
}

void spit(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << bytes;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(JitCacheKey, IsStableHexAndLengthPrefixed) {
  std::string k = hash_key({"ab", "c"});
  EXPECT_EQ(k.size(), 32u);
  EXPECT_EQ(k.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(k, hash_key({"ab", "c"}));
  EXPECT_NE(k, hash_key({"a", "bc"}));
  EXPECT_NE(k, hash_key({"abc"}));
  EXPECT_NE(k, hash_key({"c", "ab"}));
  EXPECT_NE(hash_key({}), hash_key({""}));
}

TEST(JitCacheEntry, RoundTrips) {
  CompileResult r = sample();
  std::string why;
  std::optional<CompileResult> back = decode_entry(encode_entry(r), &why);
  ASSERT_TRUE(back) << why;
  expect_same(r, *back);
  CompileResult empty;
  back = decode_entry(encode_entry(empty), &why);
  ASSERT_TRUE(back) << why;
  expect_same(empty, *back);
}

TEST(JitCacheEntry, RejectsEveryFlippedByteAndEveryTruncation) {
  std::string bytes = encode_entry(sample("x", 16));
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    std::string bad = bytes;
    bad[i] = static_cast<char>(bad[i] ^ 0x20);
    std::string why;
    EXPECT_FALSE(decode_entry(bad, &why)) << "byte " << i;
    EXPECT_FALSE(why.empty());
  }
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    std::string why;
    EXPECT_FALSE(decode_entry(std::string_view(bytes).substr(0, n), &why)) << "length " << n;
  }
  std::string why;
  EXPECT_FALSE(decode_entry(bytes + "x", &why));
  EXPECT_FALSE(decode_entry("", &why));
  EXPECT_EQ(why, "empty file");
  EXPECT_FALSE(
      decode_entry("\x7f"
                   "ELF not a cache entry at all",
                   &why));
  EXPECT_EQ(why, "not a kiln cache entry: bad magic");
  EXPECT_FALSE(decode_entry(std::string_view(bytes).substr(0, bytes.size() - 1), &why));
  EXPECT_TRUE(why.starts_with("truncated")) << why;
}

// An entry as another kiln version would write it: the version field replaced, checksum redone.
std::string foreign_entry() {
  std::string bytes = encode_entry(sample());
  std::size_t at = bytes.find(KILN_VERSION);
  std::string other(std::string_view(KILN_VERSION).size(), '9');
  bytes.replace(at, other.size(), other);
  std::uint64_t sum = XXH3_64bits(bytes.data(), bytes.size() - 8);
  for (int i = 0; i < 8; ++i)
    bytes[bytes.size() - 8 + i] = static_cast<char>((sum >> (8 * i)) & 0xff);
  return bytes;
}

TEST(JitCacheEntry, RejectsAnotherVersion) {
  std::string why;
  EXPECT_FALSE(decode_entry(foreign_entry(), &why));
  EXPECT_NE(why.find("written by kiln 9"), std::string::npos) << why;
}

TEST(JitDiskCache, StoresLoadsAndCounts) {
  TempDir tmp;
  Warnings w;
  DiskCache cache(tmp.path() / "cache", 1 << 20, true, w.sink());
  std::string key = hash_key({"k"});
  EXPECT_FALSE(cache.load(key));
  cache.store(key, sample());
  std::optional<CompileResult> got = cache.load(key);
  ASSERT_TRUE(got);
  expect_same(sample(), *got);
  CacheStats s = cache.stats();
  EXPECT_TRUE(s.enabled);
  EXPECT_EQ(s.entries, 1u);
  EXPECT_EQ(s.bytes, encode_entry(sample(), key).size());
  EXPECT_EQ(s.max_bytes, 1u << 20);
  struct stat st {};
  ASSERT_EQ(::stat((tmp.path() / "cache").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  EXPECT_TRUE(w.messages.empty());
  // Keys that are not file names are refused rather than escaping the folder.
  cache.store("../escape", sample());
  EXPECT_FALSE(fs::exists(tmp.path() / "escape.kc"));
  EXPECT_EQ(cache.stats().entries, 1u);
}

TEST(JitDiskCache, BadEntriesAreWarnedRemovedAndReplaced) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "cache";
  std::string good = encode_entry(sample());
  std::string flipped = good;
  flipped[good.size() / 2] = static_cast<char>(flipped[good.size() / 2] ^ 1);
  struct Case {
    const char* what;
    std::string bytes;
    const char* reason;
  } cases[] = {
      {"corrupt", flipped, "checksum mismatch"},
      {"truncated", good.substr(0, good.size() / 2), "truncated"},
      {"empty", "", "empty file"},
  };
  for (const Case& c : cases) {
    Warnings w;
    DiskCache cache(dir, 1 << 20, true, w.sink());
    std::string key = hash_key({c.what});
    cache.store(key, sample());
    fs::path file;
    for (auto& e : fs::directory_iterator(dir))
      if (e.path().filename().string().starts_with(key)) file = e.path();
    ASSERT_FALSE(file.empty()) << c.what;
    spit(file, c.bytes);
    EXPECT_FALSE(cache.load(key)) << c.what;
    ASSERT_EQ(w.messages.size(), 1u) << c.what;
    EXPECT_EQ(w.messages[0].find("kiln: cache entry " + file.string() + " is corrupt ("), 0u)
        << w.messages[0];
    EXPECT_NE(w.messages[0].find(c.reason), std::string::npos) << w.messages[0];
    EXPECT_NE(w.messages[0].find("recompiling"), std::string::npos);
    EXPECT_FALSE(fs::exists(file)) << c.what;
    cache.store(key, sample(c.what));
    std::optional<CompileResult> again = cache.load(key);
    ASSERT_TRUE(again) << c.what;
    expect_same(sample(c.what), *again);
    EXPECT_EQ(w.messages.size(), 1u);
    EXPECT_TRUE(cache.enabled());
  }
}

// An entry another kiln version wrote is stale, not corrupt: replaced without a warning (an
// upgrade would otherwise print one line per cached kernel).
TEST(JitDiskCache, StaleEntriesAreReplacedQuietly) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "cache";
  Warnings w;
  DiskCache cache(dir, 1 << 20, true, w.sink());
  std::string key = hash_key({"old"});
  cache.store(key, sample());
  spit(dir / (key + ".kc"), foreign_entry());
  EXPECT_FALSE(cache.load(key));
  EXPECT_TRUE(w.messages.empty()) << w.messages[0];
  EXPECT_FALSE(fs::exists(dir / (key + ".kc")));
  cache.store(key, sample("new"));
  EXPECT_TRUE(cache.load(key));
}

TEST(JitDiskCache, ConcurrentProcessesAlwaysReadWholeEntries) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "cache";
  const std::string key = hash_key({"shared"});
  constexpr int kProcesses = 8;
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      // Each process writes its own variant (a large image, so writes are not atomic by
      // luck) and reads back: every read must be a whole, valid entry of some process.
      int bad = 0;
      bool warned = false;
      DiskCache cache(dir, 1ull << 30, true, [&](const std::string&) { warned = true; });
      std::string mine = "p";  // appended, not "p" + ...: GCC 12's -Wrestrict false positive
      mine += std::to_string(p);
      for (int round = 0; round < 20; ++round) {
        cache.store(key, sample(mine, 256 * 1024));
        std::optional<CompileResult> got = cache.load(key);
        if (!got) {
          ++bad;
          continue;
        }
        std::string tag = got->log.substr(std::string("warning: ").size());
        CompileResult expected = sample(tag, 256 * 1024);
        if (got->image != expected.image || got->ptx != expected.ptx) ++bad;
      }
      ::_exit(bad == 0 && !warned && cache.enabled() ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child " << pid;
  }
  Warnings w;
  DiskCache cache(dir, 1ull << 30, true, w.sink());
  EXPECT_TRUE(cache.load(key));
  EXPECT_EQ(cache.stats().entries, 1u);
  std::size_t leftovers = 0;
  for (auto& e : fs::directory_iterator(dir)) leftovers += e.path().extension() != ".kc";
  EXPECT_EQ(leftovers, 0u);  // no temporaries left behind
}

TEST(JitDiskCache, EvictsLeastRecentlyUsedPastTheCap) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "cache";
  const std::uint64_t entry = encode_entry(sample("a", 1000)).size();
  Warnings w;
  DiskCache cache(dir, entry * 2 + entry / 2, true, w.sink());  // room for two entries
  std::string a = hash_key({"a"}), b = hash_key({"b"}), c = hash_key({"c"});
  cache.store(a, sample("a", 1000));
  cache.store(b, sample("b", 1000));
  auto now = fs::file_time_type::clock::now();
  fs::last_write_time(dir / (a + ".kc"), now - std::chrono::seconds(200));
  fs::last_write_time(dir / (b + ".kc"), now - std::chrono::seconds(100));
  ASSERT_TRUE(cache.load(a));  // a is now the most recently used
  cache.store(c, sample("c", 1000));
  EXPECT_TRUE(cache.load(a));
  EXPECT_FALSE(cache.load(b));
  EXPECT_TRUE(cache.load(c));
  CacheStats s = cache.stats();
  EXPECT_EQ(s.entries, 2u);
  EXPECT_LE(s.bytes, s.max_bytes);
  EXPECT_TRUE(w.messages.empty());
}

TEST(JitDiskCache, UnwritableFolderWarnsOnceAndDisables) {
  TempDir tmp;
  spit(tmp.path() / "file", "not a folder");
  Warnings w;
  DiskCache cache(tmp.path() / "file" / "cache", 1 << 20, true, w.sink());  // cannot exist
  cache.store(hash_key({"x"}), sample());
  EXPECT_FALSE(cache.load(hash_key({"x"})));
  cache.store(hash_key({"y"}), sample());
  ASSERT_EQ(w.messages.size(), 1u);
  EXPECT_EQ(w.messages[0].find("kiln: cache folder " + (tmp.path() / "file" / "cache").string() +
                               " is not writable ("),
            0u)
      << w.messages[0];
  EXPECT_NE(w.messages[0].find("continuing without the disk cache"), std::string::npos);
  EXPECT_FALSE(cache.enabled());
}

// A write that runs out of room (here the file-size limit, which binds root too, standing in for
// a full disk: both fail the write midway): one warning, no partial file left, no entry.
TEST(JitDiskCache, FullDiskLeavesNoPartialEntry) {
  TempDir tmp;
  Warnings w;
  DiskCache cache(tmp.path() / "cache", 1 << 24, true, w.sink());
  cache.store(hash_key({"small"}), sample("s", 64));
  ASSERT_TRUE(cache.load(hash_key({"small"})));
  rlimit old{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old), 0);
  auto old_handler = std::signal(SIGXFSZ, SIG_IGN);  // a write past the limit fails, EFBIG
  rlimit small = old;
  small.rlim_cur = 16 * 1024;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  cache.store(hash_key({"big"}), sample("b", 256 * 1024));
  cache.store(hash_key({"big2"}), sample("c", 256 * 1024));
  ::setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, old_handler);
  ASSERT_EQ(w.messages.size(), 1u);
  EXPECT_NE(w.messages[0].find("is not writable (writing: "), std::string::npos) << w.messages[0];
  EXPECT_FALSE(cache.load(hash_key({"big"})));
  int files = 0;
  for (const auto& e : fs::directory_iterator(tmp.path() / "cache")) files += e.is_regular_file();
  EXPECT_EQ(files, 1) << "only the small entry: the partial write was removed";
}

TEST(JitDiskCache, ReadOnlyFolderWarnsOnceAndDisables) {
  if (::geteuid() == 0) GTEST_SKIP() << "running as root: chmod 0500 does not stop writes";
  TempDir tmp;
  fs::path ro = tmp.path() / "readonly";
  fs::create_directory(ro);
  fs::permissions(ro, fs::perms::owner_read | fs::perms::owner_exec);
  Warnings w2;
  DiskCache cache2(ro, 1 << 20, true, w2.sink());
  cache2.store(hash_key({"x"}), sample());
  cache2.store(hash_key({"y"}), sample());
  ASSERT_EQ(w2.messages.size(), 1u);
  EXPECT_NE(w2.messages[0].find("is not writable"), std::string::npos) << w2.messages[0];
  EXPECT_FALSE(cache2.enabled());
}

TEST(JitDiskCache, RefusesFoldersOthersCanWrite) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "cache";
  std::string key = hash_key({"k"});
  {
    DiskCache cache(dir, 1 << 20, true, nullptr);
    cache.store(key, sample());
    ASSERT_TRUE(cache.load(key));
  }
  fs::permissions(dir, fs::perms::all);  // 0777
  Warnings w;
  DiskCache cache(dir, 1 << 20, true, w.sink());
  EXPECT_FALSE(cache.load(key));
  ASSERT_EQ(w.messages.size(), 1u);
  EXPECT_NE(w.messages[0].find("is not safe to use (other users can write to it (mode 0777)"),
            std::string::npos)
      << w.messages[0];
  EXPECT_FALSE(cache.enabled());

  if (::geteuid() != 0) return;  // only root can give the folder away
  fs::permissions(dir, fs::perms::owner_all);
  ASSERT_EQ(::chown(dir.c_str(), 65534, 65534), 0);
  Warnings w2;
  DiskCache cache2(dir, 1 << 20, true, w2.sink());
  EXPECT_FALSE(cache2.load(key));
  ASSERT_EQ(w2.messages.size(), 1u);
  EXPECT_NE(w2.messages[0].find("owned by user 65534"), std::string::npos) << w2.messages[0];
}

TEST(JitDiskCache, AnEntryHoldsItsKeyAndARenamedOneIsRefused) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "cache";
  const std::string mine = hash_key({"mine"}), theirs = hash_key({"theirs"});
  Warnings w;
  DiskCache cache(dir, 1 << 20, true, w.sink());
  cache.store(theirs, sample("theirs", 8));
  std::string key;
  std::string why;
  ASSERT_TRUE(decode_entry(slurp(dir / (theirs + ".kc")), &why, &key)) << why;
  EXPECT_EQ(key, theirs);
  fs::rename(dir / (theirs + ".kc"), dir / (mine + ".kc"));
  EXPECT_FALSE(cache.load(mine));
  ASSERT_EQ(w.messages.size(), 1u);
  EXPECT_NE(w.messages[0].find("stored under another key"), std::string::npos) << w.messages[0];
  EXPECT_FALSE(fs::exists(dir / (mine + ".kc"))) << "the impostor is removed";
}

TEST(JitDiskCache, RefusesAFolderBelowOneOthersCanRename) {
  TempDir tmp;
  const fs::path open = tmp.path() / "shared";
  fs::create_directory(open);
  fs::permissions(open, fs::perms::all);  // 0777, no sticky bit
  Warnings w;
  DiskCache cache(open / "cache", 1 << 20, true, w.sink());
  cache.store(hash_key({"k"}), sample());
  EXPECT_FALSE(cache.load(hash_key({"k"})));
  ASSERT_EQ(w.messages.size(), 1u);
  EXPECT_NE(w.messages[0].find("without the sticky bit"), std::string::npos) << w.messages[0];
  fs::permissions(open, fs::perms::all | fs::perms::sticky_bit);  // 1777, as /tmp: fine
  DiskCache sticky(open / "cache2", 1 << 20, true, nullptr);
  sticky.store(hash_key({"k"}), sample());
  EXPECT_TRUE(sticky.load(hash_key({"k"})));
}

TEST(JitDiskCache, AFifoOrLinkAtAnEntrysNameIsNotFollowed) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "cache";
  Warnings w;
  DiskCache cache(dir, 1 << 20, true, w.sink());
  cache.store(hash_key({"warm"}), sample());  // opens the folder
  const std::string fifo = hash_key({"fifo"}), link = hash_key({"link"});
  ASSERT_EQ(::mkfifo((dir / (fifo + ".kc")).c_str(), 0600), 0);
  EXPECT_FALSE(cache.load(fifo));  // returns at once: the open does not block
  fs::create_symlink(dir / (hash_key({"warm"}) + ".kc"), dir / (link + ".kc"));
  EXPECT_FALSE(cache.load(link));
  cache.store(fifo, sample());  // the next store replaces what was there
  EXPECT_TRUE(cache.load(fifo));
  EXPECT_TRUE(cache.enabled());
}

TEST(JitDiskCache, AFolderAtAnEntrysNameCostsOnlyThatEntry) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "cache";
  Warnings w;
  DiskCache cache(dir, 1 << 20, true, w.sink());
  const std::string blocked = hash_key({"blocked"}), other = hash_key({"other"});
  cache.store(other, sample());  // opens the folder
  fs::create_directories(dir / (blocked + ".kc") / "inside");
  EXPECT_FALSE(cache.load(blocked));
  EXPECT_FALSE(cache.load(blocked));
  EXPECT_EQ(w.messages.size(), 1u) << "the folder is reported once, not at every load";
  cache.store(blocked, sample());
  EXPECT_TRUE(cache.enabled()) << "one bad name must not turn the cache off";
  cache.store(hash_key({"later"}), sample());
  EXPECT_TRUE(cache.load(hash_key({"later"})));
  EXPECT_TRUE(cache.load(other));
}

TEST(JitDiskCache, ClearRemovesOnlyEntries) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "cache";
  DiskCache cache(dir, 1 << 20, true, nullptr);
  cache.store(hash_key({"1"}), sample());
  cache.store(hash_key({"2"}), sample());
  spit(dir / "notes.txt", "mine");
  EXPECT_EQ(cache.stats().entries, 2u);
  cache.clear();
  EXPECT_EQ(cache.stats().entries, 0u);
  EXPECT_EQ(cache.stats().bytes, 0u);
  EXPECT_TRUE(fs::exists(dir / "notes.txt"));
  EXPECT_FALSE(cache.load(hash_key({"1"})));
}

}  // namespace
}  // namespace kiln::jit
