"""zarrx: a fast, NumPy-native Zarr library (v3, v2 and the v3.0 draft) with a Cython core."""
