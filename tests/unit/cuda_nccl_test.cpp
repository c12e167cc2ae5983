// NCCL behind dlopen (runtime/cuda/nccl.h): what can be checked without a GPU. Loading, the
// version, and an id for the ranks to share; joining GPUs needs devices (tests/gpu).
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>

#include "runtime/cuda/nccl.h"

namespace kiln::cuda {
namespace {

// Whether the toolkit at /usr/local/cuda ships NCCL (it does from CUDA 13's packages on).
bool toolkit_has_nccl() {
  for (const char* path : {"/usr/local/cuda/lib64/libnccl.so.2", "/usr/local/cuda/lib/libnccl.so.2"})
    if (std::filesystem::exists(path)) return true;
  return false;
}

TEST(CudaNccl, LoadsFromTheToolkitAndReportsItsVersion) {
  if (!toolkit_has_nccl()) GTEST_SKIP() << "no libnccl.so.2 in /usr/local/cuda";
  std::string why;
  std::shared_ptr<Nccl> nccl = Nccl::load({}, &why);
  ASSERT_TRUE(nccl) << why;
  EXPECT_TRUE(std::regex_match(nccl->version(), std::regex(R"(2\.\d+\.\d+)"))) << nccl->version();
}

TEST(CudaNccl, MakesAnIdForTheRanksToShare) {
  if (!toolkit_has_nccl()) GTEST_SKIP() << "no libnccl.so.2 in /usr/local/cuda";
  std::shared_ptr<Nccl> nccl = Nccl::load({}, nullptr);
  ASSERT_TRUE(nccl);
  Nccl::UniqueId a = nccl->unique_id(), b = nccl->unique_id();
  EXPECT_NE(a, Nccl::UniqueId{});  // not all zero
  EXPECT_NE(a, b);                 // each id names a new communicator
}

}  // namespace
}  // namespace kiln::cuda
