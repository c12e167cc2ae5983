// What a cubin says of its kernels, read without a GPU. A cubin is an ELF file: each kernel has
// a `.text.<name>` section (its register count in the top byte of sh_info), an optional
// `.nv.shared.<name>` (its static shared memory), and a `.nv.info.<name>` section of attributes
// (EIATTR_*: the parameter table, launch bounds); the file-wide `.nv.info` adds stack frames.
// ptxas's verbose log (`-Xptxas=-v`, which NVRTC passes on) adds what the ELF does not keep: the
// spill stores and loads. Plain C++ (no libcuda, no NVRTC), so the test double and the tests use it
// as kiln does.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kiln::cuda {

// One kernel parameter as the cubin lays it out in the parameter constant bank.
struct CubinParam {
  int ordinal = 0;          // 0-based position
  std::uint32_t offset = 0; // bytes from the start of the parameter buffer
  std::uint32_t size = 0;   // bytes
};

struct CubinKernel {
  std::string name;  // the lowered (mangled) name
  int registers = 0;
  std::uint64_t shared_bytes = 0;  // static __shared__ (see add_ptxas_log)
  std::uint64_t local_bytes = 0;   // per-thread stack frame (local memory)
  int max_threads_per_block = 0;   // __launch_bounds__ / __maxnreg__ limits; 0: none recorded
  std::vector<CubinParam> params;  // by ordinal
  std::uint32_t param_bytes = 0;   // the parameter buffer's size
  int spill_stores = -1, spill_loads = -1;  // bytes, from ptxas's log; -1: not known
};

struct Cubin {
  int arch = 0;  // 80 for sm_80 (from the ELF header's flags)
  std::map<std::string, CubinKernel> kernels;
  std::map<std::string, std::uint64_t> globals;  // __device__ / __constant__ variables: bytes
};

// Reads a cubin; nullopt with why filled when the bytes are not one (too short, not ELF64,
// truncated sections).
std::optional<Cubin> read_cubin(const void* data, std::size_t size, std::string* why);

// Adds what ptxas's verbose log says of the kernels it names: spill stores and loads ("Function
// properties for NAME" then "N bytes stack frame, S bytes spill stores, L bytes spill loads"),
// and the static shared memory of "Used N registers, ..., M bytes smem" (the ELF section of an
// sm_90 cubin also counts the 1 KiB reserved per block).
void add_ptxas_log(Cubin& cubin, const std::string& log);

// The occupancy calculator: the architecture's per-SM limits and what a kernel gets of them.
struct ArchLimits {
  int max_warps_per_sm = 64;
  int max_blocks_per_sm = 32;
  int registers_per_sm = 65536;
  int register_unit = 256;             // registers are allotted per warp in these units
  int max_registers_per_thread = 255;
  std::uint64_t shared_per_sm = 0;     // bytes usable by blocks
  std::uint64_t shared_per_block = 0;  // most a block may have (with opt-in)
  std::uint64_t shared_reserved = 0;   // the system's share per block (1 KiB from sm_80)
  int max_threads_per_block = 1024;
};
// The limits of sm_<cc> (70, 75, 80, 86, 87, 89, 90, 100, 120, ...); nullopt when unknown.
std::optional<ArchLimits> arch_limits(int cc);

struct Occupancy {
  int blocks_per_sm = 0;
  double occupancy = 0;   // active warps over the SM's maximum, 0 to 1
  std::string limit;      // what binds: "warps", "registers", "shared memory", "blocks", "block size"
};
// How many blocks of block_size threads fit on one SM, by the occupancy calculator's formula.
Occupancy occupancy(const ArchLimits& arch, const CubinKernel& kernel, int block_size,
                    std::uint64_t dynamic_shared = 0);

}  // namespace kiln::cuda
