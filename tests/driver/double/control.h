// The driver test double's control functions (tests/driver/double/cuda_double.cpp): a libcuda
// stand-in that kiln loads through its ordinary dlopen path (cuda::Driver::load with the
// double's path). Tests dlopen the same library to reach these; dlopen returns the one already
// loaded, so both see the same state. The double proves kiln's host side only: it runs no
// kernel (a launch records its parameter buffer and does nothing else).
#pragma once
#include <cstddef>

extern "C" {
// Forgets everything: allocations, contexts, modules, streams, events, failures, the log.
void kiln_double_reset();
// The next `after`+1-th call of `call` ("cuMemAlloc", "cuLaunchKernel", ...) returns result,
// once. A sticky result (CUDA_ERROR_ILLEGAL_ADDRESS, ...) then breaks the context: every call
// but the primary context's reset and release returns it until cuDevicePrimaryCtxReset.
void kiln_double_fail(const char* call, int result, int after);
// Device memory the double pretends to have (default 1 GiB); whether it offers memory pools.
void kiln_double_set_memory(std::size_t total_bytes);
void kiln_double_set_pools(int supported);
// What the double saw: one line per call ("cuMemAlloc 256 -> 0"), and one line per broken rule
// ("cuMemFree: 0x... is not a live allocation"); "" when none.
const char* kiln_double_log();
const char* kiln_double_violations();
// Bytes still allocated, and live streams + events + modules + pinned registrations.
std::size_t kiln_double_live_bytes();
int kiln_double_live_handles();
// The parameter buffer of the last launch, laid out as the cubin's parameter table says
// (each kernelParams[i]'s bytes at parameter i's offset), and its size.
const unsigned char* kiln_double_last_params(std::size_t* size);
}
