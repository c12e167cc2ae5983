// jit/source: the #include scan and the one include walker (cache keys and the cpu compiler's
// barrier search both follow it), on files written to a temporary folder.
#include "jit/source.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
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

// Quoted headers spliced in place between #line directives (each file's own lines), nested
// ones from their own folder, `#pragma once` as a guard, a cycle cut, a missing header and an
// angled one left to the compiler.
TEST(SpliceIncludes, HeadersInPlaceWithTheirLines) {
  test::TempDir tmp;
  const fs::path d = tmp.path();
  write(d / "sub/h.cuh", "#pragma once\n#include \"g.cuh\"\nint h;\n");
  write(d / "sub/g.cuh", "#include \"h.cuh\"\nint g;");  // a cycle; no final newline
  const std::string text =
      "// k\n#include \"sub/h.cuh\"\n#include <cstdio>\n#include \"none.h\"\nint k;\n";
  const std::string h = fs::weakly_canonical(d / "sub/h.cuh").string();
  const std::string g = fs::weakly_canonical(d / "sub/g.cuh").string();
  std::vector<IncludedFile> headers;
  const std::optional<std::string> spliced = splice_includes(text, "k.cu", d, {}, &headers);
  ASSERT_TRUE(spliced);
  EXPECT_EQ(*spliced, "// k\n#line 1 \"" + h + "\"\n\n#line 1 \"" + g + "\"\n\nint g;\n#line 3 \"" +
                          h +
                          "\"\nint h;\n#line 3 \"k.cu\"\n#include <cstdio>\n#include "
                          "\"none.h\"\nint k;\n");
  ASSERT_EQ(headers.size(), 2u);
  EXPECT_EQ(headers[0].path.string(), h);
  EXPECT_EQ(headers[1].text, "#include \"h.cuh\"\nint g;");
  // A scan's message about a line of the spliced text names the line as written.
  const auto line_of = [&](const std::string& what) {
    const std::size_t at = spliced->find(what);
    return std::to_string(1 + std::count(spliced->begin(), spliced->begin() + long(at), '\n'));
  };
  EXPECT_EQ(written_places("g at k.cu:" + line_of("int g;") + ", k at k.cu:" + line_of("int k;") +
                               ", k.cu:999",
                           *spliced, "k.cu"),
            "g at " + g + ":2, k at k.cu:5, k.cu:999");
  EXPECT_EQ(written_places("at my_k.cu:2", *spliced, "k.cu"), "at my_k.cu:2");
  // Nothing to splice; a header from an include folder; a string's source has no folder.
  EXPECT_FALSE(splice_includes("#include <cstdio>\nint k;\n", "k.cu", d, {}));
  EXPECT_TRUE(splice_includes("#include \"h.cuh\"\n", "kernel.cu", {}, {d / "sub"}));
  EXPECT_FALSE(splice_includes("#include \"sub/h.cuh\"\n", "kernel.cu", {}, {}));
  // A header included once (`#pragma once`, an include guard) is spliced once; one without
  // either at each #include.
  write(d / "guarded.h", "// g\n#ifndef GUARDED_H\n#define GUARDED_H\nint guarded;\n#endif\n");
  write(d / "half.h", "#ifndef HALF_H\n#define HALF_H\n#endif\nint half;\n");  // (not all of it)
  write(d / "plain.h", "x += 1;\n");
  const std::string twice = splice_includes(
                                "#include \"sub/h.cuh\"\n#include \"guarded.h\"\n"
                                "#include \"sub/h.cuh\"\n#include \"guarded.h\"\n"
                                "#include \"plain.h\"\n#include \"plain.h\"\n"
                                "#include \"half.h\"\n#include \"half.h\"\n",
                                "k.cu", d, {})
                                .value_or("");
  const auto count = [&](const std::string& what) {
    std::size_t n = 0;
    for (std::size_t at = twice.find(what); at != std::string::npos; at = twice.find(what, at + 1))
      ++n;
    return n;
  };
  EXPECT_EQ(count("int h;"), 1u) << twice;
  EXPECT_EQ(count("int guarded;"), 1u) << twice;
  EXPECT_EQ(count("x += 1;"), 2u) << twice;
  EXPECT_EQ(count("int half;"), 2u) << twice;
  // Past the size bound: none.
  EXPECT_FALSE(splice_includes(text, "k.cu", d, {}, nullptr, 16));
  // A byte-order mark starts only a file: dropped. An #include with more on its line (a
  // comment running on) stays as written.
  write(d / "bom.h", "\xEF\xBB\xBFint bom;\n");
  EXPECT_EQ(splice_includes("#include \"bom.h\"\n", "k.cu", d, {}).value_or(""),
            "#line 1 \"" + fs::weakly_canonical(d / "bom.h").string() +
                "\"\nint bom;\n#line 2 \"k.cu\"\n");
  EXPECT_FALSE(splice_includes("#include \"bom.h\" /* and\n more */\n", "k.cu", d, {}));
  EXPECT_TRUE(splice_includes("#include \"bom.h\"  // the mark\n", "k.cu", d, {}));
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
