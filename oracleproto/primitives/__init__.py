"""Small leaves every layer may use, importing nothing above them.

Clocks, hashing and canonical JSON, file locks, OS error wording, paths, SQLite text and read-only
connections, process spawning, secret scrubbing, safe display text, kill points, loopback HTTP
headers and usage costs.
"""
