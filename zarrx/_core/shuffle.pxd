# The fused gather + byte shuffle of shuffle.pyx, shared with the batch encoder (batch.pyx):
# a Gather set up by _gather_setup (the arguments checked by the caller), then run by _walk.
from libc.stdint cimport uint8_t

cdef enum:
    MAXDIMS = 64          # NPY_MAXDIMS on NumPy 2
    MAXTYPE = 255         # the largest type size a Blosc 1 header records

cdef struct Gather:
    int nd                          # axes left after dropping and merging (>= 1)
    Py_ssize_t shape[MAXDIMS]
    Py_ssize_t strides[MAXDIMS]
    const char* s
    uint8_t* d
    Py_ssize_t itemsize
    Py_ssize_t per_block            # elements in a full block
    Py_ssize_t nblocks
    Py_ssize_t last                 # elements in the last block
    int xmask                       # image byte j is source byte j ^ xmask

cdef void _gather_setup(Gather* g, const char* s, int nd, const Py_ssize_t* shape,
                        const Py_ssize_t* strides, Py_ssize_t itemsize, uint8_t* d,
                        Py_ssize_t blocksize, int swap) noexcept nogil
cdef void _walk(Gather* g) noexcept nogil
