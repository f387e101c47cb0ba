# The strided walk of assemble.pyx, shared with the batch kernels (batch.pyx): a copy or a
# fill described by a Walk, reduced to its canonical form by _normalize, then run.

cdef enum:
    MAXDIMS = 64          # NPY_MAXDIMS on NumPy 2 (32 on NumPy 1)

cdef struct Walk:
    int nd
    Py_ssize_t shape[MAXDIMS]
    Py_ssize_t ds[MAXDIMS]    # strides of the written (or only) operand
    Py_ssize_t ss[MAXDIMS]    # strides of the source operand (copy only)
    char* d
    const char* s

cdef void _normalize(Walk* w, Py_ssize_t itemsize) noexcept nogil
cdef void _copy_walk(Walk* w, Py_ssize_t itemsize, int swap, bint stream) noexcept nogil
cdef void _fill_walk(Walk* w, const char* pat, Py_ssize_t itemsize) noexcept nogil
