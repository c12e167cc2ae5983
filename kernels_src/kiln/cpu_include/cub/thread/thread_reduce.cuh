// cpu backend shim: <cub/thread/thread_reduce.cuh> resolves to kiln's implementation of CUB's
// collectives.
#pragma once
#include "kiln/cpu_cub.h"
