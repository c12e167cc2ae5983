// kiln as a Jupyter kernel (xeus over ZeroMQ): `kiln --jupyter CONNECTION_FILE`, started by
// Jupyter from the kernelspec that `kiln --install-kernel` writes. The notebook gets the REPL's
// semantics on one Lua state; docs/jupyter.md says what it shows and how.
#pragma once
#include <filesystem>
#include <string>

#include "repl/lua_host.h"

namespace kiln::jupyter {

// The kernelspec's name and language, as Jupyter lists them.
inline constexpr const char* kKernelName = "kiln";
inline constexpr const char* kLanguage = "lua";

// Writes the kernelspec for the kiln binary at program into data_dir/kernels/kiln/kernel.json
// (making the folders) and returns that folder. Throws kiln::Error when it cannot write.
std::filesystem::path install_kernelspec(const std::filesystem::path& data_dir,
                                         const std::filesystem::path& program);

// The kernelspec's JSON text for program. Exposed for tests.
std::string kernelspec_json(const std::filesystem::path& program);

// Whether this kiln was built with the kernel (xeus was found).
bool available();

// Runs the kernel on state with the connection file until Jupyter shuts it down (a restart is
// a new process); returns the exit status. Prints why and returns 1 when the file cannot be
// read or kiln was built without the kernel.
int run_kernel(const std::string& connection_file, lua::State& state);

}  // namespace kiln::jupyter
