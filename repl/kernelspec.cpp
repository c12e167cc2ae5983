// The kernelspec `kiln --install-kernel` writes: what Jupyter reads to start kiln as a kernel.
// Needs no Jupyter library, so it is built with or without xeus.
#include <dlfcn.h>

#include <cstdio>
#include <fstream>
#include <system_error>

#include "repl/jupyter.h"
#include "runtime/error.h"
#include "runtime/process.h"

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

namespace {

// The kernel's plugin: libkiln_jupyter.so beside the kiln binary. xeus and ZeroMQ (a dozen
// libraries) are loaded only by `kiln --jupyter`: linked into kiln, they cost every start
// about 4 ms. "" when this kiln was built without the kernel.
std::filesystem::path plugin_path() {
#ifdef KILN_HAVE_JUPYTER
  return beside_this_program("libkiln_jupyter.so");
#else
  return {};
#endif
}

}  // namespace

bool available() {
  const std::filesystem::path plugin = plugin_path();
  std::error_code ec;
  return !plugin.empty() && std::filesystem::is_regular_file(plugin, ec);
}

int run_kernel(const std::string& connection_file, lua::State& state) {
  const std::filesystem::path plugin = plugin_path();
  if (plugin.empty()) {
    std::fprintf(stderr, "kiln: this kiln was built without the Jupyter kernel (no xeus-dev)\n");
    return 1;
  }
  // Never closed: xeus's threads and atexit handlers live until the process ends.
  void* handle = ::dlopen(plugin.c_str(), RTLD_NOW | RTLD_LOCAL);
  using Run = int (*)(const char*, lua::State*);
  Run run = handle ? reinterpret_cast<Run>(::dlsym(handle, "kiln_jupyter_run_kernel")) : nullptr;
  if (!run) {
    std::fprintf(stderr, "kiln: --jupyter: cannot load the kernel %s: %s\n", plugin.c_str(),
                 ::dlerror());
    return 1;
  }
  return run(connection_file.c_str(), &state);
}

}  // namespace kiln::jupyter
