/* OpenCL C dialect of the shrew kernel macros; prelude_cuda.h is its CUDA twin.
   Kernel sources use only these names, so one source compiles in both dialects. */
#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#ifdef cl_khr_fp16
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#endif
/* Round each operation as written, like numpy: no silent a*b+c fusion, except where a
   kernel opts in with ALLOW_FMA (fma() itself is a slow exact library call on some CPUs). */
#pragma OPENCL FP_CONTRACT OFF
#define ALLOW_FMA _Pragma("OPENCL FP_CONTRACT ON")

#define KERNEL __kernel
#define DEVICE static inline
#define GLOBAL __global
#define LOCAL __local               /* qualifies a pointer into work-group memory */
#define LOCAL_ARRAY __local         /* declares a work-group array in a kernel body */
#define BARRIER() barrier(CLK_LOCAL_MEM_FENCE)

#define GID0 ((i64)get_global_id(0))
#define LID0 ((int)get_local_id(0))
#define LID1 ((int)get_local_id(1))
#define GROUP0 ((i64)get_group_id(0))
#define GROUP1 ((i64)get_group_id(1))
#define GROUP2 ((i64)get_group_id(2))

typedef long i64;
typedef ulong u64;
typedef uint u32;
typedef uchar u8;
typedef char i8;
typedef short i16;
/* half is a built-in type under cl_khr_fp16.  bfloat16 is stored as its 16 bits and
   widened to float by common.h's bf16_to_float. */
typedef ushort bf16;
#define FLOAT_OF_BITS(u) as_float(u)
#define BITS_OF_FLOAT(f) as_uint(f)
