// The Jupyter kernel: a xeus interpreter over one Lua state. Cells run as REPL lines do
// (repl::load_line, lua::docall); what the process writes to fd 1 and 2 (print, io.write,
// kernel printf, the compile notice) goes to the notebook as it comes; values show as mime
// bundles (text, an HTML table for an array, a PNG for an image array).
#include "repl/jupyter.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <mutex>
#include <sstream>
#include <string_view>
#include <thread>
#include <vector>

#include <xeus/xhelper.hpp>
#include <xeus/xinterpreter.hpp>
#include <xeus/xkernel.hpp>
#include <xeus/xkernel_configuration.hpp>
#include <xeus/xserver_zmq.hpp>

#include "repl/lua_array.h"
#include "repl/lua_util.h"
#include "repl/pretty.h"
#include "repl/repl.h"
#include "runtime/array_format.h"
#include "runtime/image.h"

namespace kiln::jupyter {
namespace nl = nlohmann;
namespace {

constexpr const char* kChunkName = "=cell";

// SIGINT blocked (how = SIG_BLOCK) or let through (SIG_UNBLOCK) in the calling thread for a
// scope. The kernel blocks it before xeus starts its threads, which inherit the mask: Jupyter's
// interrupt then reaches the main thread alone, and only while a cell runs (where docall
// handles it), never a thread waiting in zmq_poll, which would fail with EINTR. Letting it
// through first drops one that came while it was blocked (the stop button on an idle kernel):
// setting SIG_IGN discards a pending signal.
class InterruptMask {
 public:
  explicit InterruptMask(int how) {
    if (how == SIG_UNBLOCK) {
      lua::SignalScope drop(SIGINT, SIG_IGN);  // restored at once: the pending one is gone
    }
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    pthread_sigmask(how, &set, &previous_);
  }
  ~InterruptMask() { pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }
  InterruptMask(const InterruptMask&) = delete;
  InterruptMask& operator=(const InterruptMask&) = delete;

 private:
  sigset_t previous_;
};

// A file descriptor that closes itself.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() { reset(); }
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) reset(std::exchange(other.fd_, -1));
    return *this;
  }
  int get() const { return fd_; }
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_;
};

// The length of text's longest prefix that does not end inside a UTF-8 sequence.
size_t utf8_complete_prefix(const std::string& text) {
  size_t n = text.size();
  for (size_t back = 1; back <= 3 && back <= n; ++back) {
    auto c = static_cast<unsigned char>(text[n - back]);
    if ((c & 0xC0) == 0x80) continue;  // a continuation byte: look further back
    size_t need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    return need > back ? n - back : n;
  }
  return n;
}

// Publishes what the process writes to fd 1 and fd 2 while it lives as the notebook's stdout and
// stderr streams. Both descriptors point into pipes for its lifetime; a reader thread publishes
// what comes, as it comes, under the interpreter's publishing lock (xeus's sockets are not
// thread-safe). The destructor puts the descriptors back and publishes the rest.
class OutputCapture {
 public:
  using Sink = std::function<void(const std::string& name, const std::string& text)>;

  // Makes every pipe before it redirects anything: a failure (no descriptors left) throws
  // with fd 1 and 2 untouched.
  OutputCapture(std::mutex& lock, Sink sink) : lock_(lock), sink_(std::move(sink)) {
    std::array<Fd, 2> write_ends;
    for (size_t i = 0; i < streams_.size(); ++i) {
      streams_[i].read = make_pipe(write_ends[i]);
      ::fcntl(streams_[i].read.get(), F_SETFL, O_NONBLOCK);
    }
    wake_read_ = make_pipe(wake_write_);
    std::fflush(stdout);
    std::fflush(stderr);
    for (size_t i = 0; i < streams_.size(); ++i) {
      Stream& s = streams_[i];
      s.saved.reset(::fcntl(s.target, F_DUPFD_CLOEXEC, 3));
      ::dup2(write_ends[i].get(), s.target);
    }
    thread_ = std::thread([this] { run(); });
  }

