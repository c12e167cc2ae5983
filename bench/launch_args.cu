// Empty kernels with 0, 1, 4 and 16 parameters: what a launch costs with nothing to run, as the
// number of arguments to marshal grows. Used by bench/micro.cpp (C++) and bench/kernels.lua (Lua).
__global__ void args0() {}
__global__ void args1(float* a) {}
__global__ void args4(float* a, float* b, int n, float s) {}
__global__ void args16(float* a0, float* a1, float* a2, float* a3, float* a4, float* a5, float* a6,
                       float* a7, int i0, int i1, int i2, int i3, float f0, float f1, float f2,
                       float f3) {}
