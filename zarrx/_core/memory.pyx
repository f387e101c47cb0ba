"""Result arrays whose memory starts on a cache-line or huge-page boundary.

Why it exists: a read writes each decoded chunk into a new result array, row by row. A
large result is written with streaming stores (``assemble.copy_strided(stream=True)``),
which write whole 64-byte lines around the cache without reading them first; that pays
only where the rows fall on whole lines, and NumPy's own allocator places the data of a
large array 16 bytes past a page boundary. Here the array's data start on a 2 MiB
boundary (64 bytes for a small array), so a chunk's rows that are line multiples in the
result are whole lines, and every 2 MiB of a large result can be one transparent huge
page (one page fault instead of 512 on first touch, as NumPy asks of the kernel for its
own large arrays).

The array is an ordinary NumPy array that owns its memory: NumPy allocates it through
an allocation handler (NEP 49) set only for the ``np.empty`` call, in this context alone,
and frees it through the same handler when the array is released.
"""

cimport numpy as cnp
from cpython.pycapsule cimport PyCapsule_New

import numpy as np

cdef extern from *:
    """
    #include <stdlib.h>
    #include <string.h>
    #if !defined(_WIN32)
    #include <sys/mman.h>
    #define ZX_HAVE_ALIGNED 1
    #else
    #define ZX_HAVE_ALIGNED 0
    #endif
    #define ZX_HUGE ((size_t)2 << 20)
    #define ZX_LINE ((size_t)64)

    #if ZX_HAVE_ALIGNED
    static void* zx_malloc(void* ctx, size_t size) {
        void* p = NULL;
        size_t align = size >= ZX_HUGE ? ZX_HUGE : ZX_LINE;
        (void)ctx;
        if (posix_memalign(&p, align, size ? size : 1) != 0)
            return NULL;
    #if defined(MADV_HUGEPAGE)
        if (align == ZX_HUGE)
            (void)madvise(p, size, MADV_HUGEPAGE);  /* advice only: failure is harmless */
    #endif
        return p;
    }
    static void* zx_calloc(void* ctx, size_t nelem, size_t elsize) {
        void* p;
        if (elsize && nelem > (size_t)-1 / elsize)
            return NULL;
        p = zx_malloc(ctx, nelem * elsize);
        if (p != NULL)
            memset(p, 0, nelem * elsize);
        return p;
    }
    /* Growth keeps the data, not the alignment (NumPy's resize, which reads never do). */
    static void* zx_realloc(void* ctx, void* ptr, size_t size) {
        (void)ctx;
        return realloc(ptr, size ? size : 1);
    }
    static void zx_free(void* ctx, void* ptr, size_t size) {
        (void)ctx; (void)size;
        free(ptr);
    }
    static PyDataMem_Handler zx_handler = {
        "zarrx_aligned", 1, {NULL, zx_malloc, zx_calloc, zx_realloc, zx_free}
    };
    #else
    static PyDataMem_Handler zx_handler;  /* unused: NumPy's allocator instead */
    #endif
    """
    int ZX_HAVE_ALIGNED
    ctypedef struct PyDataMem_Handler:
        pass
    PyDataMem_Handler zx_handler

cdef extern from "numpy/arrayobject.h":
    object PyDataMem_SetHandler(object handler)

cnp.import_array()

cdef object _handler = (PyCapsule_New(&zx_handler, "mem_handler", NULL)
                        if ZX_HAVE_ALIGNED else None)


def empty_aligned(shape, dtype):
    """``np.empty(shape, dtype)`` (C order) with its data on a 2 MiB boundary when it holds
    at least 2 MiB, else on a 64-byte boundary; see memory.pyi."""
    if _handler is None:
        return np.empty(shape, dtype)
    previous = PyDataMem_SetHandler(_handler)
    try:
        return np.empty(shape, dtype)
    finally:
        PyDataMem_SetHandler(previous)
