// cpu backend shim: the cooperative_groups extras live in kiln/cpu_cg.h.
#pragma once
#include "kiln/cpu_cg.h"
