# The native step ABI (zarrx.abc.codec.NativeStep, zarrx/_core/README.md): the C functions
# of a bytes->bytes codec that the batch kernels (batch.pyx) call without the GIL.

# Decode the n bytes at src into at most capacity bytes; returns how many, found at *out
# (dst, or a part of src for a step that only strips bytes), or a negative STEP_* code.
ctypedef Py_ssize_t (*step_decode_t)(const void* context, void** state,
                                     const unsigned char* src, Py_ssize_t n,
                                     unsigned char* dst, Py_ssize_t capacity,
                                     const unsigned char** out) noexcept nogil
# Encode the n bytes at src into dst (capacity bytes, the codec's max_encoded_size(n) or
# more); returns how many, or a negative STEP_* code.
ctypedef Py_ssize_t (*step_encode_t)(const void* context, void** state,
                                     const unsigned char* src, Py_ssize_t n,
                                     unsigned char* dst, Py_ssize_t capacity) noexcept nogil
# Free what a step left in *state during one kernel call (called once, when not NULL).
ctypedef void (*step_release_t)(const void* context, void* state) noexcept nogil

cdef enum:
    STEP_FAILED = -1      # the input cannot be decoded or encoded (corrupt, too large)
    STEP_DECLINED = -2    # encode only: this input is left to the codec's Python encode
