// jit/source: the #include scan and the one include walker (cache keys and the cpu compiler's
// barrier search both follow it), on files written to a temporary folder.
#include "jit/source.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "temp_dir.h"

namespace kiln::jit {
namespace {
namespace fs = std::filesystem;

void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

// The file names walk_includes returns, in order.
std::vector<std::string> names(const std::vector<IncludedFile>& files) {
  std::vector<std::string> out;
  for (const auto& f : files) out.push_back(f.path.filename().string());
  return out;
}

TEST(FindIncludes, QuotedAndAngledOutsideCommentsAndStrings) {
  auto lines = find_includes(
      "#include \"a.h\"\n"
      "  #  include <kiln/cpu_cg.h>\n"
      "// #include \"commented.h\"\n"
      "/* #include \"block.h\" */\n"
      "const char* s = \"#include \\\"string.h\\\"\";\n"
      "#include <cstdio>\n");
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0].name, "a.h");
  EXPECT_TRUE(lines[0].quoted);
  EXPECT_EQ(lines[1].name, "kiln/cpu_cg.h");
  EXPECT_FALSE(lines[1].quoted);
  EXPECT_EQ(lines[2].name, "cstdio");
}

TEST(WalkIncludes, DepthFirstEachOnceAcrossFoldersAndCycles) {
  test::TempDir tmp;
  const fs::path d = tmp.path();
  write(d / "k.cu", "#include \"a.h\"\n#include \"b.h\"\n#include \"missing.h\"\n");
  write(d / "a.h", "#include \"sub/c.h\"\n");
  write(d / "sub/c.h", "#include \"../a.h\"\n#include \"d.h\"\n");  // a cycle, and c's own folder
  write(d / "sub/d.h", "int d;\n");
  write(d / "b.h", "#include \"a.h\"\n");  // already seen
  std::string text = "#include \"a.h\"\n#include \"b.h\"\n#include \"missing.h\"\n";
  EXPECT_EQ(names(walk_includes(text, d)), (std::vector<std::string>{"a.h", "c.h", "d.h", "b.h"}));
}

TEST(WalkIncludes, AngledOnlyWhenFollowedAndFromIncludeDirs) {
  test::TempDir tmp;
  const fs::path d = tmp.path();
  write(d / "inc/kiln/sync.h", "__syncthreads();\n");
  write(d / "inc/other.h", "int x;\n");
  write(d / "inc/q.h", "int q;\n");
  std::string text = "#include <kiln/sync.h>\n#include <other.h>\n#include \"q.h\"\n";
  auto kiln_only = [](const std::string& name) { return name.rfind("kiln", 0) == 0; };
  auto found = walk_includes(text, d, {d / "inc"}, kiln_only);
  EXPECT_EQ(names(found), (std::vector<std::string>{"sync.h", "q.h"}));
  EXPECT_EQ(found[0].text, "__syncthreads();\n");
  EXPECT_EQ(names(walk_includes(text, d)), std::vector<std::string>{});  // no include dirs
}

TEST(SourceText, IncludedTextsChangeWithAHeader) {
  test::TempDir tmp;
  write(tmp.path() / "k.cu", "#include \"h.h\"\n__global__ void k() {}\n");
  write(tmp.path() / "h.h", "#define N 4\n");
  SourceText s = SourceText::from_file(tmp.path() / "k.cu");
  std::vector<std::string> before = s.included_texts();
  ASSERT_EQ(before.size(), 1u);
  EXPECT_NE(before[0].find("#define N 4"), std::string::npos);
  write(tmp.path() / "h.h", "#define N 8\n");
  EXPECT_NE(s.included_texts(), before);
  EXPECT_TRUE(SourceText::from_string("#include \"h.h\"", "x.lua:1").included_texts().empty());
}

}  // namespace
}  // namespace kiln::jit