  ~OutputCapture() {
    std::fflush(stdout);
    std::fflush(stderr);
    for (Stream& s : streams_) ::dup2(s.saved.get(), s.target);
    // The thread stops on the wake pipe, not at end of file: a child process still holding a
    // pipe's write end must not keep the cell running.
    while (::write(wake_write_.get(), "x", 1) < 0 && errno == EINTR) {
    }
    thread_.join();
  }

  OutputCapture(const OutputCapture&) = delete;
  OutputCapture& operator=(const OutputCapture&) = delete;

  // Publishes what reached the pipes so far; the caller holds the lock. A display calls it
  // first (after flushing stdio), so that text printed before the display shows above it. No
  // fflush here: the reader thread must never wait for stdout's lock, which a writer blocked on
  // a full pipe holds.
  void drain_locked(bool final = false) {
    for (Stream& s : streams_) {
      char buffer[4096];
      ssize_t n;
      while ((n = ::read(s.read.get(), buffer, sizeof buffer)) > 0)
        s.pending.append(buffer, static_cast<size_t>(n));
      if (n == 0) s.open = false;
      size_t ready = final ? s.pending.size() : utf8_complete_prefix(s.pending);
      if (ready == 0) continue;
      sink_(s.name, s.pending.substr(0, ready));
      s.pending.erase(0, ready);
    }
  }

 private:
  struct Stream {
    Stream(int target, const char* name) : target(target), name(name) {}
    int target;        // 1 or 2
    const char* name;  // the Jupyter stream's name
    Fd saved;          // where target pointed before
    Fd read;           // the pipe's read end, non-blocking
    std::string pending;
    bool open = true;
  };

  // A new pipe: returns its read end and puts its write end in write_end (both close-on-exec).
  static Fd make_pipe(Fd& write_end) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0)
      throw Error(std::string("jupyter: cannot make a pipe for the cell's output: ") +
                  std::strerror(errno));
    write_end.reset(fds[1]);
    return Fd(fds[0]);
  }

  // The reader thread: waits for output or the wake byte, publishes, stops when woken.
  void run() {
    for (;;) {
      std::array<pollfd, 3> fds{};
      for (size_t i = 0; i < streams_.size(); ++i)
        fds[i] = {streams_[i].open ? streams_[i].read.get() : -1, POLLIN, 0};
      fds[2] = {wake_read_.get(), POLLIN, 0};
      if (::poll(fds.data(), fds.size(), -1) < 0 && errno != EINTR) return;
      bool stop = fds[2].revents != 0;
      std::lock_guard<std::mutex> guard(lock_);
      drain_locked(stop);
      if (stop) return;
    }
  }

  std::array<Stream, 2> streams_{Stream{1, "stdout"}, Stream{2, "stderr"}};
  Fd wake_read_, wake_write_;
  std::mutex& lock_;
  Sink sink_;
  std::thread thread_;
};

// Loads a cell as the REPL loads a line (repl::load_line), except that a cell of several lines
// whose last line is an expression and whose other lines compile alone loads as those lines
// followed by "return LAST": a cell shows the value of its last line, as notebooks do. Line
// numbers stay those of the cell. [-0, +1]; returns the load status, the error message pushed on
// failure.
int load_cell(lua_State* L, const std::string& code) {
  std::string body = code.substr(0, code.find_last_not_of(" \t\r\n") + 1);
  size_t newline = body.rfind('\n');
  if (newline != std::string::npos) {
    std::string head = body.substr(0, newline), last = body.substr(newline + 1);
    std::string with_return = "return " + last;
    bool split = luaL_loadbuffer(L, head.data(), head.size(), kChunkName) == LUA_OK;
    lua_pop(L, 1);
    split =
        split && luaL_loadbuffer(L, with_return.data(), with_return.size(), kChunkName) == LUA_OK;
    lua_pop(L, 1);
    if (split) {
      std::string cell = head + "\n" + with_return;
      return luaL_loadbuffer(L, cell.data(), cell.size(), kChunkName);
    }
  }
  return repl::load_line(L, code, kChunkName);
}

