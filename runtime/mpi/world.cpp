#include "runtime/mpi/world.h"

#include <dlfcn.h>

#include <string_view>

#include "runtime/error.h"
#include "runtime/process.h"

namespace kiln::mpi {

const Op* parse_op(const std::string& name) {
  static constexpr Op ops[] = {Op::sum, Op::prod, Op::min, Op::max};
  static constexpr std::string_view names[] = {"sum", "prod", "min", "max"};
  for (int i = 0; i < 4; ++i)
    if (name == names[i]) return &ops[i];
  return nullptr;
}

namespace {

// The process's one World (MPI is process-wide state): null until open() succeeds.
World*& the_world() {
  static World* world = nullptr;
  return world;
}

// Loads the plugin and opens its world; throws kiln::Error naming the plugin when it cannot.
World* load_world() {
  const std::string plugin = beside_this_program("libkiln_mpi.so");
  if (plugin.empty())
    throw Error("kiln.mpi: cannot find kiln's own folder, where its MPI plugin is");
  // RTLD_GLOBAL: the components Open MPI loads in MPI_Init find libmpi's symbols. Never closed:
  // MPI lives until the process ends, and finalises at its exit.
  void* handle = ::dlopen(plugin.c_str(), RTLD_NOW | RTLD_GLOBAL);
  const char* why = handle ? nullptr : ::dlerror();
  auto open_world =
      handle ? reinterpret_cast<OpenWorld>(::dlsym(handle, kOpenWorldSymbol)) : nullptr;
  if (!open_world)
    throw Error("kiln.mpi: cannot load kiln's MPI plugin " + plugin + ": " +
                (why ? why
                     : "it has no " + std::string(kOpenWorldSymbol) +
                           " (a plugin from another build of kiln? rebuild kiln)"));
  return open_world();
}

}  // namespace

bool World::available() {
#ifdef KILN_HAVE_MPI
  return true;
#else
  return false;
#endif
}

World& World::open() {
  World*& world = the_world();
  if (!world) {
    if (!available())
      throw Error("kiln was built without MPI (scripts/setup.sh installs libopenmpi-dev; rebuild)");
    world = load_world();
  }
  return *world;
}

bool World::is_open() {
  return the_world() != nullptr;
}

}  // namespace kiln::mpi
