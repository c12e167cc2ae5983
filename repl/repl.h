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

// "1.23 ms", "456 ns": three significant digits in the largest unit that keeps them >= 1.
std::string format_duration(double seconds);

}  // namespace kiln::repl
