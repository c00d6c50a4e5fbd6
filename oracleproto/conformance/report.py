"""The conformance report: per channel, how many of our requests were paired and byte-identical.

``ok`` holds only when every request of ours was paired with a captured exchange and identical
to it, and every captured exchange was used: anything else is a difference between the two
harnesses (or a position this tool could not read, which is listed with its reason).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from oracleproto.conformance.compare import compare_bodies
from oracleproto.conformance.positions import CHANNELS, Channel
from oracleproto.conformance.responder import CaptureResponder, Pairing
from oracleproto.conformance.samples import Classified
from oracleproto.conformance.text import safe_text

#: Lines shown per list and channel in the text form (the JSON form has them all).
TEXT_LIMIT = 10


@dataclass(frozen=True)
class DifferenceItem:
    """A paired request whose body differs from the captured one."""

    position: str
    seq: int
    path: str
    detail: str


@dataclass(frozen=True)
class Unmatched:
    """A request of ours with no captured exchange, or a captured exchange nobody asked for."""

    position: str
    seq: int | None = None


@dataclass(frozen=True)
class ChannelReport:
    """The figures and lists of one channel."""

    channel: Channel
    ours: int
    captured: int
    paired: int
    identical: int
    differences: tuple[DifferenceItem, ...]
    ours_unmatched: tuple[Unmatched, ...]
    captured_unused: tuple[Unmatched, ...]

    @property
    def ok(self) -> bool:
        return self.identical == self.ours and self.paired == self.captured

    def as_dict(self) -> dict[str, Any]:
        return {
            "ours": self.ours,
            "captured": self.captured,
            "paired": self.paired,
            "identical": self.identical,
            "differences": [vars(d) for d in self.differences],
            "ours_unmatched": [vars(u) for u in self.ours_unmatched],
            "captured_unused": [vars(u) for u in self.captured_unused],
        }


@dataclass(frozen=True)
class ConformanceReport:
    """Every channel's report, and the capture it was measured against."""

    capture: str
    channels: tuple[ChannelReport, ...]

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.channels)

    def as_dict(self) -> dict[str, Any]:
        """The JSON form (``json.dumps`` it with its default ``ensure_ascii``: the text is untrusted)."""
        return {
            "capture": self.capture,
            "ok": self.ok,
            "channels": {c.channel: c.as_dict() for c in self.channels},
        }

    def render_text(self, limit: int = TEXT_LIMIT) -> str:
        """A compact table, then each channel's differences and leftovers (``limit`` lines per list)."""
        verdict = "conforms" if self.ok else "DIFFERS"
        lines = [f"conformance against {safe_text(self.capture)}: {verdict}", ""]
        header = ("channel", "ours", "captured", "paired", "identical", "different", "unmatched", "unused")
        rows = [header] + [
            (
                c.channel,
                str(c.ours),
                str(c.captured),
                str(c.paired),
                str(c.identical),
                str(len(c.differences)),
                str(len(c.ours_unmatched)),
                str(len(c.captured_unused)),
            )
            for c in self.channels
        ]
        widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
        for row in rows:
            cells = [row[0].ljust(widths[0])] + [
                cell.rjust(w) for cell, w in zip(row[1:], widths[1:], strict=True)
            ]
            lines.append("  ".join(cells).rstrip())
        for channel in self.channels:
            lines.extend(
                _section(
                    f"{channel.channel}: differences",
                    [
                        f"{d.position} (captured seq {d.seq}): {d.path or '(body)'}: {d.detail}"
                        for d in channel.differences
                    ],
                    limit,
                )
            )
            lines.extend(
                _section(
                    f"{channel.channel}: ours unmatched (no captured exchange at the position)",
                    [u.position for u in channel.ours_unmatched],
                    limit,
                )
            )
            lines.extend(
                _section(
                    f"{channel.channel}: captured unused",
                    [f"seq {u.seq}: {u.position}" for u in channel.captured_unused],
                    limit,
                )
            )
        return "\n".join(lines) + "\n"


def _section(title: str, items: list[str], limit: int) -> list[str]:
    if not items:
        return []
    shown = [f"  {item}" for item in items[:limit]]
    if len(items) > limit:
        shown.append(f"  … {len(items) - limit} more")
    return ["", f"{title} ({len(items)})", *shown]


def build_report(
    capture: str, pairings: Sequence[Pairing], classified: Sequence[Classified]
) -> ConformanceReport:
    """Count and list per channel; differences are computed here (only for non-identical pairs)."""
    taken = {p.captured.exchange.seq for p in pairings if p.captured is not None}
    channels = []
    for channel in CHANNELS:
        ours = [p for p in pairings if p.located.channel == channel]
        captured = [c for c in classified if c.located.channel == channel]
        differences = []
        for pairing in ours:
            if pairing.captured is None or pairing.identical:
                continue
            found = compare_bodies(pairing.body, pairing.captured.exchange.body)
            if found is not None:
                differences.append(
                    DifferenceItem(
                        pairing.located.describe(), pairing.captured.exchange.seq, found.path, found.detail
                    )
                )
        channels.append(
            ChannelReport(
                channel=channel,
                ours=len(ours),
                captured=len(captured),
                paired=sum(1 for p in ours if p.captured is not None),
                identical=sum(1 for p in ours if p.identical),
                differences=tuple(differences),
                ours_unmatched=tuple(Unmatched(p.located.describe()) for p in ours if p.captured is None),
                captured_unused=tuple(
                    Unmatched(c.located.describe(), c.exchange.seq)
                    for c in captured
                    if c.exchange.seq not in taken
                ),
            )
        )
    return ConformanceReport(capture, tuple(channels))


def responder_report(responder: CaptureResponder, capture: str) -> ConformanceReport:
    """The report of everything ``responder`` answered so far, against the capture named ``capture``."""
    return build_report(capture, list(responder.pairings), responder.classified)
