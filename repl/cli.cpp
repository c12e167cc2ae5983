#include "repl/cli.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string_view>
#include <vector>

#include "jit/backends.h"
#include "repl/jupyter.h"
#include "repl/lua_host.h"
#include "repl/lua_mpi.h"
#include "repl/pretty.h"
#include "repl/repl.h"
#include "repl/settings.h"
#include "runtime/process.h"
#include "runtime/error.h"

namespace kiln::cli {
namespace {

// The value of an option that takes one: the rest of this argument ("-eCODE",
// "--backend=cpu") or the next argument. Returns nullptr when there is none.
const char* option_value(int argc, const char* const* argv, int& i, std::string_view name) {
  std::string_view arg = argv[i];
  if (arg.size() > name.size()) {
    arg.remove_prefix(name.size());
    if (arg.front() == '=' && name.starts_with("--")) arg.remove_prefix(1);
    return arg.data();
  }
  if (i + 1 >= argc) return nullptr;
  return argv[++i];
}

// The text of a field's value: strings bare, anything else as the REPL prints it. [-0, +0]
std::string field_text(lua_State* L, int idx) {
  if (lua_type(L, idx) == LUA_TSTRING) return lua_tostring(L, idx);
  return lua::pretty(L, idx);
}

// Prints the string keys of the table at idx as "key: value" lines, the keys in order first,
// then the rest sorted. Raw access only, so nothing here can raise a Lua error. [-0, +0]
void print_fields(lua_State* L, int idx, const std::vector<std::string>& order) {
  idx = lua_absindex(L, idx);
  std::vector<std::string> keys;
  lua_pushnil(L);
  while (lua_next(L, idx) != 0) {
    lua_pop(L, 1);
    if (lua_type(L, -1) == LUA_TSTRING && std::string_view(lua_tostring(L, -1)) != "kiln")
      keys.emplace_back(lua_tostring(L, -1));  // kiln's version is --info's first line already
  }
  std::sort(keys.begin(), keys.end());
  std::vector<std::string> ordered;
  for (const std::string& key : order) {
    if (std::find(keys.begin(), keys.end(), key) != keys.end()) ordered.push_back(key);
  }
  for (const std::string& key : keys) {
    if (std::find(order.begin(), order.end(), key) == order.end()) ordered.push_back(key);
  }
  for (const std::string& key : ordered) {
    lua_pushstring(L, key.c_str());
    lua_rawget(L, idx);
    std::printf("%s: %s\n", key.c_str(), field_text(L, -1).c_str());
    lua_pop(L, 1);
  }
}

// --info: kiln's own versions, then cuda.info() or what kiln can tell without it. [-0, +0]
int info(lua_State* L) {
  std::printf("kiln: %s\n", KILN_VERSION);
  std::printf("lua: %s\n", LUA_RELEASE);
  std::printf("built with: %s (%s)\n", __VERSION__, KILN_CXX_COMPILER);
  if (lua::push_cuda_function(L, "info")) {
    if (lua::docall(L, 0, 1) != LUA_OK) {
      lua::report(L, "kiln");
      return 1;
    }
    bool is_table = lua_istable(L, -1);
    if (is_table) print_fields(L, -1, {"backend", "device", "nvrtc", "host_compiler", "cache_dir"});
    lua_pop(L, 1);
    if (is_table) return 0;
  }
  if (lua::push_cuda_function(L, "backend") && lua::docall(L, 0, 1) == LUA_OK) {
    std::printf("backend: %s\n", field_text(L, -1).c_str());
    lua_pop(L, 1);
  } else {
    std::printf("backend: %s (KILN_BACKEND)\n", lua::settings(L).platform.backend.c_str());
    lua_settop(L, 0);
  }
  const CacheSettings& cache = lua::settings(L).cache;
  std::printf("cache_dir: %s\n", cache.enabled || !cache.dir.empty()
                                     ? cache.dir.c_str()
                                     : "(unknown: HOME is not set)");
  return 0;
}

// --cache-clear and --cache-stats: the cuda module's cache functions. [-0, +0]
int cache(lua_State* L, bool clear, bool stats) {
  if (clear) {
    if (!lua::push_cuda_function(L, "cache_clear")) {
      std::fprintf(stderr, "kiln: the kernel cache is unavailable (no cuda.cache_clear)\n");
      return 1;
    }
    if (lua::docall(L, 0, 1) != LUA_OK) {
      lua::report(L, "kiln");
      return 1;
    }
    if (lua_isinteger(L, -1)) {
      std::printf("cache cleared: %lld entries removed\n", (long long)lua_tointeger(L, -1));
    } else {
      std::printf("cache cleared\n");
    }
    lua_pop(L, 1);
  }
  if (stats) {
    if (!lua::push_cuda_function(L, "cache_stats")) {
      std::fprintf(stderr, "kiln: the kernel cache is unavailable (no cuda.cache_stats)\n");
      return 1;
    }
    if (lua::docall(L, 0, 1) != LUA_OK) {
      lua::report(L, "kiln");
      return 1;
    }
    if (!lua_istable(L, -1)) {
      std::fprintf(stderr, "kiln: cuda.cache_stats() returned a %s, not a table\n",
                   luaL_typename(L, -1));
      lua_pop(L, 1);
      return 1;
    }
    print_fields(L, -1, {"dir", "enabled", "entries", "bytes", "max_bytes"});
    lua_pop(L, 1);
  }
  return 0;
}

// A fresh state with arg set, as the REPL's :reset needs it and the start of run() does.
lua::State prepared_state(int argc, char** argv, const Options& options, const Settings& settings) {
  lua::State state = lua::new_state(settings);
  lua::create_arg_table(state.get(), argc, argv, options.script);
  if (options.warnings) lua_warning(state.get(), "@on", 0);
  return state;
}

// --install-kernel: writes the kernelspec for this very binary and says where. [-0, +0]
int install_kernel(const Options& options, const Settings& settings) {
  std::error_code ec;
  std::filesystem::path program = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) {
    std::fprintf(stderr, "kiln: --install-kernel: cannot find kiln's own path: %s\n",
                 ec.message().c_str());
    return 1;
  }
  std::filesystem::path data_dir =
      options.prefix.empty() ? settings.jupyter_data_dir
                             : std::filesystem::absolute(options.prefix) / "share" / "jupyter";
  try {
    std::filesystem::path dir = jupyter::install_kernelspec(data_dir, program);
    std::printf("installed the Jupyter kernelspec '%s' in %s\n", jupyter::kKernelName, dir.c_str());
    if (!jupyter::available())
      std::fprintf(stderr, "kiln: warning: this kiln was built without the Jupyter kernel\n");
  } catch (const Error& e) {
    std::fprintf(stderr, "kiln: %s\n", e.what());
    return 1;
  }
  return 0;
}

}  // namespace

