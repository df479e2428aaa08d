"""The package version (read by the build backend and by the instrumentor)."""

__version__ = "0.1.0"
