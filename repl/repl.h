// The interactive loop: prompts, continuation lines, printing of results, history, completion,
// Ctrl-C, and the meta commands (:help :quit :load :time :reset :edit).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "repl/lua_host.h"

namespace kiln::repl {

// Makes the state that :reset switches to.
using StateFactory = std::function<lua::State()>;

// Runs the REPL on state until end of input or :quit; returns the exit status. With editing
// (standard input is a terminal) lines come through libedit with history and completion;
// without, prompts and plain lines (pipes, tests).
int run(lua::State& state, const StateFactory& fresh_state, bool editing);

// The completions of the word that ends line: globals and keywords, table fields after '.',
// methods after ':' (through metatables' __index tables and __methods), meta commands after a
// leading ':'. start is where the word begins; each candidate replaces line[start..].
struct Completion {
  size_t start = 0;
  std::vector<std::string> candidates;
};
Completion complete(lua_State* L, const std::string& line);

// The name path ("cuda.to_device", "a:sum") around byte pos of code: word characters on both
// sides of it (empty when there are none).
std::string word_at(const std::string& code, size_t pos);

// Pushes the value a name path names, found from the globals by raw lookups (nothing runs):
// '.' reads a table's field, ':' a method through the metatables' __methods and __index
// tables. Pushes nothing and returns false when the path names nothing. [-0, +(0|1)]
bool push_path(lua_State* L, const std::string& path);

// Loads code as the REPL loads a line: as "return CODE" when that compiles, so that an
// expression shows its values (lua.c's rule), else as it is. Pushes the function, or the error
// message of the plain load; returns the luaL_loadbuffer status. [-0, +1]
int load_line(lua_State* L, const std::string& code, const char* chunkname);

// Whether a load that returned status (its message on top) failed only because the chunk is
// unfinished: more lines could complete it (lua.c's incomplete). [-0, +0]
bool incomplete(lua_State* L, int status);

// :time EXPR: like IPython's %timeit, runs code (an expression or a statement) once untimed (a
// first launch compiles), finds a loop count whose run takes at least 0.2 s, then times up to 7
// runs (about 1.5 s in all) and prints min, median and max per loop. Each run ends with
// cuda.synchronize() so device work is inside the time. Errors are reported (lua::report).
void time_code(lua_State* L, const std::string& code);

// "1.23 ms", "456 ns": three significant digits in the largest unit that keeps them >= 1.
std::string format_duration(double seconds);

}  // namespace kiln::repl
