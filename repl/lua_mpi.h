// The kiln.mpi module (lua_mpi.cpp): require "kiln.mpi" in a script started by mpirun.
#pragma once
#include <lua.hpp>

namespace kiln::lua {

// Registers "kiln.mpi" in package.preload: MPI starts only when a script requires it. [-0, +0]
void preload_mpi(lua_State* L);

// Under mpirun with other ranks, ends the whole job when this rank fails (status != 0), saying
// which rank failed: ranks waiting for this one would otherwise wait for ever. Does nothing
// when MPI was not started or status is 0.
void end_job_if_failed(int status);

}  // namespace kiln::lua
