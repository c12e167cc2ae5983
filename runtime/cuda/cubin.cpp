#include "runtime/cuda/cubin.h"

#include <algorithm>
#include <cstring>
#include <regex>

namespace kiln::cuda {
namespace {

// ELF64 as a cubin uses it (little-endian; the layouts of <elf.h>, read field by field so that
// no unaligned or out-of-range read can happen).
class Elf {
 public:
  Elf(const void* data, std::size_t size) : bytes_(static_cast<const unsigned char*>(data)), size_(size) {}

  // Whether [offset, offset + n) lies inside the file.
  bool has(std::uint64_t offset, std::uint64_t n) const { return offset <= size_ && n <= size_ - offset; }
  template <typename T>
  T read(std::uint64_t offset) const {
    T v{};
    if (has(offset, sizeof(T))) std::memcpy(&v, bytes_ + offset, sizeof(T));
    return v;
  }
  // A NUL-terminated string at offset, cut at the end of the file.
  std::string string(std::uint64_t offset) const {
    if (offset >= size_) return {};
    const char* s = reinterpret_cast<const char*>(bytes_ + offset);
    return std::string(s, strnlen(s, size_ - offset));
  }

 private:
  const unsigned char* bytes_;
  std::size_t size_;
};

struct Section {
  std::string name;
  std::uint32_t type = 0, link = 0, info = 0;
  std::uint64_t offset = 0, size = 0, entsize = 0;
};

constexpr std::uint32_t kSymtab = 2, kNobits = 8;
constexpr std::uint8_t kFuncType = 2, kObjectType = 1;

// EIATTR records: a format byte, an attribute byte, then a 16-bit value (EIFMT_HVAL) or a 16-bit
// size and that many bytes (EIFMT_SVAL); EIFMT_NVAL and EIFMT_BVAL also take 16 bits.
constexpr std::uint8_t kFormatSval = 0x04;
constexpr std::uint8_t kMaxThreads = 0x05, kRequiredThreads = 0x10, kFrameSize = 0x11,
                       kParamInfo = 0x17, kParamBankSize = 0x19, kRegCount = 0x2f;

struct Attribute {
  std::uint8_t format, id;
  std::uint64_t value_offset;  // where the value (SVAL: its bytes) starts
  std::uint16_t value;         // HVAL's value, SVAL's size
};

// The attribute records of an .nv.info section.
std::vector<Attribute> attributes(const Elf& elf, const Section& s) {
  std::vector<Attribute> out;
  std::uint64_t at = s.offset, end = s.offset + s.size;
  while (at + 4 <= end) {
    Attribute a{elf.read<std::uint8_t>(at), elf.read<std::uint8_t>(at + 1), at + 4,
                elf.read<std::uint16_t>(at + 2)};
    at += 4;
    if (a.format == kFormatSval) {
      if (a.value > end - at) break;  // truncated: keep what was whole
      at += a.value;
    }
    out.push_back(a);
  }
  return out;
}

// Reads a kernel's own .nv.info.<name>: parameters, their buffer's size, launch bounds.
void read_kernel_info(const Elf& elf, const Section& s, CubinKernel& k) {
  for (const Attribute& a : attributes(elf, s)) {
    if (a.id == kParamInfo && a.format == kFormatSval && a.value >= 12) {
      const std::uint32_t flags = elf.read<std::uint32_t>(a.value_offset + 8);
      k.params.push_back({elf.read<std::uint16_t>(a.value_offset + 4),
                          elf.read<std::uint16_t>(a.value_offset + 6), flags >> 18});
    } else if (a.id == kParamBankSize && a.format != kFormatSval) {
      k.param_bytes = a.value;
    } else if ((a.id == kMaxThreads || a.id == kRequiredThreads) && a.format == kFormatSval &&
               a.value >= 12) {
      const std::uint64_t threads = std::uint64_t(elf.read<std::uint32_t>(a.value_offset)) *
                                    elf.read<std::uint32_t>(a.value_offset + 4) *
                                    elf.read<std::uint32_t>(a.value_offset + 8);
      if (threads > 0 && (k.max_threads_per_block == 0 || threads < std::uint64_t(k.max_threads_per_block)))
        k.max_threads_per_block = int(std::min<std::uint64_t>(threads, 1 << 20));
    }
  }
  std::sort(k.params.begin(), k.params.end(),
            [](const CubinParam& a, const CubinParam& b) { return a.ordinal < b.ordinal; });
}

}  // namespace

std::optional<Cubin> read_cubin(const void* data, std::size_t size, std::string* why) {
  auto fail = [&](const char* message) {
    if (why) *why = message;
    return std::nullopt;
  };
  Elf elf(data, size);
  if (size < 64 || elf.read<std::uint32_t>(0) != 0x464c457f) return fail("not an ELF file");
  if (elf.read<std::uint8_t>(4) != 2) return fail("not a 64-bit ELF file (a cubin is ELF64)");
  const std::uint32_t flags = elf.read<std::uint32_t>(48);
  const std::uint64_t shoff = elf.read<std::uint64_t>(40);
  const std::uint16_t shentsize = elf.read<std::uint16_t>(58), shnum = elf.read<std::uint16_t>(60),
                      shstrndx = elf.read<std::uint16_t>(62);
  if (shentsize < 64 || !elf.has(shoff, std::uint64_t(shnum) * shentsize) || shstrndx >= shnum)
    return fail("truncated ELF section headers");

  std::vector<Section> sections(shnum);
  for (std::uint16_t i = 0; i < shnum; ++i) {
    const std::uint64_t h = shoff + std::uint64_t(i) * shentsize;
    Section& s = sections[i];
    s.type = elf.read<std::uint32_t>(h + 4);
    s.offset = elf.read<std::uint64_t>(h + 24);
    s.size = elf.read<std::uint64_t>(h + 32);
    s.link = elf.read<std::uint32_t>(h + 40);
    s.info = elf.read<std::uint32_t>(h + 44);
    s.entsize = elf.read<std::uint64_t>(h + 56);
    if (s.type != kNobits && !elf.has(s.offset, s.size)) return fail("a section lies past the end of the file");
  }
  const Section& names = sections[shstrndx];
  for (std::uint16_t i = 0; i < shnum; ++i) {
    const std::uint64_t h = shoff + std::uint64_t(i) * shentsize;
    sections[i].name = elf.string(names.offset + elf.read<std::uint32_t>(h));
  }

  Cubin cubin;
  // CUDA 12.8+ keeps the SM in bits 8-15 of e_flags; earlier toolkits in bits 0-7.
  cubin.arch = int((flags >> 8) & 0xff) >= 30 ? int((flags >> 8) & 0xff) : int(flags & 0xff);

  // Kernels and variables from the symbol table; symbol indices for .nv.info's records.
  std::map<std::uint32_t, std::string> kernel_of_symbol;
  for (const Section& st : sections) {
    if (st.type != kSymtab || st.entsize < 24 || st.link >= shnum) continue;
    const Section& strings = sections[st.link];
    for (std::uint64_t i = 0; i < st.size / st.entsize; ++i) {
      const std::uint64_t e = st.offset + i * st.entsize;
      const std::string name = elf.string(strings.offset + elf.read<std::uint32_t>(e));
      const std::uint8_t type = elf.read<std::uint8_t>(e + 4) & 0xf;
      const std::uint16_t index = elf.read<std::uint16_t>(e + 6);
      if (type == kFuncType && index < shnum && sections[index].name == ".text." + name) {
        cubin.kernels[name].name = name;
        kernel_of_symbol[std::uint32_t(i)] = name;
      } else if (type == kObjectType && !name.empty()) {
        cubin.globals[name] = elf.read<std::uint64_t>(e + 16);
      }
    }
  }
  for (auto& [name, k] : cubin.kernels) {
    for (const Section& s : sections) {
      if (s.name == ".text." + name) k.registers = int(s.info >> 24);
      if (s.name == ".nv.shared." + name) k.shared_bytes = s.size;
      if (s.name == ".nv.info." + name) read_kernel_info(elf, s, k);
    }
  }
  // The file-wide .nv.info: per-symbol register counts and stack frames.
  for (const Section& s : sections) {
    if (s.name != ".nv.info") continue;
    for (const Attribute& a : attributes(elf, s)) {
      if (a.format != kFormatSval || a.value < 8) continue;
      auto it = kernel_of_symbol.find(elf.read<std::uint32_t>(a.value_offset));
      if (it == kernel_of_symbol.end()) continue;
      const std::uint32_t value = elf.read<std::uint32_t>(a.value_offset + 4);
      if (a.id == kRegCount) cubin.kernels[it->second].registers = int(value);
      if (a.id == kFrameSize) cubin.kernels[it->second].local_bytes = value;
    }
  }
  return cubin;
}

void add_ptxas_log(Cubin& cubin, const std::string& log) {
  // Each entry function's block: "Compiling entry function 'NAME'" up to the next one. Its
  // "Used N registers, ..., M bytes smem" is the kernel's own static shared memory (an sm_90
  // cubin's .nv.shared section also holds the 1 KiB the system reserves per block).
  static const std::string kEntry = "Compiling entry function '";
  for (std::size_t at = log.find(kEntry); at != std::string::npos;) {
    const std::size_t name_start = at + kEntry.size();
    const std::size_t name_end = log.find('\'', name_start);
    if (name_end == std::string::npos) break;
    const std::size_t next = log.find(kEntry, name_end);
    auto k = cubin.kernels.find(log.substr(name_start, name_end - name_start));
    const std::string block = log.substr(name_end, next == std::string::npos ? next : next - name_end);
    static const std::regex used(R"(Used (\d+) registers[^\n]*)"), smem(R"((\d+) bytes smem)");
    std::smatch m;
    if (k != cubin.kernels.end() && std::regex_search(block, m, used)) {
      const std::string line = m.str(0);
      k->second.shared_bytes = std::regex_search(line, m, smem) ? std::stoull(m[1]) : 0;
    }
    at = next;
  }
  static const std::regex properties(R"(Function properties for (\S+)\s*\n[^\n]*?(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  for (auto it = std::sregex_iterator(log.begin(), log.end(), properties); it != std::sregex_iterator(); ++it) {
    auto k = cubin.kernels.find((*it)[1].str());
    if (k == cubin.kernels.end()) continue;
    k->second.spill_stores = std::stoi((*it)[3].str());
    k->second.spill_loads = std::stoi((*it)[4].str());
  }
}

std::optional<ArchLimits> arch_limits(int cc) {
  // The CUDA C++ Programming Guide's table of compute capabilities (and the occupancy
  // calculator's): per-SM warps, blocks, shared memory; 64 K registers everywhere.
  ArchLimits a;
  const std::uint64_t kib = 1024;
  a.shared_reserved = cc >= 80 ? kib : 0;
  switch (cc) {
    case 70: case 72: a.shared_per_sm = 96 * kib, a.shared_per_block = 96 * kib; break;
    case 75: a.max_warps_per_sm = 32, a.max_blocks_per_sm = 16, a.shared_per_sm = 64 * kib,
             a.shared_per_block = 64 * kib; break;
    case 80: a.shared_per_sm = 164 * kib, a.shared_per_block = 163 * kib; break;
    case 87: a.shared_per_sm = 164 * kib, a.shared_per_block = 163 * kib; break;
    case 86: a.max_warps_per_sm = 48, a.max_blocks_per_sm = 16, a.shared_per_sm = 100 * kib,
             a.shared_per_block = 99 * kib; break;
    case 89: a.max_warps_per_sm = 48, a.max_blocks_per_sm = 24, a.shared_per_sm = 100 * kib,
             a.shared_per_block = 99 * kib; break;
    case 90: case 100: case 103: a.shared_per_sm = 228 * kib, a.shared_per_block = 227 * kib; break;
    case 120: case 121: a.max_warps_per_sm = 48, a.max_blocks_per_sm = 24,
                        a.shared_per_sm = 100 * kib, a.shared_per_block = 99 * kib; break;
    default: return std::nullopt;
  }
  return a;
}

Occupancy occupancy(const ArchLimits& arch, const CubinKernel& kernel, int block_size,
                    std::uint64_t dynamic_shared) {
  Occupancy o;
  const int max_threads = kernel.max_threads_per_block > 0
                              ? std::min(kernel.max_threads_per_block, arch.max_threads_per_block)
                              : arch.max_threads_per_block;
  const std::uint64_t shared = kernel.shared_bytes + dynamic_shared;
  if (block_size <= 0 || block_size > max_threads || shared > arch.shared_per_block) {
    o.limit = block_size <= 0 || block_size > max_threads ? "block size" : "shared memory";
    return o;
  }
  const int warps = (block_size + 31) / 32;
  auto round_up = [](std::uint64_t v, std::uint64_t unit) { return (v + unit - 1) / unit * unit; };
  const int by_warps = arch.max_warps_per_sm / warps;
  int by_registers = arch.max_blocks_per_sm;
  if (kernel.registers > 0) {
    const std::uint64_t per_warp = round_up(std::uint64_t(kernel.registers) * 32, arch.register_unit);
    by_registers = int(arch.registers_per_sm / per_warp) / warps;
  }
  int by_shared = arch.max_blocks_per_sm;
  if (shared > 0 || arch.shared_reserved > 0)
    by_shared = int(arch.shared_per_sm / round_up(shared + arch.shared_reserved, 128));
  o.blocks_per_sm = std::min({arch.max_blocks_per_sm, by_warps, by_registers, by_shared});
  o.limit = o.blocks_per_sm == by_registers && by_registers < by_warps ? "registers"
            : o.blocks_per_sm == by_shared && by_shared < by_warps     ? "shared memory"
            : o.blocks_per_sm == arch.max_blocks_per_sm && arch.max_blocks_per_sm < by_warps
                ? "blocks"
                : "warps";
  o.occupancy = double(o.blocks_per_sm * warps) / arch.max_warps_per_sm;
  return o;
}

}  // namespace kiln::cuda
