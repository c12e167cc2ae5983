// Two builds of one source that differ only in a define's value are different builds: in the
// dispatcher's memory, in the disk cache, and when a new process (a fresh Jit) reads them back.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "cpu_test_util.h"
#include "jit/jit.h"
#include "temp_dir.h"

namespace kiln::jit {
namespace {
using cpu_test::Buffer;

constexpr const char* kStoresValue =
    "__global__ void store(int* out) { out[threadIdx.x] = VALUE; }";

// A dispatcher on the cpu backend whose disk cache is dir (and holds only kernels: no
// precompiled prelude).
std::shared_ptr<Jit> jit_with_cache(const std::filesystem::path& dir) {
  jit::CpuCompilerOptions options = cpu_test::compiler_options();
  options.precompiled_prelude = false;
  return std::make_shared<Jit>(cpu_test::backend(), make_cpu_compiler(options),
                               DiskCache(dir, 1ull << 30, true, nullptr), KILN_KERNELS_DIR,
                               JitOptions{"", false, {}});
}

// Builds `store` with -DVALUE=value on jit, runs it on 4 threads; returns what they stored and
// where the build came from.
std::pair<std::vector<int>, Origin> run(const std::shared_ptr<Jit>& jit, const std::string& value) {
  auto source = std::make_shared<SourceText>(SourceText::from_string(kStoresValue, "test"));
  KernelOptions o;
  o.defines = {{"VALUE", value}};
  Kernel k(jit, source, select_kernels(*source, "", false), o, std::make_shared<Globals>());
  Buffer<int> out(4);
  ArgValue a;
  a.kind = ArgValue::Kind::device_array, a.dtype = DType::int32, a.ndim = 1, a.data = out.p,
  a.shape = {4};
  std::vector<ArgValue> args{a};
  Kernel::Specialisation& spec = k.specialise(args);
  k.launch(spec, LaunchConfig{{1, 1, 1}, {4, 1, 1}}, args);
  return {out.host(), spec.build.origin};
}

TEST(JitCacheKey, DefineValuesMakeDistinctBuildsInMemoryAndOnDisk) {
  test::TempDir tmp;
  auto jit = jit_with_cache(tmp.path());
  auto [ones, ones_origin] = run(jit, "1");
  auto [twos, twos_origin] = run(jit, "2");
  EXPECT_EQ(ones, std::vector<int>(4, 1));
  EXPECT_EQ(twos, std::vector<int>(4, 2));  // not the VALUE=1 build from memory
  EXPECT_EQ(ones_origin, Origin::compiled);
  EXPECT_EQ(twos_origin, Origin::compiled);
  EXPECT_EQ(jit->cache().stats().entries, 2u);

  // A fresh dispatcher (a new process) finds each on disk, each with its own value.
  auto fresh = jit_with_cache(tmp.path());
  auto [twos_again, twos_again_origin] = run(fresh, "2");
  auto [ones_again, ones_again_origin] = run(fresh, "1");
  EXPECT_EQ(twos_again, std::vector<int>(4, 2));
  EXPECT_EQ(ones_again, std::vector<int>(4, 1));
  EXPECT_EQ(twos_again_origin, Origin::disk);
  EXPECT_EQ(ones_again_origin, Origin::disk);
  EXPECT_EQ(fresh->cache().stats().entries, 2u);
}

}  // namespace
}  // namespace kiln::jit
