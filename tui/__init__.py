"""fairtop: fairshare, allocations and what-if planning for HPC clusters, in the terminal."""

__version__ = "0.1.0"
