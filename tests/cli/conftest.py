"""Makes the bad-input suite's helper modules (``bad_input_*``) importable by its tests."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
