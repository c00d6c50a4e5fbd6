"""Run store: run directory layout, manifest, per-model SQLite (run-layout.md)."""
