"""Command-line interface (top layer; nothing imports it)."""
