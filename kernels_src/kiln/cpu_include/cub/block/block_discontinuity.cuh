// cpu backend shim: <cub/block/block_discontinuity.cuh> resolves to kiln's implementation of CUB's
// collectives.
#pragma once
#include "kiln/cpu_cub.h"
