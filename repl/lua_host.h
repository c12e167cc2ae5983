// The Lua host: a Lua state with kiln opened, and the lua.c-style helpers that run chunks with
// a traceback, make Ctrl-C interrupt them, and report errors.
#pragma once
#include <signal.h>

#include <memory>
#include <string>

#include <lua.hpp>

#include "repl/settings.h"

namespace kiln::lua {

// A lua_State that closes itself.
struct StateCloser {
  void operator()(lua_State* L) const { lua_close(L); }
};
using State = std::unique_ptr<lua_State, StateCloser>;

// A new state with the standard libraries and kiln's modules opened, under settings (kept in
// the registry for the bindings: settings(L)).
State new_state(const Settings& settings = Settings::from_environment());

// The settings the state was made with. [-0, +0]
const Settings& settings(lua_State* L);

// Calls the function below narg arguments with a traceback handler (lua.c's docall). While it
// runs, SIGINT raises kiln::interrupt_flag() and stops the Lua code with "interrupted!"; the
// previous SIGINT disposition is restored afterwards and a pending flag is lowered.
// [-(narg+1), +(nres|1)]; returns the lua_pcall status.
int docall(lua_State* L, int narg, int nres);

// Sets a signal's disposition for a scope and restores the previous one. No SA_RESTART: a read
// blocked in libedit must return EINTR.
class SignalScope {
 public:
  SignalScope(int signo, void (*handler)(int)) : signo_(signo) {
    struct sigaction action {};
    action.sa_handler = handler;
    sigemptyset(&action.sa_mask);
    action.sa_flags = 0;
    sigaction(signo, &action, &previous_);
  }
  ~SignalScope() { sigaction(signo_, &previous_, nullptr); }
  SignalScope(const SignalScope&) = delete;
  SignalScope& operator=(const SignalScope&) = delete;

 private:
  int signo_;
  struct sigaction previous_ {};
};

// Prints the error message on top of the stack to stderr, prefixed with progname, and pops it.
void report(lua_State* L, const char* progname);

// Sets the global table arg as lua.c does: arg[0] = argv[script], arg[i] = argv[script + i],
// negative indices hold the interpreter and its options. With no script (script == 0 or
// script >= argc), arg[0] is argv[0]. [-0, +0]
void create_arg_table(lua_State* L, int argc, char** argv, int script);

// Loads and runs a chunk from a string; chunkname as in luaL_loadbuffer. Reports errors.
// Returns the status (LUA_OK on success).
int do_string(lua_State* L, const std::string& code, const char* chunkname);

// Loads and runs a file (nullptr or "-" for stdin) with the script arguments arg[1..n] as its
// ... (lua.c's handle_script). Reports errors. Returns the status.
int do_script(lua_State* L, const char* path);

// Runs require(name) and sets the global name to its result (lua.c's -l). Reports errors.
int do_library(lua_State* L, const char* name);

// The field `name` of the global table cuda, when it is a function: pushes it and returns
// true; otherwise pushes nothing and returns false. [-0, +(0|1)]
bool push_cuda_function(lua_State* L, const char* name);

}  // namespace kiln::lua
