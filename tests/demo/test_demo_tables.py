"""The committed demo run's paper-style tables are the expected ones (``golden/demo/``).

``make demo-record`` re-records the run and refreshes this snapshot with ``--snapshot-update``.
"""

from __future__ import annotations

from syrupy.assertion import SnapshotAssertion

from oracleproto.verify.bundle import EXPECTED_TABLES
from oracleproto.verify.demo import find_demo_run


def test_demo_expected_tables(snapshot: SnapshotAssertion) -> None:
    analysis = find_demo_run() / "analysis"
    tables = {name: (analysis / f"{name}.md").read_text(encoding="utf-8") for name in EXPECTED_TABLES}
    assert tables == snapshot