ParseResult parse(int argc, const char* const* argv) {
  ParseResult result;
  Options& o = result.options;
  bool user = false;  // --user: only checked, it is --install-kernel's default
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg.empty() || arg[0] != '-' || arg == "-") {
      o.script = i;
      break;
    }
    if (arg == "--") {
      if (i + 1 < argc) o.script = i + 1;
      break;
    }
    if (arg.starts_with("-e") || arg.starts_with("-l")) {
      std::string name(arg.substr(0, 2));
      const char* value = option_value(argc, argv, i, name);
      if (value == nullptr) {
        result.error = "'" + name + "' needs an argument";
        return result;
      }
      o.chunks.push_back({arg[1] == 'e' ? Chunk::Kind::code : Chunk::Kind::library, value});
    } else if (arg == "--backend" || arg.starts_with("--backend=")) {
      const char* value = option_value(argc, argv, i, "--backend");
      if (value == nullptr) {
        result.error = "'--backend' needs an argument (auto, cuda or cpu)";
        return result;
      }
      o.backend = value;
      if (o.backend != "auto" && o.backend != "cuda" && o.backend != "cpu") {
        result.error = "unknown backend '" + o.backend + "' (expected auto, cuda or cpu)";
        return result;
      }
    } else if (arg == "--jupyter" || arg.starts_with("--jupyter=")) {
      const char* value = option_value(argc, argv, i, "--jupyter");
      if (value == nullptr) {
        result.error = "'--jupyter' needs the connection file";
        return result;
      }
      o.jupyter = value;
    } else if (arg == "--prefix" || arg.starts_with("--prefix=")) {
      const char* value = option_value(argc, argv, i, "--prefix");
      if (value == nullptr || !*value) {
        result.error = "'--prefix' needs a folder";
        return result;
      }
      o.prefix = value;
    } else if (arg == "--install-kernel") {
      o.install_kernel = true;
    } else if (arg == "--user") {
      user = true;
    } else if (arg == "-i") {
      o.interactive = true;
    } else if (arg == "-v" || arg == "--version") {
      o.version = true;
    } else if (arg == "-h" || arg == "--help") {
      o.help = true;
    } else if (arg == "-W") {
      o.warnings = true;
    } else if (arg == "--info") {
      o.info = true;
    } else if (arg == "--cache-stats") {
      o.cache_stats = true;
    } else if (arg == "--cache-clear") {
      o.cache_clear = true;
    } else if (arg == "--check") {
      o.check = true;
    } else {
      result.error = "unrecognized option '" + std::string(arg) + "'";
      return result;
    }
  }
  if ((user || !o.prefix.empty()) && !o.install_kernel)
    result.error =
        std::string("'") + (user ? "--user" : "--prefix") + "' goes with --install-kernel";
  else if (user && !o.prefix.empty())
    result.error = "'--user' and '--prefix' cannot go together";
  return result;
}

