/* Shared by every kernel family.  Each program is built with these defines (see
   shrew/backends/kernels/__init__.py): ELEM_T, the storage type; CALC_T, the type elements
   are computed in (float for half, int for bool); ACC_T, the reduction accumulator; SUM_T,
   the type of a sum; IS_FLOAT, IS_BOOL, UNIFORM_BITS; HAS_F64, HAS_F16, WG_SIZE and TILE
   for the device.  (No one-letter macros: they would break C++ templates under NVRTC.) */
typedef ELEM_T T;
typedef CALC_T CT;
typedef ACC_T ACC;

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

/* Element offset of the i-th element (C order over shape) of an operand with layout.
   i < the shape's size, so the outermost dim needs no division. */
DEVICE i64 offset_of(i64 i, const int ndim, const GLOBAL i64* shape, const GLOBAL i64* layout)
{
    if (ndim == 0) return layout[0];
    i64 off = layout[ndim];
    for (int d = ndim - 1; d > 0; --d) {
        const i64 s = shape[d], q = i / s;
        off += (i - q * s) * layout[d];
        i = q;
    }
    return off + i * layout[0];
}
