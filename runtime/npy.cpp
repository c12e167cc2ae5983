// NumPy's .npy format: a magic string, a version, a Python-literal header dict padded to a
// multiple of 64 bytes, then the raw elements.
#include "runtime/npy.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>

#include "runtime/error.h"

namespace kiln {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicSize = 6;

// NumPy's type string of a scalar dtype ("<f4", "|u1", "|b1").
std::string descr_of(DType t) {
  const DTypeInfo& i = dtype_info(t);
  if (t == DType::boolean) return "|b1";
  const char kind = !i.is_integer ? 'f' : i.is_signed ? 'i' : 'u';
  return std::string(i.size == 1 ? "|" : "<") + kind + std::to_string(i.size);
}

// The dtype of a NumPy type string, or nullopt ('=' and '<' are little-endian here; '|' for
// single bytes).
std::optional<DType> dtype_of_descr(const std::string& descr) {
  for (DType t : kAllDTypes) {
    if (t == DType::bfloat16) continue;  // NumPy has none
    const std::string d = descr_of(t);
    if (descr == d) return t;
    const bool same_rest =
        descr.size() == d.size() && descr.compare(1, std::string::npos, d, 1) == 0;
    if (same_rest && ((d[0] == '<' && descr[0] == '=') ||
                      (d[0] == '|' && (descr[0] == '<' || descr[0] == '='))))
      return t;
  }
  return std::nullopt;
}

// The value of 'key' in the header dict: the text after "'key':" up to the next top-level ',' or
// '}' (a tuple's commas are inside its parentheses).
std::string header_value(const std::string& header, const std::string& key,
                         const std::string& path) {
  std::size_t at = header.find("'" + key + "'");
  if (at == std::string::npos) throw Error("load: " + path + ": the .npy header has no '" + key + "'");
  at = header.find(':', at);
  if (at == std::string::npos) throw Error("load: " + path + ": a malformed .npy header");
  std::size_t end = at + 1;
  int depth = 0;
  for (; end < header.size(); ++end) {
    const char c = header[end];
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (depth == 0 && (c == ',' || c == '}')) break;
  }
  std::string v = header.substr(at + 1, end - at - 1);
  v.erase(0, v.find_first_not_of(" "));
  v.erase(v.find_last_not_of(" ") + 1);
  return v;
}

}  // namespace

void save_npy(const std::string& path, const HostArray& a) {
  const DTypeInfo& info = dtype_info(a.dtype());
  if (a.dtype() == DType::bfloat16)
    throw Error("save: " + path +
                ": NumPy has no bfloat16 dtype; save a:astype('float32') instead");
  Shape shape = a.shape();
  if (info.lanes > 1) shape.push_back(info.lanes);
  std::string dims;
  for (std::int64_t d : shape) dims += std::to_string(d) + ", ";
  if (shape.size() > 1) dims.resize(dims.size() - 2);  // (3,) for 1-d, (2, 3) otherwise
  std::string header = "{'descr': '" + descr_of(info.base) +
                       "', 'fortran_order': False, 'shape': (" + dims + "), }";
  const std::size_t unpadded = kMagicSize + 2 + 2 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw Error("save: cannot write " + path + ": " + std::strerror(errno));
  const unsigned char version[2] = {1, 0};
  const unsigned char length[2] = {static_cast<unsigned char>(header.size() & 0xff),
                                   static_cast<unsigned char>(header.size() >> 8)};
  out.write(kMagic, kMagicSize);
  out.write(reinterpret_cast<const char*>(version), 2);
  out.write(reinterpret_cast<const char*>(length), 2);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(static_cast<const char*>(a.data()), static_cast<std::streamsize>(a.nbytes()));
  if (!out) throw Error("save: cannot write " + path + ": " + std::strerror(errno));
}

HostArray load_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("load: cannot read " + path + ": " + std::strerror(errno));
  char magic[kMagicSize];
  unsigned char version[2];
  if (!in.read(magic, kMagicSize) || std::memcmp(magic, kMagic, kMagicSize) != 0 ||
      !in.read(reinterpret_cast<char*>(version), 2))
    throw Error("load: " + path + " is not a .npy file (no \\x93NUMPY magic)");
  std::uint32_t header_size = 0;
  unsigned char size_bytes[4] = {};
  const int width = version[0] == 1 ? 2 : 4;  // 2.0 and 3.0 have a 4-byte header length
  if (!in.read(reinterpret_cast<char*>(size_bytes), width))
    throw Error("load: " + path + ": truncated .npy header");
  for (int k = width - 1; k >= 0; --k) header_size = header_size << 8 | size_bytes[k];
  if (header_size > (1u << 20)) throw Error("load: " + path + ": implausible .npy header size");
  std::string header(header_size, '\0');
  if (!in.read(header.data(), header_size)) throw Error("load: " + path + ": truncated .npy header");

  const std::string descr = header_value(header, "descr", path);
  const std::string quoted = descr.size() >= 2 ? descr.substr(1, descr.size() - 2) : descr;
  std::optional<DType> dtype = dtype_of_descr(quoted);
  if (!dtype)
    throw Error(
        "load: " + path + ": dtype " + descr +
        " has no kiln equivalent (kiln reads little-endian bool, int8..int64, uint8..uint64, "
        "float16, float32 and float64)");
  if (header_value(header, "fortran_order", path) != "False")
    throw Error("load: " + path + " is in Fortran order; save it in C order (np.ascontiguousarray)");
  Shape shape;
  std::string dims = header_value(header, "shape", path);
  if (dims.size() < 2 || dims.front() != '(' || dims.back() != ')')
    throw Error("load: " + path + ": cannot read the shape " + dims);
  std::istringstream list(dims.substr(1, dims.size() - 2));
  for (std::string item; std::getline(list, item, ',');) {
    if (item.find_first_not_of(" ") == std::string::npos) continue;
    char* end = nullptr;
    const long long extent = std::strtoll(item.c_str(), &end, 10);
    if (end == item.c_str() || extent < 0)
      throw Error("load: " + path + ": cannot read the shape " + dims);
    shape.push_back(extent);
  }
  // The data must all be there before memory is taken for it.
  const std::streampos data_start = in.tellg();
  in.seekg(0, std::ios::end);
  const std::uint64_t available = std::uint64_t(in.tellg() - data_start);
  in.seekg(data_start);
  const std::uint64_t needed = std::uint64_t(shape_size(shape)) * dtype_info(*dtype).size;
  if (needed > available)
    throw Error("load: " + path + ": the file ends before its " + std::to_string(needed) +
                " bytes of data (" + std::to_string(available) + " there)");
  HostArray a(shape, *dtype);
  if (!in.read(static_cast<char*>(a.data()), static_cast<std::streamsize>(a.nbytes())))
    throw Error("load: " + path + ": the file ends before its " + std::to_string(a.nbytes()) +
                " bytes of data");
  return a;
}

}  // namespace kiln
