// The kernelspec `kiln --install-kernel` writes: what Jupyter reads to start kiln as a kernel.
// Needs no Jupyter library, so it is built with or without xeus.
#include <cstdio>
#include <fstream>
#include <system_error>

#include "repl/jupyter.h"
#include "runtime/error.h"

namespace kiln::jupyter {
namespace {

// s as a JSON string literal.
std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escape[8];
      std::snprintf(escape, sizeof escape, "\\u%04x", static_cast<unsigned>(c));
      out += escape;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace

std::string kernelspec_json(const std::filesystem::path& program) {
  return "{\n"
         "  \"argv\": [" +
         json_string(program.string()) +
         ", \"--jupyter\", \"{connection_file}\"],\n"
         "  \"display_name\": \"kiln (Lua)\",\n"
         "  \"language\": \"" +
         std::string(kLanguage) +
         "\",\n"
         "  \"interrupt_mode\": \"signal\",\n"
         "  \"metadata\": {}\n"
         "}\n";
}

std::filesystem::path install_kernelspec(const std::filesystem::path& data_dir,
                                         const std::filesystem::path& program) {
  if (data_dir.empty())
    throw Error("--install-kernel: no Jupyter data folder (HOME and JUPYTER_DATA_DIR are unset)");
  std::filesystem::path dir = data_dir / "kernels" / kKernelName;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error("--install-kernel: cannot create " + dir.string() + ": " + ec.message());
  std::filesystem::path file = dir / "kernel.json";
  std::ofstream out(file, std::ios::trunc);
  out << kernelspec_json(program);
  out.close();
  if (!out) throw Error("--install-kernel: cannot write " + file.string());
  return dir;
}

#ifndef KILN_HAVE_JUPYTER
bool available() {
  return false;
}

int run_kernel(const std::string&, lua::State&) {
  std::fprintf(stderr, "kiln: this kiln was built without the Jupyter kernel (no xeus-dev)\n");
  return 1;
}
#endif

}  // namespace kiln::jupyter
