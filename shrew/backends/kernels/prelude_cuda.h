/* CUDA (NVRTC) dialect of the shrew kernel macros; prelude_opencl.h is its OpenCL twin.
   Build with the same -D values as OpenCL (HAS_F16=1 needs cuda_fp16.h on the include
   path).  Launch mapping: OpenCL global size = CUDA grid * block, local size = block. */
#define KERNEL extern "C" __global__
#define DEVICE __device__ __forceinline__
#define GLOBAL
#define LOCAL                       /* shared-memory pointers are plain pointers */
#define LOCAL_ARRAY __shared__
#define BARRIER() __syncthreads()
#define ALLOW_FMA                   /* NVRTC fuses a*b+c unless built with --fmad=false */

#define GID0 ((i64)blockIdx.x * blockDim.x + threadIdx.x)
#define LID0 ((int)threadIdx.x)
#define LID1 ((int)threadIdx.y)
#define GROUP0 ((i64)blockIdx.x)
#define GROUP1 ((i64)blockIdx.y)
#define GROUP2 ((i64)blockIdx.z)

typedef long long i64;
typedef unsigned long long u64;
typedef unsigned int u32;
typedef unsigned char u8;
typedef signed char i8;
typedef short i16;
#define INFINITY __int_as_float(0x7f800000)  /* OpenCL C's constant; NVRTC has no math.h */
#define NAN __int_as_float(0x7fffffff)
typedef unsigned short bf16;        /* bfloat16's 16 bits (common.h widens them) */
#define FLOAT_OF_BITS(u) __uint_as_float(u)
#define BITS_OF_FLOAT(f) __float_as_uint(f)

#if HAS_F16
#include <cuda_fp16.h>
typedef __half half;                /* converts to and from float with C casts */
#endif
