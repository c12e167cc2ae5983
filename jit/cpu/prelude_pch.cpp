// The cpu prelude, precompiled once per set of flags and kept in the disk cache.
#include "jit/cpu/prelude_pch.h"

#include <filesystem>

#include "jit/cache.h"
#include "runtime/error.h"
#include "runtime/interrupt.h"
#include "runtime/process.h"

namespace kiln::cpu {

namespace fs = std::filesystem;

namespace {

// Where a folder keeps its precompiled prelude.
std::string gch_in(const std::string& folder) {
  return folder + "/kiln/cpu_prelude.h.gch";
}

// Makes folder/kiln/ with the stand-in header beside the .gch: GCC, having found the .gch in
// the folder, opens the header there too whenever it does not use the .gch (a second #include,
// or a .gch that does not fit the compile); the stand-in hands that on to the real prelude,
// further down the include path.
void make_folder(const std::string& folder) {
  fs::create_directories(folder + "/kiln");
  write_file(folder + "/kiln/cpu_prelude.h", "#include_next <kiln/cpu_prelude.h>\n");
}

}  // namespace

PrecompiledPrelude::PrecompiledPrelude(std::string compiler, std::string prelude_path,
                                       std::vector<std::string> include_flags)
    : compiler_(std::move(compiler)),
      prelude_path_(std::move(prelude_path)),
      include_flags_(std::move(include_flags)) {}

PrecompiledPrelude::~PrecompiledPrelude() = default;

void PrecompiledPrelude::use_store(jit::CompilerStore store) {
  std::lock_guard lock(mutex_);
  store_ = std::move(store);
}

const std::string& PrecompiledPrelude::root() {
  if (!root_) root_ = std::make_unique<TempDir>();
  return root_->path();
}

std::string PrecompiledPrelude::folder(const std::vector<std::string>& flags,
                                       const std::string& identity, std::future<void>* build) {
  std::lock_guard lock(mutex_);
  std::string joined;
  for (const auto& f : flags) joined += f + '\n';
  const std::string key = jit::hash_key({"cpu prelude pch", identity, joined});
  if (auto it = folders_.find(key); it != folders_.end()) {
    // A copy that is gone (swept by another kiln after hours of this session) is fetched again.
    std::error_code ec;
    if (it->second.empty() || fs::exists(gch_in(it->second), ec)) return it->second;
    folders_.erase(it);
  }
  try {
    const std::string dir = root() + "/" + key;
    make_folder(dir);
    if (store_.load)
      if (std::optional<CompileResult> hit = store_.load(key); hit && hit->image_kind == "gch") {
        write_file(gch_in(dir), std::string(hit->image.begin(), hit->image.end()));
        return folders_[key] = dir;
      }
    folders_[key] = "";  // tried: this process builds it at most once
    // Without a disk cache to keep it, a build would cost every process's first compile (it
    // waits for it) more than the precompiled header saves it.
    if (build && store_.persistent && store_.persistent())
      *build = std::async(std::launch::async, [this, flags, key, dir] {
        block_interrupts_in_this_thread();
        make(flags, key, dir);
      });
  } catch (const std::exception&) {
    folders_[key] = "";  // no temporary folder, a full disk: compiles go on without it
  }
  return "";
}

void PrecompiledPrelude::make(const std::vector<std::string>& flags, const std::string& key,
                              const std::string& dir) {
  std::vector<std::string> argv{compiler_};
  for (const auto& f : flags)
    if (f != "-shared" && !f.starts_with("-Wl,")) argv.push_back(f);  // link flags: not here
  argv.insert(argv.end(), include_flags_.begin(), include_flags_.end());
  argv.insert(argv.end(), {"-w", "-x", "c++-header", prelude_path_, "-o", gch_in(dir)});
  try {
    TempDir scratch;  // the compiler's own temporary files
    // Not interruptible: a Ctrl-C is the answer of the compile beside, which polls for it; this
    // build is short, and the compile waits for it.
    ProcessResult r = run_process(argv, scratch.path(), {8ull << 30, 600, 1u << 20, false});
    if (r.exit_code != 0) {
      fs::remove(gch_in(dir));
      return;
    }
    CompileResult value;
    value.image_kind = "gch";
    value.image = read_file(gch_in(dir));
    std::lock_guard lock(mutex_);
    if (store_.store) store_.store(key, value);
    folders_[key] = dir;
  } catch (const std::exception&) {
    // Ctrl-C, no compiler, a full disk: the kernels compile without it.
    std::error_code ec;
    fs::remove(gch_in(dir), ec);
  }
}

}  // namespace kiln::cpu
