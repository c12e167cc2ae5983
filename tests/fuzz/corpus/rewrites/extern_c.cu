/* long
comment */ extern "C" { extern float __shared__ __align__(16) t[]; }
