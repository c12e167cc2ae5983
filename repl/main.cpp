// kiln: runs Lua scripts and -e chunks with kiln's modules, or the interactive REPL.
#include "repl/cli.h"

int main(int argc, char** argv) {
  return kiln::cli::run(argc, argv);
}
