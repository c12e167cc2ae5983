// The text of a host array as numpy prints it, for tostring and the REPL.
#pragma once
#include <string>

#include "runtime/host_array.h"

namespace kiln {

// "array([1., 2.], dtype=float64)": nested brackets for n-d, "..." past 1000 elements (then the
// shape too), lines wrapped at 75 columns.
std::string format_array(const HostArray& a);

// The array as an HTML table for a notebook: the last axis across, one row per index of the
// others (labelled 1-based, as Lua indexes), elided past 1000 elements as format_array elides,
// the elements in format_array's common format, the shape and dtype in the caption.
std::string format_array_html(const HostArray& a);

}  // namespace kiln
