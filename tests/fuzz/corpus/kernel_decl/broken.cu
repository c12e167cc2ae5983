__global__ void broken(int* x, {
