"""The audit set on disk: ``DIR/audit.jsonl`` (one :class:`AuditItem` per line) and ``DIR/audit.json``.

Lines are sorted by ``item_id`` and serialised canonically (fixed key order, UTF-8, ``\\n``), so the
same run and seed give byte-identical files. An item carries the page and the cutoff only — never
the question text, its options or the gold answer: the annotator, like the detector, judges the
page against the date alone.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from oracleproto.errors import OracleprotoError
from oracleproto.primitives import safe_text
from oracleproto.primitives.fileio import atomic_write_text

ITEMS_FILE = "audit.jsonl"
META_FILE = "audit.json"
#: The ``audit.json`` key holding the sha256 of the ``audit.jsonl`` it was written with.
ITEMS_DIGEST = "items_sha256"


class AuditError(OracleprotoError):
    """An audit directory, its items or its inputs are unusable; the message says how to fix it."""


class AuditItem(BaseModel):
    """One sampled search result of one test item (model, question, sample), as shown for labelling."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: ``m<model file>-q<question>-s<sample>-c<call>-r<rank>``: stable across re-sampling.
    item_id: str
    #: The run's virtual model slug (``sim/careful::r5::c4``).
    model: str
    question_id: str
    sample: int
    #: The prediction cutoff the search ran under (ISO date).
    cutoff_date: str
    #: The query the model searched for.
    query: str
    title: str
    url: str
    published_date: str | None
    content: str
    raw_content: str | None
    #: ``keep``, ``drop`` or ``failed:<kind>`` (``keep`` for every result of a run without detector).
    detector_verdict: str

    @field_validator("detector_verdict")
    @classmethod
    def _verdict(cls, value: str) -> str:
        if value not in ("keep", "drop") and not value.startswith("failed:"):
            raise ValueError(f"detector_verdict {value!r} is not keep, drop or failed:<kind>")
        return value

    def detector_dropped(self, fail_action: str = "drop") -> bool:
        """True when the detector kept the page from the model.

        A ``failed:*`` verdict counts as a drop under the paper's fail-closed policy (the run's
        ``LEAK_DETECTOR_FAIL_ACTION=drop``, the default) and as a keep under ``keep``: the page
        then reached the model, so a leak in it is a false negative of the barrier.
        """
        if self.detector_verdict.startswith("failed:"):
            return fail_action != "keep"
        return self.detector_verdict == "drop"


def item_line(item: AuditItem) -> str:
    """The canonical JSON line of one item (newline-terminated).

    Pages are strangers' text: lone surrogates and U+2028, U+2029, U+0085 are written as escapes
    (``safe_text``), so the line is UTF-8 and stays one line for any reader.
    """
    return safe_text.dumps(item.model_dump()) + "\n"


def meta_text(meta: Mapping[str, Any]) -> str:
    """The canonical text of ``audit.json``."""
    return safe_text.dumps(meta, indent=2, sort_keys=True) + "\n"


def items_text(items: Iterable[AuditItem]) -> str:
    """The text of ``audit.jsonl``: one line per item, sorted by item id (ids must be unique)."""
    ordered = sorted(items, key=lambda i: i.item_id)
    ids = [i.item_id for i in ordered]
    if len(set(ids)) != len(ids):
        raise AuditError("audit items share an item_id; this is a bug in the sampler")
    return "".join(item_line(i) for i in ordered)


def write_audit(audit_dir: Path, text: str, meta: Mapping[str, Any]) -> None:
    """Write ``audit.json`` (with the items' digest) and then ``audit.jsonl`` (``text``), each atomically.

    Two files cannot be replaced in one step, so ``audit.json`` records the sha256 of the items
    it describes (``items_sha256``) and goes first: a kill between the two leaves a new
    ``audit.json`` beside no or old items, which :func:`read_items` refuses instead of using a
    mismatched pair (issue 28 §5).
    """
    audit_dir.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    atomic_write_text(audit_dir / META_FILE, meta_text({**meta, ITEMS_DIGEST: digest}))
    atomic_write_text(audit_dir / ITEMS_FILE, text)


def write_items(audit_dir: Path, items: Iterable[AuditItem], meta: Mapping[str, Any]) -> None:
    """Write ``audit.jsonl`` (sorted by item id) and ``audit.json`` as :func:`write_audit` does."""
    write_audit(audit_dir, items_text(items), meta)


def read_items(audit_dir: Path) -> list[AuditItem]:
    """The items of ``DIR/audit.jsonl`` in file order; a missing or bad file raises :class:`AuditError`.

    When ``audit.json`` records the items' digest, the file must match it (see :func:`write_audit`).
    """
    path = audit_dir / ITEMS_FILE
    _regular_file(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise AuditError(
            f"{path}: no audit items here; create them with `oracleproto audit sample RUN --out {audit_dir}`"
        ) from None
    except OSError as exc:
        raise AuditError(f"{path}: cannot read the audit items ({exc})") from exc
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise AuditError(
            f"{path}: cannot read the audit items: not UTF-8 text (byte {exc.start}); re-create the file "
            "with `oracleproto audit sample`"
        ) from None
    items: list[AuditItem] = []
    # Split on "\n" only: str.splitlines() also breaks at U+2028, U+2029, U+0085 and other
    # characters a page may hold raw (files written before they were escaped).
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            items.append(AuditItem.model_validate(json.loads(line)))
        except (json.JSONDecodeError, ValidationError) as exc:
            first = str(exc).splitlines()[0]
            raise AuditError(
                f"{path}, line {number}: not an audit item ({first}); re-create the file with "
                "`oracleproto audit sample`"
            ) from None
    # After the lines: a damaged line is named precisely; a well-formed but foreign file here.
    _check_pairing(audit_dir, data)
    return items


def _check_pairing(audit_dir: Path, data: bytes) -> None:
    recorded = read_meta(audit_dir).get(ITEMS_DIGEST)
    if recorded is None:
        return  # an audit set written before the digest existed: nothing to check against
    if recorded != hashlib.sha256(data).hexdigest():
        raise AuditError(
            f"{audit_dir}: {ITEMS_FILE} is not the item set {META_FILE} describes ({ITEMS_DIGEST} "
            "differs): `audit sample` was interrupted between the two files, or one was edited; run "
            f"the same `oracleproto audit sample … --out {audit_dir}` again"
        )


def _regular_file(path: Path) -> None:
    # A directory or a named pipe (reading a pipe would block until someone writes to it).
    if path.exists() and not path.is_file():
        raise AuditError(f"{path}: not a regular file; pass the directory `audit sample` wrote")


def read_meta(audit_dir: Path) -> dict[str, Any]:
    """``DIR/audit.json`` as a dict (``{}`` when absent)."""
    path = audit_dir / META_FILE
    _regular_file(path)
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise AuditError(
            f"{path}: cannot read the audit parameters ({exc}); re-create it with `oracleproto audit sample`"
        ) from exc
    if not isinstance(value, dict):
        raise AuditError(f"{path}: not a JSON object; re-create it with `oracleproto audit sample`")
    return value
