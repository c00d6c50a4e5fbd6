"""Per-sample export: one row per written (model, question, sample) slot, as JSON Lines or CSV.

The shape users of per-sample logs expect (lm-eval's ``--log_samples``, ``llm logs --json``):
what was asked, what the model answered, how it scored, what it used and what went wrong. Rows
come in a fixed order (plan order of models, question id, sample index) and every value is
derived from the run's DBs alone, so two exports of a run are byte-identical.
"""

from __future__ import annotations

import csv
import io
import sqlite3
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from oracleproto.analysis.billing import ChannelBilling, json_cell
from oracleproto.analysis.names import recorded_display_names, shown_names
from oracleproto.analysis.reader import ModelRun, RunData, read_run
from oracleproto.analysis.trials import BUCKETS, TrialState
from oracleproto.errors import AnalysisError
from oracleproto.primitives import safe_text
from oracleproto.primitives.sqlite_readonly import connect_readonly

EXPORT_FORMATS = ("jsonl", "csv")
#: Column order of both formats (JSON objects keep it too).
FIELDS = (
    "run_id",
    "model",
    "model_name",
    "real_model",
    "question_id",
    "bucket",
    "sample",
    "state",
    "letters",
    "gold",
    "correct",
    "exam_score",
    "prompt_tokens",
    "completion_tokens",
    "reasoning_tokens",
    "cost_usd",
    "latency_ms",
    "react_steps",
    "tool_calls",
    "search_calls",
    "error",
)
STATES = {
    TrialState.EXCLUDED: "excluded",
    TrialState.CALL_ERROR: "call_error",
    TrialState.PARSE_FAIL: "parse_failure",
    TrialState.PARSED: "parsed",
}
FLOAT_DECIMALS = 10


def _letters(mask: Any) -> str:
    return ",".join(chr(ord("A") + i) for i, on in enumerate(mask) if on)


def _raw_rows(run: RunData, m: ModelRun) -> list[dict[str, Any]]:
    """The per-sample ``error`` and ``step_metrics`` cells, rows in the trial table's order."""
    db_path = run.run_dir / "db" / m.file
    n = m.table.n
    try:
        con = connect_readonly(db_path)
    except sqlite3.Error as exc:
        raise AnalysisError(f"{db_path}: cannot open SQLite database: {exc}") from exc
    try:
        con.row_factory = sqlite3.Row
        present = {r[1] for r in con.execute('PRAGMA table_info("run_results")')}
        columns = ["question_id"] + [
            f"s{j}_{f}" for j in range(n) for f in ("error", "step_metrics") if f"s{j}_{f}" in present
        ]
        sql = "SELECT " + ", ".join(f'"{c}"' for c in columns) + " FROM run_results ORDER BY question_id"
        return [dict(r) for r in con.execute(sql)]
    except sqlite3.Error as exc:
        raise AnalysisError(f"{db_path}: cannot read: {exc}") from exc
    finally:
        con.close()


def _sample_cost(db_path: Path, where: str, raw: Any) -> float | None:
    """The provider-reported cost of a sample's LLM calls; None unless every call reported one."""
    steps = json_cell(db_path, f"{where} step_metrics", raw)
    if not isinstance(steps, list) or not steps:
        return None
    billing = ChannelBilling.of((s, False) for s in steps if isinstance(s, dict))
    if billing.calls == 0 or billing.calls_with_cost != billing.calls:
        return None
    return round(billing.provider_cost_usd, FLOAT_DECIMALS)


def sample_rows(run_dir: Path, display_names: Mapping[str, str] | None = None) -> Iterator[dict[str, Any]]:
    """Every written sample slot of the run as a dict with the keys of ``FIELDS``, in order.

    ``display_names`` (real slug → name) replaces the names recorded with the run.
    """
    run = read_run(Path(run_dir))
    names = shown_names(run.models, recorded_display_names(run) if display_names is None else display_names)
    for m in run.models:
        t = m.table
        raw_rows = _raw_rows(run, m)
        db_path = run.run_dir / "db" / m.file
        for qi, qid in enumerate(t.question_ids):
            raw = raw_rows[qi]
            for j in range(t.n):
                state = int(t.state[qi, j])
                if state == TrialState.EMPTY:
                    continue  # never written (an unfinished run): no sample to report
                counted = state in (TrialState.PARSED, TrialState.PARSE_FAIL)
                where = f"question {qid!r} sample {j}"
                yield {
                    "run_id": run.run_id,
                    "model": m.slug,
                    "model_name": names.get(m.slug, m.slug),
                    "real_model": m.real_slug,
                    "question_id": qid,
                    "bucket": BUCKETS[int(t.bucket[qi])],
                    "sample": j,
                    "state": STATES[TrialState(state)],
                    "letters": _letters(t.pred[qi, j]) if state == TrialState.PARSED else None,
                    "gold": _letters(t.gold[qi]),
                    "correct": bool(t.correct[qi, j]) if counted else None,
                    "exam_score": round(float(t.exam[qi, j]), FLOAT_DECIMALS) if counted else None,
                    "prompt_tokens": int(t.prompt_tokens[qi, j]),
                    "completion_tokens": int(t.completion_tokens[qi, j]),
                    "reasoning_tokens": int(t.reasoning_tokens[qi, j]),
                    "cost_usd": _sample_cost(db_path, where, raw.get(f"s{j}_step_metrics")),
                    "latency_ms": int(t.latency_ms[qi, j]),
                    "react_steps": int(t.react_steps[qi, j]),
                    "tool_calls": int(t.tool_calls[qi, j]),
                    "search_calls": int(t.search_calls[qi, j]),
                    "error": raw.get(f"s{j}_error") or None,
                }


def _csv_cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def render_export(rows: Iterator[dict[str, Any]] | list[dict[str, Any]], fmt: str) -> str:
    """The rows as JSON Lines (one object a line) or CSV (header first; cells quoted where needed)."""
    if fmt not in EXPORT_FORMATS:
        raise AnalysisError(f"unknown export format {fmt!r}: expected one of {', '.join(EXPORT_FORMATS)}")
    if fmt == "jsonl":
        # One object a line for any line splitter, and UTF-8 whatever the cells hold (safe_text).
        return "".join(safe_text.dumps(row) + "\n" for row in rows)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(FIELDS)
    for row in rows:
        writer.writerow([_csv_cell(row[key]) for key in FIELDS])
    return buffer.getvalue()
