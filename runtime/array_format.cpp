// numpy's array printing, reimplemented: a common element format chosen from the elements shown
// (numpy's FloatingFormat), nested brackets wrapped at 75 columns, "..." past 1000 elements.
#include "runtime/array_format.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace kiln {
namespace {

constexpr std::int64_t kSummaryThreshold = 1000;  // numpy's print threshold and edge items
constexpr std::int64_t kEdgeItems = 3;
constexpr std::size_t kLineWidth = 75;

const char* dtype_name(DType t) {
  return dtype_info(t).name.data();
}

// How one array's elements print: every element is given the same width (numpy's formatter).
class ElementFormat {
 public:
  // Chooses the format from the elements that will be shown.
  ElementFormat(const HostArray& a, const std::vector<std::int64_t>& shown) : a_(a) {
    DType t = a.dtype();
    if (t == DType::boolean) {
      width_ = 5;
    } else if (dtype_info(t).is_integer) {
      for (std::int64_t i : shown) width_ = std::max(width_, integer_text(i).size());
    } else {
      choose_float_format(shown);
    }
  }

  // Element i as text, padded to the common width.
  std::string operator()(std::int64_t i) const {
    DType t = a_.dtype();
    if (t == DType::boolean) return pad_left(a_.as<bool>()[i] ? "true" : "false", width_);
    if (dtype_info(t).is_integer) return pad_left(integer_text(i), width_);
    return float_text(a_.get_number(i), true);
  }

 private:
  static std::string pad_left(const std::string& s, std::size_t w) {
    return s.size() >= w ? s : std::string(w - s.size(), ' ') + s;
  }

  std::string integer_text(std::int64_t i) const {
    if (a_.dtype() == DType::uint64) return std::to_string(a_.as<std::uint64_t>()[i]);
    return std::to_string(a_.get_integer(i));
  }

  // The double nearest the shortest decimal that reads back as v in the 16-bit float dtype t,
  // so that printing it as a double shows those digits ("0.1" for float16's 0.0999755859375).
  static double shortest_decimal(double v, DType t) {
    if (!std::isfinite(v)) return v;
    auto same = [t](double x, double y) {
      return t == DType::float16 ? Float16(x).bits() == Float16(y).bits()
                                 : BFloat16(x).bits() == BFloat16(y).bits();
    };
    for (int digits = 1; digits < 17; ++digits) {
      char buf[40];
      std::snprintf(buf, sizeof buf, "%.*e", digits - 1, v);
      const double d = std::strtod(buf, nullptr);
      if (same(d, v)) return d;
    }
    return v;
  }

  // The shortest text that reads back as v (in the array's float type), positional or
  // scientific, at most 8 fractional digits, trailing zeros trimmed but the point kept ("1.").
  std::string shortest(double v) const {
    if (a_.dtype() == DType::float16 || a_.dtype() == DType::bfloat16)
      v = shortest_decimal(v, a_.dtype());
    char buf[128];
    auto fmt = exp_ ? std::chars_format::scientific : std::chars_format::fixed;
    auto r = a_.dtype() == DType::float32
                 ? std::to_chars(buf, buf + sizeof buf, static_cast<float>(v), fmt)
                 : std::to_chars(buf, buf + sizeof buf, v, fmt);
    std::string s(buf, r.ptr);
    std::string mant = s.substr(0, s.find('e')), rest = exp_ ? s.substr(s.find('e')) : "";
    std::size_t dot = mant.find('.');
    if (dot != std::string::npos && mant.size() - dot - 1 > 8) {  // round to 8 digits
      std::snprintf(buf, sizeof buf, exp_ ? "%.8e" : "%.8f", v);
      s = buf;
      mant = s.substr(0, s.find('e'));
      rest = exp_ ? s.substr(s.find('e')) : "";
      while (mant.back() == '0') mant.pop_back();
    }
    if (mant.find('.') == std::string::npos) mant += '.';
    return mant + rest;
  }

