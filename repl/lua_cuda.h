// Internals shared by the cuda module's bindings (lua_cuda.cpp: devices, arrays, streams;
// lua_kernel.cpp: kernels, modules, reductions).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include <lua.hpp>

#include "jit/jit.h"
#include "runtime/device_array.h"

namespace kiln::lua {

inline constexpr const char* kDeviceArrayMeta = "kiln.device_array";
inline constexpr const char* kStreamMeta = "kiln.stream";
inline constexpr const char* kEventMeta = "kiln.event";

// The Lua state's JIT (and through it the backend), opened on first use. Throws kiln::Error
// when the backend asked for cannot run.
jit::Jit& runtime(lua_State* L);
std::shared_ptr<jit::Jit> runtime_ptr(lua_State* L);

// Device arrays.
DeviceArray* test_device_array(lua_State* L, int idx);        // nullptr when not one
DeviceArray& check_device_array(lua_State* L, int idx);       // Lua error otherwise; also when freed
void push_device_array(lua_State* L, DeviceArray a);          // [-0, +1]
// A device buffer of bytes; on exhaustion runs a full collection and tries once more.
std::shared_ptr<DeviceBuffer> allocate_device(lua_State* L, std::size_t bytes);

// A zero-filled host array, page-locked where the backend has such memory (the cuda backend), so
// that copies to and from the device run at full speed. Throws kiln::Error on exhaustion.
HostArray pinned_host_array(lua_State* L, const Shape& shape, DType dtype);

// The stream at idx (a stream userdata; nil or 0 for the default stream).
Stream* opt_stream(lua_State* L, int idx);

// Registers the kernel-side functions (jit, jit_file, module, reduce) into the table on top.
void register_kernel_functions(lua_State* L);  // [-0, +0]

}  // namespace kiln::lua
