// The cpu prelude, precompiled: GCC parses <cmath> and kiln's prelude in about 120 ms of every
// cold compile; a precompiled header (.gch) of it, made once per set of code-generation flags,
// takes that away. It is kept in the disk cache (through the Jit's CompilerStore, so it is as
// trusted as a cached kernel) and copied into a private folder of this process, which goes first
// on the include path: `#include <kiln/cpu_prelude.h>` then finds kiln/cpu_prelude.h.gch there
// (and a stand-in kiln/cpu_prelude.h that includes the real one wherever the .gch is not used).
// GCC checks the header against each compile (flags, macros) and ignores one that does not fit,
// so a stale or mismatched one costs time, never correctness.
#pragma once
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "jit/compiler.h"

namespace kiln {
class TempDir;
}

namespace kiln::cpu {

class PrecompiledPrelude {
 public:
  // compiler: the host compiler (GCC; clang's precompiled headers work otherwise);
  // include_flags: how a compile finds the prelude ("-isystem ...", "-I<kernels_dir>").
  PrecompiledPrelude(std::string compiler, std::string prelude_path,
                     std::vector<std::string> include_flags);
  ~PrecompiledPrelude();

  void use_store(jit::CompilerStore store);

  // The folder to put first on the include path of a compile with flags (its code-generation
  // flags; identity names the compiler and the prelude's text), or "" when no precompiled prelude
  // is ready. When this process has not yet asked for these flags, the store has none and can
  // keep one (a disk cache), *build becomes a build of one, running beside the compile that
  // asked (nullptr: none); its future's destructor waits for it.
  std::string folder(const std::vector<std::string>& flags, const std::string& identity,
                     std::future<void>* build);

 private:
  // Compiles the prelude with flags into dir/kiln/cpu_prelude.h.gch and stores it under key.
  void make(const std::vector<std::string>& flags, const std::string& key, const std::string& dir);
  const std::string& root();

  std::string compiler_, prelude_path_;
  std::vector<std::string> include_flags_;
  std::mutex mutex_;
  jit::CompilerStore store_;
  std::unique_ptr<TempDir> root_;               // this process's copies, removed at the end
  std::map<std::string, std::string> folders_;  // key -> folder ("": tried, none to use)
};

}  // namespace kiln::cpu
