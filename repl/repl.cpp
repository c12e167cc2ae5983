#include "repl/repl.h"

#include <histedit.h>

#include <filesystem>
#include <signal.h>
#include <spawn.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>
#include <string_view>

#include "repl/pretty.h"
#include "runtime/interrupt.h"

extern char** environ;

namespace kiln::repl {
namespace {

constexpr const char* kPrompt = "kiln> ";
constexpr const char* kContinuation = "  ... ";
constexpr const char* kChunkName = "=stdin";

constexpr std::array<const char*, 22> kKeywords = {
    "and",      "break",  "do",   "else", "elseif", "end",  "false", "for",
    "function", "goto",   "if",   "in",   "local",  "nil",  "not",   "or",
    "repeat",   "return", "then", "true", "until",  "while"};

constexpr std::array<const char*, 8> kMetaCommands = {":help", ":quit",  ":exit", ":load",
                                                      ":time", ":reset", ":edit", ":q"};

constexpr const char* kHelp =
    "Type Lua statements or expressions; expressions print their values.\n"
    "Incomplete input continues on the next line; Tab completes names, fields and methods;\n"
    "Ctrl-C interrupts a running chunk (or clears the line); Ctrl-D exits.\n"
    "\n"
    "  :help            this help\n"
    "  :quit            leave kiln (also :q, :exit, Ctrl-D)\n"
    "  :load FILE       run a Lua file in this session\n"
    "  :time EXPR       time EXPR (or a statement) over repeated runs, synchronising the device\n"
    "  :reset           start over with a fresh Lua state (history is kept)\n"
    "  :edit NAME|FILE  open FILE (or the lab kernel NAME) in $EDITOR; a .lua file is run\n"
    "                   again after editing, kernels recompile on their next launch\n";

// One line read from the user, or why there is none.
struct Input {
  enum class Kind { line, eof, interrupted };
  Kind kind;
  std::string text;
};

// Where lines come from.
class LineReader {
 public:
  virtual ~LineReader() = default;
  // Shows prompt and reads one line without its newline.
  virtual Input read(const char* prompt) = 0;
  // Adds a line to the history.
  virtual void remember(const std::string&) {}
};

// Prompts on stdout and reads stdin line by line: the REPL over a pipe.
class PlainReader : public LineReader {
 public:
  Input read(const char* prompt) override {
    interrupt_flag().store(false, std::memory_order_relaxed);
    std::fputs(prompt, stdout);
    std::fflush(stdout);
    char* buffer = nullptr;
    size_t capacity = 0;
    ssize_t n = getline(&buffer, &capacity, stdin);
    std::unique_ptr<char, decltype(&std::free)> owner(buffer, &std::free);
    if (interrupt_flag().exchange(false, std::memory_order_relaxed)) {
      clearerr(stdin);
      std::fputs("\n", stdout);
      return {Input::Kind::interrupted, {}};
    }
    if (n < 0) return {Input::Kind::eof, {}};
    std::string line(buffer, static_cast<size_t>(n));
    if (!line.empty() && line.back() == '\n') line.pop_back();
    return {Input::Kind::line, std::move(line)};
  }
};

using lua::SignalScope;

// SIGINT in the REPL outside a chunk: only raises the flag; el_gets returns with EINTR.
void on_prompt_sigint(int) {
  interrupt_flag().store(true, std::memory_order_relaxed);
}

// The terminal's width in columns (80 when unknown).
int terminal_columns() {
  winsize size{};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return 80;
}

// The part of a candidate after its last '.' or ':', as listings show it.
std::string last_component(const std::string& name) {
  size_t sep = name.find_last_of(".:");
  return sep == std::string::npos ? name : name.substr(sep + 1);
}

// Prints names in columns, as shells list completions.
void list_candidates(const std::vector<std::string>& candidates) {
  constexpr size_t kMaxShown = 300;
  size_t width = 0;
  for (const auto& name : candidates) width = std::max(width, last_component(name).size());
  width += 2;
  size_t columns = std::max<size_t>(1, static_cast<size_t>(terminal_columns()) / width);
  std::string text = "\n";
  size_t shown = std::min(candidates.size(), kMaxShown);
  for (size_t i = 0; i < shown; ++i) {
    std::string name = last_component(candidates[i]);
    bool end_of_row = (i + 1) % columns == 0 || i + 1 == shown;
    text += name;
    text += end_of_row ? std::string("\n") : std::string(width - name.size(), ' ');
  }
  if (shown < candidates.size()) {
    text += '(';
    text += std::to_string(candidates.size() - shown) + " more)\n";
  }
  std::fputs(text.c_str(), stdout);
  std::fflush(stdout);
}

// The longest common prefix of the candidates.
std::string common_prefix(const std::vector<std::string>& candidates) {
  if (candidates.empty()) return {};
  std::string prefix = candidates.front();
  for (const auto& name : candidates) {
    size_t n = 0;
    while (n < prefix.size() && n < name.size() && prefix[n] == name[n]) ++n;
    prefix.resize(n);
  }
  return prefix;
}

struct EditLineDeleter {
  void operator()(EditLine* el) const { el_end(el); }
};
struct HistoryDeleter {
  void operator()(History* h) const { history_end(h); }
};

// libedit line editing with persistent history and Tab completion.
class EditLineReader : public LineReader {
 public:
  using Completer = std::function<Completion(const std::string&)>;

