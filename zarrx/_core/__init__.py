"""Cython kernels (chunk-index math, assembly, byte swapping, fill); nothing of zarrx above."""
