// Unit tests of the kiln program's pieces: command-line parsing, the arg table, Ctrl-C in
// docall, value printing and completion.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "repl/cli.h"
#include "repl/lua_host.h"
#include "repl/pretty.h"
#include "repl/repl.h"
#include "runtime/interrupt.h"

namespace {

using kiln::cli::Chunk;
using kiln::cli::parse;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

// Parses a command line given as words (the program name included).
kiln::cli::ParseResult parse_words(std::vector<const char*> words) {
  return parse(static_cast<int>(words.size()), words.data());
}

TEST(CliParse, ScriptAndItsArgumentsStopOptionParsing) {
  auto result = parse_words({"kiln", "-i", "script.lua", "-e", "x", "--version"});
  ASSERT_EQ(result.error, "");
  EXPECT_EQ(result.options.script, 2);
  EXPECT_TRUE(result.options.interactive);
  EXPECT_TRUE(result.options.chunks.empty());
  EXPECT_FALSE(result.options.version);
}

TEST(CliParse, ChunksKeepTheirOrderAndBothSpellings) {
  auto result = parse_words({"kiln", "-e", "a=1", "-lfoo", "-eb=2", "-l", "bar"});
  ASSERT_EQ(result.error, "");
  const auto& chunks = result.options.chunks;
  ASSERT_EQ(chunks.size(), 4u);
  EXPECT_EQ(chunks[0].kind, Chunk::Kind::code);
  EXPECT_EQ(chunks[0].text, "a=1");
  EXPECT_EQ(chunks[1].kind, Chunk::Kind::library);
  EXPECT_EQ(chunks[1].text, "foo");
  EXPECT_EQ(chunks[2].text, "b=2");
  EXPECT_EQ(chunks[3].text, "bar");
  EXPECT_EQ(result.options.script, 0);
}

TEST(CliParse, StdinDashAndDoubleDash) {
  EXPECT_EQ(parse_words({"kiln", "-"}).options.script, 1);
  EXPECT_EQ(parse_words({"kiln", "--", "-weird.lua"}).options.script, 2);
  EXPECT_EQ(parse_words({"kiln", "--"}).options.script, 0);
}

TEST(CliParse, Flags) {
  auto o = parse_words({"kiln", "--info", "--cache-stats", "--cache-clear", "--check", "-W", "-v",
                        "-h", "--backend", "cpu"})
               .options;
  EXPECT_TRUE(o.info && o.cache_stats && o.cache_clear && o.check && o.warnings && o.version &&
              o.help);
  EXPECT_EQ(o.backend, "cpu");
  EXPECT_EQ(parse_words({"kiln", "--backend=cuda"}).options.backend, "cuda");
  EXPECT_TRUE(parse_words({"kiln", "--version"}).options.version);
  EXPECT_TRUE(parse_words({"kiln", "--help"}).options.help);
}

TEST(CliParse, ErrorsNameTheArgument) {
  EXPECT_EQ(parse_words({"kiln", "-x"}).error, "unrecognized option '-x'");
  EXPECT_EQ(parse_words({"kiln", "-e"}).error, "'-e' needs an argument");
  EXPECT_EQ(parse_words({"kiln", "-l"}).error, "'-l' needs an argument");
  EXPECT_THAT(parse_words({"kiln", "--backend", "tpu"}).error,
              ::testing::HasSubstr("unknown backend 'tpu'"));
  EXPECT_THAT(parse_words({"kiln", "--backend"}).error, ::testing::HasSubstr("needs an argument"));
}

TEST(CliParse, JupyterOptions) {
  EXPECT_EQ(parse_words({"kiln", "--jupyter", "conn.json"}).options.jupyter, "conn.json");
  EXPECT_EQ(parse_words({"kiln", "--jupyter=c.json"}).options.jupyter, "c.json");
  auto o = parse_words({"kiln", "--install-kernel", "--prefix", "/opt/x"}).options;
  EXPECT_TRUE(o.install_kernel);
  EXPECT_EQ(o.prefix, "/opt/x");
  EXPECT_EQ(parse_words({"kiln", "--install-kernel", "--user"}).error, "");
  EXPECT_THAT(parse_words({"kiln", "--jupyter"}).error, ::testing::HasSubstr("connection file"));
  EXPECT_THAT(parse_words({"kiln", "--user"}).error, ::testing::HasSubstr("--install-kernel"));
  EXPECT_THAT(parse_words({"kiln", "--prefix", "d"}).error,
              ::testing::HasSubstr("--install-kernel"));
  EXPECT_THAT(parse_words({"kiln", "--install-kernel", "--user", "--prefix", "d"}).error,
              ::testing::HasSubstr("cannot go together"));
}

TEST(CliText, VersionAndHelp) {
  EXPECT_EQ(kiln::cli::version_text(), std::string("kiln ") + KILN_VERSION + " (" LUA_RELEASE ")");
  EXPECT_THAT(kiln::cli::help_text(), ::testing::HasSubstr("--cache-stats"));
}

// A fresh kiln state for the tests below.
struct ReplHost : ::testing::Test {
  kiln::lua::State state = kiln::lua::new_state();
  lua_State* L = state.get();

