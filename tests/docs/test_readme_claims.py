"""README claims that are numbers, not commands, checked against what they describe."""

from __future__ import annotations

import re
from pathlib import Path

from oracleproto import demo_archive
from oracleproto.demo_archive import write_archive
from oracleproto.verify.demo import find_demo_run

ROOT = Path(__file__).resolve().parents[2]


def test_the_demo_archive_size_in_the_readme_is_the_archive_the_wheel_ships(tmp_path: Path) -> None:
    """'the demo run ships inside the package (X MB, …)': the archive setup.py builds, to 0.01 MB."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    stated = re.search(r"the demo run ships\s+inside the package \((\d+\.\d\d) MB", readme)
    assert stated is not None, "README.md no longer states the demo archive's size"
    archive = write_archive(find_demo_run(), tmp_path / demo_archive.ARCHIVE_NAME)
    actual = archive.stat().st_size / 1_000_000
    assert abs(actual - float(stated[1])) <= 0.01, f"README: {stated[1]} MB; the archive: {actual:.3f} MB"
