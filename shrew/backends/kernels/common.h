/* Shared by every kernel family.  Each program is built with these defines (see
   shrew/backends/kernels/__init__.py): T, the storage type; CT, the type elements are
   computed in (float for half, int for bool); ACC, the reduction accumulator; SUM_T, the
   type of a sum; IS_FLOAT and IS_BOOL; HAS_F64, HAS_F16 and WG_SIZE for the device. */

#if IS_BOOL
#define TO_T(v) ((T)((v) != 0))     /* a bool holds exactly 0 or 1, as in numpy */
#else
#define TO_T(v) ((T)(v))
#endif
#define LOAD(p, i) ((CT)(p)[i])
#define IS_NAN(v) ((v) != (v))      /* always false for integers */

/* Strided operands travel as one int64 "meta" array: the iteration shape[0..ndim), then
   for each operand its strides[0..ndim) and its offset, all counted in elements. */
#define LAYOUT(meta, ndim, j) ((meta) + (ndim) + (j) * ((ndim) + 1))

/* Element offset of the i-th element (C order over shape) of an operand with layout. */
DEVICE i64 offset_of(i64 i, const int ndim, const GLOBAL i64* shape, const GLOBAL i64* layout)
{
    i64 off = layout[ndim];
    for (int d = ndim - 1; d >= 0; --d) {
        const i64 s = shape[d];
        off += (i % s) * layout[d];
        i /= s;
    }
    return off;
}