  // Runs code, which must succeed, and leaves its results on the stack.
  void run(const char* code) {
    ASSERT_EQ(luaL_loadstring(L, code), LUA_OK) << lua_tostring(L, -1);
    ASSERT_EQ(kiln::lua::docall(L, 0, LUA_MULTRET), LUA_OK) << lua_tostring(L, -1);
  }
  // The REPL's text for the value code returns.
  std::string pretty_of(const char* code, kiln::lua::PrettyOptions options = {}) {
    lua_settop(L, 0);
    run(code);
    std::string text = kiln::lua::pretty(L, -1, options);
    lua_settop(L, 0);
    return text;
  }
};

TEST_F(ReplHost, ArgTableAsLuaDoes) {
  std::vector<char*> argv = {const_cast<char*>("kiln"), const_cast<char*>("-i"),
                             const_cast<char*>("s.lua"), const_cast<char*>("a"),
                             const_cast<char*>("b")};
  kiln::lua::create_arg_table(L, 5, argv.data(), 2);
  run("return arg[-2], arg[-1], arg[0], arg[1], arg[2], #arg");
  EXPECT_STREQ(lua_tostring(L, 1), "kiln");
  EXPECT_STREQ(lua_tostring(L, 2), "-i");
  EXPECT_STREQ(lua_tostring(L, 3), "s.lua");
  EXPECT_STREQ(lua_tostring(L, 4), "a");
  EXPECT_STREQ(lua_tostring(L, 5), "b");
  EXPECT_EQ(lua_tointeger(L, 6), 2);
}

TEST_F(ReplHost, ModulesArePreloaded) {
  run("return require('kiln.cuda') == cuda, require('kiln.array') == array, string ~= nil");
  EXPECT_TRUE(lua_toboolean(L, 1));
  EXPECT_TRUE(lua_toboolean(L, 2));
  EXPECT_TRUE(lua_toboolean(L, 3));
}

TEST_F(ReplHost, SigintInterruptsAChunkAndRestoresTheHandler) {
  struct sigaction before {};
  sigaction(SIGINT, nullptr, &before);
  std::thread interrupter([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    kill(getpid(), SIGINT);
  });
  ASSERT_EQ(luaL_loadstring(L, "local n = 0 while true do n = n + 1 end"), LUA_OK);
  int status = kiln::lua::docall(L, 0, 0);
  interrupter.join();
  EXPECT_EQ(status, LUA_ERRRUN);
  EXPECT_THAT(lua_tostring(L, -1), ::testing::HasSubstr("interrupted!"));
  lua_pop(L, 1);
  struct sigaction after {};
  sigaction(SIGINT, nullptr, &after);
  EXPECT_EQ(after.sa_handler, before.sa_handler);
  EXPECT_FALSE(kiln::interrupt_flag().load());
  run("return 1 + 1");  // the state survives
  EXPECT_EQ(lua_tointeger(L, -1), 2);
}

TEST_F(ReplHost, SigintRaisesTheFlagThatCppCodePolls) {
  // A C function that waits for the flag, as a cpu-backend kernel loop polls it.
  lua_register(L, "wait_for_flag", [](lua_State* L) {
    while (!kiln::interrupt_flag().load()) std::this_thread::yield();
    lua_pushboolean(L, 1);
    return 1;
  });
  std::thread interrupter([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    kill(getpid(), SIGINT);
  });
  ASSERT_EQ(luaL_loadstring(L, "wait_for_flag() return 'not interrupted'"), LUA_OK);
  int status = kiln::lua::docall(L, 0, 1);
  interrupter.join();
  EXPECT_EQ(status, LUA_ERRRUN);
  EXPECT_THAT(lua_tostring(L, -1), ::testing::HasSubstr("interrupted!"));
}

TEST_F(ReplHost, AnInterruptCppCodeTurnedIntoItsErrorIsNotReplaced) {
  // A C function that consumes the flag and raises its own error, as an interrupted compile
  // does: pcall gets that error, and the Lua hook the Ctrl-C set does not raise "interrupted!"
  // over it afterwards.
  lua_register(L, "consume_flag", [](lua_State* L) {
    while (!kiln::interrupt_flag().exchange(false)) std::this_thread::yield();
    return luaL_error(L, "compile of k interrupted by Ctrl-C");
  });
  std::thread interrupter([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    kill(getpid(), SIGINT);
  });
  ASSERT_EQ(luaL_loadstring(L, "local ok, e = pcall(consume_flag) return e"), LUA_OK);
  int status = kiln::lua::docall(L, 0, 1);
  interrupter.join();
  ASSERT_EQ(status, LUA_OK) << lua_tostring(L, -1);
  EXPECT_THAT(lua_tostring(L, -1), ::testing::HasSubstr("compile of k interrupted by Ctrl-C"));
}

TEST_F(ReplHost, PrettyScalarsAndStrings) {
  EXPECT_EQ(pretty_of("return 42"), "42");
  EXPECT_EQ(pretty_of("return 1.5"), "1.5");
  EXPECT_EQ(pretty_of("return 2^53"), "9.007199254741e+15");
  EXPECT_EQ(pretty_of("return nil"), "nil");
  EXPECT_EQ(pretty_of("return true"), "true");
  EXPECT_EQ(pretty_of("return 'a\"b\\n\\0'"), "\"a\\\"b\\n\\000\"");
}

TEST_F(ReplHost, PrettyTablesSortKeysAfterTheSequence) {
  EXPECT_EQ(pretty_of("return {}"), "{}");
  EXPECT_EQ(pretty_of("return {3, 2, 1}"), "{3, 2, 1}");
  EXPECT_EQ(pretty_of("return {b = 1, a = {x = 'y'}, [10] = true, [1.5] = 0, ['end'] = 2, 'q'}"),
            "{\"q\", [1.5] = 0, [10] = true, a = {x = \"y\"}, b = 1, [\"end\"] = 2}");
}

TEST_F(ReplHost, PrettyMarksCyclesAndLimitsDepthAndSize) {
  EXPECT_EQ(pretty_of("local t = {1} t.self = t return t"), "{1, self = <cycle>}");
  EXPECT_EQ(pretty_of("local s = {} return {s, s}"), "{{}, {}}");  // shared, not a cycle
  kiln::lua::PrettyOptions options;
  options.max_depth = 2;
  EXPECT_EQ(pretty_of("return {{{1}}}", options), "{{{...}}}");
  options.max_items = 3;
  EXPECT_EQ(pretty_of("return {1, 2, 3, 4, 5, x = 1}", options), "{1, 2, 3, ... (3 more)}");
}

TEST_F(ReplHost, PrettyBreaksLongTablesIntoLines) {
  std::string text = pretty_of(
      "return {alpha = 'aaaaaaaaaaaaaaaaaaaa', beta = 'bbbbbbbbbbbbbbbbbbbb', "
      "gamma = {1, 2, 3}, delta = 'dddddddddddddddddddd'}");
  EXPECT_EQ(text,
            "{\n"
            "  alpha = \"aaaaaaaaaaaaaaaaaaaa\",\n"
            "  beta = \"bbbbbbbbbbbbbbbbbbbb\",\n"
            "  delta = \"dddddddddddddddddddd\",\n"
            "  gamma = {1, 2, 3},\n"
            "}");
}

TEST_F(ReplHost, PrettyUsesTostringAndSurvivesItsErrors) {
  EXPECT_EQ(pretty_of("return setmetatable({}, {__tostring = function() return 'ARR' end})"),
            "ARR");
  EXPECT_EQ(pretty_of("return {setmetatable({}, {__tostring = function() return 'A' end})}"),
            "{A}");
  EXPECT_THAT(pretty_of("return setmetatable({}, {__tostring = function() error('bad') end})"),
              ::testing::HasSubstr("<error in __tostring:"));
}

TEST_F(ReplHost, CompletesGlobalsKeywordsAndFields) {
  auto c = kiln::repl::complete(L, "x = string.fo");
  EXPECT_EQ(c.start, 4u);
  EXPECT_THAT(c.candidates, ElementsAre("string.format"));
  EXPECT_THAT(kiln::repl::complete(L, "pri").candidates, ElementsAre("print"));
  EXPECT_THAT(kiln::repl::complete(L, "whi").candidates, ElementsAre("while"));
  EXPECT_THAT(kiln::repl::complete(L, "math.ma").candidates,
              ElementsAre("math.max", "math.maxinteger"));
  EXPECT_THAT(kiln::repl::complete(L, "nosuch.x").candidates, IsEmpty());
  EXPECT_THAT(kiln::repl::complete(L, "12").candidates, IsEmpty());
  EXPECT_THAT(kiln::repl::complete(L, ":ti").candidates, ElementsAre(":time"));
}

TEST_F(ReplHost, CompletesMethodsThroughMetatables) {
  // An array-like userdata: methods in __index (a table), or in __methods beside an __index
  // function, as the array bindings may do either.
  run(R"(
    obj = setmetatable({}, {__index = {sum = function() end, size = 3, _hidden = 1}})
    local mt = {__index = function() end, __methods = {sum = function() end, shape = 1}}
    other = setmetatable({}, mt)
  )");
  EXPECT_THAT(kiln::repl::complete(L, "obj:su").candidates, ElementsAre("obj:sum"));
  EXPECT_THAT(kiln::repl::complete(L, "obj.s").candidates, ElementsAre("obj.size", "obj.sum"));
  EXPECT_THAT(kiln::repl::complete(L, "other:s").candidates,
              ElementsAre("other:shape", "other:sum"));
  // Userdata: io.stdout's methods come from its metatable's __index.
  EXPECT_THAT(kiln::repl::complete(L, "io.stdout:wri").candidates, ElementsAre("io.stdout:write"));
  // Metamethods stay hidden unless asked for.
  EXPECT_THAT(kiln::repl::complete(L, "io.stdout:").candidates,
              ::testing::Not(::testing::Contains("io.stdout:__gc")));
}

TEST_F(ReplHost, PathsAndWordsForInspection) {
  run("obj = setmetatable({}, {__index = {sum = 1}}) t = {a = {b = 2}}");
  EXPECT_EQ(kiln::repl::word_at("x = cuda.to_device(a)", 10), "cuda.to_device");
  EXPECT_EQ(kiln::repl::word_at("a:sum()", 7), "");
  EXPECT_EQ(kiln::repl::word_at("a:sum()", 3), "a:sum");
  int top = lua_gettop(L);
  ASSERT_TRUE(kiln::repl::push_path(L, "t.a.b"));
  EXPECT_EQ(lua_tointeger(L, -1), 2);
  lua_pop(L, 1);
  ASSERT_TRUE(kiln::repl::push_path(L, "obj:sum"));
  EXPECT_EQ(lua_tointeger(L, -1), 1);
  lua_pop(L, 1);
  ASSERT_TRUE(kiln::repl::push_path(L, "io.stdout:write"));
  EXPECT_TRUE(lua_isfunction(L, -1));
  lua_pop(L, 1);
  EXPECT_FALSE(kiln::repl::push_path(L, "t.nosuch"));
  EXPECT_FALSE(kiln::repl::push_path(L, "obj:sum.x"));
  EXPECT_FALSE(kiln::repl::push_path(L, "1x"));
  EXPECT_EQ(lua_gettop(L), top);
}

TEST_F(ReplHost, LoadLineShowsExpressionsAndSaysWhenUnfinished) {
  ASSERT_EQ(kiln::repl::load_line(L, "1 + 2", "=t"), LUA_OK);
  lua_call(L, 0, 1);
  EXPECT_EQ(lua_tointeger(L, -1), 3);
  lua_pop(L, 1);
  ASSERT_EQ(kiln::repl::load_line(L, "x = 4", "=t"), LUA_OK);
  lua_pop(L, 1);
  int status = kiln::repl::load_line(L, "for i = 1, 2 do", "=t");
  EXPECT_TRUE(kiln::repl::incomplete(L, status));
  lua_pop(L, 1);
  status = kiln::repl::load_line(L, "x = )", "=t");
  EXPECT_FALSE(kiln::repl::incomplete(L, status));
  lua_pop(L, 1);
}

TEST(ReplFormat, Durations) {
  EXPECT_EQ(kiln::repl::format_duration(1.234e-3), "1.23 ms");
  EXPECT_EQ(kiln::repl::format_duration(2.5), "2.5 s");
  EXPECT_EQ(kiln::repl::format_duration(45e-9), "45 ns");
  EXPECT_EQ(kiln::repl::format_duration(12.3e-6), "12.3 \xc2\xb5s");
  EXPECT_EQ(kiln::repl::format_duration(0.9999), "1 s");
}

}  // namespace