std::string help_text() {
  return "usage: kiln [options] [script [args...]]\n"
         "Runs a Lua script with kiln's cuda and array modules, or the interactive REPL.\n"
         "\n"
         "  script [args...]  run script; arg[0] is its name, arg[1..n] and ... its arguments\n"
         "  -                 run the script read from standard input\n"
         "  -e CODE           run the Lua chunk CODE (repeatable, in order)\n"
         "  -l NAME           require library NAME into global NAME\n"
         "  -i                enter the REPL after the script and chunks\n"
         "  -W                turn Lua warnings on\n"
         "  --backend NAME    kernel backend: auto, cuda or cpu (overrides KILN_BACKEND)\n"
         "  --check           bounds-check kernels on the cpu backend (as KILN_CHECK=1)\n"
         "  --info            print versions, backend, device and cache folder\n"
         "  --cache-stats     print the kernel cache's folder, entries and size\n"
         "  --cache-clear     empty the kernel cache\n"
         "  --jupyter FILE    run as a Jupyter kernel on the connection file FILE\n"
         "  --install-kernel [--user | --prefix DIR]\n"
         "                    write the Jupyter kernelspec 'kiln' into the user's Jupyter data\n"
         "                    folder (JUPYTER_DATA_DIR, else ~/.local/share/jupyter; --user, the\n"
         "                    default) or into DIR/share/jupyter\n"
         "  -v, --version     print kiln's version\n"
         "  -h, --help        print this help\n"
         "  --                stop handling options\n"
         "\n"
         "With no script and no -e, kiln starts the REPL when standard input is a terminal and\n"
         "runs standard input as a script otherwise. In the REPL, :help lists its commands.\n";
}

std::string version_text() {
  return std::string("kiln ") + KILN_VERSION + " (" LUA_RELEASE ")";
}

namespace {
int run_options(int argc, char** argv);
}  // namespace

int run(int argc, char** argv) {
  const int status = run_options(argc, argv);
  lua::end_job_if_failed(status);  // under mpirun: a failed rank ends the job, not just itself
  return status;
}

namespace {

// Parses the command line and does what it says; returns the exit status.
int run_options(int argc, char** argv) {
  ParseResult parsed = parse(argc, argv);
  if (!parsed.error.empty()) {
    std::fprintf(stderr, "kiln: %s\nusage: kiln [options] [script [args...]] (kiln --help)\n",
                 parsed.error.c_str());
    return 1;
  }
  const Options& options = parsed.options;
  if (options.help) {
    std::fputs(help_text().c_str(), stdout);
    return 0;
  }
  // The environment, read once; the command line overrides it.
  Settings settings = Settings::from_environment();
  if (options.check) settings.platform.cpu.check = true;
  if (!options.backend.empty()) settings.platform.backend = options.backend;

  // An explicit cuda backend that cannot run fails now, naming what is missing, rather
  // than at the first kernel (auto falls back to cpu quietly, and opens nothing until used).
  if (settings.platform.backend == "cuda") {
    std::string why;
    if (!jit::cuda_available(settings.platform, &why)) {
      std::fprintf(stderr, "kiln: %s, but the cuda backend cannot run: %s\n",
                   options.backend.empty() ? "KILN_BACKEND=cuda" : "--backend cuda", why.c_str());
      return 1;
    }
  }

  if (options.install_kernel) return install_kernel(options, settings);

  bool show_banner = options.version || options.interactive;
  if (show_banner) std::printf("%s\n", version_text().c_str());
  std::fflush(stdout);
  lua::State state = prepared_state(argc, argv, options, settings);
  lua_State* L = state.get();
  if (options.info || options.cache_stats || options.cache_clear) {
    int status = options.info ? info(L) : 0;
    if (status == 0 && (options.cache_stats || options.cache_clear)) {
      status = cache(L, options.cache_clear, options.cache_stats);
    }
    std::fflush(stdout);
    return status;
  }
  if (!options.jupyter.empty()) return jupyter::run_kernel(options.jupyter, state);
  for (const Chunk& chunk : options.chunks) {
    int status = chunk.kind == Chunk::Kind::code ? lua::do_string(L, chunk.text, "=(command line)")
                                                 : lua::do_library(L, chunk.text.c_str());
    if (status != LUA_OK) return 1;
  }
  if (options.script != 0 && lua::do_script(L, argv[options.script]) != LUA_OK) return 1;
  auto fresh_state = [&] { return prepared_state(argc, argv, options, settings); };
  bool tty = isatty(STDIN_FILENO);
  if (options.interactive) return repl::run(state, fresh_state, tty);
  if (options.script == 0 && options.chunks.empty() && !options.version) {
    if (!tty) return lua::do_script(L, nullptr) == LUA_OK ? 0 : 1;
    std::printf("%s  :help for help, Ctrl-D to exit\n", version_text().c_str());
    return repl::run(state, fresh_state, tty);
  }
  return 0;
}

}  // namespace

}  // namespace kiln::cli
