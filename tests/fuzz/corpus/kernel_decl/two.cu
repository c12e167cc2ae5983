__global__ void a(){}
__global__ void b(int, float*){__shfl_down_sync(0xffffffff, 1, 1);}
