// cpu backend shim: <cub/util_ptx.cuh> resolves to kiln's implementation of CUB's collectives.
#pragma once
#include "kiln/cpu_cub.h"
