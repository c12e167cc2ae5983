// cpu backend shim: <mma.h> (nvcuda::wmma) resolves to kiln's host implementation.
#pragma once
#include "kiln/cpu_wmma.h"