// The EXPR of a ":time EXPR" cell (the REPL's :time, the one meta command a cell takes); empty
// for any other cell.
std::string time_expression(const std::string& code) {
  constexpr std::string_view kTime = ":time";
  size_t first = code.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || code.compare(first, kTime.size(), kTime) != 0) return {};
  size_t rest = first + kTime.size();
  if (rest >= code.size() || !std::isspace(static_cast<unsigned char>(code[rest]))) return {};
  return code.substr(rest);
}

// bytes in base64, as JSON carries image/png.
std::string base64(const std::vector<unsigned char>& bytes) {
  static constexpr char kDigits[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    unsigned v = bytes[i] << 16;
    if (i + 1 < bytes.size()) v |= bytes[i + 1] << 8;
    if (i + 2 < bytes.size()) v |= bytes[i + 2];
    out += kDigits[(v >> 18) & 63];
    out += kDigits[(v >> 12) & 63];
    out += i + 1 < bytes.size() ? kDigits[(v >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? kDigits[v & 63] : '=';
  }
  return out;
}

// The mime bundle of the value at idx: text/plain as the REPL prints it; for a host array an
// HTML table too, or for an image array (uint8 {h, w[, c]}) a PNG instead (front ends prefer
// HTML to PNG, and an image's table is not what anyone wants to see). Throws kiln::Error when
// the PNG cannot be made. [-0, +0]
nl::json mime_bundle(lua_State* L, int idx) {
  nl::json data;
  data["text/plain"] = lua::pretty(L, idx);
  if (const HostArray* a = lua::test_host_array(L, idx)) {
    if (is_image(*a))
      data["image/png"] = base64(encode_png(*a, "display"));
    else
      data["text/html"] = format_array_html(*a);
  }
  return data;
}

// The code point offset of byte offset pos in UTF-8 text (Jupyter counts cursors in code points).
int code_points(const std::string& text, size_t pos) {
  int n = 0;
  for (size_t i = 0; i < pos && i < text.size(); ++i)
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) ++n;
  return n;
}

// The byte offset of code point offset cursor in UTF-8 text.
size_t byte_offset(const std::string& text, int cursor) {
  size_t i = 0;
  for (int n = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80 && n++ == cursor) break;
  }
  return i;
}

// The lines of docs/lua-api.md that mention name ("cuda.to_device", or ":sum(" for a method),
// for the inspector; empty when the file is not there.
std::string api_lines(const std::filesystem::path& kernels_dir, const std::string& path) {
  size_t colon = path.rfind(':');
  std::string needle = colon == std::string::npos ? path : path.substr(colon) + "(";
  std::ifstream in(kernels_dir.parent_path() / "docs" / "lua-api.md");
  std::string text, line;
  while (std::getline(in, line) && text.size() < 4000)
    if (line.find(needle) != std::string::npos) text += line + "\n";
  return text;
}

// The interpreter: every request works on the one Lua state.
class Interpreter : public xeus::xinterpreter {
 public:
  explicit Interpreter(lua::State& state) : state_(state) {}

  // display(...): publishes each argument as a display_data message. [-0, +0]
  static int display(lua_State* L) {
    auto* self = static_cast<Interpreter*>(lua_touserdata(L, lua_upvalueindex(1)));
    int n = lua_gettop(L);
    return lua::protect(L, [&] {
      for (int i = 1; i <= n; ++i) self->publish_display(mime_bundle(L, i));
      return 0;
    });
  }

 private:
  lua_State* L() { return state_.get(); }

