// repl/settings: every environment variable kiln reads, read once into Settings.
#include "repl/settings.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "temp_dir.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

// Sets (or, with nullptr, unsets) an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      ::setenv(name, value, 1);
    else
      ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(Settings, CacheFolderSizeAndSwitch) {
  test::TempDir tmp;
  {
    ScopedEnv dir("KILN_CACHE_DIR", (tmp.path() / "c1").c_str());
    ScopedEnv max("KILN_CACHE_MAX", "2M");
    ScopedEnv on("KILN_CACHE", nullptr);
    Settings s = Settings::from_environment();
    EXPECT_EQ(s.cache.dir, tmp.path() / "c1");
    EXPECT_TRUE(s.cache.enabled);
    EXPECT_EQ(s.cache.max_bytes, 2u << 20);
    EXPECT_TRUE(s.warnings.empty());
  }
  {
    ScopedEnv dir("KILN_CACHE_DIR", nullptr);
    ScopedEnv xdg("XDG_CACHE_HOME", tmp.path().c_str());
    ScopedEnv max("KILN_CACHE_MAX", "lots");
    ScopedEnv off("KILN_CACHE", "0");
    Settings s = Settings::from_environment();
    EXPECT_EQ(s.cache.dir, tmp.path() / "kiln");
    EXPECT_FALSE(s.cache.enabled);
    EXPECT_EQ(s.cache.max_bytes, 1u << 30);
    ASSERT_EQ(s.warnings.size(), 1u);
    EXPECT_NE(s.warnings[0].find("KILN_CACHE_MAX=lots"), std::string::npos);
  }
  {
    ScopedEnv dir("KILN_CACHE_DIR", nullptr);
    ScopedEnv xdg("XDG_CACHE_HOME", "relative/not/used");
    ScopedEnv home("HOME", tmp.path().c_str());
    ScopedEnv max("KILN_CACHE_MAX", "512k");
    Settings s = Settings::from_environment();
    EXPECT_EQ(s.cache.dir, tmp.path() / ".cache" / "kiln");
    EXPECT_EQ(s.cache.max_bytes, 512u << 10);
  }
}

TEST(Settings, JupyterDataFolder) {
  {
    ScopedEnv data("JUPYTER_DATA_DIR", "/j/data");
    EXPECT_EQ(Settings::from_environment().jupyter_data_dir, fs::path("/j/data"));
  }
  ScopedEnv data("JUPYTER_DATA_DIR", nullptr);
  {
    ScopedEnv xdg("XDG_DATA_HOME", "/x/share");
    EXPECT_EQ(Settings::from_environment().jupyter_data_dir, fs::path("/x/share/jupyter"));
  }
  ScopedEnv xdg("XDG_DATA_HOME", nullptr);
  ScopedEnv home("HOME", "/h");
  EXPECT_EQ(Settings::from_environment().jupyter_data_dir, fs::path("/h/.local/share/jupyter"));
}

TEST(Settings, SizesParse) {
  EXPECT_EQ(parse_size("1048576"), 1048576u);
  EXPECT_EQ(parse_size("3K"), 3u << 10);
  EXPECT_EQ(parse_size("5gb"), 5ull << 30);
  EXPECT_EQ(parse_size("1T"), 1ull << 40);
  EXPECT_FALSE(parse_size(""));
  EXPECT_FALSE(parse_size("M"));
  EXPECT_FALSE(parse_size("-1"));
  EXPECT_FALSE(parse_size("99999999999999999999"));
  EXPECT_FALSE(parse_size("20000000T"));  // overflows 64 bits
}

