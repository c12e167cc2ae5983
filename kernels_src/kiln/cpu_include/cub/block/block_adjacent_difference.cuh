// cpu backend shim: <cub/block/block_adjacent_difference.cuh> resolves to kiln's implementation of
// CUB's collectives.
#pragma once
#include "kiln/cpu_cub.h"
