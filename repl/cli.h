// kiln's command line: `kiln [options] [script [args...]]`, parsed as lua.c parses its own
// (options stop at the script name; everything after it belongs to the script), and the driver
// that runs what it asks for.
#pragma once
#include <string>
#include <vector>

namespace kiln::cli {

// A -e chunk or a -l library, run in command-line order before the script.
struct Chunk {
  enum class Kind { code, library };
  Kind kind;
  std::string text;
};

struct Options {
  std::vector<Chunk> chunks;
  int script = 0;            // argv index of the script ("-" is stdin); 0 when there is none
  bool interactive = false;  // -i: the REPL after the script and chunks
  bool version = false;      // -v, --version
  bool help = false;         // -h, --help
  bool info = false;         // --info
  bool cache_stats = false;  // --cache-stats
  bool cache_clear = false;  // --cache-clear
  bool check = false;        // --check: KILN_CHECK=1
  bool warnings = false;     // -W: Lua warnings on
  std::string backend;       // --backend NAME: KILN_BACKEND (empty: leave it)
  std::string jupyter;       // --jupyter FILE: a Jupyter kernel on this connection file
  bool install_kernel = false;  // --install-kernel: write the kernelspec
  std::string prefix;           // --prefix DIR: ... into DIR/share/jupyter (else --user's)
};

// Either options or the message saying which argument was wrong.
struct ParseResult {
  Options options;
  std::string error;
};

// Parses argv (argv[0] is the program). Never exits or prints.
ParseResult parse(int argc, const char* const* argv);

// The --help text.
std::string help_text();

// "kiln 0.1.0 (Lua 5.4.4)".
std::string version_text();

// Runs kiln as the command line asks: the whole program behind main(). Returns the exit status.
int run(int argc, char** argv);

}  // namespace kiln::cli
