/* dtype conversion: one program per source type T, one kernel per destination type.
   C casts truncate float -> int toward zero and round to nearest even otherwise, as numpy. */

#define CAST(name, D, convert)                                                            \
KERNEL void cast_to_##name(const i64 n, const int ndim, const GLOBAL i64* meta,            \
                           const GLOBAL T* x, GLOBAL D* out)                              \
{                                                                                         \
    const i64 i = GID0;                                                                   \
    if (i >= n) return;                                                                   \
    const CT v = LOAD(x, offset_of(i, ndim, meta, LAYOUT(meta, ndim, 0)));                \
    out[i] = convert;                                                                     \
}

CAST(float32, float, (float)v)
CAST(int32, int, (int)v)
CAST(int64, i64, (i64)v)
CAST(bool, u8, (u8)(v != (CT)0))
#if HAS_F64
CAST(float64, double, (double)v)
#endif
#if HAS_F16
CAST(float16, half, (half)v)
#endif
