"""zarrx's exception and warning hierarchy.

Every class derives from :class:`ZarrxError` and from the builtin a NumPy or zarr-python
user would catch (``ValueError``, ``KeyError``, ``IndexError``, ``PermissionError`` ...),
so ``except KeyError`` keeps working while ``except zarrx.errors.ZarrxError`` catches all.
Messages name the node, the store key and what was expected.
"""

from __future__ import annotations


class ZarrxError(Exception):
    """Base of every error zarrx raises on purpose."""


class MetadataError(ZarrxError, ValueError):
    """A metadata document is malformed, inconsistent or uses something unsupported."""


class FillValueError(MetadataError):
    """A fill value cannot be represented in the array's data type."""


class UnknownCodecError(MetadataError):
    """A codec name, id or URI resolves to no installed codec."""


class UnknownDataTypeError(MetadataError):
    """A data type name resolves to no installed data type."""


class UnknownExtensionError(MetadataError):
    """A ``must_understand`` extension is not installed."""


class UnsafeCodecError(MetadataError):
    """A codec would run code chosen by whoever wrote the data (unpickling), and the
    process has not opted in (``zarrx.config.set(allow_pickle=True)``)."""


class RegistryConflictError(ZarrxError, RuntimeError):
    """Two implementations claim the same registry name."""


class NodeNotFoundError(ZarrxError, KeyError):
    """No array or group exists at the requested path."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class NodeExistsError(ZarrxError, FileExistsError):
    """A node already exists where the mode forbids overwriting it."""


class NodeTypeError(ZarrxError, TypeError):
    """The node at a path is a group where an array was asked for, or the reverse."""


class CodecError(ZarrxError, ValueError):
    """A chunk could not be encoded or decoded: corrupt, truncated or of the wrong size."""

    #: The failing chunk's position in a batch decoded in one call
    #: (:meth:`zarrx.codecs.native.BatchDecoder.place`), so the caller can name its key;
    #: ``None`` otherwise.
    chunk: int | None = None


class ChecksumError(CodecError):
    """A stored checksum does not match the data."""


class InvalidKeyError(ZarrxError, ValueError):
    """A store key is malformed or would escape the store root."""


class ReadOnlyError(ZarrxError, PermissionError):
    """A write was attempted through a read-only store, array or group."""


class BoundsCheckError(ZarrxError, IndexError):
    """An index lies outside the array's shape."""


class SelectionError(ZarrxError, IndexError):
    """A selection has an unsupported form or too many indices."""


class SelectionTypeError(ZarrxError, TypeError):
    """A selection holds something of the wrong type where NumPy raises ``TypeError``
    (e.g. a slice bound that is not an integer)."""


class SelectionValueError(ZarrxError, ValueError):
    """A selection holds a value NumPy rejects with ``ValueError`` (a zero slice step)."""


class ShapeError(ZarrxError, ValueError):
    """Values cannot be broadcast to the selection, or shapes do not agree."""


class StoreError(ZarrxError, OSError):
    """A store backend failed to read or write."""


__all__ = [
    "BoundsCheckError",
    "ChecksumError",
    "CodecError",
    "FillValueError",
    "InvalidKeyError",
    "MetadataError",
    "MissingDependencyError",
    "NodeExistsError",
    "NodeNotFoundError",
    "NodeTypeError",
    "ReadOnlyError",
    "RegistryConflictError",
    "SelectionError",
    "SelectionTypeError",
    "SelectionValueError",
    "ShapeError",
    "StoreError",
    "UnknownCodecError",
    "UnknownDataTypeError",
    "UnknownExtensionError",
    "UnsafeCodecError",
    "ZarrxError",
]


class StoreNotFoundError(StoreError, FileNotFoundError):
    """A store's location (a zip archive to read) does not exist."""


class MissingDependencyError(ZarrxError, ImportError):
    """An optional package zarrx needs for this (a store backend, a data type) is not
    installed; the message names the extra to install (e.g. ``pip install 'zarrx[s3]'``)."""


class MissingDataTypeError(MissingDependencyError, UnknownDataTypeError):
    """A data type whose in-memory form needs an optional package (``zarrx[ml]``)."""


class MissingCodecError(MissingDependencyError, UnknownCodecError):
    """A codec whose implementation needs an optional package (``zarrx[pcodec]``,
    ``zarrx[zfp]``)."""


class ArgumentError(ZarrxError, ValueError):
    """A function was called with an invalid combination of arguments (e.g. a bad mode)."""


class VerificationError(ZarrxError, ValueError):
    """A copy does not match its source (``zarrx convert --verify``)."""


class FormatMismatchError(MetadataError):
    """A node of one Zarr format was to be created inside a hierarchy of another."""


class ZarrxWarning(UserWarning):
    """Base of every warning zarrx issues."""


class SkippedNodeWarning(ZarrxWarning):
    """A listing skipped a key or node it cannot open (a name that is not a valid node
    name, or a node whose metadata is refused, e.g. an unknown must-understand extension);
    its siblings are listed, and opening it by name raises the error."""


__all__ += [
    "ArgumentError", "FormatMismatchError", "MissingDataTypeError", "MissingDependencyError",
    "SkippedNodeWarning", "StoreNotFoundError", "VerificationError", "ZarrxWarning",
]


class CopyError(ZarrxError, RuntimeError):
    """``zarrx.copy`` / ``copy_all`` / ``copy_store`` met a node or key already in the
    destination (with ``if_exists="raise"``), as zarr-python 2's ``CopyError``."""


__all__ += ["CopyError"]
class UpdateConflictError(StoreError):
    """A read-modify-write kept meeting other writers' changes and gave up (the value it
    read changed before it could write, every time it tried)."""


__all__ += ["UpdateConflictError"]


class KernelsMissingError(MissingDependencyError):
    """zarrx's compiled kernels (``zarrx._core``) are not there: usually the unbuilt source
    tree (a clone) is imported instead of the installed package; the message says what
    to do."""


class PathNotFoundError(NodeNotFoundError, StoreNotFoundError):
    """Nothing at all is stored at the path to open (no directory, no key under it), in a
    mode that opens only what exists (``r``, ``r+``): a ``FileNotFoundError`` as well as a
    :class:`NodeNotFoundError`."""


__all__ += ["KernelsMissingError", "PathNotFoundError"]


class CastingError(ZarrxError, TypeError):
    """Values cannot be cast to the dtype asked for under NumPy's rule for the call (the
    ``"same_kind"`` rule of a ufunc's ``out=``, for ``out=`` of a read)."""


__all__ += ["CastingError"]


class RechunkError(ZarrxError, ValueError):
    """``zarrx.rechunk`` cannot start or go on: ``max_mem`` too small for one target object
    and one source chunk, a cast the ``"same_kind"`` rule refuses, or an interrupted rechunk
    whose source or target changed since (the message names the node, the key and what
    was expected)."""


__all__ += ["RechunkError"]
