#include "repl/pretty.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <string_view>
#include <vector>

namespace kiln::lua {
namespace {

constexpr std::array<std::string_view, 22> kKeywords = {
    "and",      "break",  "do",   "else", "elseif", "end",  "false", "for",
    "function", "goto",   "if",   "in",   "local",  "nil",  "not",   "or",
    "repeat",   "return", "then", "true", "until",  "while"};

// tostring(v) for the argument. [-1, +1]
int tostring_cfunction(lua_State* L) {
  luaL_tolstring(L, 1, nullptr);
  return 1;
}

// A table key found by lua_next, kept for sorting: numbers first, then strings, then the rest
// in traversal order. slot is the key's index in the scratch table that holds the keys.
struct Key {
  int rank;
  lua_Number number;
  std::string text;
  int slot;
};

bool key_less(const Key& a, const Key& b) {
  if (a.rank != b.rank) return a.rank < b.rank;
  if (a.rank == 0 && a.number != b.number) return a.number < b.number;
  if (a.rank == 1 && a.text != b.text) return a.text < b.text;
  return a.slot < b.slot;
}

// Renders values recursively; path holds the tables being rendered, to mark cycles.
class Printer {
 public:
  Printer(lua_State* L, const PrettyOptions& options) : L_(L), options_(options) {}

  // The text of the value at idx, for a value that starts at column indent. [-0, +0]
  std::string render(int idx, int depth, int indent) {
    idx = lua_absindex(L_, idx);
    switch (lua_type(L_, idx)) {
      case LUA_TSTRING: {
        size_t len;
        const char* s = lua_tolstring(L_, idx, &len);
        return quote(std::string(s, len));
      }
      case LUA_TTABLE:
        if (luaL_getmetafield(L_, idx, "__tostring") != LUA_TNIL) {
          lua_pop(L_, 1);
          return tostring(idx);
        }
        return render_table(idx, depth, indent);
      default:
        return tostring(idx);
    }
  }

 private:
  // tostring(value) in a protected call, so a failing __tostring cannot unwind C++ frames.
  std::string tostring(int idx) {
    if (!lua_checkstack(L_, 3)) return "...";
    lua_pushcfunction(L_, tostring_cfunction);
    lua_pushvalue(L_, idx);
    bool ok = lua_pcall(L_, 1, 1, 0) == LUA_OK;
    size_t len = 0;
    const char* s = lua_tolstring(L_, -1, &len);
    std::string text = s ? std::string(s, len) : std::string("?");
    lua_pop(L_, 1);
    return ok ? text : "<error in __tostring: " + text + ">";
  }

  // One "key = value" entry, the key written as Lua would accept it. [-0, +0]
  std::string render_key(int key_idx, int depth, int indent) {
    if (lua_type(L_, key_idx) == LUA_TSTRING) {
      size_t len;
      const char* s = lua_tolstring(L_, key_idx, &len);
      std::string name(s, len);
      if (is_identifier(name)) return name;
    }
    std::string text = "[";  // appended, not "[" + ...: GCC 12 warns falsely on the latter
    text += render(key_idx, depth + 1, indent + 1);
    return text += "]";
  }

  // Collects the keys of the table at idx that are not in its sequence part 1..n into the
  // scratch table at scratch, and returns them sorted. [-0, +0]
  std::vector<Key> sorted_keys(int idx, int scratch, lua_Integer n) {
    std::vector<Key> keys;
    lua_pushnil(L_);
    while (lua_next(L_, idx) != 0) {
      lua_pop(L_, 1);
      if (lua_isinteger(L_, -1)) {
        lua_Integer i = lua_tointeger(L_, -1);
        if (i >= 1 && i <= n) continue;
      }
      Key key{3, 0, {}, static_cast<int>(keys.size()) + 1};
      if (lua_type(L_, -1) == LUA_TNUMBER) {
        key.rank = 0;
        key.number = lua_tonumber(L_, -1);
      } else if (lua_type(L_, -1) == LUA_TSTRING) {
        key.rank = 1;
        key.text = lua_tostring(L_, -1);
      } else if (lua_type(L_, -1) == LUA_TBOOLEAN) {
        key.rank = 2;
      }
      lua_pushvalue(L_, -1);
      lua_rawseti(L_, scratch, key.slot);
      keys.push_back(std::move(key));
    }
    std::sort(keys.begin(), keys.end(), key_less);
    return keys;
  }

  // A table as a constructor: the sequence part first, then the other keys sorted. One line
  // when it fits in the width, else one entry per line. [-0, +0]
  std::string render_table(int idx, int depth, int indent) {
    const void* self = lua_topointer(L_, idx);
    if (std::find(path_.begin(), path_.end(), self) != path_.end()) return "<cycle>";
    lua_pushnil(L_);
    bool empty = lua_next(L_, idx) == 0;
    if (!empty) lua_pop(L_, 2);
    if (empty) return "{}";
    if (depth >= options_.max_depth || !lua_checkstack(L_, 8)) return "{...}";

    path_.push_back(self);
    std::vector<std::string> entries;
    size_t total = 0;
    lua_Integer n = 0;
    while (lua_rawgeti(L_, idx, n + 1) != LUA_TNIL) {
      ++n;
      if (++total <= static_cast<size_t>(options_.max_items)) {
        entries.push_back(render(-1, depth + 1, indent + 2));
      }
      lua_pop(L_, 1);
    }
    lua_pop(L_, 1);

    lua_newtable(L_);
    int scratch = lua_gettop(L_);
    for (const Key& key : sorted_keys(idx, scratch, n)) {
      if (++total > static_cast<size_t>(options_.max_items)) continue;
      lua_rawgeti(L_, scratch, key.slot);
      std::string text = render_key(lua_gettop(L_), depth, indent + 2) + " = ";
      lua_pushvalue(L_, -1);
      lua_rawget(L_, idx);
      text += render(-1, depth + 1, indent + 2 + static_cast<int>(text.size()));
      lua_pop(L_, 2);
      entries.push_back(std::move(text));
    }
    lua_pop(L_, 1);
    path_.pop_back();

    if (total > entries.size()) {
      entries.push_back("... (" + std::to_string(total - entries.size()) + " more)");
    }
    return layout(entries, indent);
  }

  // Joins entries on one line when it fits, else one per line indented under indent.
  std::string layout(const std::vector<std::string>& entries, int indent) {
    std::string line = "{";
    bool multiline = false;
    for (size_t i = 0; i < entries.size(); ++i) {
      if (i) line += ", ";
      line += entries[i];
      multiline |= entries[i].find('\n') != std::string::npos;
    }
    line += "}";
    if (!multiline && indent + static_cast<int>(line.size()) <= options_.width) return line;
    std::string pad(indent + 2, ' ');
    std::string text = "{\n";
    for (const std::string& entry : entries) text += pad + entry + ",\n";
    return text + std::string(indent, ' ') + "}";
  }

  lua_State* L_;
  const PrettyOptions& options_;
  std::vector<const void*> path_;
};

}  // namespace

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\%03d", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

bool is_identifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (unsigned char c : s) {
    if (!std::isalnum(c) && c != '_') return false;
  }
  return std::find(kKeywords.begin(), kKeywords.end(), s) == kKeywords.end();
}

std::string pretty(lua_State* L, int idx, const PrettyOptions& options) {
  Printer printer(L, options);
  return printer.render(idx, 0, 0);
}

}  // namespace kiln::lua