  // numpy's FloatingFormat: scientific when the magnitudes span too much, then the padding.
  void choose_float_format(const std::vector<std::int64_t>& shown) {
    double max_abs = 0, min_abs = INFINITY;
    bool nonfinite = false, neg_inf = false;
    for (std::int64_t i : shown) {
      double v = a_.get_number(i);
      if (!std::isfinite(v)) {
        nonfinite = true;
        neg_inf |= v < 0;
        continue;
      }
      if (v != 0)
        max_abs = std::max(max_abs, std::fabs(v)), min_abs = std::min(min_abs, std::fabs(v));
    }
    exp_ = max_abs != 0 && (max_abs >= 1e8 || min_abs < 1e-4 || max_abs / min_abs > 1e3);
    for (std::int64_t i : shown) {
      double v = a_.get_number(i);
      if (!std::isfinite(v)) continue;
      std::string s = shortest(v);
      std::size_t dot = s.find('.'), e = s.find('e');
      pad_left_ = std::max(pad_left_, dot);
      pad_right_ = std::max(pad_right_, (e == std::string::npos ? s.size() : e) - dot - 1);
      if (e != std::string::npos) exp_digits_ = std::max(exp_digits_, s.size() - e - 2);
    }
    if (nonfinite) {
      std::size_t offset = pad_right_ + 1 + (exp_ ? exp_digits_ + 2 : 0);
      std::size_t need = std::max<std::size_t>(3, 3 + neg_inf);
      if (need > offset) pad_left_ = std::max(pad_left_, need - offset);
    }
  }

  // v in the chosen format: the integer part right-aligned to pad_left; the fraction padded to
  // pad_right with spaces (positional) or zeros (scientific, as numpy does).
  std::string float_text(double v, bool pad) const {
    std::size_t width = pad_left_ + 1 + pad_right_ + (exp_ ? exp_digits_ + 2 : 0);
    if (std::isnan(v)) return pad_left("nan", pad ? width : 0);
    if (std::isinf(v)) return pad_left(v < 0 ? "-inf" : "inf", pad ? width : 0);
    std::string s = shortest(v);
    std::size_t dot = s.find('.'), e = s.find('e');
    std::string ip = s.substr(0, dot);
    std::string frac = s.substr(dot + 1, (e == std::string::npos ? s.size() : e) - dot - 1);
    std::string ex = e == std::string::npos ? "" : s.substr(e);
    if (!pad) return s;
    if (exp_) {
      frac.append(pad_right_ - frac.size(), '0');
      std::string digits = ex.substr(2);
      ex = ex.substr(0, 2) + std::string(exp_digits_ - digits.size(), '0') + digits;
    } else {
      frac.append(pad_right_ - frac.size(), ' ');
    }
    return pad_left(ip, pad_left_) + "." + frac + ex;
  }

  const HostArray& a_;
  std::size_t width_ = 0;  // integers and bools
  bool exp_ = false;
  std::size_t pad_left_ = 0, pad_right_ = 0, exp_digits_ = 2;
};

// Whether an axis of length n is shown as its first and last kEdgeItems.
bool elided(std::int64_t n, bool summarize) {
  return summarize && n > 2 * kEdgeItems;
}

// The flat indices of the elements that print, in order.
void shown_indices(const HostArray& a, int dim, std::int64_t offset, bool summarize,
                   std::vector<std::int64_t>& out) {
  if (dim == a.ndim()) {
    out.push_back(offset);
    return;
  }
  std::int64_t n = a.shape()[dim];
  for (std::int64_t i = 0; i < n; ++i) {
    if (elided(n, summarize) && i == kEdgeItems) i = n - kEdgeItems;
    shown_indices(a, dim + 1, offset * n + i, summarize, out);
  }
}

// Appends word to the current line, wrapping first when it would pass width (numpy's
// _extendLine: no wrap when the line holds only the indent).
void extend_line(std::string& s, std::string& line, const std::string& word, std::size_t width,
                 const std::string& indent) {
  if (line.size() + word.size() > width && line.size() > indent.size()) {
    while (!line.empty() && line.back() == ' ') line.pop_back();
    s += line + "\n";
    line = indent;
  }
  line += word;
}

// numpy's _formatArray: nested brackets, rows on their own lines, blank lines between blocks
// of 3-d and up, "..." for elided runs.
std::string format_block(const HostArray& a, const ElementFormat& fmt, int dim, std::int64_t offset,
                         const std::string& indent, std::size_t width, bool summarize) {
  if (dim == a.ndim()) return fmt(offset);
  std::int64_t n = a.shape()[dim];
  std::string next_indent = indent + " ";
  std::size_t next_width = width - 1;
  bool elide = elided(n, summarize);
  std::string s;
  if (dim + 1 == a.ndim()) {
    std::size_t elem_width = width - 1;  // room for "," or "]"
    std::string line = indent;
    for (std::int64_t i = 0; i < n; ++i) {
      if (elide && i == kEdgeItems) {
        extend_line(s, line, "...", elem_width, indent);
        line += ", ";
        i = n - kEdgeItems;
      }
      extend_line(s, line,
                  format_block(a, fmt, dim + 1, offset * n + i, next_indent, next_width, summarize),
                  elem_width, indent);
      if (i + 1 < n) line += ", ";
    }
    s += line;
  } else {
    // Strings here are built by appending: GCC 12 misreads `"," + std::string(...)` in this
    // function (a -Wrestrict false positive, GCC bug 105329).
    std::string sep(1, ',');
    sep.append(std::size_t(a.ndim() - dim - 1), '\n');
    for (std::int64_t i = 0; i < n; ++i) {
      if (elide && i == kEdgeItems) {
        s += indent + "..." + sep;
        i = n - kEdgeItems;
      }
      s += indent +
           format_block(a, fmt, dim + 1, offset * n + i, next_indent, next_width, summarize);
      if (i + 1 < n) s += sep;
    }
  }
  std::string out(1, '[');
  out += std::string_view(s).substr(std::min(indent.size(), s.size()));
  out += ']';
  return out;
}

}  // namespace

