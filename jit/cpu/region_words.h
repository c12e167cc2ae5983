// What the region rewrite (regions.cpp) needs to know about words: keyword classes, and which
// object-like macros of a source name threadIdx or expand to constants.
#pragma once
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "jit/lexer.h"

namespace kiln::cpu::regions {

bool is_keyword_type(const std::string& s);  // int, float, unsigned, __half, ...
bool is_qualifier(const std::string& s);     // const, volatile, register, __restrict__
bool is_hoistable(const std::string& s);     // starts a statement that declares nothing per thread
bool is_statement_keyword(const std::string& s);  // return, if, for, auto, new, ...
bool is_integer_literal(const jit::Token& t);     // a number without fraction or exponent
bool is_pure_math(const std::string& s);  // a math function of its arguments alone: __log2f, min

// The index of the name before the '(' at t[open], past template arguments (`f<N, 4>(`), or
// t.size() when no identifier stands there.
std::size_t callee(const std::vector<jit::Token>& t, std::size_t open);

// Object-like macros of the source whose expansion names threadIdx (or such a macro), and
// threadIdx itself.
std::set<std::string> thread_macros(const std::vector<jit::Token>& toks);

// Object-like macros of the source that expand to constants: numbers, operators, type words and
// such macros.
std::set<std::string> constant_macros(std::string_view src, const std::vector<jit::Token>& toks);

// Function-like macros of the source that compute a value of their arguments and nothing else
// (Rodinia's IN_RANGE(x, lo, hi), MIN(a, b)): their expansion names only their parameters,
// numbers, operators, type words and constant or such macros; no assignment, increment,
// address, memory access or call.
std::set<std::string> value_macros(std::string_view src, const std::vector<jit::Token>& toks,
                                   const std::set<std::string>& constants);

}  // namespace kiln::cpu::regions
