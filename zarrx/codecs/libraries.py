"""The C functions of c-blosc 1, LZ4, zstd and zlib that zarrx's kernels call, by address.

zarrx links none of these libraries. The ones the codecs use are already in the process:
numcodecs' ``blosc`` extension module holds c-blosc 1 and the LZ4 it bundles, its ``zstd``
extension holds libzstd, and both export those libraries' functions; Python's ``zlib``
module links the system's zlib (its ``zlibVersion`` is ``zlib.ZLIB_RUNTIME_VERSION``).
:func:`find` looks a library's functions up once, through the library already loaded, and
hands them out only when the library is one the kernels were written for:

=========  ======================  ==============================================  =========
name       found in                functions                                       version
=========  ======================  ==============================================  =========
``blosc``  ``numcodecs.blosc``     ``blosc_compress_ctx``, ``blosc_decompress_ctx``  1.11+
``lz4``    ``numcodecs.blosc``     ``LZ4_decompress_safe_partial``,                1.9.0+
                                   ``LZ4_decompress_safe``
``zstd``   ``numcodecs.zstd``      ``ZSTD_createDCtx`` ... ``ZSTD_compress2``        1.4.0+
``zlib``   the ``zlib`` module's   ``inflateInit2_`` ... ``deflateEnd``, ``crc32``   1.x
           library (else libz)
=========  ======================  ==============================================  =========

Every function must be there and the version (asked of the library itself) at least the
one named; otherwise :func:`find` returns ``None`` and the codecs work as they do without
the kernels (numcodecs and Python's ``zlib``, chunk by chunk). Lookups are cached for the
process and safe from any thread.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from zarrx import imports


@dataclass(frozen=True)
class Library:
    """One library's functions (name → address) and its version, as it reports it
    (``"1.21.7.dev"``, ``"10906"``) and as numbers."""

    name: str
    version: str
    number: tuple[int, ...]
    functions: Mapping[str, int]

    def __getitem__(self, function: str) -> int:
        return self.functions[function]


@dataclass(frozen=True)
class _Spec:
    module: str  # the Python module whose extension holds (or links) the library
    version: str  # the function reporting the version
    parse: Callable[[Any], tuple[str, tuple[int, ...]]]  # its result, and as numbers
    least: tuple[int, ...]
    functions: tuple[str, ...]


def _string(function: Any) -> tuple[str, tuple[int, ...]]:
    """A version string, and its leading numbers ("1.21.7.dev" → (1, 21, 7))."""
    function.restype = ctypes.c_char_p
    text = function().decode("ascii")
    numbers = []
    for part in text.split("."):
        digits = ""
        for c in part:
            if not c.isdigit():
                break
            digits += c
        if not digits:
            break
        numbers.append(int(digits))
        if digits != part:
            break
    return text, tuple(numbers)


def _number(function: Any) -> tuple[str, tuple[int, ...]]:
    """A version number (major * 10000 + minor * 100 + release)."""
    function.restype = ctypes.c_uint
    n = int(function())
    return str(n), (n // 10000, n // 100 % 100, n % 100)


_SPECS = {
    "blosc": _Spec("numcodecs.blosc", "blosc_get_version_string", _string, (1, 11),
                   ("blosc_compress_ctx", "blosc_decompress_ctx")),
    "lz4": _Spec("numcodecs.blosc", "LZ4_versionNumber", _number, (1, 9, 0),
                 ("LZ4_decompress_safe_partial", "LZ4_decompress_safe")),
    "zstd": _Spec("numcodecs.zstd", "ZSTD_versionNumber", _number, (1, 4, 0),
                  ("ZSTD_createDCtx", "ZSTD_freeDCtx", "ZSTD_decompressDCtx",
                   "ZSTD_createCCtx", "ZSTD_freeCCtx", "ZSTD_CCtx_setParameter",
                   "ZSTD_compress2", "ZSTD_isError")),
    "zlib": _Spec("zlib", "zlibVersion", _string, (1, 2),
                  ("inflateInit2_", "inflate", "inflateReset", "inflateEnd",
                   "deflateInit2_", "deflate", "deflateReset", "deflateEnd", "crc32")),
}

_lock = threading.Lock()
#: Looked up so far: name → Library, or None when it cannot be used.
_FOUND: dict[str, Library | None] = {}


def find(name: str) -> Library | None:
    """The library ``name`` (``"blosc"``, ``"lz4"``, ``"zstd"``, ``"zlib"``) when every
    function the kernels call is there and its version is recent enough; else ``None``."""
    try:
        return _FOUND[name]
    except KeyError:
        pass
    spec = _SPECS[name]
    with _lock:
        if name not in _FOUND:
            _FOUND[name] = _look_up(name, spec)
        return _FOUND[name]


def _look_up(name: str, spec: _Spec) -> Library | None:
    """The first loaded library of ``spec``'s module that has every function and a
    version recent enough."""
    for handle in _handles(spec.module):
        version = _symbol(handle, spec.version)
        if version is None:
            continue
        try:
            text, number = spec.parse(version)
        except (OSError, UnicodeDecodeError, ValueError):
            continue
        if number < spec.least:
            continue
        functions = {f: _symbol(handle, f) for f in spec.functions}
        addresses = {f: ctypes.cast(found, ctypes.c_void_p).value or 0
                     for f, found in functions.items() if found is not None}
        if len(addresses) == len(spec.functions) and all(addresses.values()):
            return Library(name, text, number, MappingProxyType(addresses))
    return None


def _handles(module: str) -> list[Any]:
    """The loaded library of ``module``'s extension (dlopen of a file already loaded
    returns it, and looks symbols up in it and the libraries it links); for ``zlib``
    (maybe built into Python, its functions hidden) the system's libz after it."""
    try:
        loaded = imports.import_module(module)
    except ImportError:
        return []
    candidates = [getattr(loaded, "__file__", None)]
    if module == "zlib":
        candidates.append(ctypes.util.find_library("z"))
    handles = []
    for candidate in candidates:
        if candidate:
            try:
                handles.append(ctypes.CDLL(candidate))
            except OSError:
                continue
    return handles


def _symbol(handle: Any, function: str) -> Any:
    """The C function ``function`` of ``handle`` (a ctypes function object), or ``None``."""
    try:
        return getattr(handle, function)
    except AttributeError:
        return None
