// cpu backend shim: <cub/warp/warp_scan.cuh> resolves to kiln's implementation of CUB's collectives.
#pragma once
#include "kiln/cpu_cub.h"
