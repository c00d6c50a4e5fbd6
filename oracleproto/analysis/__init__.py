"""Analysis: every metric of the paper from a run directory (reads stores only)."""
