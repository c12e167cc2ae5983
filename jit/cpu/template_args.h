// A template kernel's non-type arguments written into its body, for the cpu backend's rewrites.
// A kernel template takes its tile width or block size as a parameter (cuCollections' CGSize,
// `template <int TILE> ... cg::tiled_partition<TILE>(block)`), and the cooperative-groups
// lowering, which reads a tile's width from the source, declined it: the kernel ran as fibers
// (11x slower than the same kernel with the literal). An instance is compiled on its own
// ("tile_sum<8>"), so its arguments are known: each token of such a parameter in the kernel's
// body becomes the argument as a literal of the parameter's type (`unsigned N` of `k<0>`: `0u`;
// `long long S`: `65536ll`; a template parameter's name cannot be declared again in its scope,
// so every such token is the parameter). The names are the definition's own header's. Integer
// and bool arguments only, a template of one definition without a parameter pack, one instance
// per compile, a body without `constexpr` or `static_assert` (where a bound value would no
// longer be dependent: `if constexpr (N == 1) ... else static_assert(N != 1);`); anything
// else is left as written.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace kiln::cpu {

// source with the non-type template arguments of name_expressions ("tile_sum<8>", "k<float,
// 256>") written into their kernels' bodies, or source.
std::string bind_template_arguments(std::string_view source,
                                    const std::vector<std::string>& name_expressions);

}  // namespace kiln::cpu
