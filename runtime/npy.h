// NumPy's .npy format (version 1.0, and 2.0/3.0 when reading): host arrays to and from the files
// NumPy's np.save / np.load write and read, C order, little-endian, every kiln dtype. A vector
// dtype is saved as its lanes, one more axis (float4 {n} as float32 {n, 4}), which is what NumPy
// can read.
#pragma once
#include <string>

#include "runtime/host_array.h"

namespace kiln {

// Writes a to path; throws kiln::Error naming the path when it cannot.
void save_npy(const std::string& path, const HostArray& a);

// Reads the array at path; throws kiln::Error naming the path and what is wrong (not .npy, a
// dtype kiln has no equivalent of, Fortran order, big-endian, a truncated file).
HostArray load_npy(const std::string& path);

}  // namespace kiln
