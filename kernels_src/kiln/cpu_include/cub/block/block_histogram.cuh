// cpu backend shim: <cub/block/block_histogram.cuh> resolves to kiln's implementation of CUB's
// collectives.
#pragma once
#include "kiln/cpu_cub.h"
