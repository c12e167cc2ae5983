#include "repl/lua_host.h"
#include "repl/lua_mpi.h"

#include <stdlib.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

#include "repl/lua_util.h"
#include "repl/modules.h"
#include "runtime/interrupt.h"

namespace kiln::lua {
namespace {

// The state whose chunk is running, for the SIGINT handler (lua.c's globalL). A signal handler
// can reach nothing else; like interrupt_flag() it is part of the one Ctrl-C exception to
// "no global mutable state".
std::atomic<lua_State*> running_state{nullptr};

// Message handler: appends a traceback to string messages; converts others with __tostring.
int msghandler(lua_State* L) {
  const char* msg = lua_tostring(L, 1);
  if (msg == nullptr) {
    if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) return 1;
    msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
  }
  luaL_traceback(L, L, msg, 1);
  return 1;
}

// Hook set by the SIGINT handler: stops the running Lua code with an error (lua.c's lstop),
// unless C++ code polling the flag (a compile, a cpu kernel) already lowered it and turned the
// Ctrl-C into its own error, which must not be replaced by this one.
void stop_hook(lua_State* L, lua_Debug*) {
  lua_sethook(L, nullptr, 0, 0);
  if (interrupt_flag().exchange(false, std::memory_order_relaxed)) luaL_error(L, "interrupted!");
}

// SIGINT while a chunk runs: raises the flag that C++ code polls and makes the Lua VM stop at
// its next instruction. A second Ctrl-C before the first was answered abandons a cpu launch
// stuck in a kernel (the launch fails, the session goes on); with no launch running it ends
// the process, as lua.c's laction does (a stuck compile, a blocking call).
void on_sigint(int) {
  if (interrupt_flag().load(std::memory_order_relaxed)) {
    if (abandon_running_kernels()) return;
    struct sigaction fallback {};
    fallback.sa_handler = SIG_DFL;
    sigaction(SIGINT, &fallback, nullptr);
    raise(SIGINT);
    return;
  }
  interrupt_flag().store(true, std::memory_order_relaxed);
  if (lua_State* L = running_state.load(std::memory_order_relaxed)) {
    lua_sethook(L, stop_hook, LUA_MASKCALL | LUA_MASKRET | LUA_MASKLINE | LUA_MASKCOUNT, 1);
  }
}

// Installs on_sigint for the lifetime of a docall and restores what was there before.
class InterruptScope {
 public:
  explicit InterruptScope(lua_State* L) : previous_state_(running_state.exchange(L)) {
    interrupt_flag().store(false, std::memory_order_relaxed);
    struct sigaction action {};
    action.sa_handler = on_sigint;
    // on_sigint decides what the second Ctrl-C does; SA_NODEFER: it may leave by a jump out of
    // a kernel (abandon_running_kernels), after which SIGINT must not stay blocked.
    action.sa_flags = SA_NODEFER;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, &previous_action_);
  }
  ~InterruptScope() {
    sigaction(SIGINT, &previous_action_, nullptr);
    running_state.store(previous_state_);
    interrupt_flag().store(false, std::memory_order_relaxed);
  }
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;

 private:
  lua_State* previous_state_;
  struct sigaction previous_action_ {};
};

// Pushes arg[1..n] (the script arguments) and returns n. [-0, +n]
int push_script_args(lua_State* L) {
  if (lua_getglobal(L, "arg") != LUA_TTABLE) {
    lua_pop(L, 1);
    return 0;
  }
  int n = static_cast<int>(luaL_len(L, -1));
  luaL_checkstack(L, n + 3, "too many arguments to script");
  for (int i = 1; i <= n; i++) lua_rawgeti(L, -i, i);
  lua_remove(L, -n - 1);
  return n;
}

// os.mkdtemp([prefix]) -> the path of a new folder only this user can enter, under the system's
// temporary folder ($TMPDIR, else /tmp), named prefix-XXXXXX (prefix "kiln"). It is not removed:
// the labs write their pictures there and say where. [-0, +1]
int os_mkdtemp(lua_State* L) {
  const char* prefix = luaL_optstring(L, 1, "kiln");
  luaL_argcheck(L, *prefix && std::strchr(prefix, '/') == nullptr, 1, "a name prefix, not a path");
  return protect(L, [&] {
    std::error_code ec;
    std::filesystem::path tmp = std::filesystem::temp_directory_path(ec);
    std::string pattern =
        (ec ? std::filesystem::path("/tmp") : tmp) / (std::string(prefix) + "-XXXXXX");
    if (!::mkdtemp(pattern.data()))
      throw Error("os.mkdtemp: cannot create " + pattern + ": " + std::strerror(errno));
    lua_pushstring(L, pattern.c_str());
    return 1;
  });
}

}  // namespace

