// The text of a host array as numpy prints it, for tostring and the REPL.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "runtime/host_array.h"

namespace kiln {

// "array([1., 2.], dtype=float64)": nested brackets for n-d, "..." past 1000 elements (then the
// shape too), lines wrapped at 75 columns.
std::string format_array(const HostArray& a);

// Reads `count` consecutive elements of an array, from flat index `first`, into `to`.
using ReadElements = std::function<void(std::int64_t first, std::int64_t count, void* to)>;

// The shape of the elements an array of `shape` prints: when it is summarized, each axis longer
// than 6 cut to its first and last 3 around one position never shown; otherwise `shape`.
Shape printed_shape(const Shape& shape, DType dtype);

// The elements an array of `shape` prints (printed_shape), read in runs by `read`: what a device
// array's text copies from the device (a few dozen elements, however large the array).
HostArray printed_elements(const Shape& shape, DType dtype, const ReadElements& read);

// The text of an array of `shape` from the elements it prints (printed_elements): equal to
// format_array of the whole array.
std::string format_printed(const HostArray& printed, const Shape& shape);

// The array as an HTML table for a notebook: the last axis across, one row per index of the
// others (labelled 1-based, as Lua indexes), elided past 1000 elements as format_array elides,
// the elements in format_array's common format, the shape and dtype in the caption.
std::string format_array_html(const HostArray& a);

}  // namespace kiln
