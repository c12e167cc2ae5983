// The text of a host array as numpy prints it, for tostring and the REPL.
#pragma once
#include <string>

#include "runtime/host_array.h"

namespace kiln {

// "array([1., 2.], dtype=float64)": nested brackets for n-d, "..." past 1000 elements (then the
// shape too), lines wrapped at 75 columns.
std::string format_array(const HostArray& a);

}  // namespace kiln