constexpr const char* kSettingsKey = "kiln.settings";   // the registry's Settings object
constexpr const char* kSettingsType = "kiln.Settings";  // its metatable

void open_kiln(lua_State* L) {
  luaL_openlibs(L);
  lua_getglobal(L, "os");  // kiln's one addition to the standard library
  lua_pushcfunction(L, os_mkdtemp), lua_setfield(L, -2, "mkdtemp");
  lua_pop(L, 1);
  luaL_requiref(L, "kiln.array", open_array, 0);
  lua_setglobal(L, "array");
  luaL_requiref(L, "kiln.cuda", open_cuda, 0);
  lua_setglobal(L, "cuda");
  preload_mpi(L);
}

State new_state(const Settings& settings) {
  State L(luaL_newstate());
  if (!L) throw std::bad_alloc();
  luaL_newmetatable(L.get(), kSettingsType);  // [-0, +1]
  lua_pushcfunction(L.get(), destroy_object<Settings>), lua_setfield(L.get(), -2, "__gc");
  lua_pop(L.get(), 1);
  new_object<Settings>(L.get(), kSettingsType, settings);
  lua_setfield(L.get(), LUA_REGISTRYINDEX, kSettingsKey);
  open_kiln(L.get());
  return L;
}

const Settings& settings(lua_State* L) {
  lua_getfield(L, LUA_REGISTRYINDEX, kSettingsKey);
  auto* s = static_cast<Settings*>(luaL_testudata(L, -1, kSettingsType));
  lua_pop(L, 1);
  if (!s) luaL_error(L, "kiln: this Lua state has no settings (not made by new_state)");
  return *s;
}

int docall(lua_State* L, int narg, int nres) {
  int base = lua_gettop(L) - narg;
  lua_pushcfunction(L, msghandler);
  lua_insert(L, base);
  int status;
  {
    InterruptScope scope(L);
    status = lua_pcall(L, narg, nres, base);
    lua_sethook(L, nullptr, 0, 0);  // a Ctrl-C that came after the last instruction
  }
  lua_remove(L, base);
  return status;
}

void report(lua_State* L, const char* progname) {
  const char* msg = lua_tostring(L, -1);
  std::fprintf(stderr, "%s: %s\n", progname, msg ? msg : "(error object is not a string)");
  std::fflush(stderr);
  lua_pop(L, 1);
}

void create_arg_table(lua_State* L, int argc, char** argv, int script) {
  if (script <= 0 || script >= argc) script = 0;
  lua_createtable(L, argc - script - 1 > 0 ? argc - script - 1 : 0, script + 1);
  for (int i = 0; i < argc; i++) {
    lua_pushstring(L, argv[i]);
    lua_rawseti(L, -2, i - script);
  }
  lua_setglobal(L, "arg");
}

int do_string(lua_State* L, const std::string& code, const char* chunkname) {
  int status = luaL_loadbuffer(L, code.data(), code.size(), chunkname);
  if (status == LUA_OK) status = docall(L, 0, 0);
  if (status != LUA_OK) report(L, "kiln");
  return status;
}

int do_script(lua_State* L, const char* path) {
  if (path != nullptr && std::strcmp(path, "-") == 0) path = nullptr;
  int status = luaL_loadfile(L, path);
  if (status == LUA_OK) {
    int n = push_script_args(L);
    status = docall(L, n, LUA_MULTRET);
  }
  if (status != LUA_OK) report(L, "kiln");
  lua_settop(L, 0);
  return status;
}

int do_library(lua_State* L, const char* name) {
  lua_getglobal(L, "require");
  lua_pushstring(L, name);
  int status = docall(L, 1, 1);
  if (status == LUA_OK) {
    lua_setglobal(L, name);
  } else {
    report(L, "kiln");
  }
  return status;
}

bool push_cuda_function(lua_State* L, const char* name) {
  if (lua_getglobal(L, "cuda") != LUA_TTABLE) {
    lua_pop(L, 1);
    return false;
  }
  lua_pushstring(L, name);
  lua_rawget(L, -2);  // raw: this runs outside any protected call
  lua_remove(L, -2);
  if (lua_type(L, -1) == LUA_TFUNCTION) return true;
  lua_pop(L, 1);
  return false;
}

}  // namespace kiln::lua