  // Publishes a display_data message after the output printed before it.
  void publish_display(nl::json data) {
    InterruptMask block(SIG_BLOCK);  // a SIGINT must not interrupt a socket write
    std::fflush(stdout);
    std::fflush(stderr);
    std::lock_guard<std::mutex> guard(publishing_);
    if (capture_) capture_->drain_locked();
    display_data(std::move(data), nl::json::object(), nl::json::object());
  }

  // Sets the global display and array.show's hook to the display function. [-0, +0]
  void configure_impl() override {
    lua_pushlightuserdata(L(), this);
    lua_pushcclosure(L(), &Interpreter::display, 1);
    lua_pushvalue(L(), -1);
    lua_setfield(L(), LUA_REGISTRYINDEX, lua::kDisplayHook);
    lua_setglobal(L(), "display");
  }

  // Runs a cell: its output streams while it runs, then its values (an execute_result) or its
  // error (ename, evalue and the Lua traceback).
  nl::json execute_request_impl(int execution_counter, const std::string& code, bool silent, bool,
                                nl::json, bool) override {
    lua_settop(L(), 0);
    int status;
    try {
      OutputCapture capture(publishing_, [this](const std::string& name, const std::string& text) {
        publish_stream(name, text);
      });
      capture_ = &capture;
      if (std::string timed = time_expression(code); !timed.empty()) {
        InterruptMask accept(SIG_UNBLOCK);
        repl::time_code(L(), timed);  // prints its times, reports its errors on stderr
        status = LUA_OK;
        lua_settop(L(), 0);
      } else if ((status = load_cell(L(), code)) == LUA_OK) {
        InterruptMask accept(SIG_UNBLOCK);
        status = lua::docall(L(), 0, LUA_MULTRET);
      }
      capture_ = nullptr;
    } catch (const std::exception& e) {  // no pipe for the output: the cell did not run
      capture_ = nullptr;
      lua_settop(L(), 0);
      lua_pushstring(L(), e.what());
      status = LUA_ERRRUN;
    }
    if (status != LUA_OK) return error_reply();
    int n = lua_gettop(L());
    if (n > 0 && !silent) {
      nl::json data;
      if (n == 1) {
        try {
          data = mime_bundle(L(), 1);
        } catch (const std::exception& e) {
          data = {{"text/plain", lua::pretty(L(), 1) + "\n(" + e.what() + ")"}};
        }
      } else {
        std::string text;
        for (int i = 1; i <= n; ++i) {
          if (i > 1) text += '\t';  // appended: GCC 12's -Wrestrict false positive (bug 105329)
          text += lua::pretty(L(), i);
        }
        data["text/plain"] = text;
      }
      publish_execution_result(execution_counter, std::move(data), nl::json::object());
    }
    lua_settop(L(), 0);
    return xeus::create_successful_reply();
  }

  // Publishes the error on top of the stack (message and traceback), pops it and returns the
  // error reply. [-1, +0]
  nl::json error_reply() {
    std::string message =
        lua_tostring(L(), -1) ? lua_tostring(L(), -1) : "(error object is not a string)";
    lua_settop(L(), 0);
    std::vector<std::string> traceback;
    std::istringstream lines(message);
    for (std::string line; std::getline(lines, line);) traceback.push_back(line);
    std::string evalue = traceback.empty() ? message : traceback.front();
    publish_execution_error("LuaError", evalue, traceback);
    return xeus::create_error_reply("LuaError", evalue, traceback);
  }

  // Completion: the REPL's, on the text before the cursor.
  nl::json complete_request_impl(const std::string& code, int cursor_pos) override {
    size_t end = byte_offset(code, cursor_pos);
    repl::Completion completion = repl::complete(L(), code.substr(0, end));
    return xeus::create_complete_reply(completion.candidates, code_points(code, completion.start),
                                       cursor_pos);
  }

