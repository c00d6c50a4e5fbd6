"""The package version (its own module, so modules can read it without importing the package root)."""

__version__ = "0.1.0.dev0"
