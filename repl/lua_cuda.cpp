// Placeholder until the cuda module lands.
#include "repl/modules.h"
namespace kiln::lua {
int open_cuda(lua_State* L) { lua_newtable(L); return 1; }
}  // namespace kiln::lua
