"""Crafted audit directories for the scoring tests (no run needed)."""

from __future__ import annotations

from pathlib import Path

from oracleproto.leakaudit.items import AuditItem, write_items
from oracleproto.leakaudit.labels import Label, append_label

STAMP = "2026-01-31T12:00:00Z"


def item(number: int, verdict: str) -> AuditItem:
    """A fake audit item with a given detector verdict."""
    return AuditItem(
        item_id=f"mfake-qq{number:03d}-s0-c00-r00",
        model="sim/fake::r5::c4",
        question_id=f"q{number:03d}",
        sample=0,
        cutoff_date="2026-01-31",
        query="fictional query",
        title=f"Page {number}",
        url=f"https://example.test/{number}",
        published_date=None,
        content="text",
        raw_content=None,
        detector_verdict=verdict,
    )


def make_audit(folder: Path, verdicts: list[str], scheme: dict[str, object] | None = None) -> list[AuditItem]:
    """Write an audit directory holding one item per verdict; its items."""
    items = [item(n, v) for n, v in enumerate(verdicts)]
    write_items(folder, items, {"run_id": "20260101-000000-0000", "seed": 0, "scheme": scheme})
    return items


def label_all(folder: Path, annotator: str, items: list[AuditItem], labels: list[str]) -> None:
    """Give ``annotator``'s labels, one per item, through the labels API."""
    for it, value in zip(items, labels, strict=True):
        given = Label.model_validate({"item_id": it.item_id, "label": value, "labelled_at": STAMP})
        append_label(folder, annotator, given)
