"""Bridges to the engines people already run: dask (:mod:`zarrx.integrations.dask`) and
xarray (:mod:`zarrx.integrations.xarray`). Each imports its library only when used."""
