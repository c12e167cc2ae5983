// Value printing for the REPL: nested tables with sorted keys, cycles marked, depth and size
// limits; values with __tostring (arrays, device arrays) print through it.
#pragma once
#include <string>

#include <lua.hpp>

namespace kiln::lua {

struct PrettyOptions {
  int max_depth = 4;    // tables nested deeper print as {...}
  int max_items = 100;  // entries shown per table; the rest are counted
  int width = 80;       // a table that fits on one line at this width stays on one line
};

// Renders the value at idx the way the REPL shows it: strings quoted, tables as constructors.
// Never raises: an error in a __tostring metamethod is shown in the text. [-0, +0]
std::string pretty(lua_State* L, int idx, const PrettyOptions& options = {});

// A Lua string literal for s ("..." with escapes). Exposed for tests.
std::string quote(const std::string& s);

// True when s can be written as a bare field name (an identifier that is not a keyword).
bool is_identifier(const std::string& s);

}  // namespace kiln::lua
