// cpu backend shim: <cooperative_groups.h> resolves to kiln's host implementation.
#pragma once
#include "kiln/cpu_cg.h"
