// cpu backend shim: <curand_kernel.h> is the CUDA toolkit's own, compiled by the host compiler
// with <nv/target> answering for the host (kiln/cpu_include/nv/target): its host code paths,
// which cuRAND keeps free of PTX. The generators (XORWOW, the default; Philox4_32_10; MRG32k3a;
// Sobol; MTGP32) then give a GPU's raw numbers and uniforms bit for bit; normals, through sinf
// and cosf rather than the GPU's __sincosf, agree to float rounding.
#pragma once
#ifndef KILN_CURAND_KERNEL_H
#error \
    "kiln: <curand_kernel.h> comes from the CUDA toolkit, and kiln found none (set CUDA_HOME to the toolkit's folder)"
#endif
#include "kiln/cpu_prelude.h"

// What cuRAND's host API declarations (its curand.h) name from the CUDA runtime.
typedef enum libraryPropertyType_t {
  MAJOR_VERSION,
  MINOR_VERSION,
  PATCH_LEVEL
} libraryPropertyType;
typedef struct CUstream_st* cudaStream_t;

#include KILN_CURAND_KERNEL_H