  EditLineReader(Completer completer, std::string history_file)
      : completer_(std::move(completer)), history_path_(std::move(history_file)) {
    history_.reset(history_init());
    editline_.reset(el_init("kiln", stdin, stdout, stderr));
    if (!history_ || !editline_) throw std::bad_alloc();
    HistEvent event;
    history(history_.get(), &event, H_SETSIZE, 1000);
    history(history_.get(), &event, H_SETUNIQUE, 1);
    if (!history_path_.empty()) history(history_.get(), &event, H_LOAD, history_path_.c_str());
    EditLine* el = editline_.get();
    el_set(el, EL_EDITOR, "emacs");
    el_set(el, EL_HIST, history, history_.get());
    el_set(el, EL_CLIENTDATA, this);
    el_set(el, EL_PROMPT, &EditLineReader::prompt_of);
    // el_wset, not el_set: the narrow form copies the two strings and never frees them.
    el_wset(el, EL_ADDFN, L"kiln-complete", L"complete the name before the cursor",
            &EditLineReader::complete_key);
    el_set(el, EL_BIND, "^I", "kiln-complete", nullptr);
    el_source(el, nullptr);  // the user's ~/.editrc, as readline-based programs honour theirs
  }

  Input read(const char* prompt) override {
    prompt_ = prompt;
    el_resize(editline_.get());  // kiln does not let libedit own SIGWINCH; catch up here
    interrupt_flag().store(false, std::memory_order_relaxed);
    int count = 0;
    const char* line = el_gets(editline_.get(), &count);
    if (interrupt_flag().exchange(false, std::memory_order_relaxed)) {
      el_reset(editline_.get());
      std::fputs("^C\n", stdout);
      std::fflush(stdout);
      return {Input::Kind::interrupted, {}};
    }
    if (line == nullptr || count <= 0) return {Input::Kind::eof, {}};
    std::string text(line, static_cast<size_t>(count));
    if (!text.empty() && text.back() == '\n') text.pop_back();
    return {Input::Kind::line, std::move(text)};
  }

  // Enters the line into the history and saves the file at once (a killed session keeps it);
  // a file that cannot be written is silently skipped.
  void remember(const std::string& line) override {
    HistEvent event;
    history(history_.get(), &event, H_ENTER, line.c_str());
    if (!history_path_.empty()) history(history_.get(), &event, H_SAVE, history_path_.c_str());
  }

 private:
  static EditLineReader* self(EditLine* el) {
    void* data = nullptr;
    el_get(el, EL_CLIENTDATA, &data);
    return static_cast<EditLineReader*>(data);
  }

  static char* prompt_of(EditLine* el) { return const_cast<char*>(self(el)->prompt_); }

