// cpu backend shim: the kiln prelude already provides what this CUDA header declares.
#pragma once
#include "kiln/cpu_prelude.h"