  // Inspection (shift-tab): what the name under the cursor holds, and the lines of the Lua API
  // summary that mention it.
  nl::json inspect_request_impl(const std::string& code, int cursor_pos, int) override {
    std::string path = repl::word_at(code, byte_offset(code, cursor_pos));
    while (!path.empty() && (path.back() == '.' || path.back() == ':')) path.pop_back();
    if (!repl::push_path(L(), path)) return xeus::create_inspect_reply(false);
    std::string text = path + ": " + luaL_typename(L(), -1) + "\n";
    if (lua_type(L(), -1) != LUA_TFUNCTION) text += lua::pretty(L(), -1) + "\n";
    lua_pop(L(), 1);
    std::string api = api_lines(lua::settings(L()).platform.kernels_dir, path);
    if (!api.empty()) text += "\n" + api;
    return xeus::create_inspect_reply(true, {{"text/plain", text}});
  }

  // complete when the cell compiles, incomplete when more lines could finish it, invalid when
  // no lines could.
  nl::json is_complete_request_impl(const std::string& code) override {
    if (!time_expression(code).empty()) return xeus::create_is_complete_reply("complete");
    int status = load_cell(L(), code);
    bool more = repl::incomplete(L(), status);
    lua_pop(L(), 1);
    if (status == LUA_OK) return xeus::create_is_complete_reply("complete");
    return xeus::create_is_complete_reply(more ? "incomplete" : "invalid", more ? "  " : "");
  }

  nl::json kernel_info_request_impl() override {
    return xeus::create_info_reply("5.3", "kiln", KILN_VERSION, kLanguage,
                                   LUA_VERSION_MAJOR "." LUA_VERSION_MINOR, "text/x-lua", ".lua",
                                   "lua", "lua", "",
                                   std::string("kiln ") + KILN_VERSION + " (" LUA_RELEASE ")");
  }

  void shutdown_request_impl() override {}

  lua::State& state_;
  std::mutex publishing_;             // one thread at a time on xeus's publisher
  OutputCapture* capture_ = nullptr;  // the running cell's
};

}  // namespace

// The kernel, run on state until Jupyter shuts it down (jupyter.h's run_kernel, which loads
// this plugin).
int serve(const std::string& connection_file, lua::State& state) {
  if (!std::ifstream(connection_file)) {  // xeus would call it a JSON syntax error
    std::fprintf(stderr, "kiln: --jupyter: cannot read %s: %s\n", connection_file.c_str(),
                 std::strerror(errno));
    return 1;
  }
  xeus::xconfiguration config;
  try {
    config = xeus::load_configuration(connection_file);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kiln: --jupyter: cannot read %s: %s\n", connection_file.c_str(),
                 e.what());
    return 1;
  }
  // Before xeus starts a thread: SIGINT only ever reaches the main thread, and ignored while
  // no cell runs (Jupyter's stop button on an idle kernel).
  lua::SignalScope ignore(SIGINT, SIG_IGN);
  InterruptMask block(SIG_BLOCK);
  // Line-buffered stdout: print and kernel printf reach the notebook line by line.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  auto interpreter = std::make_unique<Interpreter>(state);
  auto context = xeus::make_context<zmq::context_t>();
  // Invalid UTF-8 in output (a binary file printed) is replaced, not an exception.
  xeus::xkernel kernel(config, xeus::get_user_name(), std::move(context), std::move(interpreter),
                       xeus::make_xserver_zmq, xeus::make_in_memory_history_manager(), nullptr,
                       xeus::make_null_debugger, nl::json::object(),
                       nl::json::error_handler_t::replace);
  kernel.start();
  return 0;
}

}  // namespace kiln::jupyter

// The plugin's entry point (repl/kernelspec.cpp dlopens libkiln_jupyter.so and calls it).
extern "C" __attribute__((visibility("default"))) int kiln_jupyter_run_kernel(
    const char* connection_file, kiln::lua::State* state) {
  return kiln::jupyter::serve(connection_file, *state);
}
