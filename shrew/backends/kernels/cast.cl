/* dtype conversion: one program per source type T, one kernel per destination type.
   C casts truncate float -> int toward zero and round to nearest even otherwise, as numpy. */

#define CAST(name, D, convert)                                                            \
KERNEL void cast_to_##name(SPAN_ARGS, const GLOBAL T* x, GLOBAL D* out)                  \
{                                                                                         \
    FOR_RUNS(const GLOBAL T* px = RUN_AT(x, 0);                                           \
             const i64 sx = RUN_STEP(0);                                                  \
             RUN_LOOP(const CT v = LOAD(px, k * sx); out[i + k] = convert;))              \
}

CAST(float32, float, (float)v)
/* Narrow integers through i64, so that a float outside their range wraps as numpy's and
   PyTorch's casts do (-1.5 -> 255 in uint8) rather than being undefined. */
CAST(uint8, u8, (u8)(i64)v)
CAST(int8, i8, (i8)(i64)v)
CAST(int16, i16, (i16)(i64)v)
CAST(int32, int, (int)v)
CAST(int64, i64, (i64)v)
CAST(bool, u8, (u8)(v != (CT)0))
#if HAS_F64
CAST(float64, double, (double)v)
#endif
#if HAS_F16
CAST(float16, half, (half)v)
#endif
#if HAS_BF16
CAST(bfloat16, bf16, float_to_bf16((float)v))
#endif
