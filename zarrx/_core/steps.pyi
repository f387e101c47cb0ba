"""Bytes→bytes steps as C functions for the batch kernels (nogil), and CRC-32C.

What each function takes, checks, trusts and guarantees: ``zarrx/_core/README.md``.
"""

from typing_extensions import Buffer, disjoint_base

@disjoint_base
class Context:
    """A step's context: a C struct this object owns, at ``address``."""

    @property
    def address(self) -> int:
        """Where the struct lies: the ``context`` argument of the steps."""

def blosc_context(
    decompress: int,
    compress: int,
    clevel: int,
    shuffle: int,
    typesize: int,
    blocksize: int,
    cname: bytes,
    head: bytes | None = None,
    bits: int = 0,
    unless: int = 0,
) -> Context:
    """The context of the blosc steps: c-blosc 1's blosc_decompress_ctx and
    blosc_compress_ctx (addresses) and the compression settings; with head, a fused
    frame's checks (bits or'ed into its flags, declined on unless or another head)."""

def zstd_context(
    create_dctx: int,
    free_dctx: int,
    decompress_dctx: int,
    create_cctx: int,
    free_cctx: int,
    cctx_set_parameter: int,
    compress2: int,
    is_error: int,
    level: int,
    checksum: bool,
) -> Context:
    """The context of the zstd steps: libzstd's functions (addresses) and settings."""

def zlib_context(
    inflate_init2: int,
    inflate: int,
    inflate_reset: int,
    inflate_end: int,
    deflate_init2: int,
    deflate: int,
    deflate_reset: int,
    deflate_end: int,
    crc32: int,
    version: bytes,
    level: int,
) -> Context:
    """The context of the gzip steps: zlib's functions (addresses), its version string
    and the level."""

#: Per step ("blosc", "zstd", "gzip", "crc32c"): its decode, encode and release functions'
#: addresses (0: none).
FUNCTIONS: dict[str, tuple[int, int, int]]

def crc32c(data: Buffer, value: int = 0) -> int:
    """The CRC-32C of data's bytes, continuing from the checksum value of what came
    before (crc32c(b, crc32c(a)) == crc32c(a + b))."""

def _use_hardware(on: bool) -> bool:
    """Testing hook: use the CRC32 instruction if on and the CPU has it; returns whether
    it is used now."""
