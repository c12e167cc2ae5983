// Choosing a backend: KILN_BACKEND=auto|cuda|cpu. The only file that knows every backend.
#pragma once
#include <memory>
#include <string>

#include "runtime/backend.h"

namespace kiln {

// Whether the cuda backend can run here; why says what is missing when not.
bool cuda_available(std::string* why);

// Opens the backend named by which ("auto", "cuda", "cpu"; empty: $KILN_BACKEND, else auto).
// auto falls back to cpu quietly; an explicit "cuda" that cannot run throws kiln::Error naming
// what is missing. note receives how the choice was made, for kiln --info.
std::shared_ptr<Backend> open_backend(std::string which, std::string* note);

}  // namespace kiln