TEST(Settings, BackendAndCompilerChoices) {
  test::TempDir tmp;
  ScopedEnv backend("KILN_BACKEND", "cpu");
  ScopedEnv home("KILN_HOME", tmp.path().c_str());
  ScopedEnv threads("KILN_CPU_THREADS", "3");
  ScopedEnv check("KILN_CHECK", "1");
  ScopedEnv cxx("KILN_CXX", "clang++");
  ScopedEnv regions("KILN_REGIONS", "0");
  ScopedEnv arch("KILN_ARCH", "sm_90");
  ScopedEnv nvrtc("KILN_NVRTC_CHECK", "0");
  ScopedEnv cuda_home("CUDA_HOME", "/opt/cuda-a");
  ScopedEnv cuda_path("CUDA_PATH", "/opt/cuda-b");
  Settings s = Settings::from_environment();
  EXPECT_EQ(s.platform.backend, "cpu");
  EXPECT_EQ(s.platform.kernels_dir, tmp.path() / "kernels_src");
  EXPECT_EQ(s.platform.cpu.workers, 3);
  EXPECT_TRUE(s.platform.cpu.check);
  EXPECT_EQ(s.platform.host_compiler, "clang++");
  EXPECT_FALSE(s.platform.regions);
  EXPECT_EQ(s.jit.arch, "sm_90");
  EXPECT_FALSE(s.jit.nvrtc_check);
  EXPECT_EQ(s.platform.cuda_toolkits, (std::vector<std::string>{"/opt/cuda-a", "/opt/cuda-b"}));
  EXPECT_EQ(s.jit.cuda_toolkits, s.platform.cuda_toolkits);
  EXPECT_TRUE(s.error.empty());
}

TEST(Settings, Defaults) {
  ScopedEnv backend("KILN_BACKEND", nullptr);
  ScopedEnv home("KILN_HOME", nullptr);
  ScopedEnv threads("KILN_CPU_THREADS", nullptr);
  ScopedEnv check("KILN_CHECK", "0");
  ScopedEnv cxx("KILN_CXX", nullptr);
  ScopedEnv regions("KILN_REGIONS", nullptr);
  ScopedEnv arch("KILN_ARCH", nullptr);
  ScopedEnv nvrtc("KILN_NVRTC_CHECK", nullptr);
  Settings s = Settings::from_environment();
  EXPECT_EQ(s.platform.backend, "auto");
  EXPECT_EQ(s.platform.kernels_dir, fs::path(KILN_KERNELS_DIR));
  EXPECT_EQ(s.platform.cpu.workers, 0);
  EXPECT_FALSE(s.platform.cpu.check);
  EXPECT_EQ(s.platform.host_compiler, KILN_CXX_COMPILER);
  EXPECT_TRUE(s.platform.regions);
  EXPECT_EQ(s.jit.arch, "");
  EXPECT_TRUE(s.jit.nvrtc_check);
}

TEST(Settings, BadWorkerCountIsAnError) {
  for (const char* bad : {"0", "-2", "lots", "5000", "4x"}) {
    ScopedEnv threads("KILN_CPU_THREADS", bad);
    Settings s = Settings::from_environment();
    EXPECT_NE(s.error.find(std::string("KILN_CPU_THREADS='") + bad + "'"), std::string::npos)
        << bad;
  }
}

TEST(Settings, HistoryAndEditor) {
  {
    ScopedEnv history("KILN_HISTORY", "/tmp/h1");
    EXPECT_EQ(Settings::from_environment().history_file, "/tmp/h1");
  }
  {
    ScopedEnv history("KILN_HISTORY", "");  // set but empty: no history file
    ScopedEnv home("HOME", "/home/someone");
    EXPECT_EQ(Settings::from_environment().history_file, "");
  }
  {
    ScopedEnv history("KILN_HISTORY", nullptr);
    ScopedEnv home("HOME", "/home/someone");
    EXPECT_EQ(Settings::from_environment().history_file, "/home/someone/.kiln_history");
  }
  {
    ScopedEnv editor("EDITOR", nullptr);
    ScopedEnv visual("VISUAL", "nano -w");
    EXPECT_EQ(Settings::from_environment().editor, "nano -w");
  }
  {
    ScopedEnv editor("EDITOR", "");
    ScopedEnv visual("VISUAL", nullptr);
    EXPECT_EQ(Settings::from_environment().editor, "vi");
  }
}

}  // namespace
}  // namespace kiln