namespace {

// Whether an array of this shape and dtype prints summarized (a vector dtype's lanes count).
bool summarized(const Shape& shape, DType dtype) {
  std::int64_t lanes = is_vector(dtype) ? dtype_info(dtype).lanes : 1;
  return shape_size(shape) > kSummaryThreshold / lanes;
}

// The text of an array of `shape` from `a`, which holds either all its elements (a.shape() ==
// shape) or just those it prints (printed_shape(shape)).
std::string format_as(const HostArray& a, const Shape& shape, bool summarize) {
  // A vector array prints as its lanes, one more axis, under its own dtype's name.
  if (is_vector(a.dtype())) {
    const DTypeInfo& info = dtype_info(a.dtype());
    Shape lanes = a.shape(), shape_lanes = shape;
    lanes.push_back(info.lanes);
    shape_lanes.push_back(info.lanes);
    std::string s = format_as(a.viewed(info.base).reshaped(lanes), shape_lanes, summarize);
    const std::string from = std::string("dtype=") + dtype_name(info.base);
    s.replace(s.rfind(from), from.size(), std::string("dtype=") + dtype_name(a.dtype()));
    return s;
  }
  std::vector<std::int64_t> shown;
  if (a.size() > 0) shown_indices(a, 0, 0, summarize, shown);  // {2^62, 0} has no rows to walk
  ElementFormat fmt(a, shown);
  std::string body;
  if (a.size() == 0) {
    body = "[]";
  } else if (a.ndim() == 0) {
    body = fmt(0);
  } else {
    body = format_block(a, fmt, 0, 0, std::string(7, ' '), kLineWidth - 1, summarize);
  }
  std::string s = "array(" + body + ",";
  std::string tail;
  if (summarize || (a.size() == 0 && a.ndim() != 1)) tail = "shape=" + shape_string(shape) + ", ";
  tail += std::string("dtype=") + dtype_name(a.dtype()) + ")";
  std::size_t last_line = s.size() - (s.rfind('\n') == std::string::npos ? 0 : s.rfind('\n') + 1);
  s += last_line + 1 + tail.size() > kLineWidth ? "\n" + std::string(6, ' ') : " ";
  return s + tail;
}

}  // namespace

std::string format_array(const HostArray& a) {
  return format_as(a, a.shape(), summarized(a.shape(), a.dtype()));
}

Shape printed_shape(const Shape& shape, DType dtype) {
  if (!summarized(shape, dtype)) return shape;
  Shape out = shape;
  for (std::int64_t& n : out)
    if (elided(n, true)) n = 2 * kEdgeItems + 1;  // the middle position is never shown
  return out;
}

