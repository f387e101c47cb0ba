"""The runtime layer, below codecs and stores and above the kernels: thread pools
(``executor``), per-thread scratch buffers (``scratch``), element operations
(``elements``), and a selection's chunk projections and their placement into the output
(``plan``, ``place``), which the engine and the sharding codec (for the inner chunks of a
shard) share. It imports nothing of codecs, stores, the engine or the API."""
