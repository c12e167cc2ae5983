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

// NCCL as kiln finds it (the library search path, then the toolkit's); a failure where the
// toolkit has it, a skip where nothing has it.
std::shared_ptr<Nccl> loaded_or_skipped() {
  std::string why;
  std::shared_ptr<Nccl> nccl = Nccl::load({}, &why);
  if (!nccl && toolkit_has_nccl()) ADD_FAILURE() << "the toolkit has NCCL, but: " << why;
  return nccl;
}

TEST(CudaNccl, LoadsFromTheToolkitAndReportsItsVersion) {
  std::shared_ptr<Nccl> nccl = loaded_or_skipped();
  if (!nccl) GTEST_SKIP() << "no libnccl.so.2 on the library path or in /usr/local/cuda";
  EXPECT_TRUE(std::regex_match(nccl->version(), std::regex(R"(2\.\d+\.\d+)"))) << nccl->version();
}

TEST(CudaNccl, MakesAnIdForTheRanksToShare) {
  std::shared_ptr<Nccl> nccl = loaded_or_skipped();
  if (!nccl) GTEST_SKIP() << "no libnccl.so.2 on the library path or in /usr/local/cuda";
  Nccl::UniqueId a = nccl->unique_id(), b = nccl->unique_id();
  EXPECT_NE(a, Nccl::UniqueId{});  // not all zero
  EXPECT_NE(a, b);                 // each id names a new communicator
}

}  // namespace
}  // namespace kiln::cuda
