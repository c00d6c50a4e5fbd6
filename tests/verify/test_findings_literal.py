"""verify's vocabulary: where two byte strings differ, and what fails a verdict (literal expectations)."""

from __future__ import annotations

from pathlib import Path

import pytest

from oracleproto.verify.findings import (
    Check,
    VerifyReport,
    byte_location,
    failed,
    not_applicable,
    passed,
    skipped,
)


@pytest.mark.parametrize(
    ("expected", "actual", "where"),
    [
        (b"abc\ndef", b"abc\nxef", "byte offset 4 (line 2, column 1)"),
        (b"xy\nabcd", b"xy\nabZd", "byte offset 5 (line 2, column 3)"),
        (b"a\nb\nc", b"a\nb\nX", "byte offset 4 (line 3, column 1)"),
        (b"Xbc", b"abc", "byte offset 0 (line 1, column 1)"),
        # A newline at offset 0 is counted; one after the difference is not the line's start.
        (b"\nXb", b"\nab", "byte offset 1 (line 2, column 1)"),
        (b"aX\ncd", b"ab\ncd", "byte offset 1 (line 1, column 2)"),
        (b"ab", b"abc", "byte offset 2 (line 1, column 3): lengths differ (2 vs 3)"),
        (b"a\nbc", b"a\nb", "byte offset 3 (line 2, column 2): lengths differ (4 vs 3)"),
        (b"same", b"same", "byte offset 4 (line 1, column 5)"),
    ],
)
def test_byte_location(expected: bytes, actual: bytes, where: str) -> None:
    assert byte_location(expected, actual) == where


def test_only_a_failure_fails_the_verdict() -> None:
    checks = [passed("a"), skipped("b", "why"), not_applicable("c", "why"), failed("d", "where")]
    assert [c.status for c in checks] == ["pass", "skip", "n/a", "FAIL"]
    assert [c.ok for c in checks] == [True, True, True, False]
    assert checks[0] == Check("a", "pass", "")
    report = VerifyReport(Path("run"), checks[:3])
    assert report.ok and report.failures == []
    report.checks.append(checks[3])
    assert not report.ok and report.failures == [Check("d", "FAIL", "where")]
