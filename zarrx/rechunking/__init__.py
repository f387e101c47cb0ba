"""Rechunking: :func:`rechunk` copies an array into another chunking within a memory
bound, resumably, on threads or a cluster; :func:`rechunk_group` does it for a hierarchy.
The text parsers (:func:`parse_mem`, :func:`parse_chunks`, :func:`parse_codecs`) read the
options as a command line gives them. See ``docs/rechunk.md``."""

from zarrx.rechunking.api import rechunk
from zarrx.rechunking.group import rechunk_group
from zarrx.rechunking.parse import format_mem, parse_chunks, parse_codecs, parse_mem
from zarrx.rechunking.report import RechunkProgress

__all__ = [
    "RechunkProgress", "format_mem", "parse_chunks", "parse_codecs", "parse_mem", "rechunk",
    "rechunk_group",
]
