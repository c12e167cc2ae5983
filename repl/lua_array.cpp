// Placeholder until the array module lands.
#include "repl/modules.h"
namespace kiln::lua {
int open_array(lua_State* L) { lua_newtable(L); return 1; }
}  // namespace kiln::lua