  // Tab: indents at the start of a line, completes the unique or common part of the word, and
  // lists the candidates when there is nothing more to complete.
  static unsigned char complete_key(EditLine* el, int) {
    const LineInfo* info = el_line(el);
    std::string before(info->buffer, info->cursor);
    if (before.find_first_not_of(" \t") == std::string::npos) {
      el_insertstr(el, "  ");
      return CC_REFRESH;
    }
    Completion completion = self(el)->completer_(before);
    if (completion.candidates.empty()) return CC_REFRESH_BEEP;
    std::string word = before.substr(completion.start);
    std::string prefix = common_prefix(completion.candidates);
    if (prefix.size() > word.size() && prefix.starts_with(word)) {
      el_insertstr(el, prefix.substr(word.size()).c_str());
      return CC_REFRESH;
    }
    if (completion.candidates.size() == 1) return CC_REFRESH;
    list_candidates(completion.candidates);
    return CC_REDISPLAY;
  }

  Completer completer_;
  std::string history_path_;
  std::unique_ptr<History, HistoryDeleter> history_;
  std::unique_ptr<EditLine, EditLineDeleter> editline_;
  const char* prompt_ = kPrompt;
};

// True when line has nothing but blanks.
bool blank(const std::string& line) {
  return line.find_first_not_of(" \t\r") == std::string::npos;
}

// Removes surrounding blanks and one pair of surrounding quotes.
std::string trim(std::string s) {
  size_t first = s.find_first_not_of(" \t\r");
  if (first == std::string::npos) return {};
  s = s.substr(first, s.find_last_not_of(" \t\r") - first + 1);
  if (s.size() >= 2 && (s.front() == '"' || s.front() == '\'') && s.back() == s.front()) {
    s = s.substr(1, s.size() - 2);
  }
  return s;
}

// Adds the string keys of the table at idx that are identifiers to names (only those holding
// functions when functions_only). Raw access only. [-0, +0]
void add_keys(lua_State* L, int idx, bool functions_only, std::vector<std::string>& names) {
  idx = lua_absindex(L, idx);
  lua_pushnil(L);
  while (lua_next(L, idx) != 0) {
    bool wanted = !functions_only || lua_type(L, -1) == LUA_TFUNCTION;
    lua_pop(L, 1);
    if (wanted && lua_type(L, -1) == LUA_TSTRING) {
      std::string name = lua_tostring(L, -1);
      if (lua::is_identifier(name)) names.push_back(std::move(name));
    }
  }
}

// The names reachable with '.' or ':' from the value at idx: a table's own keys, then through
// each metatable its __methods table and its __index table (following __index chains).
// [-0, +0]
std::vector<std::string> member_names(lua_State* L, int idx, bool methods) {
  std::vector<std::string> names;
  idx = lua_absindex(L, idx);
  if (lua_istable(L, idx)) add_keys(L, idx, methods, names);
  lua_pushvalue(L, idx);
  for (int depth = 0; depth < 8 && lua_getmetatable(L, -1); ++depth) {
    lua_pushliteral(L, "__methods");
    lua_rawget(L, -2);
    if (lua_istable(L, -1)) add_keys(L, -1, false, names);
    lua_pop(L, 1);
    lua_pushliteral(L, "__index");
    lua_rawget(L, -2);
    lua_remove(L, -2);
    lua_remove(L, -2);
    if (!lua_istable(L, -1)) break;
    add_keys(L, -1, methods, names);
  }
  lua_pop(L, 1);
  return names;
}

// Whether c can be part of a completed word (a name path like cuda.to_device or a:sum).
bool word_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == ':';
}

// Pushes the member name of the value on top, raw, through the metatables' __methods and
// __index tables (following __index chains) when the value itself has none, and removes the
// value; pushes nil when there is none. [-1, +1]
void member(lua_State* L, const std::string& name) {
  if (lua_istable(L, -1)) {
    lua_pushstring(L, name.c_str());
    if (lua_rawget(L, -2) != LUA_TNIL) {
      lua_remove(L, -2);
      return;
    }
    lua_pop(L, 1);
  }
  for (int depth = 0; depth < 8 && lua_getmetatable(L, -1); ++depth) {
    lua_remove(L, -2);  // [mt]
    for (const char* table : {"__methods", "__index"}) {
      lua_getfield(L, -1, table);  // raw enough: metatables made by kiln have no __index
      if (lua_istable(L, -1)) {
        lua_pushstring(L, name.c_str());
        if (lua_rawget(L, -2) != LUA_TNIL) {
          lua_replace(L, -3);
          lua_pop(L, 1);
          return;
        }
        lua_pop(L, 1);
      }
      if (std::string_view(table) == "__index" && lua_istable(L, -1)) {
        lua_remove(L, -2);  // follow the chain: [__index]
        break;
      }
      lua_pop(L, 1);
    }
    if (!lua_istable(L, -1)) break;
  }
  lua_pop(L, 1);
  lua_pushnil(L);
}

// Candidates for "path.prefix" / "path:prefix": resolves path from the globals by raw table
// lookups (nothing runs) and lists the members of what it finds.
std::vector<std::string> member_candidates(lua_State* L, const std::string& word, size_t sep) {
  std::vector<std::string> out;
  std::string path = word.substr(0, sep);
  if (path.find(':') != std::string::npos || !lua_checkstack(L, 8)) return out;
  if (!push_path(L, path)) return out;
  for (std::string& name : member_names(L, -1, word[sep] == ':')) {
    out.push_back(word.substr(0, sep + 1) + name);
  }
  lua_pop(L, 1);
  return out;
}

// Runs `batch` (the timing loop) over fn n times and returns the seconds it took, or a
// negative number after reporting an error (Ctrl-C included). [-0, +0]
double run_batch(lua_State* L, int batch, int fn, int sync, long long n) {
  lua_pushvalue(L, batch);
  lua_pushvalue(L, fn);
  lua_pushvalue(L, sync);
  lua_pushinteger(L, n);
  auto start = std::chrono::steady_clock::now();
  int status = lua::docall(L, 3, 0);
  std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  if (status != LUA_OK) {
    lua::report(L, "kiln");
    return -1;
  }
  return elapsed.count();
}

// A fresh Lua error message for a failed editor or file operation. [-0, +0]
void print_error(const std::string& message) {
  std::fprintf(stderr, "kiln: %s\n", message.c_str());
  std::fflush(stderr);
}

// Splits s on blanks into words.
std::vector<std::string> split_words(const std::string& s) {
  std::vector<std::string> words;
  std::istringstream in(s);
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

// Starts argv[0] (searched in PATH) with argv and waits for it; returns its exit status, or
// -1 with errno set when it could not start. Ctrl-C belongs to the child meanwhile.
int spawn_and_wait(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const auto& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGQUIT);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
  SignalScope ignore_int(SIGINT, SIG_IGN);
  SignalScope ignore_quit(SIGQUIT, SIG_IGN);
  pid_t pid;
  int error = posix_spawnp(&pid, argv[0], nullptr, &attr, argv.data(), environ);
  posix_spawnattr_destroy(&attr);
  if (error != 0) {
    errno = error;
    return -1;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// The REPL over one reader; owns nothing but the reader, works on the caller's state.
class Repl {
 public:
  Repl(lua::State& state, const StateFactory& fresh_state, bool editing)
      : state_(state), fresh_state_(fresh_state) {
    if (editing) {
      reader_ = std::make_unique<EditLineReader>(
          [this](const std::string& line) { return complete(L(), line); },
          lua::settings(L()).history_file);
    } else {
      reader_ = std::make_unique<PlainReader>();
    }
  }

  // Reads, evaluates and prints until end of input or :quit. Ctrl-C only raises the flag for
  // the whole session (docall replaces the handler while a chunk runs), so one that lands
  // between reading and running cannot end the REPL.
  int run() {
    SignalScope sigint(SIGINT, on_prompt_sigint);
    for (;;) {
      lua_settop(L(), 0);
      Input input = reader_->read(kPrompt);
      if (input.kind == Input::Kind::eof) {
        std::fputs("\n", stdout);
        return 0;
      }
      if (input.kind == Input::Kind::interrupted || blank(input.text)) continue;
      reader_->remember(input.text);
      if (input.text.size() > 1 && input.text[0] == ':' &&
          std::isalpha(static_cast<unsigned char>(input.text[1]))) {
        if (!meta(input.text)) return 0;
        continue;
      }
      if (load_chunk(input.text)) execute();
    }
  }

 private:
  lua_State* L() { return state_.get(); }

  // Compiles a first line (as "return LINE" when that is an expression, as lua.c does) and
  // the continuation lines an unfinished chunk needs. Pushes the function and returns true, or
  // reports the error (nothing pushed) and returns false.
  bool load_chunk(const std::string& first) {
    std::string buffer = first;
    for (int status = load_line(L(), first, kChunkName);;
         status = luaL_loadbuffer(L(), buffer.data(), buffer.size(), kChunkName)) {
      if (status == LUA_OK) return true;
      if (!incomplete(L(), status)) {
        lua::report(L(), "kiln");
        return false;
      }
      Input more = reader_->read(kContinuation);
      if (more.kind == Input::Kind::interrupted) {
        lua_pop(L(), 1);
        return false;
      }
      if (more.kind == Input::Kind::eof) {
        lua::report(L(), "kiln");
        return false;
      }
      lua_pop(L(), 1);
      reader_->remember(more.text);
      buffer += "\n" + more.text;
    }
  }

  // Runs the function on top of the stack and prints what it returns.
  void execute() {
    if (lua::docall(L(), 0, LUA_MULTRET) != LUA_OK) {
      lua::report(L(), "kiln");
      return;
    }
    print_results();
  }

  // Prints the values on the stack tab-separated (as lua.c's print of the results) and clears it.
  void print_results() {
    int n = lua_gettop(L());
    if (n == 0) return;
    std::string text;
    for (int i = 1; i <= n; ++i) {
      if (i > 1) text += '\t';
      text += lua::pretty(L(), i);
    }
    text += '\n';
    std::fputs(text.c_str(), stdout);
    std::fflush(stdout);
    lua_settop(L(), 0);
  }

  // Runs a meta command; returns false for :quit.
  bool meta(const std::string& line) {
    size_t space = line.find_first_of(" \t");
    std::string command = line.substr(0, space);
    std::string rest = space == std::string::npos ? "" : trim(line.substr(space));
    if (command == ":quit" || command == ":q" || command == ":exit") return false;
    if (command == ":help") {
      std::fputs(kHelp, stdout);
    } else if (command == ":reset" && !rest.empty()) {
      print_error(":reset takes no argument (it would wipe the session): did you mean :reset?");
    } else if (command == ":reset") {
      state_ = fresh_state_();
      std::fputs("fresh Lua state\n", stdout);
    } else if (command == ":load" && !rest.empty()) {
      load(rest);
    } else if (command == ":time" && !rest.empty()) {
      time_code(L(), rest);
    } else if (command == ":edit" && !rest.empty()) {
      edit(rest);
    } else if (command == ":load" || command == ":time" || command == ":edit") {
      print_error(command + " needs an argument (see :help)");
    } else {
      print_error("unknown command " + command + " (see :help)");
    }
    std::fflush(stdout);
    return true;
  }

  // :load FILE: runs the file in this state and prints what it returns.
  void load(const std::string& path) {
    if (luaL_loadfile(L(), path.c_str()) != LUA_OK) {
      lua::report(L(), "kiln");
      return;
    }
    execute();
  }

  // The file :edit opens for target: an existing file, a copy in the current folder of a lab
  // kernel cuda.kernel_path knows (kiln's own file stays as shipped; cuda.jit_file finds the
  // copy first), or a new file when target looks like a path. Empty (after reporting) when none.
  std::string edit_path(const std::string& target) {
    struct stat info;
    if (stat(target.c_str(), &info) == 0) return target;
    std::string why = "no file or kernel named " + target;
    if (lua::push_cuda_function(L(), "kernel_path")) {
      lua_pushstring(L(), target.c_str());
      if (lua::docall(L(), 1, 1) == LUA_OK && lua_type(L(), -1) == LUA_TSTRING) {
        const std::filesystem::path shipped = lua_tostring(L(), -1);
        lua_pop(L(), 1);
        const std::filesystem::path copy = shipped.filename();
        std::error_code ec;
        if (std::filesystem::exists(copy, ec)) return copy.string();
        if (!std::filesystem::copy_file(shipped, copy, ec)) {
          print_error(":edit: cannot copy " + shipped.string() + " here: " + ec.message());
          return {};
        }
        std::printf("copied kiln's %s to ./%s: you edit the copy, which cuda.jit_file(\"%s\") "
                    "finds first\n",
                    shipped.string().c_str(), copy.c_str(), copy.c_str());
        return copy.string();
      }
      if (lua_type(L(), -1) == LUA_TSTRING) why = lua_tostring(L(), -1);
      lua_pop(L(), 1);
    }
    if (target.find_first_of("./") != std::string::npos) return target;  // a file to create
    print_error(":edit: " + why);
    return {};
  }

  // :edit NAME|FILE: runs $EDITOR (else $VISUAL, else vi) on the file, without a shell. A Lua
  // file runs again afterwards; kernels from cuda.jit_file notice the change themselves.
  void edit(const std::string& target) {
    std::string path = edit_path(target);
    if (path.empty()) return;
    std::vector<std::string> args = split_words(lua::settings(state_.get()).editor);
    if (args.empty()) args.push_back("vi");
    args.push_back(path);
    int status = spawn_and_wait(args);
    if (status < 0) {
      print_error(":edit: cannot start " + args.front() + ": " + std::strerror(errno));
      return;
    }
    if (status != 0) {
      print_error(":edit: " + args.front() + " exited with status " + std::to_string(status));
      return;
    }
    if (path.ends_with(".lua")) {
      std::printf("edited %s; running it again\n", path.c_str());
      std::fflush(stdout);
      load(path);
    } else {
      std::printf("edited %s; kernels from it recompile on their next launch\n", path.c_str());
    }
  }

  lua::State& state_;
  const StateFactory& fresh_state_;
  std::unique_ptr<LineReader> reader_;
};

}  // namespace

std::string word_at(const std::string& code, size_t pos) {
  size_t start = std::min(pos, code.size()), end = start;
  while (start > 0 && word_char(code[start - 1])) --start;
  while (end < code.size() && word_char(code[end])) ++end;
  return code.substr(start, end - start);
}

bool push_path(lua_State* L, const std::string& path) {
  if (path.empty() || !lua_checkstack(L, 8)) return false;
  lua_pushglobaltable(L);
  size_t begin = 0;
  while (begin <= path.size()) {
    size_t sep = path.find_first_of(".:", begin);
    std::string name = path.substr(begin, sep == std::string::npos ? sep : sep - begin);
    if (!lua::is_identifier(name) ||
        (begin > 0 && path[begin - 1] == ':' && sep != std::string::npos)) {
      lua_pop(L, 1);
      return false;
    }
    member(L, name);
    if (lua_isnil(L, -1)) {
      lua_pop(L, 1);
      return false;
    }
    if (sep == std::string::npos) return true;
    begin = sep + 1;
  }
  lua_pop(L, 1);
  return false;
}

int load_line(lua_State* L, const std::string& code, const char* chunkname) {
  std::string with_return = "return " + code;
  if (luaL_loadbuffer(L, with_return.data(), with_return.size(), chunkname) == LUA_OK)
    return LUA_OK;
  lua_pop(L, 1);
  return luaL_loadbuffer(L, code.data(), code.size(), chunkname);
}

bool incomplete(lua_State* L, int status) {
  if (status != LUA_ERRSYNTAX) return false;
  size_t len;
  const char* msg = lua_tolstring(L, -1, &len);
  constexpr std::string_view eof = "<eof>";
  return msg && len >= eof.size() && std::string_view(msg + len - eof.size()) == eof;
}

Completion complete(lua_State* L, const std::string& line) {
  Completion completion;
  std::vector<std::string>& out = completion.candidates;
  if (!line.empty() && line[0] == ':' && line.find(' ') == std::string::npos) {
    for (const char* command : kMetaCommands) {
      if (std::string_view(command).starts_with(line)) out.emplace_back(command);
    }
    std::sort(out.begin(), out.end());
    return completion;
  }
  size_t start = line.size();
  while (start > 0 && word_char(line[start - 1])) --start;
  completion.start = start;
  std::string word = line.substr(start);
  if (!word.empty() && std::isdigit(static_cast<unsigned char>(word[0]))) return completion;
  size_t sep = word.find_last_of(".:");
  std::string prefix = sep == std::string::npos ? word : word.substr(sep + 1);
  std::vector<std::string> names;
  if (sep == std::string::npos) {
    names.assign(kKeywords.begin(), kKeywords.end());
    lua_pushglobaltable(L);
    for (std::string& name : member_names(L, -1, false)) names.push_back(std::move(name));
    lua_pop(L, 1);
  } else {
    names = member_candidates(L, word, sep);
    prefix = word;
  }
  bool show_private = last_component(prefix).starts_with("_");
  for (std::string& name : names) {
    if (!name.starts_with(prefix)) continue;
    if (!show_private && last_component(name).starts_with("__")) continue;
    out.push_back(std::move(name));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return completion;
}

void time_code(lua_State* L, const std::string& code) {
  if (load_line(L, code, "=(time)") != LUA_OK) {
    lua::report(L, "kiln");
    return;
  }
  int fn = lua_gettop(L);
  constexpr std::string_view kBatch =
      "local f, sync, n = ...\nfor _ = 1, n do f() end\nif sync then sync() end";
  luaL_loadbuffer(L, kBatch.data(), kBatch.size(), "=(time)");
  int batch = lua_gettop(L);
  if (!lua::push_cuda_function(L, "synchronize")) lua_pushnil(L);
  int sync = lua_gettop(L);

  // One untimed run first: a kernel's first launch compiles it (or loads it from the cache),
  // which is not what :time measures. When that took long, say so.
  const double first = run_batch(L, batch, fn, sync, 1);
  if (first < 0) return;
  if (first >= 0.2)
    std::printf("first run %s, not timed (a first launch compiles or loads its kernel)\n",
                format_duration(first).c_str());

  // Loop counts 1, 2, 5, 10, 20, 50, ... as IPython's autorange.
  long long loops = 1;
  double seconds = 0;
  for (int step = 1;; ++step) {
    seconds = run_batch(L, batch, fn, sync, loops);
    if (seconds < 0) return;
    if (seconds >= 0.2) break;
    long long decade = 1;
    for (int i = 0; i < step / 3; ++i) decade *= 10;
    loops = std::array<long long, 3>{1, 2, 5}[step % 3] * decade;
  }
  int runs = std::clamp(static_cast<int>(2.0 / seconds), 1, 7);
  std::vector<double> per_loop;
  for (int run = 0; run < runs; ++run) {
    seconds = run_batch(L, batch, fn, sync, loops);
    if (seconds < 0) return;
    per_loop.push_back(seconds / static_cast<double>(loops));
  }
  std::sort(per_loop.begin(), per_loop.end());
  double median = per_loop.size() % 2
                      ? per_loop[per_loop.size() / 2]
                      : (per_loop[per_loop.size() / 2 - 1] + per_loop[per_loop.size() / 2]) / 2;
  std::printf("min %s, median %s, max %s per loop (%d run%s, %lld loop%s each)\n",
              format_duration(per_loop.front()).c_str(), format_duration(median).c_str(),
              format_duration(per_loop.back()).c_str(), runs, runs == 1 ? "" : "s", loops,
              loops == 1 ? "" : "s");
  lua_settop(L, 0);
}

std::string format_duration(double seconds) {
  constexpr std::array<std::pair<double, const char*>, 4> kUnits = {
      {{1.0, "s"}, {1e-3, "ms"}, {1e-6, "\xc2\xb5s"}, {1e-9, "ns"}}};
  for (const auto& [scale, unit] : kUnits) {
    if (seconds >= scale * 0.9995 || scale == 1e-9) {  // 999.7 ms prints as 1 s
      char buffer[32];
      std::snprintf(buffer, sizeof buffer, "%.3g %s", seconds / scale, unit);
      return buffer;
    }
  }
  return "?";
}

int run(lua::State& state, const StateFactory& fresh_state, bool editing) {
  Repl repl(state, fresh_state, editing);
  return repl.run();
}

}  // namespace kiln::repl