HostArray printed_elements(const Shape& shape, DType dtype, const ReadElements& read) {
  HostArray out(printed_shape(shape, dtype), dtype);
  const Shape& cut = out.shape();
  const bool summarize = summarized(shape, dtype);
  const std::size_t bytes = dtype_info(dtype).size;
  auto* to = static_cast<std::byte*>(out.data());
  // Walks the printed array in order, joining elements whose sources follow one another into
  // one read: a cut axis's middle position is skipped, its last kEdgeItems come from its end.
  std::int64_t run_from = -1, run_to = 0, run_count = 0;
  auto flush = [&] {
    if (run_count > 0) read(run_from, run_count, to + run_to * bytes);
    run_count = 0;
  };
  std::vector<std::int64_t> index(cut.size(), 0);
  for (std::int64_t i = 0; i < out.size(); ++i) {
    std::int64_t source = 0;
    bool middle = false;
    for (std::size_t d = 0; d < cut.size(); ++d) {
      std::int64_t k = index[d];
      if (elided(shape[d], summarize)) {
        middle |= k == kEdgeItems;
        if (k > kEdgeItems) k += shape[d] - cut[d];
      }
      source = source * shape[d] + k;
    }
    if (middle || source != run_from + run_count || i != run_to + run_count) flush();
    if (!middle) {
      if (run_count == 0) run_from = source, run_to = i;
      ++run_count;
    }
    for (std::size_t d = cut.size(); d-- > 0;) {  // the next index, last axis fastest
      if (++index[d] < cut[d]) break;
      index[d] = 0;
    }
  }
  flush();
  return out;
}

std::string format_printed(const HostArray& printed, const Shape& shape) {
  return format_as(printed, shape, summarized(shape, printed.dtype()));
}

namespace {

// The positions of an axis of length n that a table shows, -1 standing for the elided run.
std::vector<std::int64_t> shown_positions(std::int64_t n, bool summarize) {
  std::vector<std::int64_t> out;
  for (std::int64_t i = 0; i < n; ++i) {
    if (elided(n, summarize) && i == kEdgeItems) {
      out.push_back(-1);
      i = n - kEdgeItems;
    }
    out.push_back(i);
  }
  return out;
}

// text with &, < and > escaped, blanks trimmed (the common format pads).
std::string html_text(const std::string& text) {
  std::string out;
  std::size_t first = text.find_first_not_of(' '), last = text.find_last_not_of(' ');
  if (first == std::string::npos) return out;
  for (char c : text.substr(first, last - first + 1)) {
    if (c == '&')
      out += "&amp;";
    else if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else
      out += c;
  }
  return out;
}

// The 1-based index tuple of row r over the leading axes of shape ("2, 3").
std::string row_label(const Shape& shape, std::int64_t r) {
  std::string label;
  for (int d = static_cast<int>(shape.size()) - 2; d >= 0; --d) {
    std::string part = std::to_string(r % shape[d] + 1);
    label = label.empty() ? part : part + ", " + label;
    r /= shape[d];
  }
  return label;
}

}  // namespace

std::string format_array_html(const HostArray& a) {
  if (is_vector(a.dtype())) {  // lanes as one more axis, as format_array shows them
    const DTypeInfo& info = dtype_info(a.dtype());
    Shape lanes = a.shape();
    lanes.push_back(info.lanes);
    std::string s = format_array_html(a.viewed(info.base).reshaped(lanes));
    const std::string from = std::string(", ") + dtype_name(info.base) + "</caption>";
    s.replace(s.rfind(from), from.size(), std::string(", ") + dtype_name(a.dtype()) + "</caption>");
    return s;
  }
  std::string html = "<table class=\"kiln-array\"><caption>array of shape " +
                     shape_string(a.shape()) + ", " + dtype_name(a.dtype()) + "</caption>";
  if (a.size() == 0) return html + "</table>";
  bool summarize = a.size() > kSummaryThreshold;
  std::int64_t cols = a.ndim() == 0 ? 1 : a.shape().back();
  std::int64_t rows = a.size() / cols;
  std::vector<std::int64_t> shown_rows = shown_positions(rows, summarize);
  std::vector<std::int64_t> shown_cols = shown_positions(cols, summarize);
  std::vector<std::int64_t> shown;
  for (std::int64_t r : shown_rows)
    for (std::int64_t c : shown_cols)
      if (r >= 0 && c >= 0) shown.push_back(r * cols + c);
  ElementFormat fmt(a, shown);
  html += "<tr><th></th>";
  for (std::int64_t c : shown_cols)
    html += c < 0 ? std::string("<th>&hellip;</th>") : "<th>" + std::to_string(c + 1) + "</th>";
  html += "</tr>";
  for (std::int64_t r : shown_rows) {
    html += "<tr><th>";
    html += r < 0           ? std::string("&vellip;")
            : a.ndim() <= 1 ? std::string()
                            : row_label(a.shape(), r);
    html += "</th>";
    for (std::int64_t c : shown_cols) {
      html += "<td>";
      html += r < 0 || c < 0 ? std::string(r < 0 ? "&vellip;" : "&hellip;")
                             : html_text(fmt(r * cols + c));
      html += "</td>";
    }
    html += "</tr>";
  }
  return html + "</table>";
}

}  // namespace kiln
